"""Run one git process: the only place loop starts git.

Every call is bounded: git's own work is quick, but a commit runs the user's
hooks, and a hook that never returns must not hold the project lock forever.
A process that outlives its time limit is stopped with its whole process
group (a hook's children included) and reported as a :class:`GitError`
naming the command. Output is read as bytes and decoded as UTF-8 with
replacement, so an odd file name never breaks a reader.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import GitError, Where

_INSTALL_HINT = "install git and make sure `git --version` works in this shell"
_MAX_DETAIL_LINES = 40  # hook output can be a whole test run; keep its tail
DEFAULT_TIMEOUT = 120.0  # seconds; plain git queries finish far sooner


@dataclass(frozen=True)
class Ran:
    """A finished git command: exit status and decoded output."""

    status: int
    out: str
    err: str

    def detail_lines(self) -> tuple[str, ...]:
        """Git's (and its hooks') output as detail lines; the tail when it is long."""
        text = self.err + "\n" + self.out
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        if len(lines) <= _MAX_DETAIL_LINES:
            return tuple(lines)
        dropped = len(lines) - _MAX_DETAIL_LINES
        return (f"… {dropped} earlier lines not shown", *lines[-_MAX_DETAIL_LINES:])


def run_git(
    top: Path,
    args: Sequence[str],
    *,
    ok: tuple[int, ...] | None = (0,),
    config: Mapping[str, str] | None = None,
    global_options: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    failure: str | None = None,
    hint: str | None = None,
) -> Ran:
    """Run ``git [-c k=v…] [global_options] args`` in ``top`` and return what it did.

    An exit status outside ``ok`` (``None``: any status is fine) is a
    :class:`GitError` saying ``failure`` (or which command failed) with git's
    output as details; so is a git that cannot start or runs past ``timeout``.
    """
    argv = ["git"]
    for key, value in (config or {}).items():
        argv += ["-c", f"{key}={value}"]
    argv += [*global_options, *args]
    try:
        child = subprocess.Popen(
            argv,
            cwd=top,
            env={**os.environ, **(env or {})},
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so a timeout stops hooks too
        )
    except FileNotFoundError as e:
        raise GitError("git could not be started", details=(str(e),), hint=_INSTALL_HINT) from e
    except OSError as e:
        raise GitError(f"git {args[0]} could not run", where=Where(top), details=(str(e),)) from e
    try:
        out, err = child.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop_group(child)
        raise GitError(
            f"`git {args[0]}` did not finish within {timeout:g} s and was stopped",
            where=Where(top),
            hint="a git hook is probably waiting or hanging; run the same git command by "
            "hand to see it, or raise checkpoint.hookTimeoutSeconds",
        ) from None
    except BaseException:
        _stop_group(child)  # Ctrl-C: leave no git (or hook) running behind us
        raise
    ran = Ran(child.returncode, _decode(out), _decode(err))
    if ok is not None and ran.status not in ok:
        what = failure or f"`git {' '.join(args)}` failed"
        raise GitError(
            f"{what} (exit {ran.status})", where=Where(top), details=ran.detail_lines(), hint=hint
        )
    return ran


def _stop_group(child: subprocess.Popen[bytes]) -> None:
    """Kill the child's process group and reap the child."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        child.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
