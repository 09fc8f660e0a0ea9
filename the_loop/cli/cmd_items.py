"""Read-only reports: ``loop status``, ``loop next``, ``loop check``, ``loop graph``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from the_loop.cli.app import Env
from the_loop.cli.output import (
    bad,
    dim,
    echo_findings,
    emit_json,
    emit_json_table,
    good,
    heading,
    json_option,
    relative_finding,
    shown_path,
    wants_json,
    warn,
)
from the_loop.errors import ExitCode, UsageError
from the_loop.workflow.item_report import ItemReport

if TYPE_CHECKING:
    from the_loop.workflow.status import ItemStatus

ITEM = click.argument("item_ref", metavar="ID", required=False)
ALL = click.option("--all", "all_items", is_flag=True, help="Every work item.")
FULL = click.option(
    "--full",
    is_flag=True,
    help="With --json: every list in full (by default each holds at most 20 items "
    "beside its count).",
)


def reports(env: Env, item_ref: str | None, all_items: bool) -> list[ItemReport]:
    """The reports a command works on: one item, or every item with ``--all``."""
    from the_loop.spec.project import item_context, open_item, open_project

    if item_ref and all_items:
        raise UsageError("give a work item or --all, not both")
    if item_ref:
        return [ItemReport(open_item(env.root, item_ref, cwd=env.cwd))]
    if not all_items:
        raise UsageError("name a work item (e.g. `42` or `issue-42`) or pass --all")
    project = open_project(env.root)
    return [ItemReport(item_context(project, item, tolerant=True)) for item in project.items()]


@click.command()
@ITEM
@ALL
@json_option
@FULL
@click.pass_obj
def status(env: Env, item_ref: str | None, all_items: bool, json_output: bool, full: bool) -> None:
    """Where a work item stands: phase, artifacts, tasks, the next action.

    The phase is shown as the artifacts imply it and as execution-log.md
    records it; a disagreement is flagged (loop check explains it).
    """
    from the_loop.workflow.answer_limits import LIST_LIMIT
    from the_loop.workflow.status import item_status

    views = [item_status(r) for r in reports(env, item_ref, all_items)]
    if wants_json(env, json_output):
        limit = None if full else LIST_LIMIT
        answers = [v.to_json(limit) for v in views]
        emit_json(answers if all_items else answers[0])
        return
    if all_items:
        _status_table(views)
    else:
        _status_detail(views[0])


def _phase_text(view: ItemStatus) -> str:
    phase = view.phase
    text = phase.implied
    if phase.relation == "same":
        return text + dim("  (log agrees)")
    if phase.relation == "unrecorded":
        return text + dim("  (not recorded: no log phase)")
    if phase.relation in ("pending", "behind"):
        return text + warn(f"  (log: {phase.recorded}; boundary pending)")
    return text + bad(f"  (log says {phase.recorded})")


def _status_detail(v: ItemStatus) -> None:
    click.echo(heading(f"{v.id}") + (f"  {v.title}" if v.title else ""))
    rows = [("phase", _phase_text(v) + dim(f"  — {v.phase.reason}"))]
    rows.append(("artifacts", "  ".join(_artifact_word(a) for a in v.artifacts.values())))
    rows.append(("tasks", _tasks_text(v)))
    rows.append(("next", f"{v.action.text}  {dim('→ ' + v.action.command)}"))
    if v.resume is not None:
        rows.append(
            (
                "resume",
                f"{v.resume.next or bad('(no Next: in the last entry)')}"
                + dim(f"  — {v.resume.stamp}"),
            )
        )
    for record in v.open_resets:
        rows.append(
            (
                "reset",
                warn(
                    f"{record.mode} after checkpoint {record.checkpoint} not "
                    f"confirmed ({record.state})"
                )
                + dim(f"  → loop reset confirm {v.id} --session <id>"),
            )
        )
    if v.interrupted_checkpoint:
        rows.append(
            (
                "checkpoint",
                bad(f"{v.interrupted_checkpoint} was interrupted")
                + dim("  → loop doctor --repair"),
            )
        )
    counts = v.finding_counts
    if counts["error"] or counts["warning"]:
        rows.append(("findings", _counts_text(counts) + dim(f"  → loop check {v.id}")))
    for label, value in rows:
        click.echo(f"  {label:<10} {value}")


def _artifact_word(art: dict[str, object]) -> str:
    name = str(art["artifact"])
    if not art.get("exists"):
        return dim(f"{name}: missing")
    if "locked" not in art:
        return name
    if art.get("stale"):
        return bad(f"{name}: stale")
    if art.get("locked"):
        return good(f"{name}: approved")
    return warn(f"{name}: {art.get('status') or 'no status'}")


def _tasks_text(v: ItemStatus) -> str:
    if not v.total:
        return dim("none yet")
    text = f"{v.done}/{v.total} done"
    if v.in_progress:
        text += f" · in progress: {', '.join(v.in_progress)}"
    if v.ready:
        ready = list(v.ready[:8]) + (["…"] if len(v.ready) > 8 else [])
        text += f" · ready: {', '.join(ready)}"
    return text


def _counts_text(counts: dict[str, int]) -> str:
    parts = []
    if counts["error"]:
        parts.append(bad(f"{counts['error']} error(s)"))
    if counts["warning"]:
        parts.append(warn(f"{counts['warning']} warning(s)"))
    return ", ".join(parts)


def _status_table(views: list[ItemStatus]) -> None:
    if not views:
        click.echo('no work items yet; `loop new "<title>"` creates one')
        return
    width = max(len(v.id) for v in views)
    disagree = False
    for v in views:
        tasks = f"{v.done}/{v.total}" if v.total else "-"
        mismatch = v.phase.relation not in ("same", "pending", "behind", "unrecorded")
        disagree = disagree or mismatch
        phase = f"{v.phase.implied}{'!' if mismatch else ''}"
        notes = _counts_text(v.finding_counts)
        click.echo(
            f"{v.id:<{width}}  {bad(f'{phase:<24}') if mismatch else f'{phase:<24}'}"
            f"{tasks:>7}  {v.action.text}" + (f"  {notes}" if notes else "")
        )
    if disagree:
        click.echo(dim("! the log records another phase: `loop status ID` shows both"))


@click.command(name="next")
@click.argument("item_ref", metavar="ID")
@click.option("--all-ready", is_flag=True, help="Show every ready task, not just the next one.")
@json_option
@FULL
@click.pass_obj
def next_cmd(env: Env, item_ref: str, all_ready: bool, json_output: bool, full: bool) -> None:
    """The next ready task, with the requirements it cites.

    Ready means open with every dependency done. The choice among ready tasks
    is deterministic: in progress first, then the task heading the longest
    chain of remaining work, then the one with most open dependents, then the
    lowest id. Exit 1 when open tasks remain but none can start, or when the
    task graph has errors.
    """
    from the_loop.workflow.answer_limits import LIST_LIMIT
    from the_loop.workflow.next_task import next_answer, next_view

    report = reports(env, item_ref, False)[0]
    if wants_json(env, json_output):
        answer, failing = next_answer(
            report, all_ready=all_ready, limit=None if full else LIST_LIMIT
        )
        emit_json(answer)
    else:
        view = next_view(report, all_ready=all_ready)
        click.echo(view.render(), nl=False)
        failing = view.failing
    if failing:
        raise click.exceptions.Exit(int(ExitCode.FAILURE))


@click.command()
@ITEM
@ALL
@click.option("--strict", is_flag=True, help="Warnings fail the check too.")
@json_option
@click.pass_obj
def check(env: Env, item_ref: str | None, all_items: bool, strict: bool, json_output: bool) -> None:
    """Check work items: artifacts, locks, phase, task DAG, traceability.

    Every finding has a level (error, warning, info), a file:line, a message
    and a hint. Exit 1 on errors (and on warnings with --strict), or when
    there was nothing to check.
    """
    from the_loop.findings import counts, failing

    selected = reports(env, item_ref, all_items)
    checked = [r.check() for r in selected]
    findings = [f for found, _count in checked for f in found]
    evaluated = sum(count for _found, count in checked)
    summary = counts(findings)
    nothing = evaluated == 0
    failed = failing(findings, strict=strict) or nothing
    if wants_json(env, json_output):
        emit_json(
            {
                "ok": not failed,
                "items": [r.id for r in selected],
                "evaluated": evaluated,
                "counts": summary,
                "findings": [relative_finding(f).to_json() for f in findings],
            }
        )
    else:
        echo_findings(findings)
        if nothing:
            where = shown_path(_spec_root(env))
            click.echo(bad("nothing was checked: ") + f"no work items were found under {where}")
        verdict = bad("failed") if failed else good("ok")
        click.echo(
            f"{verdict}: {summary['error']} error(s), {summary['warning']} warning(s), "
            f"{summary['info']} info in {len(selected)} work item(s)"
        )
    if failed:
        raise click.exceptions.Exit(int(ExitCode.FAILURE))


def _spec_root(env: Env) -> Path:
    from the_loop.spec.project import open_project

    return open_project(env.root).spec_root


@click.command()
@click.argument("item_ref", metavar="ID")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "mermaid", "dot"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@json_option
@click.pass_obj
def graph(env: Env, item_ref: str, fmt: str, json_output: bool) -> None:
    """Draw the task DAG with task states, waves and the critical path."""
    report = reports(env, item_ref, False)[0]
    if not report.item.artifacts["tasks"].exists:
        raise UsageError(
            f"{report.id} has no tasks.md yet",
            hint=f"`loop work-on {report.id}` says what comes first",
        )
    if wants_json(env, json_output):
        from the_loop.workflow.graph_view import graph_answer

        emit_json_table(graph_answer(report))
        return
    from the_loop.dag.render import RENDERERS

    assert report.tasks is not None and report.dag is not None
    click.echo(RENDERERS[fmt](report.id, report.tasks, report.dag), nl=False)
