"""The phase a work item is in: implied by its artifacts, mirrored in its log.

The artifacts decide (which exist, which are locked, how many tasks are
done); ``execution-log.md``'s front matter mirrors the result. A mirror one
step behind is a boundary waiting to be crossed (``loop work-on`` crosses it
with a checkpoint); any other disagreement is reported, never silently fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

from the_loop.config.loader import ALL_PHASES, PHASES
from the_loop.errors import Where
from the_loop.findings import Finding, Level
from the_loop.spec.approval import Lock
from the_loop.spec.items import WorkItem
from the_loop.tasks import TaskList, TaskState

_ARTIFACT_PHASE = {
    "brainstorm": "brainstorming",
    "requirements": "requirements-definition",
    "design": "design",
    "testing-plan": "test-planning",
    "tasks": "tasks-breakdown",
}
# Phases no artifact can show: when the artifacts imply the key, the log may
# record one of these instead and is believed (a person decided it).
_LOG_DECIDED = {
    "not-started": frozenset({"phase-selection"}),
    "needs-review": frozenset({"verification", "complete", "cleanup"}),
}


@dataclass(frozen=True)
class PhaseState:
    """Implied and recorded phase, and how they relate."""

    implied: str
    reason: str
    recorded: str | None
    relation: str  # same | behind | pending | ahead | differs | unrecorded

    def to_json(self) -> dict[str, object]:
        return {
            "implied": self.implied,
            "recorded": self.recorded,
            "reason": self.reason,
            "relation": self.relation,
        }


def task_counts(tasks: TaskList | None) -> tuple[int, int]:
    """``(done, total)`` of a task list (0, 0 when there is none).

    A duplicated id counts once, by its first definition, as the DAG reads it; an
    open optional task does not count.
    """
    if tasks is None:
        return 0, 0
    first: dict[str, TaskState] = {}
    optional: set[str] = set()
    for task in tasks.tasks:
        if task.id not in first and task.optional:
            optional.add(task.id)
        first.setdefault(task.id, task.progress)  # a parent: done when its sub-tasks are
    done = sum(1 for state in first.values() if state is TaskState.DONE)
    # An open optional task (Kiro's `- [ ]*`) is never required for the item to be done.
    skipped = sum(1 for i in optional if first[i] is not TaskState.DONE)
    return done, len(first) - skipped


def implied_phase(
    item: WorkItem,
    locks: dict[str, Lock],
    tasks: TaskList | None,
    phases: tuple[str, ...] = PHASES,
    counts: tuple[int, int] | None = None,
) -> tuple[str, str]:
    """The phase the artifacts put the item in, and why.

    ``testing-plan.md`` counts when it exists; when it does not, it is the next
    artifact only if ``test-planning`` is one of ``phases`` and ``tasks.md`` is not
    written yet. ``counts`` is ``task_counts(tasks)`` when the caller has it already.
    """
    brainstorm = locks["brainstorm"]
    requirements = locks["requirements"]
    if not requirements.exists:
        if brainstorm.exists and not brainstorm.locked:
            return "brainstorming", f"brainstorm.md is {brainstorm.label}"
        if brainstorm.locked:
            return "requirements-definition", "brainstorm.md is approved; requirements not written"
        return "not-started", "no brainstorm.md or requirements.md yet"
    for kind in ("requirements", "design", "testing-plan", "tasks"):
        lock = locks[kind]
        if not item.in_chain(kind, phases):
            continue
        if not lock.exists:
            return _ARTIFACT_PHASE[kind], f"{lock.path.name} is not written yet"
        if not lock.locked:
            return _ARTIFACT_PHASE[kind], f"{lock.path.name} is {lock.label}"
    done, total = counts if counts is not None else task_counts(tasks)
    if total == 0:
        return "tasks-breakdown", "tasks.md lists no tasks"
    if done < total:
        return "implementation", f"{done} of {total} tasks done"
    return "needs-review", f"all {total} tasks done"


def phase_state(
    item: WorkItem,
    locks: dict[str, Lock],
    tasks: TaskList | None,
    phases: tuple[str, ...] = PHASES,
    counts: tuple[int, int] | None = None,
) -> PhaseState:
    """Compare the implied phase with the log's mirror."""
    implied, reason = implied_phase(item, locks, tasks, phases, counts)
    log = item.artifacts["execution-log"]
    recorded = log.front.get("phase") if log.exists and log.front else None
    recorded = str(recorded) if recorded is not None else None
    if recorded == "complete" and implied == "needs-review":
        # Completion is a human decision the artifacts cannot show; the log records it.
        implied, reason = "complete", "reviewed and closed (loop finish)"
    elif recorded in _LOG_DECIDED.get(implied, ()) and recorded in phases:
        implied, reason = recorded, f"{reason}; the log records {recorded}"
    return PhaseState(implied, reason, recorded, _relation(implied, recorded, phases))


def without_unrecorded_ticks(
    state: PhaseState, unrecorded: int, total: int, phases: tuple[str, ...] = PHASES
) -> PhaseState:
    """``state`` when ticks without a checkpoint do not count as done.

    A box ticked by hand is a claim, not finished work (see
    ``the_loop.workflow.tick_evidence``): while one has no checkpoint, every
    task being ticked does not put the item in needs-review.
    """
    if not unrecorded or state.implied != "needs-review":
        return state
    reason = (
        f"{total - unrecorded} of {total} tasks done with a checkpoint; "
        f"{unrecorded} ticked without one"
    )
    implied = "implementation"
    return PhaseState(implied, reason, state.recorded, _relation(implied, state.recorded, phases))


def _relation(implied: str, recorded: str | None, phases: tuple[str, ...]) -> str:
    if recorded is None:
        return "unrecorded"
    if recorded == implied:
        return "same"
    if recorded not in ALL_PHASES:
        return "differs"
    order = [p for p in ALL_PHASES if p in phases or p in (implied, recorded)]
    gap = order.index(implied) - order.index(recorded)
    if gap == 1 or (gap == 2 and order[order.index(recorded) + 1] == "brainstorming"):
        return "pending"
    return "behind" if gap > 0 else "ahead"


def phase_findings(item: WorkItem, state: PhaseState) -> list[Finding]:
    """Disagreement between the log's phase and the artifacts, as findings."""
    log = item.artifacts["execution-log"]
    where = Where(log.path, log.front.line_of("phase") if log.front else None)
    if state.relation == "unrecorded":
        if not log.exists:
            return [
                Finding(
                    Level.INFO,
                    "phase.no-log",
                    "no execution-log.md: the phase is not recorded and there is no resume anchor",
                    Where(item.path),
                    hint=f"`loop work-on {item.id}` creates it at the next checkpoint",
                )
            ]
        return [
            Finding(
                Level.WARNING,
                "phase.unrecorded",
                "execution-log.md has no `phase:` in its front matter",
                where,
                hint=f"`loop work-on {item.id} --sync` records {state.implied}",
            )
        ]
    if state.relation == "same":
        return []
    if state.relation in ("pending", "behind"):
        return [
            Finding(
                Level.INFO,
                "phase.pending",
                f"phase boundary pending: the log says {state.recorded}, the artifacts "
                f"imply {state.implied} ({state.reason})",
                where,
                hint=f"`loop work-on {item.id}` crosses it with a checkpoint",
            )
        ]
    return [
        Finding(
            Level.WARNING,
            "phase.mismatch",
            f"the log says phase {state.recorded}, but the artifacts imply "
            f"{state.implied} ({state.reason})",
            where,
            hint=f"`loop work-on {item.id} --sync` sets the log to {state.implied}; "
            "or fix the artifacts if the log is right",
        )
    ]
