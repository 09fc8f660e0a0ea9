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

import pytest
from conftest import Fleet
from driver.driver_project import loop_command, loop_env, task_commits
from helpers.project import ITEM_DIR, git
from parallel.lanes_project import agent_runs, lane_project, twelve

pytestmark = [pytest.mark.temporal, pytest.mark.slow]

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


# Each run writes its task's file, records when and where it ran, then takes a while:
# long enough for a test to kill whatever runs it.
SLOW = (
    "pathlib.Path('out').mkdir(exist_ok=True)\n"
    "pathlib.Path(f'out/t{{task}}.txt').write_text(f'task {{task}}\\n')\n"
    "with open({seen!r}, 'a') as f:\n"
    "    f.write(json.dumps({{'task': task, 't': time.time(), 'pid': os.getpid(),"
    " 'cwd': os.getcwd()}}) + '\\n')\n"
    "time.sleep({secs})\n"
)


def _slow_coordinator(fleet: Fleet, tmp_path: Path, secs: float) -> tuple[Path, Path]:
    seen = tmp_path / "seen.jsonl"
    root = lane_project(tmp_path / "p", twelve(), SLOW.format(seen=str(seen), secs=secs))
    git(root, "remote", "add", "origin", str(fleet.remote))
    git(root, "push", "-q", "origin", "main")
    return root, seen


def _seen(seen: Path) -> list[dict[str, object]]:
    import json

    if not seen.exists():
        return []
    return [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]


def _wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _spawn(root: Path, fleet: Fleet) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _execute(root, fleet),
        cwd=root,
        env=loop_env(None),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_a_killed_worker_s_task_reruns_on_another_worker(fleet: Fleet, tmp_path: Path) -> None:
    root, seen = _slow_coordinator(fleet, tmp_path, secs=6)
    for name in ("m1", "m2", "m3"):
        fleet.start_worker(name)
    coordinator = _spawn(root, fleet)
    on_m1 = lambda: [r for r in _seen(seen) if "/m1/" in str(r["cwd"])]  # noqa: E731
    _wait_for(on_m1, 120, "an agent run on m1")
    victim = on_m1()[0]
    fleet.workers["m1"].send_signal(signal.SIGKILL)
    killed_at = time.time()
    fleet.workers["m1"].wait()
    out, err = coordinator.communicate(timeout=300)
    assert coordinator.returncode == 0, out[-3000:] + err[-3000:]
    assert task_commits(root) == {str(n): 1 for n in range(1, 13)}
    # the killed worker's agent did not go on editing
    assert not _alive(int(victim["pid"]))  # type: ignore[arg-type]
    again = [
        r
        for r in _seen(seen)
        if r["task"] == victim["task"] and float(r["t"]) > killed_at  # type: ignore[arg-type]
    ]
    assert again and "/m1/" not in str(again[0]["cwd"])
    # within the heartbeat timeout (10 s) plus a few seconds
    assert float(again[0]["t"]) - killed_at < 20  # type: ignore[arg-type]


def test_a_killed_coordinator_reattaches_and_reruns_nothing(fleet: Fleet, tmp_path: Path) -> None:
    root, seen = _slow_coordinator(fleet, tmp_path, secs=2)
    for name in ("m1", "m2"):
        fleet.start_worker(name)
    coordinator = _spawn(root, fleet)
    _wait_for(lambda: sum(task_commits(root).values()) >= 3, 180, "three checkpoints")
    coordinator.send_signal(signal.SIGKILL)
    coordinator.communicate()
    done = _run(root, fleet)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert task_commits(root) == {str(n): 1 for n in range(1, 13)}
    runs = [str(r["task"]) for r in _seen(seen)]
    assert sorted(runs, key=int) == [str(n) for n in range(1, 13)], runs


def test_the_server_stopped_and_started_again_mid_run(fleet: Fleet, tmp_path: Path) -> None:
    root, _seen_file = _slow_coordinator(fleet, tmp_path, secs=1)
    for name in ("m1", "m2"):
        fleet.start_worker(name)
    coordinator = _spawn(root, fleet)
    _wait_for(lambda: sum(task_commits(root).values()) >= 2, 180, "two checkpoints")
    fleet.server.stop()
    time.sleep(2)
    fleet.server.start()
    out, err = coordinator.communicate(timeout=300)
    assert coordinator.returncode == 0, out[-3000:] + err[-3000:]
    assert task_commits(root) == {str(n): 1 for n in range(1, 13)}
