"""What is running now, whoever runs it: the one interface the board reads live state through.

:class:`RunStateReader` turns whatever a runner writes into :class:`LiveRun` — lanes, each
with the task it works on, its session and its tokens, and the task states a runner
knows beyond tasks.md (``running``, ``queued`` for merge, ``merged``, ``evicted``).

* :class:`SerialStateReader` reads the serial driver: the ledger's announcement of the
  agent process under way (``ledger/live/<item>.json``, one lane) and its driver state.
* :class:`ParallelStateReader` reads the parallel runner's run state
  (``.the-loop/state/runs/<item>.json``, through ``checkpoint.run_state``, which
  owns its shape) while that run is on, mapping its states to the board's:
  ``running`` (with its lane), ``queued`` (queued or being merged), ``merged``,
  ``evicted``, ``blocked`` (blocked, or failed: given up in this run); a task it
  calls ``open`` or ``interrupted`` shows what tasks.md says (done, ready, open).

:func:`live_state` asks the readers in turn (parallel first) and takes the first answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from the_loop.errors import StateError
from the_loop.ledger import store

LIVE_STATES = ("running", "queued", "merged", "evicted", "blocked")


@dataclass(frozen=True)
class Lane:
    """One agent at work."""

    lane: int
    task: str | None
    state: str  # running | queued | idle
    session: str | None = None
    agent: str | None = None
    tokens: int | None = None
    since: str | None = None
    cwd: str | None = None  # where the agent runs (a lane's worktree), if not the project


@dataclass(frozen=True)
class LiveRun:
    """What a runner says about an item right now."""

    source: str  # serial | parallel
    lanes: tuple[Lane, ...] = ()
    tasks: Mapping[str, str] = field(default_factory=dict)  # task -> one of LIVE_STATES


class RunStateReader(Protocol):
    """Reads one kind of runner's live state for an item; None when it is not running it."""

    def read(self, root: Path, item: str) -> LiveRun | None:
        """The live state of ``item``, or None."""


class SerialStateReader:
    """The serial driver (``loop execute-tasks --agent``): at most one lane."""

    def read(self, root: Path, item: str) -> LiveRun | None:
        """The agent process under way, from the ledger's announcement."""
        try:
            run = store.live_run(root, item)
        except StateError:
            return None
        if run is None:
            return None
        task = _text(run.get("task"))
        lane = Lane(
            lane=1,
            task=task,
            state="running",
            session=_text(run.get("session")),
            agent=_text(run.get("agent")),
            since=_text(run.get("since")),
        )
        return LiveRun("serial", (lane,), {task: "running"} if task else {})


# The parallel runner's task states -> the board's (absent: tasks.md decides).
PARALLEL_STATES = {
    "running": "running",
    "queued": "queued",
    "merging": "queued",
    "merged": "merged",
    "evicted": "evicted",
    "blocked": "blocked",
    "failed": "blocked",
}


class ParallelStateReader:
    """The parallel runner (``loop execute-tasks --parallel N``): one lane per agent."""

    def read(self, root: Path, item: str) -> LiveRun | None:
        """The lanes and task states of the parallel run of ``item`` under way, or None."""
        from the_loop.checkpoint import run_state

        try:
            data = run_state.load(root, item)
        except StateError:
            return None
        if data is None or not run_state.is_on(data):
            return None  # no run, or it ended: tasks.md has the last word
        agent = _text(data.get("agent"))
        raw_tasks = data.get("tasks")
        tasks: dict[str, str] = {}
        for task, row in raw_tasks.items() if isinstance(raw_tasks, Mapping) else ():
            state = row.get("state") if isinstance(row, Mapping) else None
            if isinstance(state, str) and state in PARALLEL_STATES:
                tasks[str(task)] = PARALLEL_STATES[state]
        lanes: list[Lane] = []
        for raw in data.get("lanes") or ():
            if not isinstance(raw, Mapping):
                continue
            number, tokens = raw.get("lane"), raw.get("tokens")
            task = _text(raw.get("task"))
            lanes.append(
                Lane(
                    lane=number if isinstance(number, int) else len(lanes) + 1,
                    task=task,
                    state=_lane_state(tasks.get(task or ""), raw.get("state")),
                    session=_text(raw.get("session")),
                    agent=_text(raw.get("agent")) or agent,
                    tokens=tokens if isinstance(tokens, int) else None,
                    since=_since(raw.get("since")),
                    cwd=_text(raw.get("worktree")),
                )
            )
        return LiveRun("parallel", tuple(lanes), tasks)


def _lane_state(board: str | None, raw: object) -> str:
    if board in ("running", "queued"):
        return board
    mapped = PARALLEL_STATES.get(raw) if isinstance(raw, str) else None
    return mapped if mapped in ("running", "queued") else "idle"


def _since(value: object) -> str | None:
    """A lane's start, as the serial reader shows it (a UTC stamp); the run state has epochs."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        import datetime as dt

        from the_loop.io import clock

        return clock.second_stamp(dt.datetime.fromtimestamp(value, tz=dt.timezone.utc))
    return _text(value)


READERS: Sequence[RunStateReader] = (ParallelStateReader(), SerialStateReader())


def live_state(
    root: Path, item: str, readers: Sequence[RunStateReader] = READERS
) -> LiveRun | None:
    """The first answer of ``readers`` for ``item`` (None: nothing is running it)."""
    for reader in readers:
        found = reader.read(root, item)
        if found is not None:
            return found
    return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
