"""The driver's own memory between runs: which agent session it was driving.

``.the-loop/state/driver/<item>.json`` (never committed) holds the agent kind,
the session id and the task of the last run, so a rerun after Ctrl-C or a
crash resumes that session instead of starting cold. Everything else a rerun
needs (ticked tasks, the log's Next:, open reset records) is in the project's
files already.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from the_loop.config.state_folder import read_record, state_dir, write_json
from the_loop.io import clock

FOLDER = "driver"


@dataclass(frozen=True)
class DriverState:
    """What the last run of the driver left for the next one."""

    item: str
    kind: str
    session: str | None
    task: str | None
    updated: str


def _path(root: Path, item: str, *, create: bool = False) -> Path:
    return state_dir(root, create=create) / FOLDER / f"{item}.json"


def load(root: Path, item: str) -> DriverState | None:
    """The saved state for ``item``, or None."""
    hint = "remove it; the next run starts a new agent session"
    return read_record(_path(root, item), DriverState, what="the driver's state file", hint=hint)


def save(root: Path, *, item: str, kind: str, session: str | None, task: str | None) -> None:
    """Remember the session being driven."""
    now = clock.second_stamp(clock.utc_now())
    state = DriverState(item=item, kind=kind, session=session, task=task, updated=now)
    write_json(_path(root, item, create=True), asdict(state))


def forget(root: Path, item: str) -> None:
    """Drop the saved state (the item's tasks are all done)."""
    _path(root, item).unlink(missing_ok=True)
