"""Task transitions: ``loop task start``, ``loop task done`` and mid-task checkpoints."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from the_loop.checkpoint import plans
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.policy import Boundary, PressureReading, boundary_reset, pressure_verdict
from the_loop.checkpoint.transaction import Outcome
from the_loop.dag.analysis import id_sort_key
from the_loop.errors import RefusedError, Where
from the_loop.io.child_process import run_bounded
from the_loop.spec.project import ItemContext
from the_loop.tasks import Task, TaskState, set_state, test_command
from the_loop.workflow.item_report import ItemReport, fresh_report

_OUTPUT_TAIL = 2000  # characters of a failing test's output kept for the message


def _task(report: ItemReport, task_id: str) -> Task:

    if report.dag is None:
        raise RefusedError(f"{report.id} has no tasks.md", hint=f"`loop work-on {report.id}`")
    key = task_id[1:] if task_id[:1] in "Tt" and task_id[1:].replace(".", "").isdigit() else task_id
    try:
        return report.dag.task(key)
    except Exception:
        ids = sorted(report.dag.tasks_by_id, key=id_sort_key)
        raise RefusedError(
            f"{report.id} has no task {task_id!r}",
            where=Where(report.item.artifacts["tasks"].path),
            hint="tasks: " + ", ".join(ids[:30]),
        ) from None


def _require_executable(report: ItemReport) -> None:
    lock = report.locks["tasks"]
    if not lock.locked:
        raise RefusedError(
            f"tasks.md is {lock.label}: tasks run only against a locked task list",
            where=Where(lock.path),
            hint=f"`loop approve {report.id} tasks --by @you`, then "
            f"`loop execute-tasks {report.id}`",
        )
    if report.phase.recorded not in ("implementation", "needs-review", "complete"):
        raise RefusedError(
            f"{report.id} has not entered implementation yet (the log says "
            f"{report.phase.recorded or 'nothing'})",
            hint=f"`loop execute-tasks {report.id}` crosses the phase boundary with a checkpoint",
        )


def _require_deps_done(report: ItemReport, task: Task) -> None:
    assert report.dag is not None
    blockers = report.dag.blocked_by.get(task.id, ())
    if blockers:
        raise RefusedError(
            f"task {task.id} depends on {', '.join(blockers)}, not done yet",
            where=Where(report.item.artifacts["tasks"].path, task.depends_line or task.line),
            hint=f"finish {blockers[0]} first (`loop next {report.id}` shows what is ready)",
        )


def start_task(ctx: ItemContext, task_id: str) -> Task:
    """Mark a task in progress; refuses while one of its dependencies is open."""
    with checkpoint.locked(ctx.project.root):
        report = fresh_report(ctx)
        _require_executable(report)
        task = _task(report, task_id)
        if task.state is TaskState.DONE:
            raise RefusedError(f"task {task.id} is already done")
        _require_deps_done(report, task)
        set_state(report.item.artifacts["tasks"].path, task.id, TaskState.IN_PROGRESS)
        return task


@dataclass(frozen=True)
class Verification:
    """The result of running a task's ``_Test:_`` command."""

    command: tuple[str, ...]
    returncode: int | None
    output: str
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def summary(self) -> str:
        shown = shlex.join(self.command)
        if self.timed_out:
            return f"`{shown}` timed out"
        return f"`{shown}` exited {self.returncode} ({'pass' if self.passed else 'fail'})"


def verify(ctx: ItemContext, task_id: str) -> Verification:
    """Run the task's test command: an argument list, no shell, with a timeout."""
    report = fresh_report(ctx)
    task = _task(report, task_id)
    command = test_command(task)
    if not command:
        raise RefusedError(
            f"task {task.id} names no test command to verify",
            where=Where(report.item.artifacts["tasks"].path, task.test_line or task.line),
            hint="write the command in backticks: _Test:_ `pytest tests/test_x.py`",
        )
    timeout = ctx.config.checkpoint.test_timeout_seconds
    try:
        ran = run_bounded(command, cwd=ctx.project.root, timeout=timeout)
    except FileNotFoundError:
        return Verification(tuple(command), 127, f"{command[0]}: command not found")
    except PermissionError:
        return Verification(tuple(command), 126, f"{command[0]}: permission denied")
    return Verification(tuple(command), ran.returncode, ran.output[-_OUTPUT_TAIL:], ran.timed_out)


def done_task(
    ctx: ItemContext,
    task_id: str,
    *,
    did: str,
    next_step: str,
    tests: str | None = None,
    blockers: str = "none",
    verification: Verification | None = None,
    session: str | None = None,
) -> Outcome:
    """Complete a task: the checkpoint, then the ``taskBoundary`` reset."""
    next_step = plans.check_next(next_step)
    if verification is not None and not verification.passed:
        raise RefusedError(
            f"task {task_id} is not done: its test failed: {verification.summary()}",
            details=tuple(verification.output.strip().splitlines()[-15:]),
            hint="fix it and run `loop task done` again; nothing was changed",
        )
    results = tests or (verification.summary() if verification else "not run (no --tests given)")
    if verification is not None and tests:
        results = f"{tests}; verified: {verification.summary()}"

    def plan() -> checkpoint.Plan:
        # Decided under the lock, on the files as they are now.
        report = fresh_report(ctx)
        _require_executable(report)
        task = _task(report, task_id)
        if task.state is TaskState.DONE:
            raise RefusedError(
                f"task {task.id} is already done",
                hint=f"`loop next {ctx.item.id}` shows what is left",
            )
        _require_deps_done(report, task)
        decision = boundary_reset(ctx.config.context, Boundary.TASK, what=f"task {task.id} done")
        entry = plans.EntryText(
            summary=f"task {task.id} done: {task.title}",
            phase="implementation",
            did=did,
            next=next_step,
            tests=results,
            blockers=blockers,
        )
        plans.ensure_log(ctx, report.title, "implementation")
        return plans.build(
            ctx,
            entry,
            decision,
            subject=f"task {task.id}",
            task_id=task.id,
            tick_from=task.state.value,
            tick_to=TaskState.DONE.value,
            mirror_phase="implementation",
            session=session,
        )

    outcome = checkpoint.run(ctx.project.root, plan)
    assert outcome is not None  # the plan function never declines
    return outcome


def mid_task(
    ctx: ItemContext,
    *,
    did: str,
    next_step: str,
    task_id: str | None = None,
    tokens: int | None = None,
    window: int | None = None,
    percent: float | None = None,
    tests: str | None = None,
    session: str | None = None,
) -> tuple[Outcome, PressureReading]:
    """An interim checkpoint inside a task; compaction if the window is under pressure."""
    next_step = plans.check_next(next_step)
    reading = pressure_verdict(
        ctx.config.context.pressure, tokens=tokens, window=window, percent=percent
    )

    def plan() -> checkpoint.Plan:
        report = fresh_report(ctx)
        chosen = task_id
        if chosen is None:
            tasks = report.tasks.tasks if report.tasks else ()
            active = [t for t in tasks if t.state is TaskState.IN_PROGRESS]
            chosen = active[0].id if len(active) == 1 else None
        task = _task(report, chosen) if chosen else None
        what = f"mid-task in task {task.id}" if task else "mid-task"
        decision = boundary_reset(
            ctx.config.context, Boundary.MID_TASK, what=what, verdict=reading.verdict
        )
        phase = report.phase.recorded or report.phase.implied
        summary = f"interim checkpoint during task {task.id}" if task else "interim checkpoint"
        entry = plans.EntryText(
            summary=summary, phase=phase, did=did, next=next_step, tests=tests or "not run"
        )
        plans.ensure_log(ctx, report.title, phase)
        subject = f"interim, task {task.id}" if task else "interim"
        return plans.build(
            ctx,
            entry,
            decision,
            subject=subject,
            task_id=task.id if task else None,
            session=session,
        )

    outcome = checkpoint.run(ctx.project.root, plan)
    assert outcome is not None
    return outcome, reading
