"""Task leases: one holder per task, a dead holder's lease reclaimed by the next run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from the_loop.checkpoint import leases
from the_loop.errors import RefusedError


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_lease_is_taken_renewed_and_released(tmp_path: Path) -> None:
    taken = leases.acquire(tmp_path, "issue-1", "3", run="r1", lane=1, attempt=1)
    assert taken.reclaimed is None and taken.lease.live()
    assert [lease.task for lease in leases.leases(tmp_path, "issue-1")] == ["3"]
    renewed = leases.heartbeat(tmp_path, [taken.lease], ttl=5)
    assert renewed[0].heartbeat >= taken.lease.heartbeat
    leases.release(tmp_path, taken.lease)
    assert leases.leases(tmp_path) == []


def test_a_live_lease_of_another_run_refuses_the_task(tmp_path: Path) -> None:
    leases.acquire(tmp_path, "issue-1", "3", run="r1", lane=1, attempt=1)
    with pytest.raises(RefusedError, match="leased by another run"):
        leases.acquire(tmp_path, "issue-1", "3", run="r2", lane=2, attempt=1)


def test_a_dead_holders_lease_is_reclaimed(tmp_path: Path) -> None:
    taken = leases.acquire(tmp_path, "issue-1", "3", run="r1", lane=1, attempt=1)
    path = tmp_path / ".the-loop/state/leases/issue-1/3.json"
    path.write_text(path.read_text().replace(f'"pid": {taken.lease.pid}', f'"pid": {_dead_pid()}'))
    assert [lease.task for lease in leases.dead(tmp_path)] == ["3"]
    again = leases.acquire(tmp_path, "issue-1", "3", run="r2", lane=1, attempt=2)
    assert again.reclaimed is not None and again.reclaimed.run == "r1"
    assert leases.dead(tmp_path) == []


def test_on_another_host_a_lease_lives_until_it_expires(tmp_path: Path) -> None:
    taken = leases.acquire(tmp_path, "issue-1", "3", run="r1", lane=1, attempt=1, ttl=60)
    elsewhere = leases.Lease(**{**taken.lease.to_json(), "host": "other-box"})  # type: ignore[arg-type]
    assert elsewhere.live(now=taken.lease.started + 30)
    assert not elsewhere.live(now=taken.lease.started + 61)


def test_remove_dead_keeps_live_leases(tmp_path: Path) -> None:
    live = leases.acquire(tmp_path, "issue-1", "1", run="r1", lane=1, attempt=1)
    gone = leases.acquire(tmp_path, "issue-1", "2", run="r1", lane=2, attempt=1)
    path = tmp_path / ".the-loop/state/leases/issue-1/2.json"
    path.write_text(path.read_text().replace(f'"pid": {gone.lease.pid}', f'"pid": {_dead_pid()}'))
    assert [lease.task for lease in leases.remove_dead(tmp_path)] == ["2"]
    assert leases.leases(tmp_path) == [live.lease]
