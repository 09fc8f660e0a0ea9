"""``loop execute-tasks`` in guide mode: walk the task DAG one checkpoint at a time.

Each call does one step: cross into implementation (the ``phaseBoundary``
checkpoint and reset), or hand out the next ready task with its brief (and
mark it in progress), or, once every task is done, cross into needs-review.
The agent reports back with ``loop task done``, which checkpoints and prints
the ``taskBoundary`` reset; then it calls ``execute-tasks`` again.
"""

from __future__ import annotations

from dataclasses import dataclass

from the_loop.checkpoint import seen_sessions
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.policy import Reset
from the_loop.errors import RefusedError, Where
from the_loop.spec.project import ItemContext
from the_loop.tasks import TaskState, set_state
from the_loop.workflow.briefs import brief
from the_loop.workflow.item_report import ItemReport, fresh_report
from the_loop.workflow.next_action import Action, next_action
from the_loop.workflow.phase_crossing import Crossing, cross


@dataclass(frozen=True)
class ExecuteStep:
    """One step of the guide-mode loop."""

    kind: str  # crossed | task | complete
    report: ItemReport
    action: Action
    crossing: Crossing | None = None
    brief: str | None = None

    @property
    def deferred(self) -> bool:
        return self.crossing is not None and self.crossing.decision.reset is not Reset.NONE

    def to_json(self) -> dict[str, object]:
        crossing = self.crossing
        reset = None
        if crossing is not None:
            reset = (
                crossing.outcome.to_json()
                if crossing.outcome
                else {
                    "reset": crossing.decision.reset.value,
                    "reason": crossing.decision.reason,
                    "checkpoint": None,
                }
            )
        done, total = self.report.counts
        return {
            "item": self.report.id,
            "step": self.kind,
            "action": self.action.to_json(),
            "tasks": {"done": done, "total": total},
            "crossing": crossing.to_json() if crossing else None,
            "reset": reset,
            "brief": self.brief,
        }


def execute_step(
    ctx: ItemContext, *, dry_run: bool = False, session: str | None = None
) -> ExecuteStep:
    """Take the next step of the DAG walk (see the module docstring)."""
    report = ItemReport(ctx)
    _require_locked(report)
    done, total = report.counts
    if total and done == total:
        return _finish(ctx, report, dry_run, session)
    recorded = report.phase.recorded
    if recorded != "implementation":
        if recorded in ("needs-review", "complete"):
            pass  # reopened work: tasks were unticked after review; just continue
        else:
            action = next_action(report)
            crossing = cross(
                report,
                "implementation",
                dry_run=dry_run,
                session=session,
                next_step=f"{action.text} (`loop execute-tasks {report.id}` prints its brief)",
            )
            step = ExecuteStep("crossed", report, action, crossing)
            if step.deferred or dry_run:
                return step
            report = fresh_report(ctx)
            return _hand_out(ctx, report, dry_run, crossing, session)
    return _hand_out(ctx, report, dry_run, None, session)


def _require_locked(report: ItemReport) -> None:
    lock = report.locks["tasks"]
    if lock.locked:
        return
    action = next_action(report)
    state = "missing" if not lock.exists else lock.label
    raise RefusedError(
        f"tasks.md is {state}: tasks are executed only against a locked task list",
        where=Where(lock.path) if lock.exists else None,
        hint=f"next: {action.text} (`{action.command}`)",
    )


def _hand_out(
    ctx: ItemContext,
    report: ItemReport,
    dry_run: bool,
    crossing: Crossing | None,
    session: str | None = None,
) -> ExecuteStep:

    action = next_action(report)
    if action.kind != "implement" or action.task is None:
        raise RefusedError(action.text, hint=f"`{action.command}`")
    task = report.dag.task(action.task) if report.dag else None
    if task is not None and task.state is TaskState.OPEN and not dry_run:
        with checkpoint.locked(ctx.project.root):
            current = fresh_report(ctx)
            fresh = current.dag.task(task.id) if current.dag else None
            if fresh is not None and fresh.state is TaskState.OPEN:
                set_state(current.item.artifacts["tasks"].path, task.id, TaskState.IN_PROGRESS)
        report = fresh_report(ctx)
        action = next_action(report)
    if task is not None and task.state is not TaskState.DONE and not dry_run:
        # the session handed this task is the one whose unsaved work Stop guards
        seen_sessions.own_task(ctx.project.root, session, ctx.item.id, task.id)
    return ExecuteStep("task", report, action, crossing, brief(report, action))


def _finish(
    ctx: ItemContext, report: ItemReport, dry_run: bool, session: str | None
) -> ExecuteStep:

    action = next_action(report)
    if report.phase.recorded in ("needs-review", "complete"):
        return ExecuteStep("complete", report, action, None, brief(report, action))
    if action.kind == "adopt":
        # Every box is ticked, but not every task was finished: no review yet.
        raise RefusedError(action.text, hint=f"`{action.command}`")
    crossing = cross(
        report,
        "needs-review",
        dry_run=dry_run,
        session=session,
        next_step=f"review the work: self, critic and security review, recorded in "
        f"execution-log.md (`loop work-on {report.id}` prints the brief)",
    )
    step = ExecuteStep("complete", report, action, crossing)
    if step.deferred or dry_run:
        return step
    return ExecuteStep("complete", fresh_report(ctx), action, crossing, brief(report, action))
