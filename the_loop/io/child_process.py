"""Run a command someone else wrote (a task's test) with a hard bound on time.

``subprocess.run(..., capture_output=True, timeout=…)`` has two gaps for a
test command: on timeout it kills only the direct child, so the test's own
children keep running; and it reads output until every writer has closed the
pipe, so a test that leaves a background job behind makes loop wait the full
timeout although the test itself finished long ago.

Here the command runs in a session (and process group) of its own, output is
read only while the command itself runs (plus a moment to take what is already
in the pipe), and on timeout or interruption the whole group is stopped:
SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_KEEP = 64 * 1024  # bytes of output kept (the end of it)
_DRAIN_SECONDS = 0.2  # after the command exits: what is in the pipe by then is its output
_TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL


@dataclass(frozen=True)
class Finished:
    """How the command ended, and the end of its output (stdout and stderr together)."""

    returncode: int | None  # None when it was stopped at the timeout
    output: str
    timed_out: bool = False


def run_bounded(command: Sequence[str], *, cwd: Path, timeout: float) -> Finished:
    """Run ``command`` (no shell) for at most ``timeout`` seconds.

    Raises ``FileNotFoundError`` when the program does not exist.
    """
    child = subprocess.Popen(
        list(command),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: one signal reaches all of it
    )
    assert child.stdout is not None
    output = _Tail()
    try:
        timed_out = _read_while_running(child, output, time.monotonic() + timeout)
        if timed_out:
            _stop_group(child)
        else:
            _drain(child, output)
    finally:
        if child.poll() is None:  # interrupted (Ctrl-C): leave nothing running
            _stop_group(child)
        child.stdout.close()
    return Finished(None if timed_out else child.returncode, output.text(), timed_out)


class _Tail:
    """The last ``_KEEP`` bytes written to it."""

    def __init__(self) -> None:
        self.data = bytearray()

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 2 * _KEEP:
            del self.data[:-_KEEP]

    def text(self) -> str:
        return bytes(self.data[-_KEEP:]).decode("utf-8", errors="replace")


def _read_while_running(child: subprocess.Popen[bytes], output: _Tail, deadline: float) -> bool:
    """Collect output until the command exits (False) or the deadline passes (True)."""
    assert child.stdout is not None
    fd = child.stdout.fileno()
    os.set_blocking(fd, False)
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        open_pipe = True
        while child.poll() is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            if not open_pipe:  # the command closed its output but runs on
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(min(remaining, 0.1))
                continue
            if selector.select(min(remaining, 0.1)):
                open_pipe = _read_some(fd, output)
    return False


def _drain(child: subprocess.Popen[bytes], output: _Tail) -> None:
    """Take what the finished command left in the pipe; never wait for a background job."""
    assert child.stdout is not None
    fd = child.stdout.fileno()
    until = time.monotonic() + _DRAIN_SECONDS
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while time.monotonic() < until:
            if not selector.select(max(0.0, min(0.02, until - time.monotonic()))):
                return  # nothing more is waiting
            if not _read_some(fd, output):
                return  # end of output: every writer is gone


def _read_some(fd: int, output: _Tail) -> bool:
    """Read what is available; False at end of file."""
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return True
    if not chunk:
        return False
    output.add(chunk)
    return True


def _stop_group(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM the command's whole process group, then SIGKILL what is left."""
    group = child.pid  # the session leader's pid is the group id
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(_TERM_GRACE)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
    child.wait()
