"""Projects for the parallel-lane tests: DAGs of tasks that write their own files, and agents.

``twelve`` is the DAG of the issue: three waves of four, task k+4 after task k,
each task writing ``out/t<N>.txt`` (its test checks that file). ``lane_agent``
writes a command agent that logs every run (task, lane, branch, cwd, session)
and then runs the test's ``body``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from driver.driver_project import TaskSpec, agent_config, make_item
from helpers.project import git

__all__ = ["TaskSpec", "agent_config", "make_item"]


def twelve() -> tuple[TaskSpec, ...]:
    """Three waves of four tasks, each writing its own file."""
    return tuple(
        TaskSpec(
            str(n),
            f"part {n}",
            (str(n - 4),) if n > 4 else (),
            test=f"test -f out/t{n}.txt",
        )
        for n in range(1, 13)
    )


_AGENT = """#!{python}
import json, os, pathlib, sys, time
prompt = sys.stdin.read()
task = os.environ.get("LOOP_TASK", "")
run = {{
    "task": task,
    "lane": os.environ.get("LOOP_LANE"),
    "branch": os.environ.get("LOOP_BRANCH"),
    "session": os.environ.get("LOOP_SESSION_ID"),
    "start": os.environ.get("LOOP_SESSION_START"),
    "cwd": os.getcwd(),
    "pid": os.getpid(),
    "evicted": "evicted by the merge queue" in prompt,
}}
with open({log!r}, "a", encoding="utf-8") as handle:
    handle.write(json.dumps(run) + "\\n")
{body}
"""

WRITE_OWN = (
    'pathlib.Path("out").mkdir(exist_ok=True)\n'
    'pathlib.Path(f"out/t{task}.txt").write_text(f"task {task}\\n")\n'
    'print(f"wrote out/t{task}.txt")'
)


def lane_agent(folder: Path, body: str = WRITE_OWN) -> tuple[Path, Path]:
    """An executable command agent and the JSONL log of its runs."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "runs.jsonl"
    program = folder / "agent"
    program.write_text(_AGENT.format(python=sys.executable, log=str(log), body=body))
    program.chmod(0o755)
    return program, log


def agent_runs(log: Path) -> list[dict[str, Any]]:
    """Every run the agent logged."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line]


def lane_project(root: Path, tasks: tuple[TaskSpec, ...], body: str = WRITE_OWN, **kw: Any) -> Path:
    """A project on ``main`` with ``tasks`` approved and a command agent configured."""
    program, _log = lane_agent(root.parent / "agent", body)
    make_item(root, tasks, config=agent_config("command", [str(program)], **kw))
    return root


def checkpoint_files(root: Path) -> dict[str, list[str]]:
    """Files of each task-done checkpoint commit on HEAD, by task."""
    out = git(root, "log", "--format=%x1e%(trailers:key=Loop-Task,valueonly)%x1f%s", "--name-only")
    found: dict[str, list[str]] = {}
    for record in out.split("\x1e"):
        if "\x1f" not in record:
            continue
        task, rest = record.split("\x1f", 1)
        subject, *files = [line for line in rest.splitlines() if line.strip()]
        if task.strip() and subject.endswith(f"checkpoint task {task.strip()}"):
            found.setdefault(task.strip(), []).append(",".join(sorted(files)))
    return found


def leftovers(root: Path) -> dict[str, Any]:
    """Worktrees, lane branches and leases a run left behind."""
    listed = git(root, "worktree", "list", "--porcelain")
    return {
        "worktrees": listed.count("worktree ") - 1,
        "branches": git(
            root, "for-each-ref", "--format=%(refname:short)", "refs/heads/loop/"
        ).split(),
        "leases": sorted(p.name for p in (root / ".the-loop/state/leases").rglob("*.json")),
    }
