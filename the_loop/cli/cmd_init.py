"""``loop init``: set up .the-loop/ and the spec folder."""

from __future__ import annotations

import sys

import click

from the_loop.cli.app import Env
from the_loop.cli.output import dim, emit_json, good, json_option, wants_json, warn
from the_loop.config.loader import config_path
from the_loop.workflow.init_project import init_project

_COLOURS = {"created": "green", "updated": "green", "skipped": None, "needs-attention": "yellow"}


@click.command()
@click.option("--defaults", is_flag=True, help="Ask nothing; use the schema defaults.")
@click.option("--dry-run", is_flag=True, help="Only report what would be done.")
@json_option
@click.pass_obj
def init(env: Env, defaults: bool, dry_run: bool, json_output: bool) -> None:
    """Set up .the-loop/config.yaml and the spec folder (safe to re-run).

    Never overwrites an existing file of yours: each step is reported as
    created, updated, skipped or needs attention. On a terminal it asks two
    questions unless --defaults is given.
    """

    spec_dir, commit = None, True
    interactive = not defaults and sys.stdin.isatty() and not wants_json(env, json_output)
    if interactive and not config_path(env.root).exists():
        spec_dir = click.prompt("Folder for work items (specs)", default="docs/specs")
        commit = click.confirm(
            "Commit work in progress with git at every checkpoint?", default=True
        )
    steps = init_project(env.root, spec_dir=spec_dir, commit=commit, dry_run=dry_run)
    if wants_json(env, json_output):
        emit_json(
            {
                "root": str(env.root),
                "dryRun": dry_run,
                "steps": [{"path": s.path, "action": s.action, "detail": s.detail} for s in steps],
            }
        )
        return
    prefix = "would be " if dry_run else ""
    for step in steps:
        action = (
            step.action if step.action in ("skipped", "needs-attention") else prefix + step.action
        )
        colour = _COLOURS.get(step.action)
        label = click.style(f"{action:<16}", fg=colour) if colour else dim(f"{action:<16}")
        click.echo(f"{label} {step.path}  {dim(step.detail)}")
    attention = sum(1 for s in steps if s.action == "needs-attention")
    if attention:
        click.echo(warn(f"{attention} item(s) need attention"))
    elif not dry_run:
        click.echo(good("ready: ") + 'create a work item with `loop new "<title>"`')
