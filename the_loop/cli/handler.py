"""The one place that turns exceptions into messages and exit codes.

``LoopError`` → its own message and exit code; Ctrl-C → 130; an ``OSError``
the file system raised (permissions, a full disk, a read-only file) → a
:class:`FileSystemError` naming the path, exit 1; anything else is a bug in
loop → exit 3 with a one-line message, and a crash report (version, command,
traceback) written where the message says (the traceback on screen only with
``--debug``). The table is pinned by tests/cli/test_exit_codes.py.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from the_loop import __version__
from the_loop.cli.text import shown_path, style
from the_loop.errors import ExitCode, FileSystemError, LoopError, Where

T = TypeVar("T")


# errno → what the user can do about it
_OS_HINTS = {
    errno.EACCES: "check the file's and its folder's permissions (ls -l)",
    errno.EPERM: "check the file's and its folder's permissions (ls -l)",
    errno.EROFS: "the file system is read-only; run loop where the project can be written",
    errno.ENOSPC: "the disk is full; free some space and run the command again",
    errno.EDQUOT: "the disk quota is used up; free some space and run the command again",
    errno.EFBIG: "the file is larger than the file system allows",
}


def guarded(
    call: Callable[[], T], *, debug: bool, crash_dir: Callable[[], Path | None] = lambda: None
) -> T:
    """Run ``call``; map failures onto ``click.exceptions.Exit`` with our codes.

    ``crash_dir`` names the folder for a crash report (the project's state dir);
    it is asked only when loop has a bug to report.
    """
    try:
        return call()
    except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
        raise
    except LoopError as exc:
        _report(exc, debug)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        raise click.exceptions.Exit(int(ExitCode.INTERRUPTED)) from None
    except BrokenPipeError:
        # The reader went away (e.g. `loop graph | head`); nothing left to say.
        sys.stderr.close()
        raise click.exceptions.Exit(int(ExitCode.FAILURE)) from None
    except OSError as exc:
        _report(file_system_error(exc), debug)
    except Exception as exc:
        if debug:
            _print_traceback()
        report = _write_crash_report(exc, crash_dir)
        where = f"; details in {shown_path(report)}" if report else ""
        click.echo(
            f"internal error: {type(exc).__name__}: {exc}\n"
            f"this is a bug in loop{where}; run the command again with --debug for the traceback",
            err=True,
        )
        raise click.exceptions.Exit(int(ExitCode.INTERNAL)) from None
    raise AssertionError("unreachable")  # every except above raises


def _report(exc: LoopError, debug: bool) -> None:
    if debug:
        _print_traceback()
    click.echo(_styled_error(_relative(exc).render()), err=True)
    raise click.exceptions.Exit(int(exc.exit_code)) from None


def _print_traceback() -> None:
    import traceback  # only when something went wrong: it costs start-up time

    traceback.print_exc(file=sys.stderr)


def file_system_error(exc: OSError) -> FileSystemError:
    """An ``OSError`` as a loop error: the path, what the system said, what to do."""
    path = exc.filename if exc.filename is not None else None
    reason = exc.strerror or str(exc)
    return FileSystemError(
        f"cannot use this file: {reason}" if path else f"a file operation failed: {reason}",
        where=Where(Path(os.fsdecode(path))) if path is not None else None,
        hint=_OS_HINTS.get(exc.errno or 0, "fix what the system reports and run the command again"),
    )


def _user_state_dir() -> Path:
    """Where crash reports go outside a project: ``$XDG_STATE_HOME/loop/crashes``."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "loop" / "crashes"


def _write_crash_report(exc: BaseException, crash_dir: Callable[[], Path | None]) -> Path | None:
    """Write version, command and traceback to a file; ``None`` if it cannot be written."""
    import traceback
    from datetime import datetime, timezone

    try:
        folder = crash_dir() or _user_state_dir()
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        path = folder / f"loop-crash-{stamp}.txt"
        text = (
            f"loop {__version__}, Python {sys.version.split()[0]}\n"
            f"command: {' '.join(sys.argv)}\n"
            f"cwd: {os.getcwd()}\n\n"
            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        )
        path.write_text(text, encoding="utf-8")
        return path
    except Exception:  # a crash report must never hide the crash it reports
        return None


def _relative(exc: LoopError) -> LoopError:
    """Show the error's path relative to the current folder when it lies inside it."""
    where = exc.where
    if where is not None:
        rel = shown_path(where.path)
        # "." would point at nothing: the current folder is the place already
        at_root = rel == "." and where.line is None
        exc.where = None if at_root else Where(rel, where.line, where.col)
    return exc


def _styled_error(text: str) -> str:
    first, _, rest = text.partition("\n")
    head = style("error: ", fg="red", bold=True) + first
    return head + ("\n" + rest if rest else "")
