"""Start one git command where git itself must act, through the one process runner.

GitPython reads refs, config and objects; a few things only git does: ``status``
(the index against the tree), ``add``, ``commit`` with the user's hooks,
``check-ignore``. They run through :func:`the_loop.io.processes.run`: their own
process group, a deadline (a hook that never returns must not hold the project
lock forever: at the deadline the group is stopped, the hook's children
included), bounded output. Here the git side: the command line (never through
replace refs), a failure or a timeout as a :class:`GitError` naming the command,
and git's output as the error's details.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import GitError, Where
from the_loop.io.processes import run

_INSTALL_HINT = "install git and make sure `git --version` works in this shell"
_MAX_DETAIL_LINES = 40  # hook output can be a whole test run; keep its tail
DEFAULT_TIMEOUT = 120.0  # seconds; plain git queries finish far sooner
# loop's own git work sees the objects as committed, whatever replace refs say
_FIXED_OPTIONS = ("--no-replace-objects",)


@dataclass(frozen=True)
class Ran:
    """A finished git command: exit status and decoded output (the end of it, when long)."""

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
    on_record: Callable[[str], None] | None = None,
    failure: str | None = None,
    hint: str | None = None,
) -> Ran:
    """Run ``git [-c k=v…] [global_options] args`` in ``top`` and return what it did.

    ``on_record`` gets each NUL-terminated record of stdout as it comes (for
    ``-z`` output, which is then never held whole). An exit status outside
    ``ok`` (``None``: any status is fine) is a :class:`GitError` saying
    ``failure`` (or which command failed) with git's output as details; so is a
    git that cannot start or runs past ``timeout``.
    """
    argv = ["git"]
    for key, value in (config or {}).items():
        argv += ["-c", f"{key}={value}"]
    argv += [*_FIXED_OPTIONS, *global_options, *args]
    try:
        ran = run(
            argv,
            cwd=top,
            env={**os.environ, **(env or {})},
            stdin=stdin,
            timeout=timeout,
            on_line=on_record,
            line_end=b"\0",
        )
    except FileNotFoundError as e:
        raise GitError("git could not be started", details=(str(e),), hint=_INSTALL_HINT) from e
    except OSError as e:
        raise GitError(f"git {args[0]} could not run", where=Where(top), details=(str(e),)) from e
    if ran.timed_out:
        raise GitError(
            f"`git {args[0]}` did not finish within {timeout:g} s and was stopped",
            where=Where(top),
            hint="a git hook is probably waiting or hanging; run the same git command by "
            "hand to see it, or raise checkpoint.hookTimeoutSeconds",
        )
    result = Ran(ran.returncode if ran.returncode is not None else -1, ran.stdout, ran.stderr)
    if ok is not None and result.status not in ok:
        what = failure or f"`git {' '.join(args)}` failed"
        raise GitError(
            f"{what} (exit {result.status})",
            where=Where(top),
            details=result.detail_lines(),
            hint=hint,
        )
    return result
