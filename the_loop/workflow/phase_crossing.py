"""Crossing a phase boundary: a checkpoint, the phase mirror, a transition row.

Used by ``loop work-on`` and ``loop execute-tasks`` whenever the artifacts
imply a later phase than the log records (an approval happened since), and by
``loop work-on --sync`` to repair a mirror that disagrees.
"""

from __future__ import annotations

from dataclasses import dataclass

from the_loop.checkpoint import plans, resets
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.lock import project_lock
from the_loop.checkpoint.policy import Boundary, Decision, Reset, boundary_reset
from the_loop.checkpoint.transaction import Outcome
from the_loop.config.loader import ALL_PHASES, OPTIONAL_PHASES
from the_loop.errors import RefusedError, UsageError, Where
from the_loop.io import clock
from the_loop.workflow.item_report import ItemReport, fresh_report
from the_loop.workflow.tick_evidence import adopt_command

# The artifact whose approval opens each phase.
_OPENED_BY = {
    "requirements-definition": "brainstorm",
    "design": "requirements",
    "test-planning": "design",
    "tasks-breakdown": "design",
    "implementation": "tasks",
}


_STARTING = ("brainstorming", "requirements-definition")


@dataclass(frozen=True)
class Crossing:
    """A phase boundary crossed (or, in a dry run, about to be)."""

    from_phase: str | None
    to_phase: str
    decision: Decision
    outcome: Outcome | None  # None in a dry run
    closed_resets: tuple[resets.ResetRecord, ...] = ()  # left open, closed by ``finish``

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "from": self.from_phase,
            "to": self.to_phase,
            "reset": self.decision.reset.value,
            "reason": self.decision.reason,
        }
        if self.outcome is not None:
            data["checkpoint"] = self.outcome.to_json()["checkpoint"]
        return data


def approver(report: ItemReport, phase: str) -> str:
    """Who approved the artifact that opened ``phase`` (the latest approvedBy entry)."""
    kind = _OPENED_BY.get(phase)
    if phase == "tasks-breakdown" and report.item.artifacts["testing-plan"].exists:
        kind = "testing-plan"
    if kind is None:
        return ""
    art = report.item.artifact(kind)
    approved = art.front.get("approvedBy") if art.front else None
    if isinstance(approved, list) and approved:
        return str(approved[-1])
    return ""


def _did(report: ItemReport, phase: str) -> str:
    kind = _OPENED_BY.get(phase)
    if phase == "needs-review":
        done, total = report.counts
        return f"all {total} tasks done; implementation complete"
    if kind is None or not report.locks[kind].approved:
        return f"entered {phase}"  # e.g. an item that starts without a brainstorm
    name = report.item.artifact(kind).path.name
    who = approver(report, phase)
    return f"{name} approved" + (f" by {who}" if who else "") + f"; entered {phase}"


def _decision(report: ItemReport, target: str) -> Decision:
    recorded = report.phase.recorded
    what = f"phase boundary {recorded or 'not-started'} → {target}"
    if recorded is None and target in _STARTING:
        # Starting an item: the conversation that explained it is worth keeping.
        return Decision(Reset.NONE, f"{what}: the work item starts, nothing to reset")
    return boundary_reset(report.config.context, Boundary.PHASE, what=what)


def _needs_crossing(report: ItemReport, target: str) -> bool:
    state = report.phase
    if state.recorded == target:
        return False
    return state.relation in ("pending", "behind", "unrecorded") or target in (
        "implementation",
        "needs-review",
    )


def cross(
    report: ItemReport,
    target: str,
    *,
    next_step: str,
    dry_run: bool = False,
    session: str | None = None,
) -> Crossing | None:
    """Checkpoint into ``target``, applying ``contextManagement.phaseBoundary``.

    Decided again under the lock on fresh files: when another command (or the
    recovery of an interrupted one) crossed meanwhile, nothing happens and the
    result is None.
    """
    if dry_run:
        return Crossing(report.phase.recorded, target, _decision(report, target), None)
    chosen: list[Crossing] = []

    def plan() -> checkpoint.Plan | None:
        fresh = fresh_report(report.ctx)
        if not _needs_crossing(fresh, target):
            return None
        _refuse_unrecorded_ticks(fresh, target)
        recorded = fresh.phase.recorded
        decision = _decision(fresh, target)
        chosen.append(Crossing(recorded, target, decision, None))
        entry = plans.EntryText(
            summary=f"entered {target}", phase=target, did=_did(fresh, target), next=next_step
        )
        plans.ensure_log(fresh.ctx, fresh.title, recorded or "not-started")
        skipped = _skipped(recorded, target)
        return plans.build(
            fresh.ctx,
            entry,
            decision,
            subject=f"phase {target}",
            mirror_phase=target,
            transition=(
                clock.day(clock.utc_now()),
                approver(fresh, target),
                f"via {', '.join(skipped)}" if skipped else "",
            ),
            session=session,
        )

    outcome = checkpoint.run(report.ctx.project.root, plan)
    if outcome is None:
        return None
    crossing = chosen[-1]
    return Crossing(crossing.from_phase, target, crossing.decision, outcome)


def _refuse_unrecorded_ticks(report: ItemReport, target: str) -> None:
    """No review (or completion) while a ticked task has no checkpoint behind it."""
    if target not in ("needs-review", "complete") or not report.unrecorded_ticks:
        return
    task = report.unrecorded_ticks[0]
    raise RefusedError(
        f"task {task.id} is ticked, but no checkpoint records it (ticked by hand?); "
        f"{report.id} cannot enter {target} until it is recorded",
        where=Where(report.item.artifacts["tasks"].path, task.line),
        hint=f"{adopt_command(report.id, task.id)}  # records it without ticking again",
    )


def _skipped(recorded: str | None, target: str) -> list[str]:
    """Phases passed over when several approvals happened between two sessions."""
    if recorded not in ALL_PHASES or target not in ALL_PHASES:
        return []
    start, end = ALL_PHASES.index(recorded), ALL_PHASES.index(target)
    return [p for p in ALL_PHASES[start + 1 : end] if p not in OPTIONAL_PHASES]


def sync_mirror(
    report: ItemReport, *, dry_run: bool = False, session: str | None = None
) -> Crossing | None:
    """``--sync``: set the log's phase to what the artifacts imply (an explicit repair)."""
    state = report.phase
    if state.relation == "same" or not report.item.artifacts["execution-log"].exists:
        return None
    decision = Decision(Reset.NONE, f"phase mirror repaired: {state.recorded} → {state.implied}")
    if dry_run:
        return Crossing(state.recorded, state.implied, decision, None)

    def plan() -> checkpoint.Plan | None:
        fresh = fresh_report(report.ctx)
        if fresh.phase.recorded != state.recorded or fresh.phase.implied != state.implied:
            return None  # something changed meanwhile: nothing to repair as planned
        entry = plans.EntryText(
            summary=f"phase mirror repaired: {state.recorded} → {state.implied}",
            phase=state.implied,
            did=f"execution-log.md said {state.recorded}; the artifacts imply {state.implied} "
            f"({state.reason}); set by `loop work-on --sync`",
            next=f"run `loop work-on {report.id}` for the next action",
        )
        return plans.build(
            fresh.ctx,
            entry,
            decision,
            subject="sync phase mirror",
            mirror_phase=state.implied,
            session=session,
        )

    outcome = checkpoint.run(report.ctx.project.root, plan)
    return Crossing(state.recorded, state.implied, decision, outcome) if outcome else None


def finish(report: ItemReport, by: str, *, session: str | None = None) -> Crossing:
    """Mark a reviewed item complete: the last checkpoint, the log closed.

    Only from needs-review with every artifact locked and every task done.
    """
    by = by.strip()
    if not by:
        raise UsageError("--by needs a handle or name", hint="e.g. --by @alice")
    state = report.phase
    if state.recorded == "complete":
        raise RefusedError(f"{report.id} is already complete")
    _refuse_unrecorded_ticks(report, "complete")
    if state.implied != "needs-review":
        raise RefusedError(
            f"{report.id} is not ready to finish: the artifacts imply {state.implied} "
            f"({state.reason})",
            hint=f"`loop work-on {report.id}` says what is left",
        )
    decision = Decision(
        Reset.NONE, "work item complete: nothing left to carry over, and no reset left open"
    )

    def plan() -> checkpoint.Plan | None:
        fresh = fresh_report(report.ctx)
        if fresh.phase.recorded == "complete" or fresh.phase.implied != "needs-review":
            return None
        entry = plans.EntryText(
            summary="complete",
            phase="complete",
            did=f"review approved by {by}; work item complete",
            next="merge the pull request and close the ticket",
        )
        plans.ensure_log(fresh.ctx, fresh.title, fresh.phase.recorded or "needs-review")
        return plans.build(
            fresh.ctx,
            entry,
            decision,
            subject="phase complete",
            mirror_phase="complete",
            log_status="complete",
            transition=(clock.day(clock.utc_now()), by, "review done"),
            session=session,
            settle_all=True,
        )

    root = report.ctx.project.root
    outcome = checkpoint.run(root, plan)
    if outcome is None:
        raise RefusedError(f"{report.id} changed meanwhile; run `loop status {report.id}`")
    with project_lock(root):
        # a complete item owes no reset: whatever is still open will never be confirmed
        closed = resets.close_open(
            root, report.id, note="closed by `loop finish`: the work item is complete"
        )
    return Crossing(state.recorded, "complete", decision, outcome, tuple(closed))
