"""``loop work-on``: pick a work item up wherever it stands.

It says where the item stands, names the single next action, renders the next
artifact from its template when it does not exist yet (never downstream of an
unlocked artifact), crosses a pending phase boundary with a checkpoint and the
``phaseBoundary`` reset, and prints the brief for the next step.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from the_loop.checkpoint.policy import Reset
from the_loop.errors import LoopError, RefusedError
from the_loop.io import atomic
from the_loop.io.templating import render
from the_loop.spec.approval import upstream_kinds
from the_loop.spec.project import ItemContext
from the_loop.workflow.briefs import brief
from the_loop.workflow.item_report import ItemReport, fresh_report
from the_loop.workflow.next_action import Action, next_action
from the_loop.workflow.phase_crossing import Crossing, cross, sync_mirror
from the_loop.workflow.status import item_status

_ARTIFACT_TEMPLATES = {
    "brainstorm": "brainstorm.md.j2",
    "requirements": "requirements.md.j2",
    "design": "design.md.j2",
    "testing-plan": "testing-plan.md.j2",
    "tasks": "tasks.md.j2",
}


@dataclass(frozen=True)
class WorkOnResult:
    """What ``work-on`` found, did, and asks for next."""

    report: ItemReport
    action: Action
    rendered: Path | None
    crossing: Crossing | None
    synced: Crossing | None
    brief: str | None
    dry_run: bool

    @property
    def deferred(self) -> bool:
        """True when a reset comes first and the brief waits for the next session."""
        crossing = self.crossing
        return crossing is not None and crossing.decision.reset is not Reset.NONE

    def to_json(self) -> dict[str, object]:

        status = item_status(self.report).to_json()
        return {
            "item": self.report.id,
            "dryRun": self.dry_run,
            "status": status,
            "action": self.action.to_json(),
            "rendered": str(self.rendered) if self.rendered else None,
            "synced": self.synced.to_json() if self.synced else None,
            "crossing": self.crossing.to_json() if self.crossing else None,
            "reset": _directive(self.crossing),
            "brief": self.brief,
        }


def _directive(crossing: Crossing | None) -> dict[str, object] | None:
    if crossing is None:
        return None
    if crossing.outcome is not None:
        return crossing.outcome.to_json()
    return {
        "reset": crossing.decision.reset.value,
        "reason": crossing.decision.reason,
        "checkpoint": None,
    }


def work_on(
    ctx: ItemContext, *, sync: bool = False, dry_run: bool = False, session: str | None = None
) -> WorkOnResult:
    """Resume the item: report, render, cross, brief (see the module docstring)."""
    report = ItemReport(ctx)
    synced = None
    if sync:
        synced = sync_mirror(report, dry_run=dry_run, session=session)
        if synced is not None and not dry_run:
            report = fresh_report(ctx)
    action = next_action(report)
    rendered = None
    written: tuple[str, Path] | None = None
    if action.kind == "write" and action.artifact:
        rendered = _render_artifact(report, action.artifact, dry_run)
        written = (action.artifact, rendered)
        if not dry_run:
            report = fresh_report(ctx)
            action = next_action(report)
    crossing = None
    if report.phase.relation in ("pending", "behind") or _unrecorded(report):
        try:
            crossing = cross(
                report,
                report.phase.implied,
                next_step=_next_step(report, action),
                dry_run=dry_run,
                session=session,
            )
        except LoopError:
            # The checkpoint was undone; so is the skeleton rendered for it.
            _unrender(written, report, dry_run)
            raise
        if not dry_run:
            report = fresh_report(ctx)
    # A mirror ahead of the artifacts is reported by status and check; only --sync
    # repairs it, explicitly.
    result = WorkOnResult(report, action, rendered, crossing, synced, None, dry_run)
    text = None if result.deferred else _brief(report, action)
    return WorkOnResult(report, action, rendered, crossing, synced, text, dry_run)


def _unrecorded(report: ItemReport) -> bool:
    """No phase recorded yet (no log, or no ``phase:``): the first crossing records it."""
    return report.phase.relation == "unrecorded" and report.phase.implied != "not-started"


def _brief(report: ItemReport, action: Action) -> str:

    return brief(report, action)


def _next_step(report: ItemReport, action: Action) -> str:
    """The concrete Next: for a crossing's log entry, from the action after it."""
    text = action.text
    if action.kind == "implement":
        return f"{text} (`loop execute-tasks {report.id}` prints its brief)"
    return f"{text} (`loop work-on {report.id}` prints the brief)"


def _unrender(rendered: tuple[str, Path] | None, report: ItemReport, dry_run: bool) -> None:
    """Remove a skeleton this run rendered, if it is still exactly as rendered."""
    if rendered is None or dry_run:
        return
    kind, path = rendered
    if path.is_file() and path.read_text() == _skeleton(report, kind):
        path.unlink()


def _skeleton(report: ItemReport, kind: str) -> str:

    item = report.item
    return render(
        _ARTIFACT_TEMPLATES[kind],
        item=item.id,
        title=report.title or item.id,
        requirements_file=item.requirements.path.name,
    )


def _render_artifact(report: ItemReport, kind: str, dry_run: bool) -> Path:
    """Write the artifact's skeleton from its template; only below locked upstreams."""

    item = report.item
    for up in upstream_kinds(item, kind):
        if not report.locks[up].locked:
            raise RefusedError(
                f"cannot write {kind} while {report.locks[up].path.name} is "
                f"{report.locks[up].label}"
            )
    path = item.artifact(kind).path
    if not dry_run:
        atomic.create_exclusive(path, _skeleton(report, kind))
    return path
