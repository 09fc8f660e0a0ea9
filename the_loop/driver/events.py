"""What the driver reports while it runs, and the summary at the end.

The driver never prints: it hands each event to a callback, and the CLI shows a
live progress line on a terminal or, with ``--json``, one JSON object per event
(``task-started``, ``agent-finished``, ``retry``, ``checkpoint``, ``reset``,
``task-failed``, ``done``). ``Progress`` ticks are for the live line only.

A parallel run (``--parallel N``) sets ``lane`` on the events of a task's
agent (1..N; None in a serial run) and adds ``merge`` events from its queue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from the_loop.checkpoint.transaction import Outcome


@dataclass(frozen=True)
class Event:
    """Base of every driver event; ``name`` is the ``event`` field of its JSON."""

    name: ClassVar[str] = "event"

    def to_json(self) -> dict[str, object]:
        """``{"event": name, ...fields}`` with camelCase keys."""
        return {"event": self.name, **{_camel(k): v for k, v in asdict(self).items()}}


@dataclass(frozen=True)
class TaskStarted(Event):
    """An agent run for a task begins (``start``: new, resume or compact)."""

    name: ClassVar[str] = "task-started"
    task: str
    title: str
    run: int
    max_runs: int
    start: str
    session: str | None
    lane: int | None = None


@dataclass(frozen=True)
class Progress(Event):
    """A tick while an agent runs (for the live line; not part of ``--json``)."""

    name: ClassVar[str] = "progress"
    task: str
    run: int
    session: str | None
    tokens: int | None
    seconds: float
    doing: str  # running | compacting
    lane: int | None = None


@dataclass(frozen=True)
class AgentFinished(Event):
    """An agent run ended: ``outcome`` is done, done-by-agent, unfinished or failed."""

    name: ClassVar[str] = "agent-finished"
    task: str
    run: int
    session: str | None
    exit_code: int | None
    seconds: float
    tokens: int | None
    window: int | None
    outcome: str
    detail: str
    lane: int | None = None


@dataclass(frozen=True)
class RetryWait(Event):
    """A failed run is retried after ``seconds``: the wait is said, never silent."""

    name: ClassVar[str] = "retry"
    task: str
    run: int  # the run that failed
    seconds: float
    why: str


@dataclass(frozen=True)
class CheckpointTaken(Event):
    """A checkpoint: ``kind`` task, interim, phase or stop; ``by`` loop or the agent."""

    name: ClassVar[str] = "checkpoint"
    task: str | None
    kind: str
    by: str
    checkpoint: str
    commit: str | None
    reset: str
    reason: str
    lane: int | None = None

    @classmethod
    def of(
        cls, outcome: Outcome, task: str | None, kind: str, lane: int | None = None
    ) -> CheckpointTaken:
        """The event of a checkpoint loop took (serial run or lane)."""
        return cls(
            task=task,
            kind=kind,
            by="loop",
            checkpoint=outcome.id,
            commit=outcome.commit,
            reset=outcome.reset.reset.value,
            reason=outcome.reset.reason,
            lane=lane,
        )


@dataclass(frozen=True)
class ResetDone(Event):
    """A reset record resolved: completed (with the session), aborted, or done elsewhere."""

    name: ClassVar[str] = "reset"
    mode: str
    checkpoint: str
    state: str  # completed | aborted | elsewhere
    session_before: str | None
    session_after: str | None
    how: str


@dataclass(frozen=True)
class TaskFailed(Event):
    """The run stops with this task open."""

    name: ClassVar[str] = "task-failed"
    task: str
    runs: int
    reason: str
    lane: int | None = None


@dataclass(frozen=True)
class Merged(Event):
    """The merge queue's verdict on a task's branch: landed, evicted, or given up."""

    name: ClassVar[str] = "merge"
    task: str
    lane: int
    attempt: int
    result: str  # landed | evicted | failed
    detail: str
    commit: str | None = None
    queued: tuple[str, ...] = ()  # tasks still waiting in the queue after this one


@dataclass(frozen=True)
class RunSummary(Event):
    """The whole run: what got done, with what, and why it ended."""

    name: ClassVar[str] = "done"
    item: str
    agent: str
    status: str  # done | stopped | failed | interrupted
    reason: str
    tasks_done: tuple[str, ...]
    sessions: tuple[str, ...]
    resets: dict[str, int]  # mode -> resets performed (completed records)
    resets_aborted: int
    runs: int
    tokens_peak: int | None
    seconds: float
    open_reset: str | None  # a reset left for the next session, described
    lanes: int = 1
    # A parallel run's table, one row per task it touched: task, lane, attempts,
    # seconds, tokens, merge (landed | evicted | failed | interrupted).
    table: tuple[dict[str, object], ...] = ()
    cost: dict[str, object] | None = None  # the item's ledger, as `loop cost --json` shows it

    @property
    def exit_code(self) -> int:
        """0 when done or stopped on request, 1 when a task failed, 130 on Ctrl-C."""
        return {"done": 0, "stopped": 0, "failed": 1, "interrupted": 130}[self.status]


Listener = Callable[[Event], None]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)
