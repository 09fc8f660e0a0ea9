"""A project for the driver tests, a scriptable command agent, and readers of what happened.

``make_item`` builds a real project whose item ``issue-7`` has approved
requirements, design and tasks but has *not* entered implementation: crossing
that boundary is the driver's first step. ``command_agent`` writes a small
Python program that logs every run (task, session id, how the session
started) and then does what the test's body says. ``loop_process`` runs
``python -m the_loop`` as its own process with the environment an agent needs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import REPO_ROOT
from helpers.project import (
    DESIGN,
    ITEM_DIR,
    REQUIREMENTS,
    STATE,
    git,
    init_git,
    ok,
)

VENV_BIN = Path(sys.executable).parent  # holds the `loop` script the agents call
HISTORY = STATE / "resets" / "history.jsonl"


@dataclass(frozen=True)
class TaskSpec:
    """One task of the generated tasks.md; ``details`` become sub-bullets of the brief."""

    id: str
    title: str
    depends: tuple[str, ...] = ()
    test: str = "true"
    details: tuple[str, ...] = ()


# 1 and 3 are ready from the start; 2 waits for 1; 4 waits for 2 and 3.
FOUR = (
    TaskSpec("1", "config key", test="test -f done-1.txt"),
    TaskSpec("2", "retry ledger", ("1",), test="test -f done-2.txt"),
    TaskSpec("3", "give-up log line", test="test -f done-3.txt"),
    TaskSpec("4", "docs", ("2", "3"), test="test -f done-4.txt"),
)


def tasks_text(tasks: Sequence[TaskSpec]) -> str:
    """A draft tasks.md listing ``tasks``."""
    lines = ["---", "type: tasks", "status: draft", "---", "", "# Tasks: retries", ""]
    for task in tasks:
        lines.append(f"- [ ] {task.id}. {task.title}")
        lines += [f"  - {detail}" for detail in task.details]
        lines.append(f"  - _Depends on:_ {', '.join(task.depends) or 'none'}")
        lines.append("  - _Requirements:_ R1")
        lines.append(f"  - _Test:_ `{task.test}`")
    return "\n".join(lines) + "\n"


def make_item(root: Path, tasks: Sequence[TaskSpec] = FOUR, *, config: str = "") -> Path:
    """A git project with ``issue-7`` approved up to tasks.md, still before implementation."""
    root.mkdir(parents=True, exist_ok=True)
    init_git(root)
    (root / ".the-loop").mkdir()
    (root / ".the-loop" / "config.yaml").write_text('version: "0.1.0"\n' + config)
    folder = root / ITEM_DIR
    folder.mkdir(parents=True)
    texts = (("requirements", REQUIREMENTS), ("design", DESIGN), ("tasks", tasks_text(tasks)))
    for name, text in texts:
        (folder / f"{name}.md").write_text(text)
        ok(root, "approve", "7", name, "--by", "@a")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "specs approved")
    return root


def agent_config(
    kind: str,
    command: Sequence[str],
    *,
    task_boundary: str = "clear",
    max_attempts: int = 3,
    timeout: int = 60,
    extra: str = "",
) -> str:
    """The ``contextManagement`` and ``agent`` lines of a test config."""
    return (
        f"contextManagement:\n  taskBoundary: {task_boundary}\n"
        f"agent:\n  kind: {kind}\n  command: {json.dumps([str(c) for c in command])}\n"
        f"  maxAttempts: {max_attempts}\n  backoffSeconds: 0\n  timeoutSeconds: {timeout}\n" + extra
    )


# ---------------------------------------------------------------- a command agent

_AGENT = """#!{python}
import json, os, pathlib, subprocess, sys, time
brief = sys.stdin.read()
task = os.environ.get("LOOP_TASK", "")
run = {{
    "task": task,
    "item": os.environ.get("LOOP_ITEM"),
    "session": os.environ.get("LOOP_SESSION_ID"),
    "start": os.environ.get("LOOP_SESSION_START"),
    "pid": os.getpid(),
    "prompt": brief,
}}
with open({log!r}, "a", encoding="utf-8") as handle:
    handle.write(json.dumps(run) + "\\n")
runs = [json.loads(line) for line in open({log!r}, encoding="utf-8")]
mine = [r for r in runs if r["task"] == task]
{body}
"""

# The usual work: make the file the task's test looks for, and say so.
MAKE_FILE = (
    'pathlib.Path(f"done-{task}.txt").write_text("done\\n")\n'
    'print(f"made done-{task}.txt for task {task}")'
)


def command_agent(folder: Path, body: str = MAKE_FILE, *, name: str = "agent") -> tuple[Path, Path]:
    """An executable agent program and the JSONL log of its runs (one object per run).

    The program reads the prompt from stdin, logs ``task``, ``session``, ``start`` and
    ``prompt``, then runs ``body`` (Python, with ``task``, ``brief`` and ``mine``, this
    task's runs so far, in scope).
    """
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{name}-runs.jsonl"
    program = folder / name
    program.write_text(_AGENT.format(python=sys.executable, log=str(log), body=body))
    program.chmod(0o755)
    return program, log


def runs(log: Path) -> list[dict[str, Any]]:
    """Every run the command agent logged, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


# ---------------------------------------------------------------- running loop


def loop_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test's environment plus ``extra``, with this venv's ``loop`` first on PATH."""
    env = {**os.environ, **(extra or {})}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def loop_command(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "the_loop", "-C", str(root), *args]


def loop_process(
    root: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """``loop -C root args…`` in a process of its own; waits for it."""
    return subprocess.run(
        loop_command(root, *args),
        cwd=root,
        env=loop_env(env),
        text=True,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def spawn_loop(
    root: Path, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """``loop -C root args…`` started and left running (for signals)."""
    return subprocess.Popen(
        loop_command(root, *args),
        cwd=root,
        env=loop_env(env),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for(predicate: Any, *, timeout: float = 60, what: str = "condition") -> None:
    """Poll ``predicate()`` until it holds (a bounded wait, never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill(pid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to a process the test started."""
    os.kill(pid, sig)


# ---------------------------------------------------------------- reading the outcome


def events(stdout: str) -> list[dict[str, Any]]:
    """The JSON events ``execute-tasks --agent --json`` printed, one per line."""
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def reset_history(root: Path) -> list[dict[str, Any]]:
    """Resolved reset records, oldest first."""
    path = root / HISTORY
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def task_commits(root: Path) -> dict[str, int]:
    """How many commits carry ``Loop-Task: N`` with a task-done subject, by task."""
    counts: dict[str, int] = {}
    out = git(root, "log", "--format=%s%x1f%(trailers:key=Loop-Task,valueonly)%x1e")
    for record in out.split("\x1e"):
        if "\x1f" not in record:
            continue
        subject, task = (part.strip() for part in record.split("\x1f", 1))
        if task and subject.endswith(f"checkpoint task {task}"):
            counts[task] = counts.get(task, 0) + 1
    return counts


def subjects(root: Path) -> list[str]:
    """Commit subjects on HEAD, oldest first."""
    return git(root, "log", "--reverse", "--format=%s").splitlines()


def schema_errors(data: object) -> list[str]:
    """What ``schema/output/execute-tasks.schema.json`` finds wrong with one JSON output."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    folder = REPO_ROOT / "schema" / "output"
    schemas = [json.loads(path.read_text()) for path in folder.glob("*.schema.json")]
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas
    )
    (main,) = [s for s in schemas if s["$id"].endswith("/execute-tasks.schema.json")]
    validator = Draft202012Validator(main, registry=registry)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(data)]
