"""Read-only reports: ``loop status``, ``loop next``, ``loop check``, ``loop graph``.

Each command parses its options and prints the :class:`~the_loop.cli.item_answers.Answer`
that ``the_loop.cli.item_answers`` computes; the quick path prints the same answers.
"""

from __future__ import annotations

import click

from the_loop.cli.app import Env
from the_loop.cli.item_answers import Answer
from the_loop.cli.output import json_option, wants_json

ITEM = click.argument("item_ref", metavar="ID", required=False)
ALL = click.option("--all", "all_items", is_flag=True, help="Every work item.")
FULL = click.option(
    "--full",
    is_flag=True,
    help="With --json: every list in full (by default each holds at most 20 items "
    "beside its count).",
)


def _print(answer: Answer) -> None:
    if answer.notes:
        click.echo(answer.notes, nl=False, err=True)
    click.echo(answer.text, nl=False)
    if answer.errors:
        click.echo(answer.errors, nl=False, err=True)
    if answer.exit:
        raise click.exceptions.Exit(answer.exit)


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
    from the_loop.cli.item_answers import status_answer

    as_json = wants_json(env, json_output)
    _print(
        status_answer(env.root, env.cwd, item_ref, all_items=all_items, as_json=as_json, full=full)
    )


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
    from the_loop.cli.item_answers import next_answer

    as_json = wants_json(env, json_output)
    _print(
        next_answer(env.root, env.cwd, item_ref, all_ready=all_ready, as_json=as_json, full=full)
    )


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
    from the_loop.cli.item_answers import check_answer

    as_json = wants_json(env, json_output)
    _print(
        check_answer(
            env.root, env.cwd, item_ref, all_items=all_items, strict=strict, as_json=as_json
        )
    )


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
    from the_loop.cli.item_answers import NotesThenError, graph_answer

    try:
        answer = graph_answer(
            env.root, env.cwd, item_ref, fmt=fmt, as_json=wants_json(env, json_output)
        )
    except NotesThenError as exc:
        click.echo(exc.notes, nl=False, err=True)
        raise exc.error from None
    _print(answer)
