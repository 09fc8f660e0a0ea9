"""Task leases: no task of a parallel run is ever worked on by two lanes at once.

A lane takes a lease on its task before its agent starts, and gives it back once
the task has landed (or been evicted, or the run stops). A lease is one file,
``.the-loop/state/leases/<item>/<task>.json``, written under the project lock,
holding who holds it (pid and host of the run), when it started, its last
heartbeat and when it expires without one.

A lease is **live** while its holder runs: on this host, while the holder's pid
is alive (a killed driver's leases are dead at once, whatever their expiry); on
another host, until it expires. A live lease held by another run refuses the
task; a dead one is **reclaimed** by the next run (``acquire`` says so), which
then reuses or recovers the task's branch.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from the_loop.checkpoint.lock import project_lock
from the_loop.config.state_folder import read_record, state_dir, write_json
from the_loop.errors import RefusedError, Where

FOLDER = "leases"
DEFAULT_TTL = 120.0  # seconds a lease stays live on another host without a heartbeat


@dataclass(frozen=True)
class Lease:
    """One task's lease."""

    item: str
    task: str
    pid: int
    host: str
    run: str  # the run that holds it (several lanes of one run share it)
    lane: int
    attempt: int
    started: float  # epoch seconds
    heartbeat: float
    expires: float

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def live(self, now: float | None = None) -> bool:
        """Whether the holder still runs (see the module docstring)."""
        if self.host == socket.gethostname():
            return _pid_alive(self.pid)
        return (now if now is not None else time.time()) < self.expires


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    try:  # a zombie holds no lease
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _folder(root: Path, item: str, *, create: bool = False) -> Path:
    return state_dir(root, create=create) / FOLDER / item


def _path(root: Path, item: str, task: str, *, create: bool = False) -> Path:
    return _folder(root, item, create=create) / f"{task}.json"


def _load(path: Path) -> Lease | None:
    hint = "`loop doctor --repair` removes leases whose run has ended"
    return read_record(path, Lease, what="a lease file", hint=hint)


def leases(root: Path, item: str | None = None) -> list[Lease]:
    """Every lease on disk (of ``item``, or all), in (item, task) order."""
    base = state_dir(root) / FOLDER
    if not base.is_dir():
        return []
    folders = [base / item] if item else sorted(p for p in base.iterdir() if p.is_dir())
    found = []
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            lease = _load(path)
            if lease is not None:
                found.append(lease)
    return found


@dataclass(frozen=True)
class Taken:
    """A lease just taken; ``reclaimed`` is the dead lease it replaced, if any."""

    lease: Lease
    reclaimed: Lease | None = None


def acquire(
    root: Path,
    item: str,
    task: str,
    *,
    run: str,
    lane: int,
    attempt: int,
    ttl: float = DEFAULT_TTL,
) -> Taken:
    """Take ``task``'s lease for ``run``; refused while another live run holds it."""
    with project_lock(root):
        path = _path(root, item, task, create=True)
        held = _load(path)
        if held is not None and held.live() and held.run != run:
            raise RefusedError(
                f"task {task} of {item} is leased by another run (pid {held.pid} on "
                f"{held.host}, lane {held.lane}, since {_stamp(held.started)})",
                where=Where(path),
                hint="wait for that run to end; a lease whose holder died is reclaimed "
                "by the next run",
            )
        now = time.time()
        lease = Lease(
            item=item,
            task=task,
            pid=os.getpid(),
            host=socket.gethostname(),
            run=run,
            lane=lane,
            attempt=attempt,
            started=now,
            heartbeat=now,
            expires=now + ttl,
        )
        write_json(path, lease.to_json())
        reclaimed = held if held is not None and held.run != run else None
        return Taken(lease, reclaimed)


def heartbeat(root: Path, held: list[Lease], *, ttl: float = DEFAULT_TTL) -> list[Lease]:
    """Renew ``held`` leases (one lock for all of them); those still on disk come back."""
    now = time.time()
    renewed = []
    with project_lock(root):
        for lease in held:
            path = _path(root, lease.item, lease.task)
            current = _load(path)
            if current is None or current.run != lease.run:
                continue  # released, or taken over: not ours any more
            fresh = replace(current, heartbeat=now, expires=now + ttl)
            write_json(path, fresh.to_json())
            renewed.append(fresh)
    return renewed


def release(root: Path, lease: Lease) -> None:
    """Give ``lease`` back (nothing when it is gone or held by another run now)."""
    with project_lock(root):
        release_locked(root, lease)


def release_locked(root: Path, lease: Lease) -> None:
    """``release`` for a caller that holds the project lock already."""
    path = _path(root, lease.item, lease.task)
    current = _load(path)
    if current is not None and current.run == lease.run:
        path.unlink(missing_ok=True)


def dead(root: Path, item: str | None = None) -> list[Lease]:
    """Leases whose holder is gone: a rerun reclaims them, ``doctor --repair`` removes them."""
    return [lease for lease in leases(root, item) if not lease.live()]


def remove_dead(root: Path, item: str | None = None) -> list[Lease]:
    """Remove the dead leases (under the lock); returns them."""
    with project_lock(root):
        gone = dead(root, item)
        for lease in gone:
            _path(root, lease.item, lease.task).unlink(missing_ok=True)
        return gone


def _stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
