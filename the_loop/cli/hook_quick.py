"""``loop hook EVENT [--harness H]`` answered without click.

A harness runs ``loop hook PostToolUse`` after every tool call of the agent, so
its start-up is paid hundreds of times a session; click and the command table
cost more than the hook's own work. This path runs the same
:func:`~the_loop.hooks.dispatch.run_hook` the click command runs and prints its
result the way ``click.echo`` prints to a pipe. Any other form of the command
line (``--help``, a global option before ``hook``, an unknown option) goes to
click, unchanged. tests/cli/test_hook_quick.py holds both paths to the same
output.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing itself is not imported: start-up is the point here
if TYPE_CHECKING:
    from typing import TextIO


def parse(argv: list[str]) -> tuple[str, str] | None:
    """``(event, harness)`` for ``hook EVENT [--harness H]``; None for anything else."""
    if not argv or argv[0] != "hook":
        return None
    event: str | None = None
    harness = "claude"
    args = iter(argv[1:])
    for arg in args:
        if arg == "--harness":
            value = next(args, None)
            if value is None:
                return None
            harness = value
        elif arg.startswith("--harness="):
            harness = arg[len("--harness=") :]
        elif arg.startswith("-") or event is not None:
            return None
        else:
            event = arg
    return None if event is None else (event, harness)


def run(argv: list[str]) -> int | None:
    """Answer the hook and return its exit code (0); None: click must handle it."""
    parsed = parse(argv)
    if parsed is None:
        return None
    event, harness = parsed
    try:
        from pathlib import Path

        from the_loop.hooks.dispatch import run_hook

        result = run_hook(
            event=event, harness=harness, stdin=_stdin(), env=os.environ, cwd=Path.cwd()
        )
        _write(sys.stdout, result.stdout)
        if result.stderr:
            _write(sys.stderr, result.stderr + "\n")
        if "the_loop.checkpoint.transaction" in sys.modules:
            from the_loop.cli.app import report_recoveries  # a checkpoint ran: say what it redid

            report_recoveries()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    return result.exit_code


def _stdin() -> str:
    try:
        return sys.stdin.read()
    except (OSError, ValueError, UnicodeDecodeError):
        return ""


def _write(stream: TextIO, text: str) -> None:
    """``click.echo`` to a pipe: colour codes removed unless the stream is a terminal."""
    if not text:
        return
    if "\x1b" in text and not stream.isatty():
        from the_loop.cli.text import strip_ansi

        text = strip_ansi(text)
    stream.write(text)
    stream.flush()
