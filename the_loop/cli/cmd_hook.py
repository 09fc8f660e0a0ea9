"""``loop hook EVENT --harness claude|codex``: what the harness runs on its hook events."""

from __future__ import annotations

import os
import sys

import click

from the_loop.cli.app import Env
from the_loop.hooks.dispatch import run_hook


@click.command()
@click.argument("event", metavar="EVENT")
@click.option(
    "--harness",
    default="claude",
    show_default=True,
    metavar="claude|codex",
    help="Which agent CLI runs the hook (its answer format).",
)
@click.pass_obj
def hook(env: Env, event: str, harness: str) -> None:
    """Answer a Claude Code or Codex hook: reads its JSON on stdin.

    EVENT is SessionStart, PostToolUse, PreCompact, PostCompact, Stop or
    SessionEnd; `loop install` wires them. It always exits 0: a failure is
    one line on stderr and in .the-loop/state/hooks/errors.log, so the
    harness is never broken by it.
    """

    # Arguments are checked by run_hook, not click: a usage error would exit 2,
    # which a harness reads as "block".
    result = run_hook(event=event, harness=harness, stdin=_stdin(), env=os.environ, cwd=env.cwd)
    if result.stdout:
        click.echo(result.stdout, nl=False)
    if result.stderr:
        click.echo(result.stderr, err=True)


def _stdin() -> str:
    try:
        return sys.stdin.read()
    except (OSError, ValueError, UnicodeDecodeError):
        return ""
