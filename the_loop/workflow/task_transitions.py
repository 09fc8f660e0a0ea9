"""Task transitions: ``loop task start``, ``loop task done`` and mid-task checkpoints.

Each is one call that does the whole transition under one project lock, on the
item loaded once under that lock: the checks, the task's test (``task done
--verify``), the checkpoint (tick, entry, phase, commit, reset record) and the
reset marked dispatched, since the caller prints the directive straight away.
The caller names the item by an ``ItemAt`` (where it is, not its content), so
nothing it read before the lock can be acted on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

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
from the_loop.spec.items import Artifact, load_item, resolve_item
from the_loop.spec.project import ItemContext, Project, item_context, open_project
from the_loop.tasks import Task, TaskState, set_state, text_digest
from the_loop.workflow import tick_evidence
from the_loop.workflow.entry_text import concrete_did, concrete_next
from the_loop.workflow.item_report import ItemReport

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from the_loop.config.settings import Pressure
    from the_loop.workflow.session_reading import SessionPressure
    from the_loop.workflow.task_tests import Verification

    WatchTest = Callable[[str], AbstractContextManager[None]]


@dataclass(frozen=True)
class ItemAt:
    """Where a work item is, with its project: the item itself is loaded under the lock."""

    project: Project
    folder: Path
    spec_root: Path

    @staticmethod
    def of(ctx: ItemContext) -> ItemAt:
        """The place of an item a caller already holds (it is read again under the lock)."""
        return ItemAt(ctx.project, ctx.item.path, ctx.item.spec_root)

    def load(self) -> ItemReport:
        """The item as it is on disk now (call it under the lock: files change under it)."""
        item = load_item(self.folder, self.spec_root)
        return ItemReport(item_context(self.project, item))


def locate(root: Path, ref: str, *, cwd: Path) -> ItemAt:
    """Resolve ``ref`` in the project at ``root`` without reading the item's files."""
    project = open_project(root)
    return ItemAt(project, resolve_item(project.spec_root, ref, cwd=cwd), project.spec_root)


def _at(item: ItemAt | ItemContext) -> ItemAt:
    return item if isinstance(item, ItemAt) else ItemAt.of(item)


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


def start_task(item: ItemAt | ItemContext, task_id: str, *, session: str | None = None) -> Task:
    """Mark a task in progress; refuses while one of its dependencies is open.

    ``session`` (the agent's) is recorded as the task's owner, so the Stop hook
    knows whose unsaved work it is.
    """
    # Loaded before anything changes; `task done` given --session never needs it.
    from the_loop.checkpoint import seen_sessions

    at = _at(item)
    with checkpoint.locked(at.project.root):
        report = at.load()
        _require_executable(report)
        task = _task(report, task_id)
        if task.state is TaskState.DONE:
            raise RefusedError(f"task {task.id} is already done")
        _require_deps_done(report, task)
        tasks = report.item.artifacts["tasks"]
        set_state(tasks.path, task.id, TaskState.IN_PROGRESS, as_read=_as_read(tasks, task))
        seen_sessions.own_task(at.project.root, session, report.id, task.id)
        return task


def finish_task(
    item: ItemAt | ItemContext,
    task_id: str,
    *,
    did: str,
    next_step: str,
    tests: str | None = None,
    blockers: str = "none",
    adopt: bool = False,
    verify: bool | None = None,
    verification: Verification | None = None,
    session: str | None = None,
    watch_test: WatchTest | None = None,
    dispatch: bool = True,
) -> Outcome:
    """Complete a task: the checkpoint, then the ``taskBoundary`` reset.

    One lock for the whole of it, one load of the item. In order: the words
    (--did, --next), the lock (an interrupted checkpoint is finished first), the
    approval of tasks.md (an edited, unapproved _Test:_ command never runs), the
    task itself (done already? ticked by hand?), its dependencies, whether its
    test can run as written; then the test (``verify``; ``None``: as
    ``checkpoint.verifyTests`` says; ``watch_test(command)`` wraps the run, for
    the CLI's progress line), then the checkpoint. A failed test changes nothing.
    ``verification``: a test the caller ran itself (the driver).

    The last task's checkpoint also enters needs-review (one checkpoint, one
    reset: the stronger of ``taskBoundary`` and ``phaseBoundary``), so no
    second reset follows at the next call. ``dispatch``: mark the reset
    dispatched (the caller shows the directive at once).
    """
    at = _at(item)
    root = at.project.root
    did = concrete_did(did)
    with checkpoint.locked(root):
        report = at.load()
        task = _task(report, task_id)
        next_step = concrete_next(next_step, report, finishing=task.id)
        _require_executable(report)
        _require_finishable(report, task, adopt)
        if verification is None and (
            report.config.checkpoint.verify_tests if verify is None else verify
        ):
            verification = _run_test(report, task, watch_test)
        if verification is not None and not verification.passed:
            raise RefusedError(
                f"task {task.id} is not done: its test failed: {verification.summary()}",
                details=tuple(verification.output.strip().splitlines()[-15:]),
                hint="fix it and run `loop task done` again; nothing was changed",
            )
        results = tests or (
            verification.summary() if verification else "not run (no --tests given)"
        )
        if verification is not None and tests:
            results = f"{tests}; verified: {verification.summary()}"
        plan = _done_plan(
            report,
            task,
            did=did,
            next_step=next_step,
            tests=results,
            blockers=blockers,
            adopt=adopt,
            session=session,
        )
        outcome = checkpoint.run_locked(root, plan)
        assert outcome is not None  # a plan, not a function that may decline
        return _dispatched(root, outcome) if dispatch else outcome


def _run_test(report: ItemReport, task: Task, watch: WatchTest | None) -> Verification:
    """The task's test, planned (refused when it cannot run as written) and run."""
    from the_loop.workflow.task_tests import plan_test, run_test  # only when a test runs

    test = plan_test(report, task)
    with watch(test.shown) if watch is not None else contextlib.nullcontext():
        return run_test(test)


def _dispatched(root: Path, outcome: Outcome) -> Outcome:
    """The outcome with its reset marked dispatched (the caller holds the lock)."""
    if outcome.record is None:
        return outcome
    from the_loop.checkpoint.resets import mark_dispatched_locked

    return replace(outcome, record=mark_dispatched_locked(root, outcome.record))


def _require_finishable(report: ItemReport, task: Task, adopt: bool) -> None:
    """Not done yet (or, with ``adopt``, ticked by hand), and every dependency done.

    The log's evidence is asked for only when the task is ticked already: an open
    task is finishable whatever the log says, and reading it costs its length.
    """
    if task.state is not TaskState.DONE:
        if adopt:
            raise RefusedError(
                f"task {task.id} is not ticked: --adopt records a checkpoint for a task "
                "ticked by hand",
                hint=f"finish it without --adopt: `loop task done {report.id} {task.id} …`",
            )
        _require_deps_done(report, task)
        return
    unrecorded = {t.id for t in report.unrecorded_ticks}
    adopt_cmd = tick_evidence.adopt_command(report.id, task.id)
    if adopt:
        problems = {p.task.id for p in report.tick_problems}
        if task.id not in unrecorded and task.id not in problems:
            entry = report.log_checkpoints.done.get(task.id)
            where = f" ({entry.stamp})" if entry else ""
            raise RefusedError(
                f"task {task.id} is already checkpointed{where}; there is nothing to adopt",
                hint=f"`loop next {report.id}` shows what is left",
            )
        return
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


def _done_plan(
    report: ItemReport,
    task: Task,
    *,
    did: str,
    next_step: str,
    tests: str,
    blockers: str,
    adopt: bool,
    session: str | None,
) -> checkpoint.Plan:
    """The checkpoint of a finished task, decided on the files as they are under the lock."""
    ctx = report.ctx
    last = _completes_the_item(report, task)
    decision = boundary_reset(ctx.config.context, Boundary.TASK, what=f"task {task.id} done")
    summary = f"task {task.id} done: {task.title}"
    if adopt:
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
        did=did,
        next=next_step,
        tests=tests,
        blockers=blockers,
    )
    plans.ensure_log(ctx, report.title, "implementation")
    return plans.build(
        ctx,
        entry,
        decision,
        subject=f"task {task.id}",
        task_id=task.id,
        tick_from=None if adopt else task.state.value,
        tick_to=None if adopt else TaskState.DONE.value,
        tick_at=None if adopt else _as_read(ctx.item.artifacts["tasks"], task),
        mirror_phase=phase,
        transition=transition,
        session=session,
    )


def _as_read(tasks: Artifact, task: Task) -> tuple[int, str] | None:
    """Where ``task``'s mark is in tasks.md as this command read it (no second parse)."""
    return (task.mark_offset, text_digest(tasks.text)) if tasks.text is not None else None


def _completes_the_item(report: ItemReport, task: Task) -> bool:
    """Whether this checkpoint leaves every task done with its own checkpoint."""
    if report.phase.recorded != "implementation" or report.tasks is None:
        return False
    open_ = [t for t in report.tasks.tasks if t.state is not TaskState.DONE and t.id != task.id]
    if open_:
        return False  # the log's evidence of the other ticks is read only for the last task
    unrecorded = [t for t in report.unrecorded_ticks if t.id != task.id]
    return not open_ and not unrecorded


def session_verdict(
    pressure: Pressure,
    found: SessionPressure | None,
    *,
    tokens: int | None,
    window: int | None,
    percent: float | None,
) -> PressureReading:
    """The verdict for numbers given by hand and the session's transcript: the stricter.

    A percent given by hand never silences the token arm: whenever a session is
    known its transcript is read too (``found``, issue 21), and each arm takes the
    stricter reading. With no numbers and no session the verdict names the gap.
    """
    given = None
    if tokens is not None or window is not None or percent is not None:
        given = pressure_verdict(pressure, tokens=tokens, window=window, percent=percent)
    if found is None:
        assert given is not None  # the transcript is read whenever no numbers were given
        return given
    read = found.annotate(
        pressure_verdict(pressure, tokens=found.tokens, window=found.window, percent=found.percent)
    )
    return read if given is None else stricter_reading(given, read)


def mid_task(
    item: ItemAt | ItemContext,
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
    dispatch: bool = True,
) -> tuple[Outcome, PressureReading]:
    """An interim checkpoint inside a task; compaction if the window is under pressure.

    Given no numbers, the reading comes from the session's own transcript; when
    there is none either, the verdict names the gap and the reset is the safe
    side (compaction). ``compacting`` says the harness is compacting right now
    (the PreCompact hook): the reset is then that compaction, whatever the verdict.
    One lock, one load of the item; filler and a Next: naming nothing are
    refused before anything changes. ``dispatch`` as in ``finish_task``.
    """
    at = _at(item)
    root = at.project.root
    did = concrete_did(did)
    found = None
    if session or (tokens is None and window is None and percent is None):
        # The transcript is read whenever a session is known, numbers or not (issue 21).
        from the_loop.workflow.session_reading import session_pressure

        found = session_pressure(root, session)
    with checkpoint.locked(root):
        report = at.load()
        reading = session_verdict(
            report.config.context.pressure, found, tokens=tokens, window=window, percent=percent
        )
        plan = _interim_plan(
            report,
            did=did,
            next_step=concrete_next(next_step, report),
            task_id=task_id,
            reading=reading,
            tests=tests,
            session=session,
            compacting=compacting,
        )
        outcome = checkpoint.run_locked(root, plan)
        assert outcome is not None
        return (_dispatched(root, outcome) if dispatch else outcome), reading


def _interim_plan(
    report: ItemReport,
    *,
    did: str,
    next_step: str,
    task_id: str | None,
    reading: PressureReading,
    tests: str | None,
    session: str | None,
    compacting: str | None,
) -> checkpoint.Plan:
    """The interim checkpoint: in the task named, else the one task in progress."""
    ctx = report.ctx
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
