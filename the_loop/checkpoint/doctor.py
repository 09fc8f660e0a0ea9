"""``loop doctor``: find and repair what an interruption left behind.

An interrupted checkpoint (its journal still present) is finished, or undone
if its commit can no longer happen; open resets are listed for ``loop reset
confirm|abort`` (never replayed); stray backups are noted. ``--repair`` also
closes the open resets left behind (as aborted: never replayed), except one
the repair itself has just prepared, which has not been shown to anyone yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from the_loop.checkpoint import resets
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.lock import project_lock
from the_loop.checkpoint.state_dir import state_dir


@dataclass
class DoctorReport:
    """What ``doctor`` found, and what it repaired."""

    interrupted: checkpoint.Journal | None = None
    recovered: checkpoint.Recovery | None = None
    discarded: checkpoint.Journal | None = None
    open_resets: list[resets.ResetRecord] = field(default_factory=list)
    closed_resets: list[resets.ResetRecord] = field(default_factory=list)
    stray: list[Path] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return self.interrupted is None and not self.open_resets

    def to_json(self) -> dict[str, object]:
        journal = self.interrupted
        return {
            "healthy": self.healthy,
            "interruptedCheckpoint": (
                {"id": journal.plan.id, "item": journal.plan.item, "done": journal.done}
                if journal
                else None
            ),
            "recovered": (
                {
                    "id": self.recovered.checkpoint,
                    "action": self.recovered.action,
                    "steps": list(self.recovered.steps),
                    "detail": self.recovered.detail,
                }
                if self.recovered
                else None
            ),
            "openResets": [r.to_json() for r in self.open_resets],
            "closedResets": [r.to_json() for r in self.closed_resets],
            "stray": [str(p) for p in self.stray],
            "discarded": self.discarded.plan.id if self.discarded else None,
        }

    def lines(self) -> list[str]:
        out = []
        if self.discarded:
            d = self.discarded
            out.append(
                f"checkpoint {d.plan.id} of {d.plan.item} discarded "
                f"(steps it had done: {', '.join(d.done) or 'none'})"
            )
        if self.recovered:
            r = self.recovered
            out.append(
                f"checkpoint {r.checkpoint} of {r.item}: {r.action} "
                f"(steps redone: {', '.join(r.steps) or 'none'})"
                + (f": {r.detail}" if r.detail else "")
            )
        if self.interrupted:
            j = self.interrupted
            out.append(
                f"checkpoint {j.plan.id} of {j.plan.item} was interrupted after: "
                f"{', '.join(j.done) or 'nothing'} → run `loop doctor --repair`"
            )
        for record in self.closed_resets:
            out.append(
                f"closed open reset: {record.mode} for {record.item} after checkpoint "
                f"{record.checkpoint} (never confirmed; recorded as aborted)"
            )
        for record in self.open_resets:
            out.append(
                f"open reset: {record.mode} for {record.item} after checkpoint "
                f"{record.checkpoint} ({record.state} {record.updated}) → "
                f"`loop reset confirm {record.item} --session <id>` or "
                f"`loop reset abort {record.item}`"
            )
        for path in self.stray:
            out.append(f"stray file from an old checkpoint: {path} (safe to delete)")
        return out


def diagnose(root: Path, *, repair: bool = False, discard: bool = False) -> DoctorReport:
    """Inspect (and with ``repair``, fix; with ``discard``, drop) the runtime state."""
    report = DoctorReport()
    if discard:
        with project_lock(root):
            report.discarded = checkpoint.discard(root)
    elif repair:
        with project_lock(root):
            report.recovered = checkpoint.recover(root)
            report.closed_resets = _close_left_over(root, report.recovered)
    report.interrupted = checkpoint.pending(root)
    report.open_resets = resets.open_resets(root)
    folder = state_dir(root)
    if folder.is_dir() and report.interrupted is None:
        report.stray = sorted(folder.glob("*.log.orig"))
    return report


def _close_left_over(root: Path, recovered: checkpoint.Recovery | None) -> list[resets.ResetRecord]:
    """Close open resets, keeping the one this repair's recovery just prepared."""
    fresh = recovered.outcome.record if recovered and recovered.outcome else None
    left = [r for r in resets.open_resets(root) if fresh is None or r.id != fresh.id]
    note = "closed by `loop doctor --repair`: never confirmed"
    return [resets.close(root, record, "aborted", note=note) for record in left]
