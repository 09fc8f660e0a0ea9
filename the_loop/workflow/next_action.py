"""The single next action for a work item, derived from its state.

One function decides it, so ``loop status`` and ``loop work-on`` always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from the_loop.workflow.item_report import ItemReport
from the_loop.workflow.tick_evidence import adopt_command

_UPSTREAM_WORDS = {
    "requirements": "the brainstorm",
    "design": "the approved requirements",
    "testing-plan": "the approved requirements and design",
    "tasks": "the approved requirements and design",
}
_PHASE_OF = {
    "brainstorm": "brainstorming",
    "requirements": "requirements-definition",
    "design": "design",
    "testing-plan": "test-planning",
    "tasks": "tasks-breakdown",
}


@dataclass(frozen=True)
class Action:
    """What to do next: a kind, a sentence, and the command that does it.

    ``artifact`` is set when the action is about one artifact; ``task`` when
    it is about one task; ``phase`` is the phase the action belongs to.
    """

    # write | revise | approve | reapprove | implement | adopt | blocked | review | done | fix
    kind: str
    text: str
    command: str
    phase: str
    artifact: str | None = None
    task: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "text": self.text,
            "command": self.command,
            "phase": self.phase,
            "artifact": self.artifact,
            "task": self.task,
        }


def next_action(report: ItemReport) -> Action:
    """The one thing to do next for this item."""
    item_id = report.id
    if any(f.code == "item.requirements-and-bugfix" for f in report.item.findings):
        return Action(
            "fix",
            "keep exactly one of requirements.md and bugfix.md",
            f"loop check {item_id}",
            report.phase.implied,
        )
    chain = ["brainstorm"] if _brainstorm_first(report) else []
    chain += ["requirements", "design"]
    if report.item.in_chain("testing-plan", report.config.workflow.phases):
        chain.append("testing-plan")
    chain.append("tasks")
    for kind in chain:
        action = _artifact_action(report, kind)
        if action is not None:
            return action
    return _implementation_action(report)


def _brainstorm_first(report: ItemReport) -> bool:
    brainstorm = report.locks["brainstorm"]
    return brainstorm.exists and not report.locks["requirements"].exists


def _artifact_action(report: ItemReport, kind: str) -> Action | None:
    lock = report.locks[kind]
    item_id = report.id
    name = report.item.artifact(kind).path.name
    kind_word = report.item.word(kind)
    phase = _PHASE_OF[kind]
    if not lock.exists:
        return Action(
            "write",
            f"write {name} from {_UPSTREAM_WORDS[kind]}",
            f"loop work-on {item_id}",
            phase,
            artifact=kind,
        )
    if lock.stale:
        why = "; ".join(lock.stale_reasons)
        return Action(
            "reapprove",
            f"{name} is stale ({why}): review it and approve it again",
            f"loop approve {item_id} {kind_word} --by @you",
            phase,
            artifact=kind,
        )
    if lock.locked:
        return None
    if lock.status == "in-review":
        return Action(
            "approve",
            f"{name} awaits approval",
            f"loop approve {item_id} {kind_word} --by @you",
            phase,
            artifact=kind,
        )
    return Action(
        "revise",
        f"finish {name} ({lock.label}), then ask for review",
        f"loop approve {item_id} {kind_word} --by @you",
        phase,
        artifact=kind,
    )


def _implementation_action(report: ItemReport) -> Action:
    item_id = report.id
    summary = report.summary  # not the whole graph: what status needs stays cheap
    done, total = report.counts
    if summary is None or total == 0:
        return Action(
            "revise",
            "tasks.md lists no tasks: break the design into tasks",
            f"loop check {item_id}",
            "tasks-breakdown",
            artifact="tasks",
        )
    if done == total and report.unrecorded_ticks:
        # Review would be refused: a tick without its checkpoint is not finished work.
        task = report.unrecorded_ticks[0]
        more = len(report.unrecorded_ticks) - 1
        return Action(
            "adopt",
            f"task {task.id} is ticked without a checkpoint"
            + (f" ({more} more like it)" if more else "")
            + ": record it after the fact",
            adopt_command(item_id, task.id),
            "implementation",
            task=task.id,
        )
    if done == total:
        if report.phase.recorded == "complete":
            return Action("done", "the work item is complete", f"loop status {item_id}", "complete")
        return Action(
            "review",
            f"all {total} tasks done: review the work",
            f"loop work-on {item_id}",
            "needs-review",
        )
    if summary.next is None:
        blocked = summary.unschedulable
        return Action(
            "blocked",
            f"no task can start: {blocked} task(s) are blocked by a cycle or "
            "an unknown dependency; fix tasks.md",
            f"loop check {item_id}",
            "implementation",
            artifact="tasks",
        )
    return Action(
        "implement",
        f"implement task {summary.next}: {summary.next_title}",
        f"loop execute-tasks {item_id}",
        "implementation",
        task=summary.next,
    )
