"""``loop doctor``: find and repair what an interruption left behind.

An interrupted checkpoint (its journal still present) is finished, or undone
if its commit can no longer happen; open resets are listed for ``loop reset
confirm|abort`` (never replayed); stray backups are noted. ``--repair`` also
closes the open resets left behind (as aborted: never replayed), except one
the repair itself has just prepared, which has not been shown to anyone yet.
Damaged state files are named with what is wrong, and ``--discard`` sets them
aside. What a parallel run left (worktrees, lane branches, dead leases) is listed,
and ``--repair`` clears it (``lane_leftovers``). Whatever goes wrong while
repairing is reported as a finding of the report: ``doctor`` is the way out of
a bad state, so it never fails with a traceback itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from the_loop.checkpoint import lane_leftovers, resets
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.lock import project_lock
from the_loop.config.state_folder import set_aside, state_dir
from the_loop.errors import LoopError


@dataclass
class DoctorReport:
    """What ``doctor`` found, and what it repaired."""

    interrupted: checkpoint.Journal | None = None
    recovered: checkpoint.Recovery | None = None
    discarded: checkpoint.Journal | None = None
    discard_notes: list[str] = field(default_factory=list)
    open_resets: list[resets.ResetRecord] = field(default_factory=list)
    closed_resets: list[resets.ResetRecord] = field(default_factory=list)
    stray: list[Path] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)  # "path: what is wrong"
    set_aside: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)  # versions an undone checkpoint kept
    failed: list[str] = field(default_factory=list)  # a repair or discard that did not work
    leftovers: list[lane_leftovers.Leftover] = field(default_factory=list)
    lanes_repaired: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return (
            self.interrupted is None
            and not self.open_resets
            and not self.damaged
            and not self.failed
            and not any(left.kind != "branch" for left in self.leftovers)
        )

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
            "discardNotes": list(self.discard_notes),
            "damaged": list(self.damaged),
            "setAside": [str(p) for p in self.set_aside],
            "kept": [str(p) for p in self.kept],
            "failed": list(self.failed),
            "laneLeftovers": [left.to_json() for left in self.leftovers],
            "lanesRepaired": list(self.lanes_repaired),
        }

    def lines(self) -> list[str]:
        out = [f"could not repair: {text}" for text in self.failed]
        if self.discarded:
            d = self.discarded
            out.append(
                f"checkpoint {d.plan.id} of {d.plan.item} discarded "
                f"(steps it had done: {', '.join(d.done) or 'none'})"
            )
        out += [f"  {note}" for note in self.discard_notes]
        out += [f"damaged state file set aside: {path}" for path in self.set_aside]
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
        for text in self.damaged:
            out.append(f"damaged: {text} → `loop doctor --discard` sets it aside")
        for record in self.open_resets:
            out.append(
                f"open reset: {record.mode} for {record.item} after checkpoint "
                f"{record.checkpoint} ({record.state} {record.updated}) → "
                f"`loop reset confirm {record.item} --session <id>` or "
                f"`loop reset abort {record.item}`"
            )
        out += [f"parallel run: {note}" for note in self.lanes_repaired]
        for left in self.leftovers:
            out.append(f"left by a parallel run: {left.what} → `loop doctor --repair`")
        for path in self.stray:
            out.append(f"stray file from an old checkpoint: {path} (safe to delete)")
        for path in self.kept:
            out.append(
                f"kept: {path}, a version written during a checkpoint that was undone "
                "(compare it with the file; delete it when done)"
            )
        return out


def diagnose(root: Path, *, repair: bool = False, discard: bool = False) -> DoctorReport:
    """Inspect (and with ``repair``, fix; with ``discard``, drop) the runtime state."""
    report = DoctorReport()
    try:
        if discard:
            with project_lock(root):
                _discard(root, report)
        elif repair:
            with project_lock(root):
                report.recovered = checkpoint.recover(root)
                report.closed_resets = _close_left_over(root, report.recovered)
            report.lanes_repaired = _repair_lanes(root)  # leases take the lock themselves
    except LoopError as exc:
        report.failed.append(_text(exc))
    _inspect(root, report)
    try:
        report.leftovers = lane_leftovers.find(root)
    except LoopError as exc:
        report.failed.append(_text(exc))
    return report


def _repair_lanes(root: Path) -> list[str]:
    """Clear what parallel runs left (outside the project lock: leases take it themselves)."""
    found = lane_leftovers.find(root)
    if not found:
        return []
    return lane_leftovers.repair(root, found, lane_leftovers.landed(root, found))


def _discard(root: Path, report: DoctorReport) -> None:
    journal, notes = checkpoint.discard(root)
    report.discarded = journal
    report.discard_notes = notes
    _records, damaged = resets.scan(root)
    damaged_files = [path for path, _what in damaged]
    if resets.history_problems(root):
        damaged_files.append(resets.history_path(root))
    for path in damaged_files:
        kept = set_aside(root, path)
        if kept is not None:
            report.set_aside.append(kept)


def _inspect(root: Path, report: DoctorReport) -> None:
    try:
        report.interrupted = checkpoint.pending(root)
    except LoopError as exc:
        report.damaged.append(_text(exc, hint=False))
    try:
        records, damaged = resets.scan(root)
    except LoopError as exc:
        records, damaged = [], []
        report.damaged.append(_text(exc, hint=False))
    report.open_resets = sorted((r for r in records if r.open), key=lambda r: (r.created, r.id))
    report.damaged += [f"{path}: {what}" for path, what in damaged]
    report.damaged += resets.history_problems(root)
    folder = state_dir(root)
    if folder.is_dir() and not (folder / checkpoint.JOURNAL).exists():
        report.stray = sorted(folder.glob("*.orig"))
    report.kept = sorted((folder / "kept").glob("*")) if (folder / "kept").is_dir() else []


def _text(exc: LoopError, *, hint: bool = True) -> str:
    where = f"{exc.where}: " if exc.where else ""
    shown = f" ({exc.hint})" if exc.hint and hint else ""
    return f"{where}{exc.message}{shown}"


def _close_left_over(root: Path, recovered: checkpoint.Recovery | None) -> list[resets.ResetRecord]:
    """Close open resets, keeping the one this repair's recovery just prepared."""
    fresh = recovered.outcome.record if recovered and recovered.outcome else None
    left = [r for r in resets.open_resets(root) if fresh is None or r.id != fresh.id]
    note = "closed by `loop doctor --repair`: never confirmed"
    return [resets.close(root, record, "aborted", note=note) for record in left]
