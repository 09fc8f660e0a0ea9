"""Starting and advancing work: ``loop new``, ``promote``, ``approve``, ``work-on``."""

from __future__ import annotations

from pathlib import Path

import click

from the_loop.cli.app import Env
from the_loop.cli.directive import SESSION, echo_dry, echo_outcome
from the_loop.cli.output import dim, emit_json, good, json_option, shown_path, wants_json, warn
from the_loop.errors import GitError, UsageError


@click.command()
@click.argument("title")
@click.option(
    "--id",
    "item_id",
    metavar="ID",
    help="The ticket id (e.g. issue-42 or 42); without it the item is a "
    "draft-<slug> until `loop promote`.",
)
@click.option("--bug", is_flag=True, help="A bug: write bugfix.md instead of requirements.md.")
@json_option
@click.pass_obj
def new(env: Env, title: str, item_id: str | None, bug: bool, json_output: bool) -> None:
    """Create a work item: requirements.md (or bugfix.md) and its log."""
    from the_loop.spec.project import open_project
    from the_loop.workflow.item_lifecycle import new_item

    created = new_item(open_project(env.root), title, item_id=item_id, bug=bug)
    if wants_json(env, json_output):
        emit_json(
            {
                "item": created.item,
                "path": str(created.path),
                "files": [str(p) for p in created.files],
            }
        )
        return
    click.echo(good("created ") + f"{created.item}  {dim(shown_path(created.path))}")
    for path in created.files:
        click.echo(f"  {shown_path(path)}")
    click.echo(f"next: write {created.files[0].name}, then `loop work-on {created.item}`")


@click.command()
@click.argument("draft_ref", metavar="DRAFT")
@click.option("--id", "new_id", required=True, metavar="ID", help="The ticket id, e.g. issue-42.")
@json_option
@click.pass_obj
def promote(env: Env, draft_ref: str, new_id: str, json_output: bool) -> None:
    """Give a draft work item its ticket id (folder and workItem: renamed)."""
    from the_loop.spec.project import open_project
    from the_loop.workflow.item_lifecycle import promote as promote_item

    moved = promote_item(open_project(env.root), draft_ref, new_id, cwd=env.cwd)
    if wants_json(env, json_output):
        emit_json(
            {
                "item": moved.item,
                "path": str(moved.path),
                "rewritten": [str(p) for p in moved.files],
            }
        )
        return
    click.echo(good("promoted ") + f"{draft_ref} → {moved.item}  {dim(shown_path(moved.path))}")
    click.echo(dim(f"  workItem: rewritten in {len(moved.files)} file(s)"))


@click.command()
@click.argument("item_ref", metavar="ID")
@click.argument("artifact")
@click.option(
    "--by",
    "by",
    metavar="HANDLE",
    help="Who approves (recorded in approvedBy), e.g. @alice. Default: git's user.name.",
)
@json_option
@click.pass_obj
def approve(env: Env, item_ref: str, artifact: str, by: str | None, json_output: bool) -> None:
    """Lock an artifact: status approved, approver and content hash recorded.

    ARTIFACT is brainstorm, requirements (or bugfix), design or tasks. Refused
    while an upstream artifact is unapproved or stale, and for a tasks.md whose
    task graph has errors. If a locked artifact changes later, it and everything
    downstream are stale until approved again.
    """
    from the_loop.spec.project import open_item
    from the_loop.workflow.item_lifecycle import approve as approve_artifact

    ctx = open_item(env.root, item_ref, cwd=env.cwd)
    result = approve_artifact(ctx, artifact, approver(env.root, by))
    if wants_json(env, json_output):
        emit_json(
            {
                "item": result.item,
                "artifact": result.path.name,
                "by": result.by,
                "hash": result.hash,
                "changed": result.changed,
            }
        )
        return
    if not result.changed:
        click.echo(f"{result.path.name} is already approved and unchanged ({result.hash})")
        return
    click.echo(good("approved ") + f"{result.path.name} by {result.by}  {dim(result.hash)}")
    click.echo(f"next: `loop work-on {result.item}`")


@click.command(name="work-on")
@click.argument("item_ref", metavar="ID")
@click.option(
    "--sync",
    is_flag=True,
    help="Repair the log's phase mirror when it disagrees with the artifacts.",
)
@click.option("--dry-run", is_flag=True, help="Only say what would be done.")
@SESSION
@json_option
@click.pass_obj
def work_on(
    env: Env, item_ref: str, sync: bool, dry_run: bool, session: str | None, json_output: bool
) -> None:
    """Pick a work item up where it stands and say exactly what to do next.

    Reports the phase, the artifacts and the tasks, and the resume anchor (the
    last log entry's Next:). Renders the next artifact from its template when
    it does not exist yet; when an approval moved the item across a phase
    boundary, checkpoints and prints the reset (contextManagement.phaseBoundary);
    then prints the brief for the next step.
    """
    from the_loop.spec.project import open_item
    from the_loop.workflow.work_on import work_on as run

    ctx = open_item(env.root, item_ref, cwd=env.cwd)
    result = run(ctx, sync=sync, dry_run=dry_run, session=session)
    if wants_json(env, json_output):
        emit_json(result.to_json())
        if result.crossing and result.crossing.outcome:
            from the_loop.cli.directive import mark_dispatched

            mark_dispatched(result.crossing.outcome, ctx.project.root)
        return
    _echo_work_on(result, ctx.project.root)


def _echo_work_on(result: object, root: object) -> None:
    from dataclasses import replace

    from the_loop.cli.status_text import status_lines
    from the_loop.workflow.status import item_status
    from the_loop.workflow.work_on import WorkOnResult

    assert isinstance(result, WorkOnResult) and isinstance(root, Path)
    view = item_status(result.report)
    if result.crossing is not None and result.crossing.outcome is not None:
        # The crossing's own reset is printed below as the directive.
        fresh = result.crossing.outcome.id
        view = replace(view, open_resets=tuple(r for r in view.open_resets if r.id != fresh))
    for line in status_lines(view):
        click.echo(line)
    item = result.report.id
    if result.synced is not None:
        note = "would repair" if result.dry_run else "repaired"
        click.echo(
            warn(f"{note} the phase mirror: ")
            + f"{result.synced.from_phase} → {result.synced.to_phase}"
        )
    if result.rendered is not None:
        verb = "would write" if result.dry_run else "wrote"
        click.echo(good(f"{verb} ") + f"{shown_path(result.rendered)} from its template")
    crossing = result.crossing
    if crossing is not None:
        if crossing.outcome is None:
            echo_dry(crossing.decision, f"checkpoint into {crossing.to_phase}")
        else:
            then = f"loop work-on {item}"
            if result.action.kind == "implement":
                then = f"loop execute-tasks {item}"
            echo_outcome(crossing.outcome, root, then=then)
    if result.brief:
        click.echo("")
        click.echo(result.brief, nl=False)


@click.command()
@click.argument("item_ref", metavar="ID")
@click.option(
    "--by", "by", metavar="HANDLE", help="Who approved the review. Default: git's user.name."
)
@SESSION
@json_option
@click.pass_obj
def finish(env: Env, item_ref: str, by: str | None, session: str | None, json_output: bool) -> None:
    """Mark a reviewed work item complete (the log is closed).

    Only from needs-review: every artifact approved, every task done. Takes a
    last checkpoint (phase complete, log status complete, a transition row).
    """
    from the_loop.spec.project import open_item
    from the_loop.workflow.item_report import ItemReport
    from the_loop.workflow.phase_crossing import finish as run

    ctx = open_item(env.root, item_ref, cwd=env.cwd)
    crossing = run(ItemReport(ctx), approver(env.root, by), session=session)
    assert crossing.outcome is not None
    if wants_json(env, json_output):
        closed = [r.to_json() for r in crossing.closed_resets]
        emit_json({**crossing.outcome.to_json(), "closedResets": closed})
        return
    echo_outcome(crossing.outcome, ctx.project.root, then=f"loop status {ctx.item.id}")
    for record in crossing.closed_resets:
        click.echo(
            f"closed open reset: {record.mode} after checkpoint {record.checkpoint} "
            "(never confirmed; recorded as aborted)"
        )


def approver(root: Path, by: str | None) -> str:
    """Who approves: ``--by``, else the name git records as the author in the project."""
    if by:
        return by
    from the_loop.git.repo import IDENTITY_HINT, identity

    try:
        name, _email = identity(root)
    except GitError as exc:
        raise UsageError(
            "who approves? --by was not given, and git does not know who you are here",
            hint=f"pass --by @you, or {IDENTITY_HINT}",
        ) from exc
    return name
