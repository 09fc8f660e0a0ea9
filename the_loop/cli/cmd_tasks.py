"""Tasks and checkpoints: ``task start|done``, ``checkpoint``, ``pressure``,
``execute-tasks``, ``log`` and ``resume``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from the_loop.cli.app import Env
from the_loop.cli.directive import SESSION, echo_dry, echo_outcome, mark_dispatched
from the_loop.cli.output import (
    dim,
    echo_problems,
    emit_json,
    good,
    heading,
    json_option,
    wants_json,
    warn,
)
from the_loop.errors import UsageError

if TYPE_CHECKING:
    from the_loop.checkpoint.policy import PressureReading
    from the_loop.spec.project import ItemContext

ITEM = click.argument("item_ref", metavar="ID")
TASK = click.argument("task_id", metavar="N")


@click.group()
def task() -> None:
    """Start or finish one task of a work item."""


@task.command()
@ITEM
@TASK
@SESSION
@json_option
@click.pass_obj
def start(env: Env, item_ref: str, task_id: str, session: str | None, json_output: bool) -> None:
    """Mark task N in progress (refused while a dependency is open)."""
    from the_loop.workflow.task_transitions import locate, start_task

    started = start_task(locate(env.root, item_ref, cwd=env.cwd), task_id, session=session)
    if wants_json(env, json_output):
        emit_json({"task": started.id, "state": "in-progress"})
        return
    click.echo(good("started ") + f"task {started.id}: {started.title}")


@task.command()
@ITEM
@TASK
@click.option("--did", required=True, help="What was done (goes into the log entry).")
@click.option(
    "--next", "next_step", required=True, help="The concrete next step a fresh session can act on."
)
@click.option("--tests", help='Tests run and their result, e.g. "pytest -q: 42 passed".')
@click.option("--blockers", default="none", show_default=True, help="Anything waiting on a human.")
@click.option(
    "--verify",
    is_flag=True,
    help="Run the task's _Test:_ command, after every other check; a failing test means not done.",
)
@click.option(
    "--adopt",
    is_flag=True,
    help="The task was ticked by hand: record its checkpoint now, without ticking it again.",
)
@SESSION
@json_option
@click.pass_obj
def done(
    env: Env,
    item_ref: str,
    task_id: str,
    did: str,
    next_step: str,
    tests: str | None,
    blockers: str,
    verify: bool,
    adopt: bool,
    session: str | None,
    json_output: bool,
) -> None:
    """Finish task N: checkpoint, then print the reset to perform.

    The checkpoint ticks the task in tasks.md, appends an execution-log entry
    (Did, Checkpoint/tests, Next, Context), mirrors the phase and commits the
    work in progress; only then is the reset directive printed. The last
    task's checkpoint also enters needs-review, with one reset for both.

    Every quick check (the words of --did and --next, the lock, the approval,
    the task's state and dependencies) runs before the test of --verify.
    """
    from the_loop.cli.progress import showing_run
    from the_loop.workflow.task_transitions import finish_task, locate

    outcome = finish_task(
        locate(env.root, item_ref, cwd=env.cwd),
        task_id,
        did=did,
        next_step=next_step,
        tests=tests,
        blockers=blockers,
        adopt=adopt,
        verify=True if verify else None,  # else checkpoint.verifyTests decides
        session=session,
        watch_test=showing_run,
    )
    if wants_json(env, json_output):
        emit_json(outcome.to_json())
        return
    then = f"loop execute-tasks {outcome.item}"
    if outcome.phase == "needs-review":
        then = f"loop work-on {outcome.item} (the review brief)"
    echo_outcome(outcome, then=then)


@click.command(name="checkpoint")
@ITEM
@click.option("--mid-task", is_flag=True, help="An interim checkpoint inside an unfinished task.")
@click.option("--task", "task_id", metavar="N", help="The task (default: the one in progress).")
@click.option("--tokens", type=int, help="Tokens in use in the context window.")
@click.option("--window", type=int, help="Size of the context window, in tokens.")
@click.option("--percent", type=float, help="Percent of the window in use (instead of --window).")
@click.option("--did", required=True, help="What was done so far.")
@click.option("--next", "next_step", required=True, help="The concrete next step.")
@click.option("--tests", help="Tests run and their result.")
@SESSION
@json_option
@click.pass_obj
def checkpoint_cmd(
    env: Env,
    item_ref: str,
    mid_task: bool,
    task_id: str | None,
    tokens: int | None,
    window: int | None,
    percent: float | None,
    did: str,
    next_step: str,
    tests: str | None,
    session: str | None,
    json_output: bool,
) -> None:
    """An interim checkpoint mid-task; compacts when the window is full.

    The pressure verdict has two arms, tokens in use and percent of the window;
    the stricter wins. Any verdict above no_op means compaction (never a clear
    inside an unfinished task); a missing token count is reported as a gap.
    """
    from the_loop.workflow.task_transitions import locate
    from the_loop.workflow.task_transitions import mid_task as run

    if not mid_task:
        raise UsageError(
            "only --mid-task checkpoints are taken with `loop checkpoint`",
            hint="a finished task is checkpointed by `loop task done`",
        )
    outcome, reading = run(
        locate(env.root, item_ref, cwd=env.cwd),
        did=did,
        next_step=next_step,
        task_id=task_id,
        tokens=tokens,
        window=window,
        percent=percent,
        tests=tests,
        session=session,
    )
    if wants_json(env, json_output):
        emit_json({**outcome.to_json(), "pressure": reading.to_json()})
        return
    _echo_reading(reading, label=heading("pressure: "))
    echo_outcome(outcome, then="carry on with the task")


def _echo_reading(reading: PressureReading, *, label: str = "") -> None:
    """The verdict, both arms, and every gap (a missing reading is never zero)."""
    verdict = reading.verdict.value if reading.verdict else "unknown"
    arms = f"tokens arm: {_arm(reading.token_arm)}, percent arm: {_arm(reading.percent_arm)}"
    click.echo(f"{label}{verdict}" + dim(f"  ({arms})"))
    for gap in reading.gaps:
        click.echo(warn("gap: ") + gap)


def _arm(value: object) -> str:
    return getattr(value, "value", "n/a")


@click.command()
@click.option("--tokens", type=int, help="Tokens in use in the context window.")
@click.option("--window", type=int, help="Size of the context window, in tokens.")
@click.option("--percent", type=float, help="Percent of the window in use.")
@click.option("--item", "item_ref", metavar="ID", help="Use this work item's overrides.")
@json_option
@click.pass_obj
def pressure(
    env: Env,
    tokens: int | None,
    window: int | None,
    percent: float | None,
    item_ref: str | None,
    json_output: bool,
) -> None:
    """The context-pressure verdict for a reading; writes nothing."""
    from the_loop.checkpoint.policy import pressure_verdict
    from the_loop.spec.project import open_item, open_project

    config = (
        open_item(env.root, item_ref, cwd=env.cwd).config
        if item_ref
        else open_project(env.root).config
    )
    reading = pressure_verdict(
        config.context.pressure, tokens=tokens, window=window, percent=percent
    )
    if wants_json(env, json_output):
        emit_json(reading.to_json())
        return
    _echo_reading(reading)


class _AgentChoice(click.Choice):
    """The agent kinds; a bare ``--agent`` (value "") means ``agent.kind`` from config."""

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        if value == "":
            return ""
        return str(super().convert(value, param, ctx))


@click.command(name="execute-tasks")
@ITEM
@click.option(
    "--agent",
    "agent",
    type=_AgentChoice(["claude", "codex", "command"]),
    is_flag=False,
    flag_value="",
    default=None,
    help="Drive the DAG with a headless agent until it is done (bare --agent: agent.kind).",
)
@click.option("--max-tasks", type=click.IntRange(min=1), help="With --agent: stop after N tasks.")
@click.option("--until", "until", metavar="TASK", help="With --agent: stop once TASK is done.")
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="With --agent: run up to N ready tasks side by side, each in its own git worktree, "
    "merged by a serial queue.",
)
@click.option("--dry-run", is_flag=True, help="Only say what would be done.")
@SESSION
@json_option
@click.pass_obj
def execute_tasks(
    env: Env,
    item_ref: str,
    agent: str | None,
    max_tasks: int | None,
    until: str | None,
    parallel: int,
    dry_run: bool,
    session: str | None,
    json_output: bool,
) -> None:
    """Walk the task DAG: one step per call, or all of it with --agent.

    Entering implementation crosses a phase boundary: checkpoint and the
    phaseBoundary reset. Otherwise hands out the next ready task (marked in
    progress) with its brief. Report back with `loop task done`, then call
    this again. When every task is done the item moves to needs-review.

    With --agent claude|codex|command, loop runs the agent itself, task after
    task: it verifies each task's test, checkpoints, and performs every reset
    (a fresh session after a clear, a compacted one after a compact) until the
    DAG is done, a task fails for good (exit 1) or Ctrl-C (exit 130; a rerun
    resumes). With --parallel N, up to N tasks run at once, each in a git
    worktree on branch loop/<item>/<task>; a serial queue rebases, tests and
    lands them on the current branch, one checkpoint commit per task. See
    docs/agents.md.
    """
    from the_loop.spec.project import open_item
    from the_loop.workflow.execute_tasks import execute_step

    if agent is None and (max_tasks is not None or until is not None):
        raise UsageError("--max-tasks and --until go with --agent")
    if agent is None and parallel > 1:
        raise UsageError("--parallel goes with --agent: loop runs the lanes' agents itself")
    ctx = open_item(env.root, item_ref, cwd=env.cwd)
    if agent is not None:
        as_json = wants_json(env, json_output)
        _drive(ctx, agent or None, max_tasks, until, dry_run, as_json, parallel=parallel)
        return
    step = execute_step(ctx, dry_run=dry_run, session=session)
    if wants_json(env, json_output):
        emit_json(step.to_json())
        if step.crossing and step.crossing.outcome:
            mark_dispatched(step.crossing.outcome, ctx.project.root)
        return
    crossing = step.crossing
    if crossing is not None:
        if crossing.outcome is None:
            echo_dry(crossing.decision, f"checkpoint into {crossing.to_phase}")
        else:
            then = (
                f"loop work-on {ctx.item.id}"
                if crossing.to_phase == "needs-review"
                else f"loop execute-tasks {ctx.item.id}"
            )
            echo_outcome(crossing.outcome, ctx.project.root, then=then)
    if step.brief:
        if crossing is not None:
            click.echo("")
        click.echo(step.brief, nl=False)


def _drive(
    ctx: ItemContext,
    agent: str | None,
    max_tasks: int | None,
    until: str | None,
    dry_run: bool,
    as_json: bool,
    *,
    parallel: int = 1,
) -> None:
    """``execute-tasks --agent``: the headless driver, its events and summary."""
    import os
    import sys

    from the_loop.cli.agent_output import EventPrinter, echo_plan
    from the_loop.driver.run import DriveOptions, drive

    options = DriveOptions(agent=agent, max_tasks=max_tasks, until=until, env=dict(os.environ))
    if dry_run:
        from the_loop.driver.dry_run import plan_run

        plan = plan_run(ctx, options)
        if as_json:
            emit_json(plan.to_json())
        else:
            echo_plan(plan)
        return
    if parallel > 1:
        from the_loop.cli.progress import LaneView
        from the_loop.driver.lanes.coordinator import drive_parallel

        view = LaneView(as_json=as_json, live=sys.stderr, lanes=parallel)
        summary = drive_parallel(ctx, options, view, parallel=parallel)
    else:
        summary = drive(ctx, options, EventPrinter(as_json=as_json, live=sys.stderr))
    if summary.exit_code:
        raise click.exceptions.Exit(summary.exit_code)


@click.command(name="log")
@ITEM
@click.option(
    "--last",
    "last",
    type=int,
    default=5,
    show_default=True,
    help="How many entries, newest last (0: all).",
)
@json_option
@click.pass_obj
def log_cmd(env: Env, item_ref: str, last: int, json_output: bool) -> None:
    """List execution-log entries."""
    from the_loop.log.execution_log import read_log, tail_entries
    from the_loop.spec.project import open_item

    ctx = open_item(env.root, item_ref, cwd=env.cwd, tolerant=True)
    echo_problems(ctx.problems)
    path = ctx.item.artifacts["execution-log"].path
    if not path.exists():
        raise UsageError(
            f"{ctx.item.id} has no execution-log.md yet",
            hint=f"`loop work-on {ctx.item.id}` starts it",
        )
    entries = read_log(path).entries if last <= 0 else tuple(tail_entries(path, last))
    if wants_json(env, json_output):
        emit_json([e.to_json() for e in entries])
        return
    for entry in entries:
        click.echo(heading(f"{entry.stamp} — {entry.summary}"))
        for key, value in entry.fields.items():
            first, *rest = value.split("\n")
            click.echo(f"  {key}: {first}")
            for line in rest:
                click.echo(f"    {line}")


@click.command()
@ITEM
@json_option
@click.pass_obj
def resume(env: Env, item_ref: str, json_output: bool) -> None:
    """The resume brief: the last Next:, the ready tasks, what to read.

    Bounded to about 2,000 tokens however long the log is; meant to be the
    first thing a fresh session reads after a clear.
    """
    from the_loop.spec.project import open_item
    from the_loop.workflow.briefs import resume_brief
    from the_loop.workflow.item_report import ItemReport

    report = ItemReport(open_item(env.root, item_ref, cwd=env.cwd, tolerant=True))
    echo_problems(report.ctx.problems)
    text = resume_brief(report)
    if wants_json(env, json_output):
        entry = report.last_entry
        emit_json({"item": report.id, "brief": text, "next": entry.next if entry else None})
        return
    click.echo(text, nl=False)
