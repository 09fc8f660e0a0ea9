"""``loop status``: where a work item stands, in one view."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.config.state_folder import journal_exists, resets_exist
from the_loop.findings import counts
from the_loop.log.execution_log import LogEntry
from the_loop.spec.items import CHAIN
from the_loop.spec.phase import PhaseState
from the_loop.workflow.answer_limits import LIST_LIMIT, capped
from the_loop.workflow.item_report import ItemReport, relative
from the_loop.workflow.next_action import Action, next_action

if TYPE_CHECKING:
    from the_loop.checkpoint import resets
    from the_loop.workflow.tick_evidence import TickProblem


@dataclass(frozen=True)
class ItemStatus:
    """Everything ``loop status`` shows about one item."""

    id: str
    title: str
    path: str
    phase: PhaseState
    artifacts: dict[str, dict[str, object]]
    done: int
    total: int
    ready: tuple[str, ...]
    in_progress: tuple[str, ...]
    action: Action
    resume: LogEntry | None
    open_resets: tuple[resets.ResetRecord, ...]
    interrupted_checkpoint: str | None
    finding_counts: dict[str, int]
    tick_problems: tuple[TickProblem, ...] = ()
    tasks_path: str = ""
    skipped_resets: int = 0  # resets the session went on without (closed as skipped)
    # While a parallel run is on: task -> lane of the tasks its lanes run, and the
    # tasks waiting in its merge queue, in merge order.
    running: dict[str, int] | None = None
    queued: tuple[str, ...] = ()
    format: str = "the-loop"  # the item's format: the-loop | kiro | spec-kit
    cost: dict[str, object] | None = None  # the ledger's total and forecast, when it has runs

    def to_json(self, limit: int | None = LIST_LIMIT) -> dict[str, object]:
        """The JSON answer; ``ready`` and ``inProgress`` hold at most ``limit`` ids (None: all)."""
        tasks: dict[str, object] = {
            "done": self.done,
            "total": self.total,
            "ready": capped(self.ready, limit),
            "readyCount": len(self.ready),
            "inProgress": capped(self.in_progress, limit),
            "inProgressCount": len(self.in_progress),
        }
        if limit is not None and max(len(self.ready), len(self.in_progress)) > limit:
            tasks["more"] = f"loop status {self.id} --json --full"
        return {
            "item": self.id,
            "title": self.title,
            "path": self.path,
            "format": self.format,
            "phase": self.phase.to_json(),
            "artifacts": self.artifacts,
            "tasks": tasks,
            "next": self.action.to_json(),
            "resume": (
                {
                    "next": self.resume.next,
                    "stamp": self.resume.stamp,
                    "summary": self.resume.summary,
                }
                if self.resume
                else None
            ),
            "openResets": [r.to_json() for r in self.open_resets],
            "skippedResets": self.skipped_resets,
            "cost": self.cost,
            "interruptedCheckpoint": self.interrupted_checkpoint,
            "ticksWithoutCheckpoint": [p.to_json(self.tasks_path) for p in self.tick_problems],
            "findings": self.finding_counts,
            "parallelRun": (
                {"running": dict(self.running), "queued": list(self.queued)}
                if self.running is not None
                else None
            ),
        }


def item_status(report: ItemReport) -> ItemStatus:
    """Build the status view of one item (reads only what status needs)."""
    root = report.ctx.project.root
    artifacts = {}
    listed = report.config.workflow.phases
    for kind in CHAIN:
        if report.item.in_chain(kind, listed):
            artifacts[report.locks[kind].path.name] = report.locks[kind].to_json()
    log = report.item.artifacts["execution-log"]
    artifacts[log.path.name] = {"artifact": log.path.name, "exists": log.exists}
    summary = report.summary  # not the tasks themselves: a large plan loads in no time
    interrupted = interrupted_checkpoint(root, report.id)
    done, total = report.counts
    running, queued = parallel_run(root, report.id)
    return ItemStatus(
        id=report.id,
        title=report.title,
        path=relative(report.item.path, root),
        phase=report.phase,
        artifacts=artifacts,
        done=done,
        total=total,
        ready=summary.ready if summary else (),
        in_progress=summary.in_progress if summary else (),
        action=next_action(report),
        resume=report.last_entry,
        open_resets=_open_resets(root, report.id),
        interrupted_checkpoint=interrupted,
        finding_counts=counts(report.check()[0]),
        tick_problems=report.tick_problems,
        tasks_path=relative(report.item.artifacts["tasks"].path, root),
        skipped_resets=_skipped_resets(root, report.id),
        running=running,
        queued=queued,
        format=report.item.format,
        cost=_cost(report),
    )


def parallel_run(root: Path, item: str) -> tuple[dict[str, int] | None, tuple[str, ...]]:
    """The running tasks (with their lanes) and the queue of a parallel run that is on."""
    from the_loop.checkpoint import run_state

    if not run_state.path_of(root, item).exists():
        return None, ()  # the common case: no parallel run ever, nothing more to read
    data = run_state.load(root, item)
    if not run_state.is_on(data):
        return None, ()
    assert data is not None
    tasks = data.get("tasks") or {}
    running = {
        str(row.get("task")): int(row.get("lane", 0))
        for row in data.get("lanes") or []
        if tasks.get(str(row.get("task")), {}).get("state") == "running"
    }
    return running, tuple(str(t) for t in data.get("queue") or [])


def _cost(report: ItemReport) -> dict[str, object] | None:
    """The item's spend so far and the forecast of the rest, from the ledger (if it has runs)."""
    root = report.ctx.project.root
    if not ledger_exists(root):
        return None  # the common case, answered without loading the ledger
    from the_loop.ledger.forecast import forecast
    from the_loop.ledger.prices import prices_from
    from the_loop.ledger.report import cost_report
    from the_loop.ledger.store import read_runs

    runs = read_runs(root, report.id)
    if not runs:
        return None
    spent = cost_report(report.id, runs, prices_from(report.config))
    done, total = report.counts
    tasks = report.tasks.tasks if report.tasks is not None else ()
    finished = [t.id for t in tasks if t.state.value == "done"]
    ahead = forecast(spent, finished, total - done)
    return {
        "spent": spent.total.to_json(spent.prices),
        "forecast": ahead.to_json(),
        "line": ahead.line(),
    }


def ledger_exists(root: Path) -> bool:
    """Whether the ledger has a runs file (the cheap test before reading it)."""
    return (root / ".the-loop" / "state" / "ledger" / "runs.jsonl").exists()


def _open_resets(root: Path, item: str) -> tuple[resets.ResetRecord, ...]:
    if not resets_exist(root):
        return ()  # the common case, answered without loading the reset machinery
    from the_loop.checkpoint import resets

    return tuple(resets.open_resets(root, item))


def _skipped_resets(root: Path, item: str) -> int:
    if not resets_exist(root):
        return 0
    from the_loop.checkpoint import resets

    return resets.skipped_count(root, item)


def interrupted_checkpoint(root: Path, item: str) -> str | None:
    """The id of an interrupted checkpoint of ``item``, if its journal is on disk."""
    if not journal_exists(root):
        return None
    from the_loop.checkpoint import transaction

    journal = transaction.pending(root)
    return journal.plan.id if journal and journal.plan.item == item else None
