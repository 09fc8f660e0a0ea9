"""The one place that turns exceptions into messages and exit codes.

``LoopError`` → its own message and exit code; Ctrl-C → 130; anything else is
a bug in loop → exit 3 with a one-line message (the traceback only with
``--debug``). The table is pinned by tests/test_exit_codes.py.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from the_loop.errors import ExitCode, LoopError, Where

T = TypeVar("T")


def guarded(call: Callable[[], T], *, debug: bool) -> T:
    """Run ``call``; map failures onto ``click.exceptions.Exit`` with our codes."""
    try:
        return call()
    except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
        raise
    except LoopError as exc:
        if debug:
            traceback.print_exc(file=sys.stderr)
        click.echo(_styled_error(_relative(exc).render()), err=True)
        raise click.exceptions.Exit(int(exc.exit_code)) from None
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        raise click.exceptions.Exit(int(ExitCode.INTERRUPTED)) from None
    except BrokenPipeError:
        # The reader went away (e.g. `loop graph | head`); nothing left to say.
        sys.stderr.close()
        raise click.exceptions.Exit(int(ExitCode.FAILURE)) from None
    except Exception as exc:
        if _caused_by_interrupt(exc):
            # Python wraps some exceptions raised while a class is built (a Ctrl-C in
            # ``__set_name__``, while modules load) in a RuntimeError.
            click.echo("interrupted", err=True)
            raise click.exceptions.Exit(int(ExitCode.INTERRUPTED)) from None
        if debug:
            traceback.print_exc(file=sys.stderr)
        click.echo(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "this is a bug in loop; run the command again with --debug for the traceback",
            err=True,
        )
        raise click.exceptions.Exit(int(ExitCode.INTERNAL)) from None


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


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
