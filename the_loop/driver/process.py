"""Run one agent process: its own process group, a deadline, live output, a clean stop.

The agent starts in a new session (process group), so a Ctrl-C at the terminal
reaches loop alone and loop decides how to stop it; a timeout or an interrupt
stops the whole group (SIGTERM, then SIGKILL after a grace period), the
agent's tools included. On Linux the agent is also told to die with loop
(``PR_SET_PDEATHSIG``), so a killed driver leaves no agent running on.

stdout is read line by line on a thread and handed to ``on_line`` from the
calling thread, between waits, together with ``on_tick`` for progress.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from the_loop.driver.agents import Invocation

GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL
_TICK = 0.25
_STDERR_LINES = 40
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Finished:
    """A finished (or stopped) agent process."""

    returncode: int | None  # None: stopped by loop at its deadline
    stdout: str
    stderr: str  # the last lines only
    seconds: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


# Looked up once, in the parent: the child between fork and exec should do as little as can be.
_PRCTL = _prctl()


def _die_with_parent() -> None:
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


def run_process(
    invocation: Invocation,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    on_line: Callable[[str], None] = lambda line: None,
    on_tick: Callable[[float], None] = lambda elapsed: None,
    on_start: Callable[[int], None] = lambda pid: None,
) -> Finished:
    """Run ``invocation`` until it exits or ``timeout`` seconds pass.

    A ``KeyboardInterrupt`` (or any other exception) while it runs stops the
    process group and is raised again.
    """
    started = time.monotonic()
    try:
        child = subprocess.Popen(
            list(invocation.argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE if invocation.stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent if _PRCTL is not None else None,
        )
    except OSError as exc:
        return Finished(127, "", f"{invocation.argv[0]}: {exc.strerror or exc}", 0.0)
    on_start(child.pid)
    lines: queue.Queue[str] = queue.Queue()
    out: list[str] = []
    err: deque[str] = deque(maxlen=_STDERR_LINES)
    threads = [
        _thread(_read_lines, child.stdout, lines),
        _thread(_read_tail, child.stderr, err),
    ]
    if invocation.stdin:
        threads.append(_thread(_write, child.stdin, invocation.stdin))
    timed_out = False
    try:
        while True:
            try:
                child.wait(timeout=_TICK)
                break
            except subprocess.TimeoutExpired:
                pass
            _drain(lines, out, on_line)
            elapsed = time.monotonic() - started
            on_tick(elapsed)
            if elapsed >= timeout:
                timed_out = True
                stop_group(child)
                break
    except BaseException:
        stop_group(child)
        raise
    finally:
        for thread in threads:
            # A grandchild may keep a pipe open after the agent exits; do not wait on it.
            thread.join(timeout=2)
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
    _drain(lines, out, on_line)
    return Finished(
        returncode=None if timed_out else child.returncode,
        stdout="".join(out),
        stderr="".join(err),
        seconds=time.monotonic() - started,
        timed_out=timed_out,
    )


def stop_group(child: subprocess.Popen[bytes]) -> None:
    """Stop the child's process group: SIGTERM, then SIGKILL after a grace period."""
    for sig, wait in ((signal.SIGTERM, GRACE_SECONDS), (signal.SIGKILL, GRACE_SECONDS)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, sig)
        try:
            child.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _thread(target: Callable[..., None], *args: object) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def _read_lines(stream: IO[bytes], lines: queue.Queue[str]) -> None:
    with contextlib.suppress(OSError, ValueError):
        for raw in stream:
            lines.put(raw.decode("utf-8", errors="replace"))


def _read_tail(stream: IO[bytes], tail: deque[str]) -> None:
    with contextlib.suppress(OSError, ValueError):
        for raw in stream:
            tail.append(raw.decode("utf-8", errors="replace"))


def _write(stream: IO[bytes], text: str) -> None:
    # The agent may exit without reading all of its stdin; that is its business.
    with contextlib.suppress(OSError, ValueError):
        stream.write(text.encode("utf-8"))
    with contextlib.suppress(OSError, ValueError):
        stream.close()


def _drain(lines: queue.Queue[str], out: list[str], on_line: Callable[[str], None]) -> None:
    while True:
        try:
            line = lines.get_nowait()
        except queue.Empty:
            return
        out.append(line)
        on_line(line)
