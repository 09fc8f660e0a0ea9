"""Stopping a parallel run: Ctrl-C (exit 130, work committed on the task branches) and
SIGKILL of the driver, each followed by a rerun that finishes the DAG once."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from driver.driver_project import alive, loop_process, spawn_loop, task_commits, wait_for
from helpers.project import ITEM_DIR, git
from lanes_project import (
    WRITE_OWN,
    TaskSpec,
    agent_runs,
    checkpoint_files,
    lane_project,
    leftovers,
)

pytestmark = pytest.mark.slow  # real loop runs end to end: ten seconds and more

TASKS = f"{ITEM_DIR}/tasks.md"
LOG = f"{ITEM_DIR}/execution-log.md"


def _slow_while(flag: Path) -> str:
    """Agent body: write a part of the work, then hang while ``flag`` exists; else finish."""
    return (
        f"flag = pathlib.Path({str(flag)!r})\n"
        "pathlib.Path('out').mkdir(exist_ok=True)\n"
        "pathlib.Path(f'out/p{task}.txt').write_text('part\\n')\n"
        "if flag.exists():\n"
        "    time.sleep(120)\n" + WRITE_OWN
    )


def _four() -> tuple[TaskSpec, ...]:
    return tuple(TaskSpec(str(n), f"part {n}", test=f"test -f out/t{n}.txt") for n in (1, 2, 3, 4))


def _status(root: Path) -> dict[str, Any]:
    done = loop_process(root, "status", "7", "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _started(log: Path, count: int) -> bool:
    return len(agent_runs(log)) >= count


@pytest.mark.parametrize(
    ("how", "repair"), [("ctrl-c", False), ("sigkill", False), ("sigkill", True)]
)
def test_a_stopped_run_then_a_rerun_lands_every_task_once(
    tmp_path: Path, how: str, repair: bool
) -> None:
    flag = tmp_path / "hang"
    flag.write_text("")
    root = lane_project(tmp_path / "p", _four(), _slow_while(flag))
    log = tmp_path / "agent" / "runs.jsonl"
    run = spawn_loop(root, "execute-tasks", "7", "--agent", "command", "--parallel", "2")
    wait_for(lambda: _started(log, 2), timeout=60, what="two lanes' agents")
    pids = [r["pid"] for r in agent_runs(log)]
    if how == "ctrl-c":  # while the run is on, status shows its lanes
        wait_for(lambda: _status(root)["parallelRun"] is not None, timeout=30, what="run state")
        shown = _status(root)["parallelRun"]
        assert shown == {"running": {"1": 1, "2": 2}, "queued": []}
        assert "running: 1 (lane 1), 2 (lane 2)" in loop_process(root, "status", "7").stdout
    run.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
    out, err = run.communicate(timeout=60)
    wait_for(lambda: not any(alive(pid) for pid in pids), timeout=15, what="agents to stop")
    branches = git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads/loop/").split()
    assert branches == ["loop/issue-7/1", "loop/issue-7/2"]
    if how == "ctrl-c":
        assert run.returncode == 130, out + err
        assert "stopped by Ctrl-C" in out
        # the interim checkpoint of each lane: its work so far, committed on its branch
        for task in ("1", "2"):
            files = git(root, "show", "--name-only", "--format=", f"loop/issue-7/{task}").split()
            assert files == [f"out/p{task}.txt"]
        assert leftovers(root)["leases"] == []
    else:
        assert run.returncode == -signal.SIGKILL
        assert len(leftovers(root)["leases"]) == 2  # dead holders: the rerun reclaims them
        if repair:
            _doctor_lists_and_repairs(root)
    assert (root / TASKS).read_text().count("- [x]") == 0
    flag.unlink()
    again = loop_process(root, "execute-tasks", "7", "--agent", "command", "--parallel", "2")
    assert again.returncode == 0, again.stdout + again.stderr
    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    files = checkpoint_files(root)
    for task in ("1", "2"):  # the stopped lanes' part of the work is in their task's commit
        assert files[task] == [
            ",".join(sorted([f"out/p{task}.txt", f"out/t{task}.txt", TASKS, LOG]))
        ]
    assert leftovers(root) == {"worktrees": 0, "branches": [], "leases": []}
    assert git(root, "status", "--porcelain") == ""


def _doctor_lists_and_repairs(root: Path) -> None:
    """``loop doctor`` names what the killed run left; ``--repair`` clears it, keeping the work."""
    listed = loop_process(root, "doctor", "--json")
    assert listed.returncode == 1, listed.stdout + listed.stderr
    kinds = sorted(
        (left["kind"], left["task"]) for left in json.loads(listed.stdout)["laneLeftovers"]
    )
    assert kinds == [("lease", "1"), ("lease", "2"), ("worktree", "1"), ("worktree", "2")]
    text = loop_process(root, "doctor").stdout
    assert "left by a parallel run: " in text and "→ `loop doctor --repair`" in text
    repaired = loop_process(root, "doctor", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert leftovers(root) == {
        "worktrees": 0,
        "branches": ["loop/issue-7/1", "loop/issue-7/2"],
        "leases": [],
    }
    for task in ("1", "2"):  # the killed agents' uncommitted part, kept on their branches
        files = git(root, "show", "--name-only", "--format=", f"loop/issue-7/{task}").split()
        assert files == [f"out/p{task}.txt"]


def test_a_rerun_after_another_task_landed_keeps_what_landed(tmp_path: Path) -> None:
    # Found by the lanes campaign: task 1's worktree, left at the old base by a killed
    # run, was folded onto the new head with its old files, so task 1's checkpoint
    # commit undid task 2's, which had landed in between.
    flag = tmp_path / "hang"
    flag.write_text("")
    body = (
        f"flag = pathlib.Path({str(flag)!r})\n"
        "pathlib.Path('out').mkdir(exist_ok=True)\n"
        "pathlib.Path(f'out/p{task}.txt').write_text('part\\n')\n"
        "if task == '1' and flag.exists():\n"
        "    time.sleep(120)\n" + WRITE_OWN
    )
    tasks = tuple(TaskSpec(str(n), f"part {n}", test=f"test -f out/t{n}.txt") for n in (1, 2))
    root = lane_project(tmp_path / "p", tasks, body)
    log = tmp_path / "agent" / "runs.jsonl"
    run = spawn_loop(root, "execute-tasks", "7", "--agent", "command", "--parallel", "2")
    wait_for(lambda: "2" in task_commits(root), timeout=60, what="task 2 to land")
    pids = [r["pid"] for r in agent_runs(log)]
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=60)
    wait_for(lambda: not any(alive(pid) for pid in pids), timeout=15, what="agents to stop")
    flag.unlink()

    again = loop_process(root, "execute-tasks", "7", "--agent", "command", "--parallel", "2")

    assert again.returncode == 0, again.stdout + again.stderr
    assert task_commits(root) == {"1": 1, "2": 1}
    assert (root / "out" / "t2.txt").read_text() == "task 2\n"
    assert checkpoint_files(root)["1"] == [
        ",".join(sorted(["out/p1.txt", "out/t1.txt", TASKS, LOG]))
    ]
    assert git(root, "status", "--porcelain") == ""
