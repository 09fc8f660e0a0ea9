"""What a parallel run is doing, on disk: ``.the-loop/state/runs/<item>.json``.

Written atomically each time the run moves (a lane starts, a branch is queued,
lands or is evicted), for ``loop status`` and the live board to read while the
run is on, and for a rerun after a crash: ``landing`` names the task whose tree
was being moved into the integration checkout when the run stopped.

Its shape: ``item``, ``run``, ``pid``, ``host``, ``started``, ``updated``,
``parallel``, ``agent``, ``branch`` (the integration branch), ``active``
(false once the run ended), ``landing`` (``{"task", "commit"}`` or null),
``queue`` (task ids, in merge order), ``lanes`` (one object per lane: ``lane``,
``task``, ``state``, ``attempt``, ``tokens``, ``session``, ``since``) and
``tasks`` (id -> ``state``: running | queued | merging | merged | evicted |
blocked | failed | interrupted, with ``lane``, ``attempts``, ``tokens``,
``seconds``, ``merge``).
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.config.state_folder import read_json, state_dir, write_json

if TYPE_CHECKING:
    from typing import Any

FOLDER = "runs"


def path_of(root: Path, item: str) -> Path:
    """The run-state file of ``item``."""
    return state_dir(root) / FOLDER / f"{item}.json"


def load(root: Path, item: str) -> dict[str, Any] | None:
    """The last run's state, or None."""
    data = read_json(path_of(root, item))
    return data if isinstance(data, dict) else None


def is_on(data: dict[str, Any] | None) -> bool:
    """Whether the run that wrote ``data`` is still going (its process alive, here)."""
    if not data or not data.get("active"):
        return False

    if data.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(data.get("pid", 0)), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    return True


class RunState:
    """The coordinator's record of its run, written on every change."""

    def __init__(self, root: Path, item: str, *, run: str, parallel: int, agent: str, branch: str):

        self.root = root
        self.item = item
        self.data: dict[str, Any] = {
            "item": item,
            "run": run,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.time(),
            "updated": time.time(),
            "parallel": parallel,
            "agent": agent,
            "branch": branch,
            "active": True,
            "landing": None,
            "queue": [],
            "lanes": [],
            "tasks": {},
        }

    def task(self, task: str, **fields: Any) -> None:
        """Update one task's row."""
        row = self.data["tasks"].setdefault(task, {"state": "open", "attempts": 0})
        row.update(fields)

    def save(
        self,
        *,
        lanes: list[dict[str, Any]] | None = None,
        queue: list[str] | None = None,
        now: bool = False,
        **fields: Any,
    ) -> None:
        """Record what changed; written at the next ``flush`` (at once with ``now``).

        Each write is atomic and durable (two fsyncs): the coordinator flushes once per
        turn of its loop, and writes at once only what a rerun needs (the landing).
        """
        if lanes is not None:
            self.data["lanes"] = lanes
        if queue is not None:
            self.data["queue"] = queue
        self.data.update(fields)
        self._dirty = True
        if now:
            self.flush()

    def flush(self) -> None:
        """Write the state if it changed since the last write."""
        if not getattr(self, "_dirty", False):
            return
        self.data["updated"] = time.time()
        write_json(state_dir(self.root, create=True) / FOLDER / f"{self.item}.json", self.data)
        self._dirty = False
