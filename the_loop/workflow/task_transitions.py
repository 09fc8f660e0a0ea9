"""Task transitions: ``loop task start``, ``loop task done`` and mid-task checkpoints."""

from __future__ import annotations

from dataclasses import dataclass

from the_loop.checkpoint import plans
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.policy import (
    Boundary,
    Decision,
    PressureReading,
    Reset,
    boundary_reset,
    one_reset,
    pressure_verdict,
    stricter_reading,
)
from the_loop.checkpoint.transaction import Outcome
from the_loop.dag.analysis import id_sort_key
from the_loop.errors import RefusedError, Where
from the_loop.io import clock
from the_loop.spec.project import ItemContext
from the_loop.tasks import Task, TaskState, set_state
from the_loop.workflow import tick_evidence
from the_loop.workflow.item_report import ItemReport, fresh_report
from the_loop.workflow.next_step import concrete_did, concrete_next

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost)
if TYPE_CHECKING:
    from the_loop.workflow.task_tests import TestRun, Verification


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
        # The first step that will succeed: approving tasks.md is refused while an
        # upstream artifact is stale, so the hint names the chain's first open step.
        from the_loop.workflow.next_action import next_action  # only for this refusal

        action = next_action(report)
        raise RefusedError(
            f"tasks.md is {lock.label}: tasks run only against a locked task list",
            where=Where(lock.path),
            hint=f"first: {action.text} (`{action.command}`), then "
            f"`loop execute-tasks {report.id}`",
        )
    if report.phase.recorded not in ("implementation", "needs-review", "complete"):
        from the_loop.checkpoint.anchor import missing_tracked_log  # only when it looks new

        gone = missing_tracked_log(
            report.ctx.project.root, report.item.artifacts["execution-log"].path
        )
        if gone is not None:
            raise gone  # a deleted log: restore it, never cross again over its history
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
            hint=_first_ready_blocker(report, blockers),
        )


def _first_ready_blocker(report: ItemReport, blockers: tuple[str, ...]) -> str:
    """The hint names a dependency that can start now, following the chain back."""
    assert report.dag is not None
    ready = set(report.dag.ready)
    seen: set[str] = set()
    queue = list(blockers)
    while queue:
        current = queue.pop(0)
        if current in ready:
            return f"finish {current} first (`loop next {report.id}` shows what is ready)"
        if current not in seen:
            seen.add(current)
            queue.extend(report.dag.blocked_by.get(current, ()))
    return f"none of them can start: `loop check {report.id}` says why"


def start_task(ctx: ItemContext, task_id: str, *, session: str | None = None) -> Task:
    """Mark a task in progress; refuses while one of its dependencies is open.

    ``session`` (the agent's) is recorded as the task's owner, so the Stop hook
    knows whose unsaved work it is.
    """
    # Loaded before anything changes; `task done` given --session never needs it.
    from the_loop.checkpoint import sessions

    with checkpoint.locked(ctx.project.root):
        report = fresh_report(ctx)
        _require_executable(report)
        task = _task(report, task_id)
        if task.state is TaskState.DONE:
            raise RefusedError(f"task {task.id} is already done")
        _require_deps_done(report, task)
        set_state(report.item.artifacts["tasks"].path, task.id, TaskState.IN_PROGRESS)
        sessions.own_task(ctx.project.root, session, ctx.item.id, task.id)
        return task


@dataclass(frozen=True)
class DoneRequest:
    """A ``task done`` that passed every quick check; its test (if any) runs next."""

    task: str
    did: str
    next_step: str
    adopt: bool
    test: TestRun | None


def prepare_done(
    ctx: ItemContext,
    task_id: str,
    *,
    did: str,
    next_step: str,
    adopt: bool = False,
    verify: bool | None = None,
) -> DoneRequest:
    """Every check that takes milliseconds, so none of them waits for a test.

    ``verify``: run the task's test (``None``: as ``checkpoint.verifyTests`` says).

    In order: the words (--did, --next), the project lock (an interrupted
    checkpoint is finished first), the approval of tasks.md (an edited, unapproved
    _Test:_ command never runs), the task itself (done already? ticked by hand?),
    its dependencies, and whether its test can run as written. Nothing is
    changed; ``done_task`` checks it all again under the lock after the test.
    """
    did = concrete_did(did)
    if verify is None:
        verify = ctx.config.checkpoint.verify_tests
    with checkpoint.locked(ctx.project.root):
        report = fresh_report(ctx)
        task = _task(report, task_id)
        next_step = concrete_next(next_step, report, finishing=task.id)
        _require_executable(report)
        _require_finishable(report, task, adopt)
        test = None
        if verify:
            from the_loop.workflow.task_tests import plan_test  # only when a test is to run

            test = plan_test(report, task)
    return DoneRequest(task.id, did, next_step, adopt, test)


def _require_finishable(report: ItemReport, task: Task, adopt: bool) -> None:
    """Not done yet (or, with ``adopt``, ticked by hand), and every dependency done."""
    unrecorded = {t.id for t in report.unrecorded_ticks}
    problems = {p.task.id for p in report.tick_problems} if adopt else set()
    adopt_cmd = tick_evidence.adopt_command(report.id, task.id)
    if adopt:
        if task.state is not TaskState.DONE:
            raise RefusedError(
                f"task {task.id} is not ticked: --adopt records a checkpoint for a task "
                "ticked by hand",
                hint=f"finish it without --adopt: `loop task done {report.id} {task.id} …`",
            )
        if task.id not in unrecorded and task.id not in problems:
            entry = report.log_checkpoints.done.get(task.id)
            where = f" ({entry.stamp})" if entry else ""
            raise RefusedError(
                f"task {task.id} is already checkpointed{where}; there is nothing to adopt",
                hint=f"`loop next {report.id}` shows what is left",
            )
        return
    if task.state is TaskState.DONE:
        if task.id in unrecorded:
            raise RefusedError(
                f"task {task.id} is ticked, but no checkpoint records it (ticked by hand?)",
                where=Where(report.item.artifacts["tasks"].path, task.line),
                hint=f"{adopt_cmd}  # records the checkpoint without ticking it again",
            )
        raise RefusedError(
            f"task {task.id} is already done",
            hint=f"`loop next {report.id}` shows what is left",
        )
    _require_deps_done(report, task)


def done_task(
    ctx: ItemContext,
    request: DoneRequest,
    *,
    tests: str | None = None,
    blockers: str = "none",
    verification: Verification | None = None,
    session: str | None = None,
) -> Outcome:
    """Complete a task: the checkpoint, then the ``taskBoundary`` reset.

    The last task's checkpoint also enters needs-review (one checkpoint, one
    reset: the stronger of ``taskBoundary`` and ``phaseBoundary``), so no
    second reset follows at the next call.
    """
    task_id = request.task
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
        _require_finishable(report, task, request.adopt)
        last = _completes_the_item(report, task)
        decision = boundary_reset(ctx.config.context, Boundary.TASK, what=f"task {task.id} done")
        summary = f"task {task.id} done: {task.title}"
        if request.adopt:
            summary += " (adopted: it was ticked by hand)"
        phase = "implementation"
        transition = None
        if last:
            phase = "needs-review"
            summary += "; entered needs-review"
            crossing = boundary_reset(
                ctx.config.context,
                Boundary.PHASE,
                what="phase boundary implementation → needs-review",
            )
            decision = one_reset(decision, crossing)
            transition = (clock.day(clock.utc_now()), "", "all tasks done")
        entry = plans.EntryText(
            summary=summary,
            phase=phase,
            did=request.did,
            next=request.next_step,
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
            tick_from=None if request.adopt else task.state.value,
            tick_to=None if request.adopt else TaskState.DONE.value,
            mirror_phase=phase,
            transition=transition,
            session=session,
        )

    outcome = checkpoint.run(ctx.project.root, plan)
    assert outcome is not None  # the plan function never declines
    return outcome


def _completes_the_item(report: ItemReport, task: Task) -> bool:
    """Whether this checkpoint leaves every task done with its own checkpoint."""
    if report.phase.recorded != "implementation" or report.tasks is None:
        return False
    open_ = [t for t in report.tasks.tasks if t.state is not TaskState.DONE and t.id != task.id]
    unrecorded = [t for t in report.unrecorded_ticks if t.id != task.id]
    return not open_ and not unrecorded


def session_verdict(
    ctx: ItemContext,
    *,
    tokens: int | None,
    window: int | None,
    percent: float | None,
    session: str | None,
) -> PressureReading:
    """The verdict for numbers given by hand and the session's transcript: the stricter.

    A percent given by hand never silences the token arm: whenever a session is
    known its transcript is read too (issue 21). With no numbers and no session
    the verdict names the gap.
    """
    pressure = ctx.config.context.pressure
    given = None
    if tokens is not None or window is not None or percent is not None:
        given = pressure_verdict(pressure, tokens=tokens, window=window, percent=percent)
        if not session:
            return given
    # Transcript reading (the telemetry package) only when there is a session to read.
    from the_loop.workflow.session_reading import session_pressure

    found = session_pressure(ctx.project.root, session)
    read = found.annotate(
        pressure_verdict(pressure, tokens=found.tokens, window=found.window, percent=found.percent)
    )
    return read if given is None else stricter_reading(given, read)


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
    compacting: str | None = None,
) -> tuple[Outcome, PressureReading]:
    """An interim checkpoint inside a task; compaction if the window is under pressure.

    Given no numbers, the reading comes from the session's own transcript; when
    there is none either, the verdict names the gap and the reset is the safe
    side (compaction). ``compacting`` says the harness is compacting right now
    (the PreCompact hook): the reset is then that compaction, whatever the verdict.
    """
    did = concrete_did(did)
    reading = session_verdict(ctx, tokens=tokens, window=window, percent=percent, session=session)

    # Filler and a Next: naming nothing are refused before the lock is taken.
    concrete_next(next_step, fresh_report(ctx))

    def plan() -> checkpoint.Plan:
        report = fresh_report(ctx)
        chosen = task_id
        if chosen is None:
            tasks = report.tasks.tasks if report.tasks else ()
            active = [t for t in tasks if t.state is TaskState.IN_PROGRESS]
            chosen = active[0].id if len(active) == 1 else None
        task = _task(report, chosen) if chosen else None
        what = f"mid-task in task {task.id}" if task else "mid-task"
        if compacting:
            decision = Decision(Reset.COMPACT, f"{what}; {compacting}")
        else:
            decision = boundary_reset(
                ctx.config.context, Boundary.MID_TASK, what=what, verdict=reading.verdict
            )
        phase = report.phase.recorded or report.phase.implied
        summary = f"interim checkpoint during task {task.id}" if task else "interim checkpoint"
        entry = plans.EntryText(
            summary=summary,
            phase=phase,
            did=did,
            next=concrete_next(next_step, report),
            tests=tests or "not run",
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
