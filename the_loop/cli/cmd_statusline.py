"""``loop statusline``: the status-line command ``loop install claude`` wires into Claude Code."""

from __future__ import annotations

import sys

import click

from the_loop.cli.app import Env
from the_loop.errors import LoopError
from the_loop.hooks.statusline import statusline_text

_STDIN_LIMIT = 1 << 20  # the status-line JSON is a few KB; never hold more than this


@click.command()
@click.pass_obj
def statusline(env: Env) -> None:
    """A status line for Claude Code: item, task, tokens and the next reset.

    Reads the status-line JSON Claude Code sends on stdin. Always exits 0 and
    prints one line, so the status bar never shows an error instead.
    """

    try:
        root = env.root
    except LoopError:
        root = None
    try:
        stdin = sys.stdin.read(_STDIN_LIMIT)
    except (OSError, ValueError, UnicodeDecodeError):
        stdin = ""
    click.echo(statusline_text(root, stdin))
