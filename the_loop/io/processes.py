"""Run one child process, bounded: the only place loop starts a program.

Git (where git itself must act), a task's test and a headless agent all run
through :func:`run`, under one policy:

- **its own process group** (``start_new_session``): a Ctrl-C at the terminal
  reaches loop alone, and one signal reaches the child and everything it started
  (a git hook's children, a test's background jobs, an agent's tools);
- **a deadline**: past ``timeout`` seconds the group gets SIGTERM, then SIGKILL
  after ``grace`` seconds; an exception while it runs (Ctrl-C) does the same and
  is raised again, so loop never leaves a child running behind it;
- **bounded output**: of each stream the first ``head`` and the last ``keep``
  bytes are kept, never the whole of a long stream; ``on_line`` sees every line
  as it arrives, so a caller that wants all of it parses as it goes;
- **no wait on a background job**: output is read while the child runs and for a
  moment after (what is already in the pipe); a job the child left behind holding
  the pipe open is not waited for.

Everything happens on the calling thread (one selector over the pipes), so the
callbacks run there too.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_KEEP = 64 * 1024  # bytes of each stream kept (its end)
DEFAULT_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
_DRAIN_SECONDS = 0.2  # after the child exits: what is in the pipe by then is its output
_CHUNK = 65536
_LINE_LIMIT = 8 * 1024 * 1024  # bytes of one line held for on_line
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Completed:
    """How a child ended and what it printed (decoded as UTF-8, odd bytes replaced).

    ``returncode`` is ``None`` when loop stopped it at its deadline; a child killed
    by a signal has git's and the shell's negative code. ``stdout``/``stderr`` hold
    the kept part of each stream (with ``merge_stderr`` both are in ``stdout``);
    ``dropped`` counts the bytes left out of them.
    """

    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    dropped: int = 0

    @property
    def ok(self) -> bool:
        """Exited 0 within its time."""
        return self.returncode == 0 and not self.timed_out


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    stdin: bytes | str | None = None,
    merge_stderr: bool = False,
    keep: int = DEFAULT_KEEP,
    head: int = 0,
    on_line: Callable[[str], None] | None = None,
    line_end: bytes = b"\n",
    on_tick: Callable[[float], None] | None = None,
    tick: float = 0.25,
    on_start: Callable[[int], None] | None = None,
    grace: float = DEFAULT_GRACE,
    die_with_parent: bool = False,
) -> Completed:
    """Run ``argv`` (no shell) in ``cwd`` until it exits or ``timeout`` seconds pass.

    ``env`` is the child's whole environment (``None``: loop's own). ``stdin`` is
    written to the child and then closed (``None``: it reads an empty stdin).
    ``on_line`` gets each stdout line without its ``line_end`` (``b"\\0"`` for
    git's ``-z`` records), ``on_tick`` the seconds elapsed about every ``tick``
    seconds, ``on_start`` the child's pid. ``die_with_parent`` asks Linux to kill
    the child when loop itself dies (``PR_SET_PDEATHSIG``), for long-lived agents.

    Raises ``OSError`` (``FileNotFoundError``, ``PermissionError``) when the
    program cannot start.
    """
    started = time.monotonic()
    prctl = _prctl() if die_with_parent else None
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    child = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        start_new_session=True,  # its own process group: one signal reaches all of it
        preexec_fn=(lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)) if prctl else None,
    )
    if on_start is not None:
        on_start(child.pid)
    out = _Kept(keep, head, on_line, line_end)
    err = _Kept(keep, 0, None, b"\n")
    pipes = _Pipes(child, data, out, err)
    timed_out = False
    try:
        timed_out = pipes.pump(started + timeout, on_tick, tick, started)
        if timed_out:
            stop_group(child, grace)
        else:
            pipes.drain()
    except BaseException:
        stop_group(child, grace)  # Ctrl-C: leave nothing running
        raise
    finally:
        pipes.close()
        if child.poll() is None:
            stop_group(child, grace)
    out.finish()
    (stdout, out_dropped), (stderr, err_dropped) = out.text(), err.text()
    return Completed(
        returncode=None if timed_out else child.returncode,
        stdout=stdout,
        stderr=stderr,
        seconds=time.monotonic() - started,
        timed_out=timed_out,
        dropped=out_dropped + err_dropped,
    )


def stop_group(child: subprocess.Popen[bytes], grace: float = DEFAULT_GRACE) -> None:
    """SIGTERM the child's whole process group, then SIGKILL what is left after ``grace``."""
    group = child.pid  # the session leader's pid is the group id
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(grace)
    # whether or not the leader went, its children may linger in the group
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
    child.wait()


class _Kept:
    """One stream's kept bytes (its first ``head`` and last ``keep``), and its lines."""

    def __init__(
        self, keep: int, head: int, on_line: Callable[[str], None] | None, line_end: bytes
    ) -> None:
        self.keep, self.head_limit = keep, head
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.on_line, self.line_end = on_line, line_end
        self.partial = bytearray()  # the line being written, for on_line

    def add(self, chunk: bytes) -> None:
        if self.on_line is not None:
            self._lines(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > 2 * self.keep:  # trim now and then, not on every chunk
            cut = len(self.tail) - self.keep
            del self.tail[:cut]
            self.dropped += cut

    def _lines(self, chunk: bytes) -> None:
        assert self.on_line is not None
        end = chunk.find(self.line_end)
        if end < 0:  # only the new bytes are searched: a long line costs no rescans
            self._extend_partial(chunk)
            return
        pieces = chunk[end + len(self.line_end) :].split(self.line_end)
        self._extend_partial(chunk[:end])
        lines = [bytes(self.partial), *pieces[:-1]]
        self.partial = bytearray()
        self._extend_partial(pieces[-1])
        for line in lines:
            self.on_line(line.decode("utf-8", errors="replace"))

    def _extend_partial(self, data: bytes) -> None:
        room = _LINE_LIMIT - len(self.partial)
        if room > 0:
            self.partial += data[:room]  # past the limit a line is cut, not held whole

    def finish(self) -> None:
        """Hand over a last line that had no line end."""
        if self.on_line is not None and self.partial:
            self.on_line(bytes(self.partial).decode("utf-8", errors="replace"))
            self.partial.clear()

    def text(self) -> tuple[str, int]:
        """The kept bytes decoded, and how many bytes were left out."""
        cut = max(0, len(self.tail) - self.keep)
        dropped = self.dropped + cut
        tail = bytes(self.tail[cut:])
        head = bytes(self.head)
        if dropped and head:
            # a gap in the middle: keep whole lines on both sides of it
            head = head[: head.rfind(b"\n") + 1]
            tail = tail[tail.find(b"\n") + 1 :]
        return (head + tail).decode("utf-8", errors="replace"), dropped


class _Pipes:
    """The child's pipes on one selector: feed stdin, read stdout and stderr."""

    def __init__(
        self, child: subprocess.Popen[bytes], data: bytes | None, out: _Kept, err: _Kept
    ) -> None:
        self.child = child
        self.selector = selectors.DefaultSelector()
        self.readers: dict[int, _Kept] = {}
        for stream, kept in ((child.stdout, out), (child.stderr, err)):
            if stream is not None:
                fd = stream.fileno()
                os.set_blocking(fd, False)
                self.selector.register(fd, selectors.EVENT_READ)
                self.readers[fd] = kept
        self.pending = memoryview(data or b"")
        self.stdin_fd: int | None = None
        if child.stdin is not None:
            self.stdin_fd = child.stdin.fileno()
            os.set_blocking(self.stdin_fd, False)
            if self.pending:
                self.selector.register(self.stdin_fd, selectors.EVENT_WRITE)
            else:
                self._close_stdin()

    def pump(
        self,
        deadline: float,
        on_tick: Callable[[float], None] | None,
        tick: float,
        started: float,
    ) -> bool:
        """Move bytes until the child exits (False) or the deadline passes (True)."""
        next_tick = started + tick
        while self.child.poll() is None:
            now = time.monotonic()
            if now >= deadline:
                return True
            if on_tick is not None and now >= next_tick:
                on_tick(now - started)
                next_tick = now + tick
            wait = min(deadline, next_tick) - now if on_tick else deadline - now
            wait = max(0.0, min(wait, tick))
            if self.selector.get_map():
                self._step(wait)
            else:  # every pipe is closed, the child runs on
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.child.wait(wait)
        return False

    def drain(self) -> None:
        """Take what the exited child left in its pipes; never wait for a background job."""
        until = time.monotonic() + _DRAIN_SECONDS
        if self.stdin_fd is not None:
            self._close_stdin()
        while self.readers and time.monotonic() < until:
            if not self._step(max(0.0, min(0.02, until - time.monotonic()))):
                return  # nothing more is waiting

    def _step(self, wait: float) -> bool:
        """One select; False when nothing was ready."""
        ready = self.selector.select(wait)
        for key, _ in ready:
            fd = key.fd
            if fd == self.stdin_fd:
                self._write()
            else:
                self._read(fd)
        return bool(ready)

    def _read(self, fd: int) -> None:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        if chunk:
            self.readers[fd].add(chunk)
        else:  # end of file: every writer is gone
            self.selector.unregister(fd)
            del self.readers[fd]

    def _write(self) -> None:
        assert self.stdin_fd is not None
        try:
            written = os.write(self.stdin_fd, self.pending[:_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the child stopped reading (exited): that is its business
            written = len(self.pending)
        self.pending = self.pending[written:]
        if not self.pending:
            self._close_stdin()

    def _close_stdin(self) -> None:
        assert self.child.stdin is not None
        if self.stdin_fd is not None and self.stdin_fd in self.selector.get_map():
            self.selector.unregister(self.stdin_fd)
        self.stdin_fd = None
        with contextlib.suppress(OSError):
            self.child.stdin.close()

    def close(self) -> None:
        self.selector.close()
        for stream in (self.child.stdin, self.child.stdout, self.child.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


_PRCTL: list[Callable[..., int] | None] = []


def _prctl() -> Callable[..., int] | None:
    """libc's prctl on Linux, looked up once in the parent (the child between fork and
    exec should do as little as can be); None elsewhere."""
    if not _PRCTL:
        function: Callable[..., int] | None = None
        if sys.platform.startswith("linux"):
            try:
                function = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):
                function = None
        _PRCTL.append(function)
    return _PRCTL[0]
