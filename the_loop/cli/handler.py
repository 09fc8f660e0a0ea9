"""The one place that turns exceptions into messages and exit codes.

``LoopError`` → its own message and exit code; Ctrl-C → 130; an ``OSError``
the file system raised (permissions, a full disk, a read-only file) → a
:class:`FileSystemError` naming the path, exit 1; anything else is a bug in
loop → exit 3 with a one-line message, and a crash report (version, command,
traceback) written where the message says (the traceback on screen only with
``--debug``). The table is pinned by tests/cli/test_exit_codes.py.

With ``--json`` an error is JSON too, on stdout, so a caller parsing the output
never meets text: ``{"ok": false, "error": {"kind", "message", "path", "line",
"col", "hint", "details", "exitCode"}}``; stderr stays empty.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from the_loop import __version__
from the_loop.cli.render import shown_path
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


Flag = bool | Callable[[], bool]


def _asked(flag: Flag) -> bool:
    return flag() if callable(flag) else flag


def guarded(
    call: Callable[[], T],
    *,
    debug: Flag,
    crash_dir: Callable[[], Path | None] = lambda: None,
    json_output: Flag = False,
) -> T:
    """Run ``call``; map failures onto ``click.exceptions.Exit`` with our codes.

    ``crash_dir`` names the folder for a crash report (the project's state dir);
    it is asked only when loop has a bug to report. ``json_output``: report an
    error as JSON on stdout instead of text on stderr. ``debug`` and
    ``json_output`` may be callables, asked when an error is reported: an option
    given after the command name is known only once the command line is parsed.
    """
    try:
        return call()
    except (click.exceptions.Exit, click.exceptions.Abort):
        raise
    except click.ClickException as exc:
        if not _asked(json_output):
            raise
        _emit_error("usage", exc.format_message(), int(exc.exit_code))
        raise click.exceptions.Exit(exc.exit_code) from None
    except LoopError as exc:
        _report(exc, _asked(debug), _asked(json_output))
    except KeyboardInterrupt:
        if _asked(json_output):
            _emit_error("interrupted", "interrupted", int(ExitCode.INTERRUPTED))
        else:
            click.echo("interrupted", err=True)
        raise click.exceptions.Exit(int(ExitCode.INTERRUPTED)) from None
    except BrokenPipeError:
        # The reader went away (e.g. `loop graph | head`); nothing left to say.
        sys.stderr.close()
        raise click.exceptions.Exit(int(ExitCode.FAILURE)) from None
    except OSError as exc:
        _report(file_system_error(exc), _asked(debug), _asked(json_output))
    except Exception as exc:
        if _caused_by_interrupt(exc):
            # Python wraps some exceptions raised while a class is built (a Ctrl-C in
            # ``__set_name__``, while modules load) in a RuntimeError.
            click.echo("interrupted", err=True)
            raise click.exceptions.Exit(int(ExitCode.INTERRUPTED)) from None
        _internal(exc, _asked(debug), crash_dir, _asked(json_output))
    raise AssertionError("unreachable")  # every except above raises


def _report(exc: LoopError, debug: bool, json_output: bool = False) -> None:
    if debug:
        _print_traceback()
    if json_output:
        _emit_loop_error(_relative(exc))
    else:
        click.echo(_styled_error(_relative(exc).render()), err=True)
    raise click.exceptions.Exit(int(exc.exit_code)) from None


def _print_traceback() -> None:
    import traceback  # only when something went wrong: it costs start-up time

    traceback.print_exc(file=sys.stderr)


def _internal(
    exc: Exception, debug: bool, crash_dir: Callable[[], Path | None], json_output: bool
) -> None:
    """A bug in loop: one line, a crash report, exit 3."""
    if debug:
        _print_traceback()
    report = _write_crash_report(exc, crash_dir)
    where = f"; details in {shown_path(report)}" if report else ""
    text = f"internal error: {type(exc).__name__}: {exc}"
    hint = f"this is a bug in loop{where}; run the command again with --debug for the traceback"
    if json_output:
        _emit_error("internal", text, int(ExitCode.INTERNAL), hint=hint)
    else:
        click.echo(f"{text}\n{hint}", err=True)
    raise click.exceptions.Exit(int(ExitCode.INTERNAL)) from None


def _emit_loop_error(exc: LoopError) -> None:
    where = exc.where
    # The kind is the documented error class it belongs to (errors.py): usage, config, …
    named = next(c for c in type(exc).__mro__ if c.__module__ == LoopError.__module__)
    _emit_error(
        named.__name__.removesuffix("Error").lower() or "loop",
        exc.message,
        int(exc.exit_code),
        hint=exc.hint,
        details=list(exc.details),
        path=str(where.path) if where else None,
        line=where.line if where else None,
        col=where.col if where else None,
    )


def _emit_error(kind: str, message: str, exit_code: int, **extra: object) -> None:
    error: dict[str, object] = {
        "kind": kind,
        "message": message,
        "path": None,
        "line": None,
        "col": None,
        "hint": None,
        "details": [],
    }
    error.update({k: v for k, v in extra.items() if v is not None})
    error["exitCode"] = exit_code
    click.echo(json.dumps({"ok": False, "error": error}, indent=2, ensure_ascii=False))


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


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


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
    head = click.style("error: ", fg="red", bold=True) + first
    return head + ("\n" + rest if rest else "")
