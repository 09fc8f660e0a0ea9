"""The parallel-lanes case of the bench (``run.py --only parallel``).

Wall-clock of ``execute-tasks --agent command --parallel 1, 2, 4`` on the 12-task
DAG of issue 20 (three waves of four; task k+4 after task k; each task writes its
own file), with command agents that each take a fixed time (``--parallel-seconds``).
The reference is the **ideal** of the same DAG: its critical path (3 tasks) × the
per-task time, measured as what the agents themselves spent; ``--parallel 1`` is the
serial driver on the same DAG.

The **per-task overhead** of a lane (worktree, lane commit, rebase, the test run
twice, landing, checkpoint, cleanup) is read from a 12-task chain with agents that
do nothing: ``--parallel 2`` (a lane per task, one at a time) against ``--parallel
1`` (the serial driver: the checkpoint alone) in the same run, per task.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REQUIREMENTS = """\
---
type: requirements
status: draft
---

# Requirements: parts

### R1 — every part

1. The system SHALL hold each part in its own file.
"""

DESIGN = """\
---
type: design
status: draft
---

# Design: parts

One file per part under out/.
"""

_AGENT = """#!{python}
import os, pathlib, sys, time
sys.stdin.read()
time.sleep({seconds})
task = os.environ["LOOP_TASK"]
pathlib.Path("out").mkdir(exist_ok=True)
pathlib.Path(f"out/t{{task}}.txt").write_text(f"part {{task}}\\n")
print(f"wrote out/t{{task}}.txt")
"""


def _tasks(depends: Callable[[int], int | None]) -> str:
    lines = ["---", "type: tasks", "status: draft", "---", "", "# Tasks: parts", ""]
    for n in range(1, 13):
        parent = depends(n)
        lines.append(f"- [ ] {n}. part {n}")
        lines.append(f"  - _Depends on:_ {parent if parent else 'none'}")
        lines.append("  - _Requirements:_ R1")
        lines.append(f"  - _Test:_ `test -f out/t{n}.txt`")
    return "\n".join(lines) + "\n"


def waves(n: int) -> int | None:
    """Three waves of four: task k+4 after task k."""
    return n - 4 if n > 4 else None


def chain(n: int) -> int | None:
    """One long chain: every task after the one before."""
    return n - 1 if n > 1 else None


def project(
    folder: Path,
    loop: list[str],
    env: dict[str, str],
    seconds: float,
    depends: Callable[[int], int | None],
) -> Path:
    """A fresh git project with ``issue-7``'s 12 tasks approved and a sleeping agent."""
    if folder.exists():
        shutil.rmtree(folder)
    root = folder / "p"
    (root / ".the-loop").mkdir(parents=True)
    agent = folder / "agent"
    agent.write_text(_AGENT.format(python=sys.executable, seconds=seconds))
    agent.chmod(0o755)
    (root / ".the-loop" / "config.yaml").write_text(
        'version: "0.1.0"\n'
        "contextManagement:\n  taskBoundary: clear\n"
        f'agent:\n  kind: command\n  command: ["{agent}"]\n  maxAttempts: 3\n'
        "  backoffSeconds: 0\n  timeoutSeconds: 600\n"
    )
    items = root / "docs" / "specs" / "issue-7"
    items.mkdir(parents=True)
    texts = {"requirements": REQUIREMENTS, "design": DESIGN, "tasks": _tasks(depends)}

    def run(*args: str) -> None:
        subprocess.run(args, cwd=root, env=env, check=True, capture_output=True)

    run("git", "init", "-q", "-b", "main")
    (root / "README.md").write_text("# parts\n")
    for name, text in texts.items():
        (items / f"{name}.md").write_text(text)
        run(*loop, "approve", "7", name, "--by", "@bench")
    run("git", "add", "-A")
    run("git", "commit", "-q", "-m", "specs approved")
    return root


def timed_run(root: Path, loop: list[str], env: dict[str, str], lanes: int) -> tuple[float, int]:
    """Wall seconds of one ``execute-tasks --agent command --parallel lanes``, and its exit."""
    start = time.perf_counter()
    done = subprocess.run(
        [*loop, "execute-tasks", "7", "--agent", "command", "--parallel", str(lanes)],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout.decode(errors="replace")[-2000:])
    return wall, done.returncode
