"""The reset transaction: prepared → dispatched → completed (or aborted, or skipped).

After a checkpoint, a record binds the reset to the checkpoint's commit and a
digest of its log entry. The directive is printed (dispatched); the harness or
the person then resets, and the record is completed: by the harness hooks
(``loop hook``: a compaction seen in the same session, a new session after a
clear) or by hand with ``loop reset confirm --session ID``. An unconfirmed
reset is shown by ``loop status`` and ``loop doctor`` and is never replayed
automatically. Records are per checkpoint, not per item: two agents may work
different tasks of one item, each with its own reset to confirm.

Open records never pile up: the next checkpoint of the same session closes
them as *skipped* (the session went on without the reset), and ``loop finish``
and ``loop doctor --repair`` close whatever is left.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from the_loop.checkpoint.lock import project_lock
from the_loop.checkpoint.state_dir import read_json, state_dir, write_json
from the_loop.errors import RefusedError, StateError
from the_loop.io import clock

OPEN_STATES = ("prepared", "dispatched")
# Closed: completed (confirmed), aborted (by request), skipped (proven not to have
# happened), superseded (never confirmed; a later checkpoint or the end of the item).
HISTORY = "history.jsonl"


@dataclass(frozen=True)
class ResetRecord:
    """One reset, from preparation to its end."""

    id: str
    item: str
    mode: str  # clear | compact
    reason: str
    checkpoint: str
    commit: str | None
    entry_digest: str
    session: str | None  # the session that took the checkpoint, when known
    state: str
    created: str
    updated: str
    confirmed_session: str | None = None
    note: str | None = None

    @property
    def open(self) -> bool:
        return self.state in OPEN_STATES

    def to_state(self) -> dict[str, object]:
        """The record as loop stores it in ``.the-loop/state/resets/``."""
        return asdict(self)

    def to_json(self) -> dict[str, object]:
        """The record as ``--json`` prints it (camelCase, like every other output)."""
        return {
            "id": self.id,
            "item": self.item,
            "mode": self.mode,
            "reason": self.reason,
            "checkpoint": self.checkpoint,
            "commit": self.commit,
            "entryDigest": self.entry_digest,
            "session": self.session,
            "state": self.state,
            "created": self.created,
            "updated": self.updated,
            "confirmedSession": self.confirmed_session,
            "note": self.note,
        }


def _folder(root: Path, *, create: bool = False) -> Path:
    folder = state_dir(root, create=create) / "resets"
    if create:
        folder.mkdir(exist_ok=True)
    return folder


def _file(root: Path, record_id: str) -> Path:
    return _folder(root) / f"{record_id}.json"


def _load_file(path: Path) -> ResetRecord | None:
    data = read_json(path)
    if data is None and not path.exists():
        return None
    try:
        return ResetRecord(**data)
    except TypeError as exc:
        raise StateError(
            f"reset record {path.name} is damaged: {exc}",
            hint="remove the file; `loop doctor` lists open resets",
        ) from exc


def open_resets(root: Path, item: str | None = None) -> list[ResetRecord]:
    """Unresolved resets (of one item, or all), oldest first."""
    folder = _folder(root)
    if not folder.is_dir():
        return []
    records = [_load_file(p) for p in folder.glob("*.json")]
    found = [r for r in records if r is not None and r.open and (item is None or r.item == item)]
    return sorted(found, key=lambda r: (r.created, r.id))


def prepare(
    root: Path,
    *,
    item: str,
    mode: str,
    reason: str,
    checkpoint: str,
    commit: str | None,
    entry_digest: str,
    session: str | None,
) -> ResetRecord:
    """Record a reset about to be announced (state ``prepared``)."""
    now = clock.second_stamp(clock.utc_now())
    record = ResetRecord(
        id=checkpoint,
        item=item,
        mode=mode,
        reason=reason,
        checkpoint=checkpoint,
        commit=commit,
        entry_digest=entry_digest,
        session=session,
        state="prepared",
        created=now,
        updated=now,
    )
    _folder(root, create=True)
    write_json(_file(root, record.id), record.to_state())
    return record


def mark_dispatched(root: Path, record: ResetRecord) -> ResetRecord:
    """The directive has been shown: the reset is now the harness's to perform."""
    updated = replace(record, state="dispatched", updated=clock.second_stamp(clock.utc_now()))
    write_json(_file(root, record.id), updated.to_state())
    return updated


def confirm(
    root: Path,
    item: str,
    session: str,
    *,
    checkpoint: str | None = None,
    how: str | None = None,
) -> ResetRecord:
    """Complete an open reset: same session for a compact, a new one for a clear.

    ``how`` says how the reset was performed (the headless driver records the
    command it ran); it is kept in the record's note.
    """
    with project_lock(root):
        return _confirm(root, item, session, checkpoint, how)


def _confirm(
    root: Path, item: str, session: str, checkpoint: str | None, how: str | None = None
) -> ResetRecord:
    record = _pick(root, item, checkpoint, session)
    note = how
    if record.session is None:
        unverified = "unverified: no session id was recorded at the checkpoint"
        note = f"{unverified}; {how}" if how else unverified
    elif record.mode == "compact" and session != record.session:
        raise RefusedError(
            f"a compaction keeps the session, but {session!r} is not the checkpoint's "
            f"session {record.session!r}",
            hint="confirm from the compacted session, or `loop reset abort` if it was cleared",
        )
    elif record.mode == "clear" and session == record.session:
        raise RefusedError(
            f"a clear starts a new session, but {session!r} is the session that took the "
            "checkpoint",
            hint="confirm from the fresh session after the clear",
        )
    return _close(root, record, "completed", confirmed_session=session, note=note)


def abort(
    root: Path, item: str, *, checkpoint: str | None = None, reason: str | None = None
) -> ResetRecord:
    """Resolve an open reset as not performed (the caller holds the project lock)."""
    record = _pick(root, item, checkpoint)
    return _close(root, record, "aborted", note=reason or "aborted by request")


def pick(root: Path, item: str, checkpoint: str | None = None) -> ResetRecord:
    """The open reset ``abort`` would resolve: the named checkpoint's, else the latest."""
    return _pick(root, item, checkpoint)


def superseded_by(
    root: Path, item: str, session: str | None, *, every_session: bool = False
) -> list[Supersession]:
    """The open resets of ``item`` a new checkpoint from ``session`` settles.

    Only the same, known session's: another agent's reset on the same item is
    its own, and without session ids two agents cannot be told apart. A clear
    starts a new session, so a new checkpoint from the session that announced
    one proves it was skipped. A compaction keeps the session, so whether it
    happened is unknown: it is superseded, and the log says so.
    ``every_session`` settles all of them (the item is complete).
    """
    settled = []
    for record in open_resets(root, item):
        if not every_session and (session is None or record.session != session):
            continue
        if every_session:
            state, why = "superseded", "the work item is complete, so nothing is left to reset"
        elif record.mode == "clear":
            state, why = "skipped", f"session {session} took another checkpoint without clearing"
        else:
            # The hooks complete a compaction the moment it happens (PostCompact);
            # one still open when the same session checkpoints again was not seen.
            state, why = "skipped", "a later checkpoint came first and no compaction was seen"
        settled.append(Supersession(record.id, record.mode, record.checkpoint, state, why))
    return settled


@dataclass(frozen=True)
class Supersession:
    """An open reset a checkpoint settles: skipped (proven) or superseded (unknown)."""

    record: str
    mode: str
    checkpoint: str
    state: str  # skipped | superseded
    why: str

    def sentence(self) -> str:
        """What the correction line in the log says."""
        if self.state == "skipped":
            verb = "did not happen" if self.mode == "clear" else "was not seen to happen"
        else:
            verb = "was never confirmed"
        return f"the {self.mode} announced by checkpoint {self.checkpoint} {verb}: {self.why}"


def settle(root: Path, found: Supersession) -> None:
    """Close a superseded reset (idempotent: a recovered checkpoint may settle it again)."""
    record = _load_file(_file(root, found.record))
    if record is not None and record.open:
        _close(root, record, found.state, note=found.why)


def _pick(root: Path, item: str, checkpoint: str | None, session: str | None = None) -> ResetRecord:
    """The open reset to resolve: the named checkpoint's, else the item's latest.

    With several open (two agents on one item), the latest one ``session`` can
    confirm is preferred: its own compaction, or a clear taken by another session.
    """
    records = open_resets(root, item)
    if checkpoint is not None:
        records = [r for r in records if r.checkpoint == checkpoint]
    elif session is not None:
        fitting = [r for r in records if _fits(r, session)]
        records = fitting or records
    if not records:
        which = f" from checkpoint {checkpoint}" if checkpoint else ""
        raise RefusedError(
            f"{item} has no open reset{which} to resolve",
            hint="`loop status` and `loop doctor` show open resets",
        )
    return records[-1]


def _fits(record: ResetRecord, session: str) -> bool:
    if record.session is None:
        return True
    return (record.session == session) == (record.mode == "compact")


def rename_item(root: Path, old: str, new: str) -> int:
    """Move open reset records to an item's new id (after ``loop promote``)."""
    moved = 0
    for record in open_resets(root, old):
        write_json(_file(root, record.id), replace(record, item=new).to_state())
        moved += 1
    return moved


def close(root: Path, record: ResetRecord, state: str, *, note: str) -> ResetRecord:
    """Resolve ``record`` as ``state`` (aborted, skipped); the caller holds the lock."""
    return _close(root, record, state, note=note)


def _close(
    root: Path,
    record: ResetRecord,
    state: str,
    *,
    confirmed_session: str | None = None,
    note: str | None = None,
) -> ResetRecord:
    closed = replace(
        record,
        state=state,
        updated=clock.second_stamp(clock.utc_now()),
        confirmed_session=confirmed_session,
        note=note,
    )
    history = _folder(root) / HISTORY
    with history.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(closed.to_state(), sort_keys=True) + "\n")
    _file(root, record.id).unlink()
    return closed


# ---------------------------------------------------------------- automatic resolution


def complete_by_hook(root: Path, session: str, *, mode: str, event: str) -> list[ResetRecord]:
    """Complete the open resets a harness event proves happened; returns them.

    ``compact``: every open compaction of ``session`` (the same session, now
    compacted). ``clear``: per item, the latest open clear taken by another
    session (``session`` is the fresh one). Takes the project lock.
    """
    with project_lock(root):
        return complete_by_hook_locked(root, session, mode=mode, event=event)


def complete_by_hook_locked(
    root: Path, session: str, *, mode: str, event: str
) -> list[ResetRecord]:
    """``complete_by_hook`` for a caller that holds the project lock."""
    chosen: dict[str, ResetRecord] = {}
    for record in open_resets(root):
        if record.mode != mode:
            continue
        if mode == "compact" and record.session == session:
            chosen[record.id] = record
        elif mode == "clear" and record.session != session:
            chosen[record.item] = record  # oldest first, so the latest per item wins
    done = []
    for record in chosen.values():
        how = "same session" if mode == "compact" else "new session"
        note = f"verified by the harness: {event} ({how})"
        if record.session is None:
            note = f"seen by the harness: {event}; the checkpoint recorded no session id"
        done.append(_close(root, record, "completed", confirmed_session=session, note=note))
    return done


def skip_superseded(root: Path, session: str | None, checkpoint: str) -> list[ResetRecord]:
    """Close as *skipped* the open resets of ``session`` older than ``checkpoint``.

    A new checkpoint from the session that was to reset shows it went on
    without the reset. Called inside the checkpoint transaction (the caller
    holds the project lock); idempotent when the transaction is recovered.
    """
    if not session:
        return []
    skipped = []
    for record in open_resets(root):
        if record.session == session and record.id != checkpoint:
            note = (
                f"skipped: the session went on to checkpoint {checkpoint} without the {record.mode}"
            )
            skipped.append(_close(root, record, "skipped", note=note))
    return skipped


def close_open(root: Path, item: str | None, *, note: str) -> list[ResetRecord]:
    """Close every open reset (of ``item``, or all) as aborted; the caller holds the lock."""
    return [_close(root, record, "aborted", note=note) for record in open_resets(root, item)]


def history(root: Path, item: str | None = None) -> list[dict[str, object]]:
    """Resolved resets (of ``item``, or all), oldest first; damaged lines are skipped."""
    path = _folder(root) / HISTORY
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and (item is None or data.get("item") == item):
            found.append(data)
    return found


def skipped_count(root: Path, item: str) -> int:
    """How many of ``item``'s resets were skipped (the session went on without them)."""
    return sum(1 for data in history(root, item) if data.get("state") == "skipped")
