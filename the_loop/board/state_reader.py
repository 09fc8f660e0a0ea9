"""What is running now, whoever runs it: the one interface the board reads live state through.

:class:`RunStateReader` turns whatever a runner writes into :class:`LiveRun` — lanes, each
with the task it works on, its session and its tokens, and the task states a runner
knows beyond tasks.md (``running``, ``queued`` for merge, ``merged``, ``evicted``).

* :class:`SerialStateReader` reads the serial driver: the ledger's announcement of the
  agent process under way (``ledger/live/<item>.json``, one lane) and its driver state.
* :class:`ParallelStateReader` reads the parallel runner's state file,
  ``.the-loop/state/parallel/<item>.json`` (issue 20), in this shape::

      {"lanes": [{"lane": 1, "task": "3", "state": "running", "session": "…",
                  "agent": "command", "tokens": 1234}],
       "tasks": {"3": "running", "4": "queued", "2": "merged", "5": "evicted"}}

  Keys it does not know are ignored, so the runner may write more.

:func:`live_state` asks the readers in turn (parallel first) and takes the first answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from the_loop.config.state_folder import read_json, state_dir
from the_loop.errors import StateError
from the_loop.ledger import store

LIVE_STATES = ("running", "queued", "merged", "evicted")


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


class ParallelStateReader:
    """The parallel runner's state file (see the module docstring for its shape)."""

    FOLDER = "parallel"

    def read(self, root: Path, item: str) -> LiveRun | None:
        """The lanes and task states the parallel runner wrote, or None."""
        try:
            data = read_json(state_dir(root) / self.FOLDER / f"{item}.json")
        except StateError:
            return None
        if not isinstance(data, Mapping):
            return None
        lanes: list[Lane] = []
        for raw in data.get("lanes") or ():
            if not isinstance(raw, Mapping):
                continue
            number = raw.get("lane")
            tokens = raw.get("tokens")
            lanes.append(
                Lane(
                    lane=number if isinstance(number, int) else len(lanes) + 1,
                    task=_text(raw.get("task")),
                    state=_text(raw.get("state")) or "running",
                    session=_text(raw.get("session")),
                    agent=_text(raw.get("agent")),
                    tokens=tokens if isinstance(tokens, int) else None,
                    since=_text(raw.get("since")),
                )
            )
        raw_tasks = data.get("tasks")
        tasks = {
            str(task): state
            for task, state in (raw_tasks.items() if isinstance(raw_tasks, Mapping) else ())
            if state in LIVE_STATES
        }
        return LiveRun("parallel", tuple(lanes), tasks)


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
