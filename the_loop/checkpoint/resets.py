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

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.checkpoint.lock import project_lock
from the_loop.config.state_folder import RESETS, damaged_state, read_json, state_dir, write_json
from the_loop.errors import LoopError, RefusedError, StateError
from the_loop.io import clock
from the_loop.io.textfile import read_limited

if TYPE_CHECKING:
    from typing import BinaryIO

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
        """The record as loop stores it in ``.the-loop/state/resets/``, with its digest."""
        data: dict[str, object] = asdict(self)
        data["digest"] = record_digest(data)
        return data

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
    folder = state_dir(root, create=create) / RESETS
    if create and not folder.is_dir():
        try:
            folder.mkdir()
        except OSError as exc:
            raise damaged_state(folder, f"it cannot be made a folder: {exc.strerror}") from exc
    return folder


def _file(root: Path, record_id: str) -> Path:
    return _folder(root) / f"{record_id}.json"


_TEXT = ("id", "item", "reason", "checkpoint", "entry_digest", "created", "updated")
_OPTIONAL = ("commit", "session", "confirmed_session", "note")
STATES = ("prepared", "dispatched", "completed", "aborted", "skipped", "superseded")


def record_digest(data: dict[str, object]) -> str:
    """sha256 of a record's fields (its ``digest`` left out), checked on every read.

    A record edited by hand (a state set to completed, another session) no longer
    matches, and is reported as damaged rather than trusted.
    """
    body = {k: v for k, v in data.items() if k != "digest"}
    canon = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def _load_file(path: Path) -> ResetRecord | None:
    data = read_json(path)
    if data is None and not path.exists():
        return None
    problem = _record_problem(data)
    if problem is None and isinstance(data, dict) and "digest" not in data:
        # An older loop wrote records without one; so could a hand. Neither is trusted.
        problem = "it has no digest (written by an older loop, or by hand), so it is not trusted"
    elif problem is None and isinstance(data, dict) and data["digest"] != record_digest(data):
        problem = "its digest does not match its content (edited by hand?), so it is not trusted"
    if problem is not None:
        raise damaged_state(path, f"reset record {path.name}: {problem}")
    fields = {k: data.get(k) for k in (*_TEXT, *_OPTIONAL, "mode", "state")}
    return ResetRecord(**fields)


def _record_problem(data: object) -> str | None:
    """What is wrong with a reset record's JSON, or None."""
    if not isinstance(data, dict):
        return "it must be a JSON object"
    for key in _TEXT:
        if not isinstance(data.get(key), str):
            return f"{key} must be text"
    for key in _OPTIONAL:
        if data.get(key) is not None and not isinstance(data[key], str):
            return f"{key} must be text or null"
    if data.get("mode") not in ("clear", "compact"):
        return "mode must be clear or compact"
    if data.get("state") not in STATES:
        return "state must be one of " + ", ".join(STATES)
    return None


def scan(root: Path) -> tuple[list[ResetRecord], list[tuple[Path, str]]]:
    """Every reset record that can be read, and the damaged ones with what is wrong."""
    folder = _folder(root)
    if not folder.is_dir():
        return [], []
    records, damaged = [], []
    for path in sorted(folder.glob("*.json")):
        try:
            record = _load_file(path)
        except StateError as exc:
            damaged.append((path, exc.message))
            continue
        if record is not None:
            records.append(record)
    return records, damaged


def open_resets(root: Path, item: str | None = None) -> list[ResetRecord]:
    """Unresolved resets (of one item, or all), oldest first.

    Raises ``StateError`` (with the file and the way out) for a damaged record.
    """
    folder = _folder(root)
    if not folder.is_dir():
        return []
    records = [_load_file(p) for p in sorted(folder.glob("*.json"))]
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
    """The directive has been shown: the reset is now the harness's to perform.

    Under the lock, and only while the record is still prepared: a quick
    ``loop reset confirm`` from another process may already have closed it.
    """
    with project_lock(root):
        return mark_dispatched_locked(root, record)


def mark_dispatched_locked(root: Path, record: ResetRecord) -> ResetRecord:
    """``mark_dispatched`` for a caller that holds the project lock."""
    current = _load_file(_file(root, record.id))
    if current is None or current.state != "prepared":
        return current or record
    updated = replace(current, state="dispatched", updated=clock.second_stamp(clock.utc_now()))
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


def acknowledge(root: Path, item: str, *, checkpoint: str | None = None) -> ResetRecord:
    """Complete an open reset a person says they performed, with no session id to check.

    Someone working by hand has no session ids; their word closes the record
    (marked unverified) instead of leaving it open until review.
    """
    with project_lock(root):
        record = _pick(root, item, checkpoint)
        note = "acknowledged by hand without a session id (unverified)"
        return _close(root, record, "completed", note=note)


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
        by_hand = session is None and record.session is None
        if not every_session and not by_hand and (session is None or record.session != session):
            continue
        if every_session:
            state, why = "superseded", "the work item is complete, so nothing is left to reset"
        elif by_hand:
            # Working by hand, without session ids: the next checkpoint is the same person's.
            state, why = "skipped", "a later checkpoint without a session id came first"
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
    append_history(root, closed)
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
        # damaged bytes are skipped like any line that is not a record
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):  # a damaged line is not a record
            continue
        if isinstance(data, dict) and (item is None or data.get("item") == item):
            found.append(data)
    return found


def skipped_count(root: Path, item: str) -> int:
    """How many of ``item``'s resets were skipped (the session went on without them)."""
    return sum(1 for data in history(root, item) if data.get("state") == "skipped")


def append_history(root: Path, record: ResetRecord) -> None:
    """Add a closed record to ``history.jsonl`` (one JSON object per line)."""
    path = _folder(root, create=True) / HISTORY
    line = json.dumps(record.to_state(), sort_keys=True) + "\n"
    try:
        with open_history(path) as handle:
            handle.write(line.encode("utf-8"))
    except OSError as exc:
        raise damaged_state(path, f"it cannot be appended to: {exc.strerror or exc}") from exc


@contextlib.contextmanager
def open_history(path: Path) -> Iterator[BinaryIO]:
    """The history file, open for appending on a line of its own."""
    with path.open("ab+") as handle:
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":  # a torn last line: never glue a record onto it
                handle.write(b"\n")
        yield handle


def history_path(root: Path) -> Path:
    """Where closed reset records are kept."""
    return _folder(root) / HISTORY


def history_problems(root: Path) -> list[str]:
    """Lines of ``history.jsonl`` that are not reset records (for ``loop doctor``)."""
    path = history_path(root)
    try:
        data = read_limited(path, 64 * 1024 * 1024, what="state file")
    except FileNotFoundError:
        return []
    except (OSError, LoopError) as exc:
        return [f"{path}: it cannot be read: {getattr(exc, 'strerror', None) or exc}"]
    problems = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            problem = _record_problem(json.loads(raw.decode("utf-8")))
        except (ValueError, RecursionError) as exc:
            problem = f"not JSON ({str(exc).splitlines()[0] if str(exc) else 'undecodable'})"
        if problem is not None:
            problems.append(f"{path}:{number}: {problem}")
    return problems
