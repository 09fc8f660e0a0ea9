"""The checkpoints the driver takes itself, and the words that go into them.

* **Task done**: when the agent finished without running ``loop task done``
  and the task's ``_Test:_`` passes, loop checkpoints for it (through
  ``workflow.task_transitions.finish_task``): Did from the agent's last message,
  Next naming the task that comes next, the test's result.
* **Interim**: a task left unfinished with the window under pressure, or a run
  stopped by Ctrl-C (``mid_task``).
* **Stop**: the run gives up on a task; the entry says why under Blockers.
"""

from __future__ import annotations

import dataclasses

from the_loop.checkpoint import plans
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.policy import Decision, Reset
from the_loop.checkpoint.transaction import Outcome
from the_loop.dag.analysis import analyze
from the_loop.driver.agents import one_line
from the_loop.spec.project import ItemContext
from the_loop.tasks import Task, TaskList, TaskState
from the_loop.telemetry import ContextReading
from the_loop.workflow.item_report import ItemReport, fresh_report
from the_loop.workflow.task_tests import Verification
from the_loop.workflow.task_transitions import finish_task as finish
from the_loop.workflow.task_transitions import mid_task


def next_after(report: ItemReport, task_id: str, *, rerun: str) -> str:
    """A concrete Next: the task ``next`` will hand out once ``task_id`` is done."""
    tasks = report.tasks
    if tasks is None:
        return f"run `loop status {report.id}` to see what is left"
    done = TaskList(
        tasks.path,
        tuple(
            dataclasses.replace(t, state=TaskState.DONE) if t.id == task_id else t
            for t in tasks.tasks
        ),
        tasks.findings,
        tasks.dependency_source,
    )
    dag = analyze(done)
    if dag.next is not None:
        following = dag.task(dag.next)
        return f"implement task {following.id}: {following.title} (`{rerun}` runs it)"
    if all(t.state is TaskState.DONE for t in done.tasks):
        return f"all tasks done: review the work (`loop work-on {report.id}` prints the brief)"
    return f"no task is ready once task {task_id} is done: fix tasks.md (`loop check {report.id}`)"


def continue_next(task: Task, rerun: str) -> str:
    """The Next: of an interim checkpoint inside ``task``."""
    what = f"make its test {task.test} pass" if task.test else "finish it"
    return f"continue task {task.id}: {task.title}; {what} (`{rerun}` resumes it)"


def finish_task(
    ctx: ItemContext,
    task: Task,
    *,
    message: str,
    agent: str,
    runs: int,
    failures: tuple[str, ...],
    verification: Verification | None,
    session: str | None,
    rerun: str,
) -> Outcome:
    """Checkpoint ``task`` as done on the agent's behalf (its test passed, or it has none)."""
    said = one_line(message) if message.strip() else f"the agent finished task {task.id}"
    runs_text = f"{runs} run" + ("s" if runs != 1 else "")
    if failures:
        runs_text += f", {len(failures)} failed: " + "; ".join(failures)
    did = f"{said} ({agent}, {runs_text}; checkpoint taken by `loop execute-tasks --agent`)"
    tests = None
    if verification is None:
        tests = "no _Test:_ command; the agent's clean finish is the only evidence"
    return finish(
        ctx,
        task.id,
        did=did,
        next_step=next_after(fresh_report(ctx), task.id, rerun=rerun),
        tests=tests,
        verify=False,  # the driver ran the task's test itself, before this
        verification=verification,
        session=session,
        dispatch=False,  # the driver marks it when it performs the reset
    )


def interim(
    ctx: ItemContext,
    task: Task,
    *,
    did: str,
    reading: ContextReading | None,
    session: str | None,
    rerun: str,
    tests: str | None = None,
) -> Outcome:
    """An interim checkpoint inside ``task``; the policy decides the reset from ``reading``."""
    tokens = reading.tokens_in_use if reading is not None else None
    window = reading.window if reading is not None and tokens is not None else None
    if tokens is not None and window is not None and tokens > window:
        window = None  # a count past the window says the window is wrong; keep the count
    outcome, _ = mid_task(
        ctx,
        did=did,
        next_step=continue_next(task, rerun),
        task_id=task.id,
        tokens=tokens,
        window=window,
        tests=tests,
        session=session,
        dispatch=False,  # the driver marks it when it performs the reset
    )
    return outcome


def stop_note(
    ctx: ItemContext, task: Task, *, reason: str, did: str, session: str | None, rerun: str
) -> Outcome | None:
    """The entry that ends a run with ``task`` open: why, under Blockers; no reset."""
    decision = Decision(Reset.NONE, f"the run stopped during task {task.id}; nothing to reset")

    def plan() -> checkpoint.Plan | None:
        report = fresh_report(ctx)
        if report.dag is None or report.dag.task(task.id).state is TaskState.DONE:
            return None  # done meanwhile: nothing to say
        phase = report.phase.recorded or "implementation"
        entry = plans.EntryText(
            summary=f"run stopped during task {task.id}: {one_line(reason, 120)}",
            phase=phase,
            did=did,
            next=continue_next(task, rerun),
            tests="see Blockers",
            blockers=reason,
        )
        plans.ensure_log(ctx, report.title, phase)
        return plans.build(
            ctx,
            entry,
            decision,
            subject=f"interim, task {task.id}",
            task_id=task.id,
            session=session,
        )

    return checkpoint.run(ctx.project.root, plan)
