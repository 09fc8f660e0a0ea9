"""Tick a task in ``tasks.md``: the line-local writer.

Exactly one checkbox character changes and every other byte of the file stays
as it was (line endings, trailing spaces, text the reader could not read), so
the writer never rewrites the file from the parsed tasks: it changes the byte
at ``Task.mark_offset`` the reader recorded. ``the_loop.tasks`` re-exports
``set_state`` and ``with_state``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from the_loop.errors import DagError, SpecError, Where
from the_loop.io import atomic
from the_loop.tasks.model import STATE_OF_MARK, Task, TaskList, TaskState
from the_loop.tasks.reader import decode, parse_tasks, read_bytes
from the_loop.tasks.values import ID_RE, canonical_id


def set_state(
    path: Path, task_id: str, state: TaskState, *, as_read: tuple[int, str] | None = None
) -> bool:
    """Set the checkbox of task ``task_id`` in ``path``; False if it already shows ``state``.

    The file is read afresh, exactly one checkbox character changes and the
    result is written atomically. Raises ``DagError`` when no task or more than
    one task has that id. ``as_read``: the task's ``mark_offset`` and the
    SHA-256 of the file it was read from (``text_digest``); when the file still
    has that digest the mark is changed there without parsing it again (a
    checkpoint has just read it, under the same lock), else it is parsed.
    """
    path = Path(path)
    data = read_bytes(path)
    if as_read is not None and hashlib.sha256(data).hexdigest() == as_read[1]:
        updated = _with_mark(data, as_read[0], task_id, None, state)
    else:
        task = _find_task(parse_tasks(decode(data, path), path), task_id)
        updated = with_state(data, task, state)
    if updated is data:
        return False
    atomic.write_bytes(path, updated)
    return True


def with_state(data: bytes, task: Task, state: TaskState) -> bytes:
    """``data`` with ``task``'s checkbox showing ``state``; ``data`` itself if it already does.

    Only the mark between the brackets changes; an existing ``X`` already
    means done. Raises ``SpecError`` when ``task`` no longer matches ``data``
    (the file changed after it was read).
    """
    return _with_mark(data, task.mark_offset, task.label, task.line, state)


def text_digest(text: str) -> str:
    """The SHA-256 of the file ``text`` was decoded from (``set_state``'s ``as_read``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _with_mark(data: bytes, start: int, label: str, line: int | None, state: TaskState) -> bytes:
    width = _utf8_width(data[start]) if 0 <= start < len(data) else 0
    end = start + width
    if width == 0 or start < 1 or data[start - 1 : start] != b"[" or data[end : end + 1] != b"]":
        # Pure function without a path: the message carries the line instead.
        where = f"at line {line}" if line is not None else "where it was read"
        raise SpecError(
            f"task {label} is no longer {where}: the file changed after it was read",
            hint="read the file again and retry",
        )
    current = STATE_OF_MARK.get(data[start:end].decode("utf-8", "replace"))
    if current is state:
        return data
    return data[:start] + state.mark.encode("ascii") + data[end:]


def _find_task(task_list: TaskList, task_id: str) -> Task:
    wanted = _canonical_request(task_id)
    found = [t for t in task_list.tasks if t.id == wanted]
    if len(found) == 1:
        return found[0]
    path = task_list.path
    if not found:
        known = ", ".join(t.label for t in task_list.tasks[:20]) or "none"
        raise DagError(
            f"no task {task_id} in {path.name}",
            where=Where(path),
            hint=f"tasks in this file: {known}",
        )
    lines = ", ".join(str(t.line) for t in found)
    raise DagError(
        f"task id {task_id} is used by {len(found)} tasks (lines {lines})",
        where=Where(path, found[0].line),
        hint="give each task its own number, then retry",
    )


def _canonical_request(task_id: str) -> str:
    m = ID_RE.fullmatch(task_id.strip())
    return canonical_id(m.group("num")) if m else task_id.strip()


def _utf8_width(lead: int) -> int:
    if lead < 0x80:
        return 1
    for width, mask, value in ((2, 0xE0, 0xC0), (3, 0xF0, 0xE0), (4, 0xF8, 0xF0)):
        if lead & mask == value:
            return width
    return 0
