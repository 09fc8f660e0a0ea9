"""One lock per project: commands that change state run one at a time.

An advisory ``flock`` on ``.the-loop/state/lock``: the kernel releases it when
the holder exits, however it exits, so a killed command never leaves a stale
lock. A second command waits a bounded time (``LOOP_LOCK_TIMEOUT`` seconds,
default 30), then fails and says who holds the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from the_loop.config.state_folder import state_dir
from the_loop.errors import LockError, StateError, Where

_POLL = 0.05


def _timeout() -> float:
    try:
        return float(os.environ.get("LOOP_LOCK_TIMEOUT", "30"))
    except ValueError:
        return 30.0


@contextlib.contextmanager
def project_lock(root: Path, *, timeout: float | None = None) -> Iterator[None]:
    """Hold the project's lock for the duration of the block."""
    path = state_dir(root, create=True) / "lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StateError(
            f"cannot open loop's lock file: {exc.strerror or exc}",
            where=Where(path),
            hint=f"it must be a writable file; remove it (rm -r {path}) and run the command "
            "again: loop creates a new one",
        ) from exc
    try:
        _acquire(fd, path, _timeout() if timeout is None else timeout)
        with contextlib.suppress(OSError):  # who holds it is only shown to a waiter: best effort
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} {time.time():.0f} {' '.join(sys.argv[1:])}\n".encode())
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _acquire(fd: int, path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockError(
                    f"another loop command holds this project's lock ({_holder(path)}); "
                    f"gave up after {timeout:g}s",
                    where=Where(path),
                    hint="wait for it to finish and run the command again "
                    "(LOOP_LOCK_TIMEOUT sets how long to wait)",
                ) from None
            time.sleep(_POLL)


def _holder(path: Path) -> str:
    try:
        pid, started, *command = path.read_text(errors="replace").split(" ", 2)
        since = time.strftime("%H:%M:%S", time.localtime(float(started)))
    except (OSError, ValueError, OverflowError):  # unreadable, or not what loop writes there
        return "holder unknown"
    what = " ".join(command).strip()
    return f"pid {pid}, since {since}" + (f": loop {what}" if what else "")
