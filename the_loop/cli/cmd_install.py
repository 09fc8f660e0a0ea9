"""``loop install claude|codex [--uninstall] [--dry-run]``: wire the hooks into a project."""

from __future__ import annotations

import shlex
import sys

import click

from the_loop.cli.app import Env
from the_loop.cli.output import dim, emit_json, good, heading, json_option, wants_json, warn
from the_loop.hooks.commands import entry_point
from the_loop.hooks.install import install as run_install
from the_loop.hooks.install import uninstall as run_uninstall

_WORDS = {
    "created": good("created "),
    "updated": good("updated "),
    "restored": good("restored "),
    "removed": good("removed "),
    "unchanged": dim("unchanged "),
    "absent": dim("absent "),
    "kept": warn("kept "),
}


@click.command()
@click.argument("harness", type=click.Choice(["claude", "codex"]))
@click.option("--uninstall", is_flag=True, help="Take loop's hooks out again.")
@click.option("--dry-run", is_flag=True, help="Only say what would change.")
@click.option(
    "--local",
    is_flag=True,
    help="Claude Code: .claude/settings.local.json (yours alone) instead of settings.json.",
)
@click.option(
    "--loop-command",
    metavar="COMMAND",
    help="How the harness should run loop (default: the absolute path of this loop).",
)
@json_option
@click.pass_obj
def install(
    env: Env,
    harness: str,
    uninstall: bool,
    dry_run: bool,
    local: bool,
    loop_command: str | None,
    json_output: bool,
) -> None:
    """Merge loop's hooks into the project's Claude Code or Codex settings.

    Claude Code: .claude/settings.json, plus the slash commands in
    .claude/commands/. Codex: .codex/hooks.json. Every entry you had is kept;
    the file as it was is backed up under .the-loop/state/install/; a second
    install changes nothing; --uninstall restores a file you had byte for byte.
    `loop doctor` then shows whether the hooks fire.
    """

    if uninstall:
        result = run_uninstall(env.root, harness, dry_run=dry_run, local=local)
    else:
        entry = shlex.split(loop_command) if loop_command else entry_point(sys.argv[0])
        result = run_install(env.root, harness, entry=entry, dry_run=dry_run, local=local)
    if wants_json(env, json_output):
        emit_json(result.to_json())
        return
    prefix = warn("dry run: would be ") if dry_run else ""
    for change in result.changes:
        detail = dim(f"  ({change.detail})") if change.detail else ""
        word = _WORDS.get(change.action, change.action + " ")
        click.echo(prefix + word + str(change.path) + detail)
    if result.backup is not None:
        click.echo(dim(f"backup of the file as it was: {result.backup}"))
    if result.preview is not None:
        click.echo(heading("the settings would read:"))
        click.echo(result.preview, nl=False)
    for note in result.notes:
        click.echo(warn("note: ") + note)
