"""``execution-log.md``: the append-only log that is every reset's resume anchor.

Reading accepts what real logs contain: headings with a date only
(``### 2026-07-24 — …``), ``HH:MM UTC`` or ISO timestamps; the fields Phase,
Did, Checkpoint/tests, Next, Context, Blockers (any other bold key is kept).

Writing appends one entry rendered from ``templates/log-entry.md.j2``. The
cost of an append does not grow with the log: the tail is read to decide where
the entry goes and the entry is written with one ``O_APPEND`` write. loop's own
template keeps "Progress entries" as the last section for that reason; in an
older log whose progress section is followed by others, the entry is inserted
at the end of the progress section instead (a whole-file atomic rewrite).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from the_loop.errors import LoopError, UnusableInputError, Where
from the_loop.findings import Finding, Level
from the_loop.io import atomic
from the_loop.io.textfile import LOG_LIMIT, read_limited
from the_loop.log.entry_fields import FenceTracker as _Fences
from the_loop.log.entry_fields import decode
from the_loop.spec.front_matter import parse_front_matter, update_front_matter

PROGRESS_HEADING = "## Progress entries"
TRANSITIONS_HEADING = "## Phase transitions"
_ENTRY = re.compile(
    r"^###\s+(?P<stamp>\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?"
    r"(?:\s*(?:UTC|Z))?)\s*(?:[—–]|--?)\s*(?P<summary>.*?)\s*$"
)
_FIELD = re.compile(r"^[-*]\s+\*\*(?P<key>[^*\n]+?):?\*\*:?\s*(?P<value>.*)$")
_KNOWN = {
    "phase": "phase",
    "did": "did",
    "checkpoint/tests": "tests",
    "checkpoint": "tests",
    "tests": "tests",
    "next": "next",
    "context": "context",
    "blockers": "blockers",
    "wip": "wip",
    "corrections": "corrections",
}
_TAIL_CHUNK = 64 * 1024


@dataclass(frozen=True)
class LogEntry:
    """One progress entry. ``fields`` maps canonical keys (phase, did, tests,
    next, context, blockers, wip, corrections) and any other bold key, as
    written, to text."""

    stamp: str
    summary: str
    fields: Mapping[str, str]
    line: int | None = None  # heading line; None when read from the tail only

    @property
    def next(self) -> str | None:
        return self.fields.get("next")

    @property
    def context(self) -> str | None:
        return self.fields.get("context")

    def to_json(self) -> dict[str, object]:
        return {
            "stamp": self.stamp,
            "summary": self.summary,
            "line": self.line,
            "fields": dict(self.fields),
        }


@dataclass(frozen=True)
class ExecutionLog:
    """Every entry of a log, in file order, with findings about its shape."""

    path: Path
    entries: tuple[LogEntry, ...]
    findings: tuple[Finding, ...] = field(default=())


def _canonical_key(label: str) -> str:
    key = label.strip().lower()
    if key in _KNOWN:
        return _KNOWN[key]
    if key.startswith("checkpoint"):
        return "tests"
    if key.startswith("blockers"):
        return "blockers"
    return label.strip()


def _entries(lines: list[str], first_line: int, *, in_fence: bool = False) -> Iterator[LogEntry]:
    """Entries found in ``lines`` (which start at file line ``first_line``)."""
    fences = _Fences(inside=in_fence)
    current: tuple[str, str, int] | None = None
    fields: dict[str, list[str]] = {}
    key: str | None = None
    for index, raw in enumerate(lines):
        line = raw.rstrip("\r")
        was_open = fences.open
        if fences.feed(line):
            if not was_open and not line.startswith((" ", "\t")):
                key = None  # a fence at column 0 is not part of the bullet above it
            if key:
                fields[key].append(line)
            continue
        heading = _ENTRY.match(line)
        if heading or line.startswith(("## ", "# ")):
            if current:
                yield _entry(current, fields)
            current = (
                (heading["stamp"], heading["summary"], first_line + index) if heading else None
            )
            fields, key = {}, None
            continue
        if current is None:
            continue
        field_match = _FIELD.match(line)
        if field_match:
            key = _canonical_key(field_match["key"])
            fields[key] = [field_match["value"]]
        elif key and (line.startswith((" ", "\t")) or not line.strip()):
            fields[key].append(line)
        else:
            key = None
    if current:
        yield _entry(current, fields)


def _ends_in_fence(lines: list[str]) -> bool:
    fences = _Fences()
    for line in lines:
        fences.feed(line.rstrip("\r"))
    return fences.open


def _entry(head: tuple[str, str, int], fields: dict[str, list[str]]) -> LogEntry:
    # Values are data: loop escaped what could have changed the log's structure.
    values = {k: decode(_join(v)) for k, v in fields.items()}
    return LogEntry(head[0].strip(), decode(head[1]), values, head[2])


def _join(lines: list[str]) -> str:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if not lines:
        return ""
    rest = [line[2:] if line.startswith("  ") else line.lstrip() for line in lines[1:]]
    return "\n".join([lines[0].strip(), *rest]).strip()


def parse_log(text: str, path: Path) -> ExecutionLog:
    """Read every entry of a log (never raises on content)."""
    entries = tuple(_entries(text.split("\n"), 1))
    findings = []
    if entries and not (entries[-1].next or "").strip():
        findings.append(
            Finding(
                Level.WARNING,
                "log.no-next",
                "the last log entry has no **Next:**, so a fresh session has no resume anchor",
                Where(path, entries[-1].line),
                hint="the next checkpoint (`loop task done … --next`) writes one",
            )
        )
    return ExecutionLog(path, entries, tuple(findings))


def read_log(path: Path) -> ExecutionLog:
    """Read a log file whole (for ``loop log`` and checks)."""
    return parse_log(_read_text(path), path)


def _read_text(path: Path, *, exact: bool = False) -> str:
    """The log's text; ``exact`` keeps undecodable bytes (for offsets and rewrites)."""
    errors = "surrogateescape" if exact else "replace"
    try:
        return read_limited(path, LOG_LIMIT, what="execution log").decode("utf-8", errors=errors)
    except OSError as exc:
        raise UnusableInputError(f"cannot read: {exc.strerror}", where=Where(path)) from exc


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def tail_entries(path: Path, count: int = 1) -> list[LogEntry]:
    """The last ``count`` entries, reading only as much of the file's end as needed.

    Lines are unknown from a tail read (``line`` is None) unless the whole file
    ended up being read.
    """
    size = path.stat().st_size
    chunk = _TAIL_CHUNK
    while True:
        start = max(0, size - chunk)
        with path.open("rb") as handle:
            handle.seek(start)
            data = handle.read().decode("utf-8", errors="replace")
        if start > 0:
            data = data[data.find("\n") + 1 :]  # drop the partial first line
        lines = data.split("\n")
        # Fences balance in a well-formed file: an unbalanced tail began inside one.
        in_fence = start > 0 and _ends_in_fence(lines)
        found = list(_entries(lines, 1 if start == 0 else 0, in_fence=in_fence))
        if len(found) > count or start == 0:
            picked = found[-count:] if count else []
            if start > 0:
                picked = [LogEntry(e.stamp, e.summary, e.fields, None) for e in picked]
            return picked
        chunk *= 4


def last_entry(path: Path) -> LogEntry | None:
    """The most recent entry, read from the tail; None when the log has none."""
    if not path.is_file():
        return None
    found = tail_entries(path, 1)
    return found[-1] if found else None


@dataclass(frozen=True)
class Appended:
    """Where an entry went, so the checkpoint journal can verify or undo it."""

    offset: int  # byte offset of the inserted bytes
    data: bytes  # exactly the bytes inserted (separator included)
    digest: str  # sha256 of the entry text itself
    size_before: int
    fast: bool  # appended at the end (True) or inserted by a rewrite (False)


def entry_digest(entry_text: str) -> str:
    return hashlib.sha256(entry_text.encode("utf-8")).hexdigest()


def plan_append(path: Path, entry_text: str) -> Appended:
    """Decide where ``entry_text`` goes, without writing anything."""
    size = path.stat().st_size
    tail = _tail_text(path, size)
    digest = entry_digest(entry_text)
    if _progress_is_last(tail, size <= _TAIL_CHUNK):
        data = (_separator(tail) + entry_text).encode("utf-8")
        return Appended(size, data, digest, size, True)
    text = _read_text(path, exact=True)
    section = _progress_end(text)
    if section is None:
        data = (_separator(tail) + PROGRESS_HEADING + "\n\n" + entry_text).encode("utf-8")
        return Appended(size, data, digest, size, True)
    before = text[:section]
    after = "" if text[section:].startswith("\n") else "\n"
    insert = _separator(before) + entry_text + after
    offset = len(_encode(before))
    return Appended(offset, _encode(insert), digest, size, False)


def apply_append(path: Path, planned: Appended) -> None:
    """Write a planned append (one write call, or an atomic rewrite)."""
    if planned.fast:
        atomic.append_bytes(path, planned.data)
        return
    data = path.read_bytes()
    atomic.write_bytes(path, data[: planned.offset] + planned.data + data[planned.offset :])


def append_entry(path: Path, entry_text: str) -> Appended:
    """Append one rendered entry to the log; return what was written where."""
    planned = plan_append(path, entry_text)
    apply_append(path, planned)
    return planned


def entry_state(path: Path, planned: Appended) -> str:
    """After a crash: ``"absent"``, ``"present"`` or ``"torn"`` for a planned append."""
    size = path.stat().st_size
    length = len(planned.data)
    if planned.fast:
        if size == planned.size_before:
            return "absent"
        with path.open("rb") as handle:
            handle.seek(planned.offset)
            written = handle.read(length)
        if written == planned.data:
            return "present"
        return "torn"
    data = path.read_bytes()
    if data[planned.offset : planned.offset + length] == planned.data:
        return "present"
    return "absent" if size == planned.size_before else "torn"


def remove_entry(path: Path, planned: Appended) -> None:
    """Undo a planned append (present or torn); the log is back to its old bytes."""
    if planned.fast:
        os.truncate(path, planned.size_before)
        return
    data = path.read_bytes()
    if data[planned.offset : planned.offset + len(planned.data)] == planned.data:
        atomic.write_bytes(
            path, data[: planned.offset] + data[planned.offset + len(planned.data) :]
        )


def _tail_text(path: Path, size: int) -> str:
    with path.open("rb") as handle:
        handle.seek(max(0, size - _TAIL_CHUNK))
        return handle.read().decode("utf-8", errors="replace")


def _separator(before: str) -> str:
    if not before:
        return ""
    if before.endswith("\n\n"):
        return ""
    return "\n" if before.endswith("\n") else "\n\n"


def _level2_headings(lines: list[str], *, in_fence: bool = False) -> Iterator[int]:
    """Indexes of ``## `` heading lines outside code fences."""
    fences = _Fences(inside=in_fence)
    for index, line in enumerate(lines):
        if not fences.feed(line.rstrip("\r")) and line.startswith("## "):
            yield index


def _progress_is_last(tail: str, whole: bool) -> bool:
    """True when nothing but progress entries follows the last level-2 heading."""
    lines = tail.split("\n")
    if not whole:
        lines = lines[1:]  # the first line of a tail read may be partial
    in_fence = not whole and _ends_in_fence(lines)
    last = None
    for index in _level2_headings(lines, in_fence=in_fence):
        last = lines[index].rstrip("\r").strip()
    if last is not None:
        return last == PROGRESS_HEADING
    # No level-2 heading in the tail: inside a long progress section, unless the
    # tail holds no entries at all (then the slow path decides).
    return not whole and _ENTRY_LINE.search(tail) is not None


_ENTRY_LINE = re.compile(r"^### \d{4}-\d{2}-\d{2}", re.MULTILINE)


def _progress_end(text: str) -> int | None:
    """Offset just after the progress section (where a new entry belongs)."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    start = None
    for index in _level2_headings(lines):
        if start is None:
            if lines[index].rstrip("\r").strip() == PROGRESS_HEADING:
                start = index
            continue
        end = offsets[index]
        while end > 0 and text[end - 1] == "\n":
            end -= 1
        return end + 1
    return None if start is None else len(text)


def sync_phase(
    path: Path,
    phase: str,
    *,
    status: str | None = None,
    transition: tuple[str, str, str] | None = None,
) -> bool:
    """Mirror ``phase`` into the log's front matter; optionally record a transition row.

    ``transition`` is ``(entered date, approved by, notes)`` for the phase
    being entered. One atomic rewrite; returns whether the file changed. With no
    transition to record and the front matter already saying so, only the head of
    the file is read: a checkpoint's cost does not grow with the log.
    """
    if transition is None and _front_matter_agrees(path, phase, status):
        return False
    text = _read_text(path, exact=True)
    new_text = phase_synced(text, path, phase, status=status, transition=transition)
    if new_text == text:
        return False
    atomic.write_bytes(path, _encode(new_text))
    return True


def _front_matter_agrees(path: Path, phase: str, status: str | None) -> bool:
    """Whether the front matter (read from the file's head alone) already says ``phase``."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_TAIL_CHUNK).decode("utf-8", errors="surrogateescape")
    except OSError:
        return False  # the full read reports it
    lines = head.split("\n")
    if lines[0].rstrip() != "---":
        return False
    ends = [n for n, line in enumerate(lines[1:-1], 1) if line.rstrip() == "---"]
    if not ends:
        return False  # the front matter does not end in the head: read it all
    try:
        front = parse_front_matter("\n".join(lines[: ends[0] + 1]) + "\n", path)
    except LoopError:
        return False  # the full read reports it where it is
    return front.get("phase") == phase and (status is None or front.get("status") == status)


def phase_synced(
    text: str,
    path: Path,
    phase: str,
    *,
    status: str | None = None,
    transition: tuple[str, str, str] | None = None,
) -> str:
    """``text`` (the log at ``path``) as ``sync_phase`` would leave it; nothing is written."""
    front = parse_front_matter(text, path)
    changes: dict[str, object] = {}
    if front.get("phase") != phase:
        changes["phase"] = phase
    if status is not None and front.get("status") != status:
        changes["status"] = status
    new_text = update_front_matter(text, path, changes) if changes else text
    if transition is not None:
        new_text = record_transition(new_text, phase, *transition)
    return new_text


def encoded(text: str) -> bytes:
    """Log text back to the exact bytes it was read from (see ``_read_text(exact=True)``)."""
    return _encode(text)


def decoded(data: bytes) -> str:
    """Log bytes as text that ``encoded`` turns back into the same bytes."""
    return data.decode("utf-8", "surrogateescape")


def record_transition(text: str, phase: str, entered: str, by: str, notes: str) -> str:
    """Fill the phase's empty row in the Phase transitions table, or add a row.

    Idempotent: the same row twice is written once (a recovered checkpoint may
    apply it again).
    """
    lines = text.split("\n")
    row = "| " + " | ".join(_cell(c) for c in (phase, entered, by, notes)) + " |"
    table = _table(lines)
    if table is None:
        return "\n".join(_with_new_table(lines, row))
    separator, rows = table
    for index in rows:
        cells = _cells(lines[index])
        if lines[index].strip() == row.strip():
            return text
        if cells and cells[0] == phase and (len(cells) < 2 or cells[1] in _EMPTY_CELLS):
            lines[index] = row
            return "\n".join(lines)
    filled = [
        i for i in rows if len(_cells(lines[i])) > 1 and _cells(lines[i])[1] not in _EMPTY_CELLS
    ]
    at = (filled[-1] if filled else separator) + 1
    return "\n".join(lines[:at] + [row] + lines[at:])


_EMPTY_CELLS = ("", "-", "—", "–")
_HEADER = [
    "| Phase | Entered | Reviewed/approved by | Notes |",
    "|-------|---------|----------------------|-------|",
]


def _cell(value: str) -> str:
    """Table-cell text: one line, pipes escaped (approvers are free text)."""
    return " ".join(value.split()).replace("|", "\\|")


def _with_new_table(lines: list[str], row: str) -> list[str]:
    """Add the table under an existing heading, or a new section before the entries."""
    heading = next((i for i, line in enumerate(lines) if line.strip() == TRANSITIONS_HEADING), None)
    if heading is not None:
        after = heading + 1
        while after < len(lines) and not lines[after].strip():
            after += 1
        if after < len(lines) and lines[after].strip().startswith("| Phase"):
            # A header row without its separator: complete the table in place.
            return lines[: after + 1] + [_HEADER[1], row] + lines[after + 1 :]
        return lines[: heading + 1] + ["", *_HEADER, row] + lines[heading + 1 :]
    anchor = next(
        (i for i, line in enumerate(lines) if line.strip() == PROGRESS_HEADING), len(lines)
    )
    return lines[:anchor] + [TRANSITIONS_HEADING, "", *_HEADER, row, ""] + lines[anchor:]


def entered_phases(text: str) -> list[tuple[str, int]]:
    """``(phase, line)`` for every row of the Phase transitions table with a date."""
    lines = text.split("\n")
    table = _table(lines)
    if table is None:
        return []
    found = []
    for index in table[1]:
        cells = _cells(lines[index])
        if len(cells) > 1 and cells[1] not in _EMPTY_CELLS:
            found.append((cells[0], index + 1))
    return found


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(lines: list[str]) -> tuple[int, list[int]] | None:
    """The separator row's index and the data rows of the Phase transitions table."""
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == TRANSITIONS_HEADING)
    except StopIteration:
        return None
    separator: int | None = None
    rows: list[int] = []
    for index in range(start + 1, len(lines)):
        line = lines[index].strip()
        if line.startswith("#"):
            break
        if not line.startswith("|"):
            if separator is not None and not line:
                break
            continue
        if separator is None:
            if re.match(r"^\|[\s:|-]+\|$", line):
                separator = index
            continue
        rows.append(index)
    return (separator, rows) if separator is not None else None
