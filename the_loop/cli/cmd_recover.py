"""Recovery: ``loop reset confirm|abort`` and ``loop doctor``."""

from __future__ import annotations

import click

from the_loop.cli.app import Env
from the_loop.cli.directive import resolve_session_option
from the_loop.cli.output import bad, dim, emit_json, good, json_option, wants_json, warn
from the_loop.errors import ExitCode

ITEM = click.argument("item_ref", metavar="ID")
CHECKPOINT = click.option(
    "--checkpoint",
    "checkpoint_id",
    metavar="CHECKPOINT",
    help="Which checkpoint's reset (default: the item's latest open one).",
)


@click.group()
def reset() -> None:
    """Confirm or abort the reset that followed a checkpoint."""


@reset.command()
@ITEM
@click.option(
    "--session",
    envvar="LOOP_SESSION_ID",
    metavar="ID",
    callback=resolve_session_option,
    help="The session id now: the same one after a compaction, a new one after a clear "
    "(env LOOP_SESSION_ID; inside Claude Code or Codex it is found by itself).",
)
@CHECKPOINT
@json_option
@click.pass_obj
def confirm(
    env: Env, item_ref: str, session: str | None, checkpoint_id: str | None, json_output: bool
) -> None:
    """Confirm the reset happened (compact: same session, clear: new).

    With the hooks installed (`loop install`) this happens by itself.
    """
    from the_loop.checkpoint.resets import acknowledge
    from the_loop.checkpoint.resets import confirm as run
    from the_loop.spec.project import open_item

    ctx = open_item(env.root, item_ref, cwd=env.cwd)
    if session is None:
        # A person working by hand: their word, recorded as unverified.
        record = acknowledge(ctx.project.root, ctx.item.id, checkpoint=checkpoint_id)
    else:
        record = run(ctx.project.root, ctx.item.id, session, checkpoint=checkpoint_id)
    if wants_json(env, json_output):
        emit_json(record.to_json())
        return
    click.echo(
        good("confirmed ")
        + f"{record.mode} after checkpoint {record.checkpoint}"
        + (dim(f" ({record.note})") if record.note else "")
    )


@reset.command()
@ITEM
@CHECKPOINT
@click.option("--reason", help="Why the reset did not happen.")
@json_option
@click.pass_obj
def abort(
    env: Env, item_ref: str, checkpoint_id: str | None, reason: str | None, json_output: bool
) -> None:
    """Record that the reset did not happen (it is never replayed).

    The log's entry said the reset was about to happen; a correction entry is
    appended that says it did not (the log is append-only).
    """
    from the_loop.spec.project import open_item
    from the_loop.workflow.reset_abort import abort_reset

    ctx = open_item(env.root, item_ref, cwd=env.cwd)
    record = abort_reset(ctx, checkpoint_id=checkpoint_id, reason=reason)
    if wants_json(env, json_output):
        emit_json(record.to_json())
        return
    click.echo(warn("aborted ") + f"{record.mode} after checkpoint {record.checkpoint}")


@click.command()
@click.option("--repair", is_flag=True, help="Finish (or undo) an interrupted checkpoint.")
@click.option(
    "--discard",
    is_flag=True,
    help="Drop an interrupted checkpoint (undoing what it did, unless it committed) and set "
    "damaged state files aside.",
)
@json_option
@click.pass_obj
def doctor(env: Env, repair: bool, discard: bool, json_output: bool) -> None:
    """Find interrupted checkpoints and open resets; --repair fixes them.

    Exit 1 while something needs attention (after --repair, only what is left).
    """
    from the_loop.checkpoint.doctor import diagnose
    from the_loop.hooks.health import error_lines, hook_health

    report = diagnose(env.root, repair=repair, discard=discard)
    hooks = [h for h in hook_health(env.root) if h.relevant]
    if wants_json(env, json_output):
        emit_json({**report.to_json(), "hooks": [h.to_json() for h in hooks]})
    else:
        for line in report.lines():
            click.echo(line)
        for harness in hooks:
            for line in harness.lines(env.root):
                click.echo(dim(line) if not harness.broken else warn(line))
        if hooks:
            for line in error_lines(env.root):
                click.echo(warn(line))
        if report.healthy:
            click.echo(good("ok: ") + "nothing needs attention")
        else:
            click.echo(bad("needs attention"))
    if not report.healthy:
        raise click.exceptions.Exit(int(ExitCode.FAILURE))
