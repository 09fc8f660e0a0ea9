"""Restore points: every file a checkpoint changes can be put back exactly.

Before its first step, a checkpoint copies each file it will change
(``tasks.md`` when it ticks a task, ``execution-log.md`` always) into
``.the-loop/state/`` and records the copy's SHA-256 and size in the journal.
Undoing the checkpoint writes those bytes back and checks the digest
afterwards. It never truncates at an old size: a pre-commit hook or a person
may have edited the file after loop wrote it, and a cut at a byte count would
then eat text that was already committed.

What loop may have left in a file is known exactly (the tick, the entry, the
phase mirror, a torn append), so anything else is someone else's change. That
version is not thrown away: it is kept in ``.the-loop/state/kept/`` and the
message says where.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path

from the_loop.checkpoint.journal import Journal, Plan, RestorePoint
from the_loop.config.state_folder import state_dir
from the_loop.errors import LoopError, StateError, Where
from the_loop.io import atomic
from the_loop.log import execution_log as execlog
from the_loop.tasks import TaskState, parse_tasks, with_state

KEPT = "kept"


def take(root: Path, plan: Plan) -> dict[str, RestorePoint]:
    """Copy every file ``plan`` will change; nothing is left behind if this fails."""
    points: dict[str, RestorePoint] = {}
    try:
        for kind, path in _changed_files(plan):
            data = _read(path)
            if data is None:
                continue  # nothing to put back: the step creates it or fails on its own
            backup = state_dir(root, create=True) / f"{plan.id}.{kind}.orig"
            atomic.write_bytes(backup, data)
            points[kind] = RestorePoint(str(path), str(backup), _sha(data), len(data))
    except BaseException:
        drop(points)
        raise
    return points


def drop(points: dict[str, RestorePoint]) -> None:
    """Delete the copies (the checkpoint finished, or was undone)."""
    for point in points.values():
        Path(point.backup).unlink(missing_ok=True)


def before_bytes(point: RestorePoint) -> bytes | None:
    """The file as it was before the checkpoint, if its copy is intact."""
    data = _read(Path(point.backup))
    return data if data is not None and _sha(data) == point.sha256 else None


def undo(root: Path, journal: Journal, *, others: str = "keep") -> list[str]:
    """Put every changed file back as it was; return notes for the user.

    ``others`` says what to do with a file something else changed after loop
    wrote it: ``"keep"`` restores it anyway and keeps that version aside,
    ``"leave"`` leaves it alone. Raises ``StateError`` when a copy is missing or
    a file could not be put back exactly.
    """
    notes: list[str] = []
    for kind, point in reversed(journal.restore.items()):  # in the reverse order of the steps
        path = Path(point.path)
        current = _read(path)
        if current is not None and _sha(current) == point.sha256:
            continue
        before = before_bytes(point)
        if before is None:
            if others == "leave":
                notes.append(
                    f"{path.name}: its copy from before the checkpoint is gone; left as it is"
                )
                continue
            raise StateError(
                f"cannot undo checkpoint {journal.plan.id}: the copy of {path.name} taken "
                f"before it ({point.backup}) is missing or damaged",
                where=Where(path),
                hint="check the file by hand; `loop doctor --discard` then drops the checkpoint",
            )
        if current is None and others == "leave":
            notes.append(f"{path.name} was deleted after loop wrote it; left so")
            continue
        if current is not None and not _left_by_loop(kind, current, before, journal):
            if others == "leave":
                notes.append(f"{path.name} was changed after loop wrote it; left as it is")
                continue
            kept = _keep(root, journal.plan.id, path, current)
            notes.append(
                f"{path.name} had been changed after loop wrote it (a hook?); "
                f"that version is kept in {kept}"
            )
        atomic.write_bytes(path, before)
        if _sha(_read(path) or b"") != point.sha256:
            raise StateError(
                f"{path.name} could not be restored exactly",
                where=Where(path),
                hint=f"its content before the checkpoint is in {point.backup}",
            )
    return notes


def log_state(path: Path, planned: execlog.Appended, point: RestorePoint | None) -> str:
    """Where an interrupted append stands: ``present``, ``absent``, ``torn`` or ``moved``.

    ``torn`` is exact: the file is its old bytes plus the start of the entry,
    so cutting at the old size restores it. ``moved`` means the file changed
    otherwise (someone edited it) and the entry is not in it: it must be
    planned again, never cut.
    """
    current = _read(path) or b""
    data = planned.data
    if current[planned.offset : planned.offset + len(data)] == data:
        return "present"
    if planned.fast and current.endswith(data):
        return "present"
    before = before_bytes(point) if point is not None else None
    if before is not None:
        if current == before:
            return "absent"
        tail = current[len(before) :]
        if planned.fast and current.startswith(before) and data.startswith(tail):
            return "torn"
        return "moved"
    # No copy (a journal from an older loop): judge by the size and the tail only.
    if len(current) == planned.size_before:
        return "absent"
    tail = current[planned.size_before :]
    if planned.fast and data.startswith(tail):
        return "torn"
    return "moved"


def _left_by_loop(kind: str, current: bytes, before: bytes, journal: Journal) -> bool:
    if kind == "log" and journal.appended is not None and current.startswith(before):
        planned = appended_from(journal.appended)
        if planned.fast and planned.data.startswith(current[len(before) :]):
            return True  # the entry, or the start of it (a torn append)
    return any(current == candidate for candidate in _loop_states(kind, before, journal))


def _loop_states(kind: str, before: bytes, journal: Journal) -> Iterator[bytes]:
    """Every content loop itself may have left in the file, from its old bytes."""
    plan = journal.plan
    if kind == "tasks":
        if plan.task_id and plan.tick_to:
            ticked = _ticked(before, plan)
            if ticked is not None:
                yield ticked
        return
    with_entry = before
    if journal.appended is not None:
        planned = appended_from(journal.appended)
        if planned.fast:
            with_entry = before + planned.data
        else:
            at = planned.offset
            with_entry = before[:at] + planned.data + before[at:]
        yield with_entry
    if plan.phase is not None:
        for text in (before, with_entry):
            synced = _synced(text, plan)
            if synced is not None:
                yield synced


def _ticked(before: bytes, plan: Plan) -> bytes | None:
    try:
        tasks = parse_tasks(before.decode("utf-8"), Path(plan.tasks_path or "tasks.md"))
        (task,) = [t for t in tasks.tasks if t.id == plan.task_id]
        return with_state(before, task, TaskState(plan.tick_to or "done"))
    except (ValueError, LoopError):  # not UTF-8, no such task, several of them
        return None


def _synced(data: bytes, plan: Plan) -> bytes | None:
    try:
        text = execlog.decoded(data)
        synced = execlog.phase_synced(
            text,
            Path(plan.log_path),
            plan.phase or "",
            status=plan.log_status,
            transition=plan.transition,
        )
        return execlog.encoded(synced)
    except LoopError:  # the front matter cannot be edited: loop could not have changed it
        return None


def appended_from(data: dict[str, object]) -> execlog.Appended:
    """The planned append recorded in the journal (already validated by its reader)."""
    return execlog.Appended(
        offset=int(data["offset"]),  # type: ignore[call-overload]
        data=base64.b64decode(str(data["data"])),
        digest=str(data["digest"]),
        size_before=int(data["size_before"]),  # type: ignore[call-overload]
        fast=bool(data["fast"]),
    )


def _keep(root: Path, checkpoint_id: str, path: Path, data: bytes) -> Path:
    folder = state_dir(root, create=True) / KEPT
    folder.mkdir(exist_ok=True)
    target = folder / f"{checkpoint_id}.{path.name}"
    atomic.write_bytes(target, data)
    return target


def _changed_files(plan: Plan) -> list[tuple[str, Path]]:
    files = []
    if plan.tasks_path and plan.task_id and plan.tick_to:
        files.append(("tasks", Path(plan.tasks_path)))
    files.append(("log", Path(plan.log_path)))
    return files


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StateError(
            f"cannot read {path.name}: {exc.strerror or exc}",
            where=Where(path),
            hint="make it readable, then run `loop doctor --repair`",
        ) from exc


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
