"""``--parallel N --backend temporal``: lanes as workflows on workers, git the truth.

Real parts only: a Temporal dev server child on 127.0.0.1, ``loop worker`` processes
each with its own clone of a bare remote, the coordinator in a clone of its own, and
command agents that write their task's file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from conftest import Fleet
from driver.driver_project import loop_command, loop_env, task_commits
from helpers.project import ITEM_DIR, git
from parallel.lanes_project import agent_runs, lane_project, twelve

TASKS = f"{ITEM_DIR}/tasks.md"


def _coordinator(fleet: Fleet, tmp_path: Path) -> Path:
    """The 12-task project, pushed to the fleet's remote; its clone is the coordinator's."""
    root = lane_project(tmp_path / "p", twelve())
    git(root, "remote", "add", "origin", str(fleet.remote))
    git(root, "push", "-q", "origin", "main")
    return root


def _execute(root: Path, fleet: Fleet, *extra: str) -> list[str]:
    return loop_command(
        root,
        "execute-tasks",
        "7",
        "--agent",
        "command",
        "--parallel",
        "4",
        "--backend",
        "temporal",
        *fleet.flags(),
        *extra,
    )


def _run(root: Path, fleet: Fleet, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _execute(root, fleet, "--json"),
        cwd=root,
        env=loop_env(None),
        text=True,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def _machine(run: dict[str, object]) -> str:
    """Which machine's clone an agent run happened in."""
    return Path(str(run["cwd"])).relative_to(Path(str(run["cwd"])).parents[5]).parts[0]


def test_twelve_tasks_on_three_workers_merge_once_each(fleet: Fleet, tmp_path: Path) -> None:
    root = _coordinator(fleet, tmp_path)
    for name in ("m1", "m2", "m3"):
        fleet.start_worker(name)
    done = _run(root, fleet)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (root / TASKS).read_text().count("- [x]") == 12
    assert task_commits(root) == {str(n): 1 for n in range(1, 13)}
    ran = agent_runs(tmp_path / "agent" / "runs.jsonl")
    machines = {Path(r["cwd"]).parts[len(fleet.folder.parts)] for r in ran}
    assert len(machines) > 1, machines
    # the integration branch is on the remote, with every checkpoint
    assert git(fleet.remote, "rev-parse", "main") == git(root, "rev-parse", "HEAD")
