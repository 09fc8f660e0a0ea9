"""The ledger on disk: ``.the-loop/state/ledger/``, never committed.

* ``runs.jsonl``: one :class:`RunRecord` per line, appended with one write
  call (``io.atomic.append_bytes``: a failed append is cut back, so a line is
  there whole or not at all; a torn last line from a crash is skipped on read).
* ``live/<item>.json``: the run under way (task, session, agent, lane, since), written
  when the driver starts an agent process and removed when it ends; ``loop board``
  reads it.
* ``cursors.json``: per session, the running total last attributed to a run,
  so the next run of that session (the driver's, or a hook's) is charged only
  what it added. It is replaced atomically.

Both change together under one lock (``flock`` on ``.lock``): the driver and a
hook inside the agent it runs never charge the same tokens twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path

from the_loop.config.state_folder import read_json, state_dir, write_json
from the_loop.io import atomic
from the_loop.ledger.records import RunRecord
from the_loop.ledger.tokens import Tokens, Usage, usage_from_json, usage_to_json

FOLDER = "ledger"
RUNS = "runs.jsonl"
CURSORS = "cursors.json"


def folder(root: Path, *, create: bool = False) -> Path:
    """The ledger's folder in the project's state folder."""
    path = state_dir(root, create=create) / FOLDER
    if create:
        atomic.make_dirs(path)
    return path


@contextlib.contextmanager
def locked(root: Path) -> Iterator[Path]:
    """Hold the ledger's lock; yields its folder (created)."""
    where = folder(root, create=True)
    fd = os.open(where / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield where
    finally:
        os.close(fd)  # closing drops the lock


def cursor(root: Path, session: str) -> dict[str, Tokens] | None:
    """The running total last attributed for ``session``, or None when none was."""
    data = read_json(folder(root) / CURSORS)
    if not isinstance(data, dict) or session not in data:
        return None
    return usage_from_json(data[session])


def append(root: Path, record: RunRecord, *, total: Usage | None = None) -> None:
    """Add ``record``; with ``total``, move its session's cursor to that running total."""
    line = (json.dumps(record.to_json(), sort_keys=True) + "\n").encode("utf-8")
    with locked(root) as where:
        _append_line(where / RUNS, line)
        if total is not None and record.session:
            set_cursor(where, record.session, total)


def set_cursor(where: Path, session: str, total: Usage) -> None:
    """Record ``total`` as attributed for ``session`` (call with the lock held)."""
    path = where / CURSORS
    data = read_json(path)
    cursors = data if isinstance(data, dict) else {}
    cursors[session] = usage_to_json(total)
    write_json(path, cursors)


def _append_line(path: Path, line: bytes) -> None:
    if not path.exists():
        atomic.create_exclusive(path, "")
    atomic.append_bytes(path, line)


def read_runs(root: Path, item: str | None = None) -> list[RunRecord]:
    """Every record (of ``item``, when given), oldest first; unreadable lines skipped."""
    path = folder(root) / RUNS
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    records = []
    for line in raw.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue  # a torn line (a crash mid-append): it was never a record
        if not isinstance(data, dict):
            continue
        record = RunRecord.from_json(data)
        if record is not None and (item is None or record.item == item):
            records.append(record)
    return records


LIVE = "live"


def announce(root: Path, item: str, run: dict[str, object] | None) -> None:
    """Say which run of ``item`` is under way (``run``), or that none is (None)."""
    path = folder(root, create=True) / LIVE / f"{item}.json"
    if run is None:
        path.unlink(missing_ok=True)
        return
    from the_loop.io import clock

    since = clock.second_stamp(clock.utc_now())
    write_json(path, {**run, "item": item, "since": since, "pid": os.getpid()})


def live_run(root: Path, item: str) -> dict[str, object] | None:
    """The run of ``item`` under way, as :func:`announce` wrote it, or None."""
    data = read_json(folder(root) / LIVE / f"{item}.json")
    if not isinstance(data, dict):
        return None
    pid = data.get("pid")
    if isinstance(pid, int) and not _alive(pid):
        return None  # the driver that announced it is gone (killed): nothing runs
    return data


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
