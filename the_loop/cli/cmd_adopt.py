"""``loop adopt``: turn a Kiro or Spec Kit item's outside approvals into loop locks."""

from __future__ import annotations

import click

from the_loop.cli.app import Env
from the_loop.cli.cmd_phase import approver
from the_loop.cli.output import dim, emit_json, good, json_option, wants_json
from the_loop.spec.project import open_item
from the_loop.workflow.adopt_item import adopt as adopt_item


@click.command()
@click.argument("item_ref", metavar="ID")
@click.option(
    "--by",
    "by",
    metavar="HANDLE",
    help="Who approved the artifacts (recorded in approvedBy), e.g. @alice. "
    "Default: git's user.name.",
)
@json_option
@click.pass_obj
def adopt(env: Env, item_ref: str, by: str | None, json_output: bool) -> None:
    """Record a Kiro or Spec Kit item's approvals as loop locks.

    Those formats approve outside their files, so loop reads their artifacts as
    approved externally. Adopting writes a front-matter block on each artifact
    that has none and approves it, upstream first, with its content hash: from
    then on an edit makes it and everything downstream stale.
    """

    ctx = open_item(env.root, item_ref, cwd=env.cwd)
    result = adopt_item(ctx, approver(env.root, by))
    if wants_json(env, json_output):
        emit_json(
            {
                "item": result.item,
                "approved": [
                    {"artifact": a.path.name, "hash": a.hash, "changed": a.changed}
                    for a in result.approved
                ],
            }
        )
        return
    for a in result.approved:
        click.echo(good("approved ") + f"{a.path.name} by {a.by}  {dim(a.hash)}")
    click.echo(f"next: `loop work-on {result.item}`")
