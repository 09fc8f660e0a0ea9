"""Everything ``loop board`` shows, as one JSON object, read fresh from the project's files.

* ``items``: every work item with its phase and task counts;
* ``item``: the selected one — its tasks with their board state (tasks.md's state,
  overlaid with what a runner says: running per lane, queued for merge, merged,
  evicted), the DAG drawn as SVG with those states, the lanes with each running
  agent's window use against both pressure arms, and the ledger (``loop cost --json``).

Nothing here writes; a snapshot is taken per request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from the_loop.board.state_reader import Lane, LiveRun, live_state
from the_loop.checkpoint.policy import pressure_verdict
from the_loop.config.settings import Pressure
from the_loop.dag.render import _state_class, _unique
from the_loop.dag.svg import draw, layout
from the_loop.errors import LoopError
from the_loop.ledger.item_cost import cost_of
from the_loop.spec.project import ItemContext, item_context, open_project
from the_loop.telemetry import Harness, read_context
from the_loop.workflow.item_report import ItemReport

HARNESSES = {"claude": Harness.CLAUDE, "codex": Harness.CODEX}


def board_snapshot(root: Path, selected: str | None = None) -> dict[str, object]:
    """The page's data: every item, and the ``selected`` one (else the first with tasks)."""
    project = open_project(root)
    reports = [ItemReport(item_context(project, item, tolerant=True)) for item in project.items()]
    items = [_item_line(r) for r in reports]
    chosen = _choose(reports, selected)
    return {
        "project": str(root),
        "items": items,
        "item": _item_view(chosen) if chosen is not None else None,
    }


def _choose(reports: list[ItemReport], selected: str | None) -> ItemReport | None:
    if selected:
        for report in reports:
            if selected in (report.id, report.id.split("-")[-1]):
                return report
    with_tasks = [r for r in reports if r.dag is not None]
    running = [r for r in with_tasks if live_state(r.ctx.project.root, r.id) is not None]
    candidates = running or with_tasks or reports
    return candidates[0] if candidates else None


def _item_line(report: ItemReport) -> dict[str, object]:
    done, total = report.counts
    return {
        "id": report.id,
        "title": report.title,
        "phase": report.phase.implied,
        "recordedPhase": report.phase.recorded,
        "done": done,
        "total": total,
    }


def _item_view(report: ItemReport) -> dict[str, object]:
    root = report.ctx.project.root
    live = live_state(root, report.id) or LiveRun("none")
    view: dict[str, object] = {**_item_line(report), "source": live.source}
    tasks, dag = report.tasks, report.dag
    states: dict[str, str] = {}
    if tasks is not None and dag is not None:
        unique = _unique(tasks)
        ready, blocked = set(dag.ready), set(dag.unschedulable)
        for task in unique:
            states[task.id] = live.tasks.get(task.id) or _state_class(task, dag, ready, blocked)
        known = {t.id for t in unique}
        edges = [(d, t.id) for t in unique for d in (t.depends_on or ()) if d in known]
        placed, columns = layout(unique, edges, dag)
        view["svg"] = draw(report.id, unique, edges, placed, columns, states, dag)
        lane_of = {lane.task: lane.lane for lane in live.lanes if lane.task}
        view["tasks"] = [
            {
                "id": t.id,
                "title": t.title,
                "state": states[t.id],
                "lane": lane_of.get(t.id),
                "depends": list(t.depends_on or ()),
            }
            for t in unique
        ]
        view["waves"] = [list(w) for w in dag.waves]
        view["criticalPath"] = list(dag.critical_path)
    view["lanes"] = [_lane(report.ctx, lane) for lane in live.lanes]
    view["cost"] = _cost(report.ctx)
    return view


def _cost(ctx: ItemContext) -> dict[str, object] | None:
    try:
        return cost_of(ctx).to_json()
    except LoopError:
        return None


def _lane(ctx: ItemContext, lane: Lane) -> dict[str, object]:
    data: dict[str, object] = {
        "lane": lane.lane,
        "task": lane.task,
        "state": lane.state,
        "session": lane.session,
        "agent": lane.agent,
        "since": lane.since,
        "window": _window(ctx, lane),
    }
    return data


def _window(ctx: ItemContext, lane: Lane) -> dict[str, object]:
    """How full the lane's window is, against both arms (unknown for a command agent)."""
    pressure = ctx.config.context.pressure
    harness = HARNESSES.get(lane.agent or "")
    tokens, window = lane.tokens, None
    if harness is not None and lane.session:
        try:
            reading = read_context(
                session_id=lane.session,
                harness=harness,
                cwd=Path(lane.cwd) if lane.cwd else ctx.project.root,  # transcripts go by cwd
                env=os.environ,
            )
            tokens, window = reading.tokens_in_use, reading.window
        except LoopError:
            pass
    return _arms(pressure, tokens, window)


def _arms(pressure: Pressure, tokens: int | None, window: int | None) -> dict[str, object]:
    fits = window is not None and tokens is not None and window >= tokens
    verdict = pressure_verdict(pressure, tokens=tokens, window=window if fits else None)
    percent = round(100 * tokens / window, 1) if fits and tokens is not None and window else None
    return {
        "tokens": tokens,
        "window": window,
        "percent": percent,
        "softTokens": pressure.soft_tokens,
        "hardTokens": pressure.hard_tokens,
        "selectivePercent": pressure.selective_percent,
        "fullClearPercent": pressure.full_clear_percent,
        **verdict.to_json(),
    }


def state_names(view: Mapping[str, object]) -> dict[str, str]:
    """Task id -> board state, from an item view (for tests and the text fallback)."""
    tasks = view.get("tasks")
    if not isinstance(tasks, list):
        return {}
    return {str(t["id"]): str(t["state"]) for t in tasks if isinstance(t, dict)}
