"""The one place that turns exceptions into messages and exit codes.

``LoopError`` → its own message and exit code; Ctrl-C → 130; anything else is
a bug in loop → exit 3 with a one-line message (the traceback only with
``--debug``). The table is pinned by tests/test_exit_codes.py.

With ``--json`` an error is JSON too, on stdout, so a caller parsing the output
never meets text: ``{"ok": false, "error": {"kind", "message", "path", "line",
"col", "hint", "details", "exitCode"}}``; stderr stays empty.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from the_loop.errors import ExitCode, LoopError, Where

T = TypeVar("T")


def guarded(call: Callable[[], T], *, debug: bool, json_output: bool = False) -> T:
    """Run ``call``; map failures onto ``click.exceptions.Exit`` with our codes.

    ``json_output``: report an error as JSON on stdout instead of text on stderr.
    """
    try:
        return call()
    except (click.exceptions.Exit, click.exceptions.Abort):
        raise
    except click.ClickException as exc:
        if not json_output:
            raise
        _emit_error("usage", exc.format_message(), int(exc.exit_code))
        raise click.exceptions.Exit(exc.exit_code) from None
    except BrokenPipeError:
        # The reader went away (e.g. `loop graph | head`); nothing left to say.
        sys.stderr.close()
        raise click.exceptions.Exit(int(ExitCode.FAILURE)) from None
    except (KeyboardInterrupt, Exception) as exc:
        code = _report(exc, debug=debug, json_output=json_output)
        raise click.exceptions.Exit(code) from None


def _report(exc: BaseException, *, debug: bool, json_output: bool) -> int:
    """Say what went wrong (text on stderr, or JSON on stdout); return the exit code."""
    if isinstance(exc, KeyboardInterrupt):
        if json_output:
            _emit_error("interrupted", "interrupted", int(ExitCode.INTERRUPTED))
        else:
            click.echo("interrupted", err=True)
        return int(ExitCode.INTERRUPTED)
    if debug:
        traceback.print_exc(file=sys.stderr)
    if isinstance(exc, LoopError):
        if json_output:
            _emit_loop_error(_relative(exc))
        else:
            click.echo(_styled_error(_relative(exc).render()), err=True)
        return int(exc.exit_code)
    text = f"internal error: {type(exc).__name__}: {exc}"
    hint = "this is a bug in loop; run the command again with --debug for the traceback"
    if json_output:
        _emit_error("internal", text, int(ExitCode.INTERNAL), hint=hint)
    else:
        click.echo(f"{text}\n{hint}", err=True)
    return int(ExitCode.INTERNAL)


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


def shown_path(path: Path | str) -> str:
    """A path as the user should see it: relative to the current folder when inside it."""
    path = Path(path)
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)
    return str(path)


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
