"""Read-only reports: ``loop status``, ``loop next``, ``loop check``, ``loop graph``.

Each command reads the item's report (``the_loop.workflow.item_report``), asks the
workflow for its answer and prints it: problems that did not stop the command
(an item's bad override) on stderr first, then the answer on stdout, then, for
``graph``, the graph's errors on stderr. The exit code is 1 when the answer says
something is wrong (no task can start, failed checks, a broken graph).

The workflow modules are imported inside the commands: a report whose answer the
parse cache holds never needs the graph analysis or the requirements' classes.
"""

from __future__ import annotations

from pathlib import Path

import click

from the_loop.cli.app import Env
from the_loop.cli.output import (
    bad,
    echo_problems,
    emit_json,
    emit_json_table,
    finding_line,
    good,
    json_option,
    relative_finding,
    shown_path,
    wants_json,
)
from the_loop.errors import ExitCode, UsageError
from the_loop.findings import Finding
from the_loop.io import collector
from the_loop.workflow.item_report import ItemReport

ITEM = click.argument("item_ref", metavar="ID", required=False)
ALL = click.option("--all", "all_items", is_flag=True, help="Every work item.")
FULL = click.option(
    "--full",
    is_flag=True,
    help="With --json: every list in full (by default each holds at most 20 items "
    "beside its count).",
)


def _reports(env: Env, item_ref: str | None, all_items: bool) -> list[ItemReport]:
    """The reports a command works on: one item, or every item with ``--all``."""
    from the_loop.spec.project import item_context, open_item, open_project

    if item_ref and all_items:
        raise UsageError("give a work item or --all, not both")
    if item_ref:
        return [ItemReport(open_item(env.root, item_ref, cwd=env.cwd, tolerant=True))]
    if not all_items:
        raise UsageError("name a work item (e.g. `42` or `issue-42`) or pass --all")
    project = open_project(env.root)
    return [ItemReport(item_context(project, item, tolerant=True)) for item in project.items()]


def _echo_lines(lines: list[str]) -> None:
    click.echo("".join(line + "\n" for line in lines), nl=False)


def _exit_failing(failing: bool) -> None:
    if failing:
        raise click.exceptions.Exit(int(ExitCode.FAILURE))


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
    from the_loop.cli.status_text import status_lines, status_table
    from the_loop.workflow.answer_limits import LIST_LIMIT
    from the_loop.workflow.status import item_status

    with collector.paused(expected_objects=collector.LARGE):  # as in `next`, below
        views = [item_status(r) for r in _reports(env, item_ref, all_items)]
    if wants_json(env, json_output):
        answers = [v.to_json(None if full else LIST_LIMIT) for v in views]
        emit_json(answers if all_items else answers[0])
        return
    _echo_lines(status_table(views) if all_items else status_lines(views[0]))


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
    from the_loop.workflow import next_answer
    from the_loop.workflow.answer_limits import LIST_LIMIT

    # Loading the config's schema and the item, reading every task and analysing the
    # graph build objects by the hundred thousand and leave almost no cyclic garbage,
    # yet the young generations were walked some sixty times in a cold `next` of 10k
    # tasks (a tenth of its CPU): the collector waits until the answer is printed, and
    # what is alive then is frozen (``the_loop.io.collector``).
    with collector.paused(expected_objects=collector.LARGE):
        (report,) = _reports(env, item_ref, False)
        if wants_json(env, json_output):
            data, failing = next_answer.next_answer(
                report, all_ready=all_ready, limit=None if full else LIST_LIMIT
            )
            echo_problems(report.ctx.problems)
            emit_json(data)
        else:
            view = next_answer.next_view(report, all_ready=all_ready)
            text, failing = view.render(), view.failing
            echo_problems(report.ctx.problems)
            click.echo(text, nl=False)
    _exit_failing(failing)


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

    with collector.paused(expected_objects=collector.LARGE):  # as in `next`
        selected = _reports(env, item_ref, all_items)
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
        _exit_failing(failed)
        return
    lines = [finding_line(f) for f in findings]
    if nothing:
        where = shown_path(_spec_root(env.root))
        lines.append(bad("nothing was checked: ") + f"no work items were found under {where}")
    verdict = bad("failed") if failed else good("ok")
    lines.append(
        f"{verdict}: {summary['error']} error(s), {summary['warning']} warning(s), "
        f"{summary['info']} info in {len(selected)} work item(s)"
    )
    _echo_lines(lines)
    _exit_failing(failed)


def _spec_root(root: Path) -> Path:
    from the_loop.spec.project import open_project

    return open_project(root).spec_root


@click.command()
@click.argument("item_ref", metavar="ID")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "mermaid", "dot", "svg"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@json_option
@click.pass_obj
def graph(env: Env, item_ref: str, fmt: str, json_output: bool) -> None:
    """Draw the task DAG with task states, waves and the critical path.

    A graph with errors (a cycle, an unknown or duplicate task) is still drawn
    as far as it can be; the errors follow on stderr and the exit code is 1.
    """
    from the_loop.workflow import graph_view

    with collector.paused(expected_objects=collector.LARGE):  # as in `next`
        (report,) = _reports(env, item_ref, False)
        echo_problems(report.ctx.problems)
        if not report.item.artifacts["tasks"].exists:
            raise UsageError(
                f"{report.id} has no tasks.md yet",
                hint=f"`loop work-on {report.id}` says what comes first",
            )
        if wants_json(env, json_output):
            data, errors = graph_view.graph_answer(report)
            emit_json_table({**data, "errors": [relative_finding(f).to_json() for f in errors]})
            _exit_failing(bool(errors))
            return
        from the_loop.dag.render import RENDERERS  # the graph analysis: only to draw the graph

        assert report.tasks is not None and report.dag is not None
        if fmt == "svg":
            from the_loop.dag.svg import render_svg as draw  # grandalf: only for an SVG
        else:
            draw = RENDERERS[fmt]
        click.echo(draw(report.id, report.tasks, report.dag), nl=False)
        _echo_graph_errors(report, graph_view.graph_errors(report))


def _echo_graph_errors(report: ItemReport, errors: list[Finding]) -> None:
    """The errors of a graph that was drawn anyway, on stderr; then exit 1."""
    if not errors:
        return
    lines = [
        bad("error: ") + f"the task graph of {report.id} has {len(errors)} error(s); "
        "what is drawn leaves out what they break"
    ]
    lines += ["  " + finding_line(f).replace("\n", "\n  ") for f in errors]
    lines.append(f"hint: `loop check {report.id}` lists every finding")
    click.echo("".join(line + "\n" for line in lines), nl=False, err=True)
    _exit_failing(True)
