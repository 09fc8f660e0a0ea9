"""Read and edit ``tasks.md``: the task list of a work item.

The reader turns the markdown into typed ``Task`` values plus findings for
whatever it cannot read with certainty; it never raises on content. The writer
changes exactly one checkbox character and preserves every other byte.

Grammar (one linear pass over ``\\n``-separated lines; a ``\\r`` before the
``\\n`` is not content; line numbers are 1-based and absolute):

* YAML front matter (a first line ``---`` up to the next ``---``) and fenced
  code blocks (three or more ````` or ``~``, closed by a fence of the same
  character at least as long, at any indentation) are not read for tasks; a
  fence that is never closed is a warning. A ``mermaid`` block is handed to
  ``the_loop.mermaid``.
* A task is a list item at column 0 with a checkbox: ``-``, ``*`` or ``+``,
  then ``[ ]`` (open), ``[x]``/``[X]`` (done) or ``[-]`` (in progress). Any
  other mark is an error and the task is read as open, so the graph stays whole.
* The id follows the checkbox: ``3.``, ``3)``, ``3:``, ``3 —``, ``T3``,
  ``T3.``, ``T3 —``, dotted ``3.2``; or it opens a bold span,
  ``**T3 — Title.**``. The canonical id is the number (``T03`` → ``"3"``);
  ``label`` keeps what the file wrote. A bare number needs punctuation after
  it, so ``- [ ] 3 retries`` has no id (an error, like any checkbox without one).
* The title is the text after the id, ``**`` removed. When the title is bold
  (``**T3 — Title.**`` or ``3. **Title.**``) only the bold part is the title,
  without its final period, and the rest of the paragraph is a detail; a bold
  span holding only the id (``**T3.** Title``) leaves the rest as the title.
  Indented non-bullet lines right after the task line continue its paragraph.
* The task owns the indented and blank lines up to the next non-blank column-0
  line. Each indented bullet starts a sub-item; indented text continues the
  sub-item above it (or starts a new one after a blank line). A checkbox on an
  indented bullet is not a task (info finding).
* Fields: ``_Key:_``, ``*Key:*``, ``**Key:**``, ``_Key_:`` or ``_Key: value_``
  anywhere in the task paragraph or a sub-item, for the keys ``Depends on``
  (also ``Dependencies``), ``Requirements`` and ``Test`` in any case; at the
  start of a sub-item also plain ``Depends on:``, ``Requirements:``, ``Test:``
  (not plain ``Dependencies:``, which is usually about packages). A value runs
  to the next field marker, so fields can share a line joined by `` — ``,
  `` – ``, `` · `` or `` | `` (the separator is dropped), and a value may
  contain dashes itself. Sub-items that are not fields are details.
* Depends on: ``none``/``nothing``/``n/a``/``—`` (text after it ignored); ids
  (``3``, ``T3``, ``task 3``, ``3.2``) joined by ``,``, ``;``, ``&`` or
  ``and``; ranges ``1–6``, ``1—6``, ``1-6``, ``T1–T7``, ``1..6`` (at most
  100 000 ids); ``all`` = every task listed above (an info finding says what it
  became). Parenthesised text is ignored. If any part cannot be read, the value
  is an error and ``depends_on`` is ``None``: a dependency is never guessed.
  Several depends fields on one task add up.
* In a bold-title task the rest of the paragraph may say ``depends on T1,
  T2.`` (up to the end of the sentence, at most 200 characters). The clause
  counts only if its list reads completely; one led by a dash that does not is
  a warning, other prose is left alone. ``*(AC7, R2)*`` there lists
  requirements.
* Requirements: ``R1``, ``R1.2``, ``AC7``, ``AC 7``, ``NFR1``, ``FR1`` and
  ranges of them (``R1–R5``, ``R1.1–R1.7``, ``AC 1–3``, ``AC2–AC6``), in order,
  without repeats; a value starting with ``all`` gives ``"all"``. Inside
  parentheses only ids are taken and nothing is reported (``(design D2)`` is
  prose); elsewhere a token with a digit that is not an id is a warning.
* Test: the trimmed raw value (the first one; later ones become details).
  ``test_command`` splits its first code span with ``shlex``; a warning says
  when that cannot work (unbalanced quotes).

Where the edges come from (``TaskList.dependency_source``): the fields and
prose clauses when any task states one, ``none`` included (``"fields"``);
otherwise the mermaid flowcharts that name at least one task (``"mermaid"``:
each task gets the sources of its incoming edges, ``()`` when none); with both,
the fields win and each task whose two answers differ is a warning
(``"both"``); with neither, ``"none"``: every ``depends_on`` stays ``None`` and,
when there are two or more tasks, one info finding says they are independent.
A flowchart edge into a task the file does not list is a warning; a flowchart
that names no task is an info and is not read as the DAG.

Duplicate ids, unknown dependencies and cycles are left to ``the_loop.dag``.
"""

from __future__ import annotations

import re
import shlex
from bisect import bisect_right
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from typing import Literal, NamedTuple

from the_loop import atomic, mermaid
from the_loop.errors import DagError, SpecError, UnusableInputError, Where
from the_loop.findings import Finding, Level


class TaskState(str, Enum):
    """The state a task's checkbox shows."""

    OPEN = "open"  # [ ]
    IN_PROGRESS = "in-progress"  # [-]
    DONE = "done"  # [x] or [X]

    @property
    def mark(self) -> str:
        """The character written between the brackets for this state."""
        return _MARKS[self]


_MARKS = {TaskState.OPEN: " ", TaskState.IN_PROGRESS: "-", TaskState.DONE: "x"}
_STATE_OF_MARK = {
    " ": TaskState.OPEN,
    "-": TaskState.IN_PROGRESS,
    "x": TaskState.DONE,
    "X": TaskState.DONE,
}


@dataclass(frozen=True)
class Task:
    """One top-level checkbox task.

    ``id`` is canonical (``"3"`` for ``3.``, ``T3`` and ``**T3 — …**``); ``label``
    is the id as the file writes it. ``depends_on`` is ``None`` when the file
    states nothing about dependencies and ``()`` when it says ``none``.
    Lines are 1-based; ``mark_offset`` is the byte offset of the checkbox
    character within the file, which is what the line-local writer changes.
    """

    id: str
    label: str
    title: str
    state: TaskState
    line: int
    end_line: int
    mark_offset: int
    depends_on: tuple[str, ...] | None = None
    depends_line: int | None = None
    requirements: tuple[str, ...] = ()
    requirements_line: int | None = None
    test: str | None = None
    test_line: int | None = None
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskList:
    """Everything read from one ``tasks.md``.

    ``dependency_source`` says where the edges came from: ``"fields"`` (the
    ``_Depends on:_`` sub-bullets or inline ``depends on`` prose), ``"mermaid"``
    (only a mermaid flowchart), ``"both"``, or ``"none"``.
    """

    path: Path
    tasks: tuple[Task, ...]
    findings: tuple[Finding, ...]
    dependency_source: str = "none"


# ---------------------------------------------------------------------------
# Public API


def parse_tasks(text: str, path: Path) -> TaskList:
    """Read the tasks in ``text`` (the content of ``path``); never raises on content.

    Every task is returned in file order, duplicates included; whatever cannot
    be read with certainty is a finding with ``path:line`` and a hint.
    """
    reader = _Reader(text, Path(path))
    reader.read()
    tasks, source = _resolve_source(reader)
    return TaskList(Path(path), tasks, tuple(reader.ctx.findings), source)


def read_tasks(path: Path) -> TaskList:
    """Read and parse ``path``.

    Raises ``UnusableInputError`` when the file is missing, unreadable or not
    UTF-8 (with the line of the first bad byte).
    """
    path = Path(path)
    return parse_tasks(_decode(_read_bytes(path), path), path)


def set_state(path: Path, task_id: str, state: TaskState) -> bool:
    """Set the checkbox of task ``task_id`` in ``path``; False if it already shows ``state``.

    The file is read afresh, exactly one checkbox character changes and the
    result is written atomically. Raises ``DagError`` when no task or more than
    one task has that id.
    """
    path = Path(path)
    data = _read_bytes(path)
    task = _find_task(parse_tasks(_decode(data, path), path), task_id)
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
    start = task.mark_offset
    width = _utf8_width(data[start]) if 0 <= start < len(data) else 0
    end = start + width
    if width == 0 or start < 1 or data[start - 1 : start] != b"[" or data[end : end + 1] != b"]":
        # Pure function without a path: the message carries the line instead.
        raise SpecError(
            f"task {task.label} is no longer at line {task.line}: the file changed "
            "after it was read",
            hint="read the file again and retry",
        )
    current = _STATE_OF_MARK.get(data[start:end].decode("utf-8", "replace"))
    if current is state:
        return data
    return data[:start] + state.mark.encode("ascii") + data[end:]


def test_command(task: Task) -> list[str] | None:
    """The command in the first code span of the task's ``_Test:_``, split like a shell.

    A leading test-plan row label (``T2 — pytest …``) is dropped. None when the
    test has no code span or the span cannot be split (unbalanced quotes).
    """
    if task.test is None:
        return None
    span = _first_code_span(task.test)
    if span is None:
        return None
    return _split_command(span)


# ---------------------------------------------------------------------------
# Files and the writer's helpers


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise UnusableInputError(
            f"{path.name} does not exist",
            where=Where(path),
            hint="create it from the tasks template, or check the work item id",
        ) from exc
    except OSError as exc:
        raise UnusableInputError(
            f"cannot read {path.name}: {exc.strerror or exc}",
            where=Where(path),
            hint="check that it is a readable file",
        ) from exc


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UnusableInputError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded",
            where=Where(path, line, col),
            hint="save the file as UTF-8",
        ) from exc


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
    m = _ID_RE.fullmatch(task_id.strip())
    return _canonical_id(m.group("num")) if m else task_id.strip()


def _utf8_width(lead: int) -> int:
    if lead < 0x80:
        return 1
    for width, mask, value in ((2, 0xE0, 0xC0), (3, 0xF0, 0xE0), (4, 0xF8, 0xF0)):
        if lead & mask == value:
            return width
    return 0


_CODE_RUN_RE = re.compile(r"`+")
_ROW_LABEL_RE = re.compile(r"T[0-9]+[ \t]+[—–-][ \t]+")


def _first_code_span(text: str) -> str | None:
    """The content of the first code span, as CommonMark pairs backtick runs.

    A run opens a span only if a later run has the same length; the span that
    opens first wins. Runs are grouped by length, so this is one pass.
    """
    first_run: dict[int, re.Match[str] | None] = {}
    best: tuple[re.Match[str], re.Match[str]] | None = None
    for run in _CODE_RUN_RE.finditer(text):
        length = len(run.group())
        if length not in first_run:
            first_run[length] = run
            continue
        opener = first_run[length]
        if opener is not None and (best is None or opener.start() < best[0].start()):
            best = (opener, run)
        first_run[length] = None  # later runs of this length come after a closed span
    return text[best[0].end() : best[1].start()].strip() if best else None


def _split_command(span: str) -> list[str] | None:
    try:
        argv = shlex.split(_command_text(span))
    except ValueError:
        return None
    return argv or None


def _command_text(span: str) -> str:
    # The HEAD template names a test-plan row inside the span: `T2 — pytest …`.
    row = _ROW_LABEL_RE.match(span)
    return span[row.end() :] if row else span


# ---------------------------------------------------------------------------
# The line reader

_TASK_RE = re.compile(r"[-*+][ \t]+\[(.)\]((?:[ \t].*)?)$")
_NESTED_BOX_RE = re.compile(r"\[.\](?:[ \t]|$)")
_FIELD_LINE_RE = re.compile(
    r"[ \t]+[-*+][ \t]+(_(depends on|requirements|test):_[ \t]*(\S.*))", re.IGNORECASE
)
_BULLET_RE = re.compile(r"(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+(.*))?$")
_FENCE_OPEN_RE = re.compile(r"(`{3,}|~{3,})[ \t]*(.*)$")
_FENCE_CLOSE_RE = re.compile(r"(`{3,}|~{3,})[ \t]*$")


class _Block:
    """A paragraph or sub-item: its stripped lines, joined, and where each came from.

    A plain class with slots: one is made per task line and sub-bullet, so its
    cost is paid 100k times on large files.
    """

    __slots__ = ("parts", "lines", "_starts", "field")

    def __init__(self, part: str, line: int, field: _Field | None = None) -> None:
        self.parts = [part]
        self.lines = [line]
        self._starts: list[int] | None = None
        # A sub-bullet that is exactly one template field (`_Test:_ value`),
        # recognised while reading the line so assembly can skip the search.
        self.field = field

    def add(self, part: str, line: int) -> None:
        self.parts.append(part)
        self.lines.append(line)
        self.field = None  # the value continues on this line: read it the general way

    @property
    def text(self) -> str:
        return self.parts[0] if len(self.parts) == 1 else " ".join(self.parts)

    def line_at(self, offset: int) -> int:
        """The file line holding character ``offset`` of ``text``."""
        if len(self.parts) == 1:
            return self.lines[0]
        if self._starts is None:
            self._starts, at = [], 0
            for part in self.parts:
                self._starts.append(at)
                at += len(part) + 1
        return self.lines[max(bisect_right(self._starts, offset) - 1, 0)]


class _Draft:
    """A task whose lines are still being collected (a slots class: one per task)."""

    __slots__ = ("mark", "line", "mark_offset", "end_line", "paragraph", "blocks", "after_blank")

    def __init__(self, mark: str, line: int, mark_offset: int, paragraph: _Block) -> None:
        self.mark = mark
        self.line = line
        self.mark_offset = mark_offset
        self.end_line = line
        self.paragraph = paragraph
        self.blocks: list[_Block] = []
        self.after_blank = False


@dataclass
class _Fence:
    """An open code fence: what closes it, and the lines of a mermaid block."""

    char: str
    length: int
    line: int
    in_task: bool
    mermaid: list[str] | None


@dataclass
class _Context:
    """What assembling one task needs from the rest of the file."""

    path: Path
    tasks: list[Task] = field(default_factory=list)  # read so far, in file order
    findings: list[Finding] = field(default_factory=list)
    _scanned: int = 0
    _last_number: int = 0

    def note(
        self, level: Level, code: str, message: str, line: int | None, hint: str | None = None
    ) -> None:
        self.findings.append(Finding(level, code, message, Where(self.path, line), hint))

    def ids_above(self, task_id: str) -> tuple[str, ...]:
        """Distinct ids of the tasks read so far, without ``task_id`` (for ``all``)."""
        return tuple(i for i in dict.fromkeys(t.id for t in self.tasks) if i != task_id)

    def next_number(self) -> int:
        """One more than the highest task number so far (for hints)."""
        # Scans only the tasks added since the last call: linear over the file.
        for task in self.tasks[self._scanned :]:
            self._last_number = max(self._last_number, int(task.id.partition(".")[0]))
        self._scanned = len(self.tasks)
        return self._last_number + 1


class _Reader:
    """One pass over the lines: front matter, fences, tasks and their sub-lines."""

    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.ctx = _Context(path)
        self.tasks = self.ctx.tasks
        self.stated: list[bool] = []
        self.unreadable: set[int] = set()
        self.charts: list[mermaid.Flowchart] = []
        self.draft: _Draft | None = None
        self.fence: _Fence | None = None
        self.ascii = text.isascii()
        self.last_char = 0
        self.last_byte = 0

    def read(self) -> None:
        lines = self.text.split("\n")
        pos = 0
        if lines[0].startswith("\ufeff"):
            lines[0] = lines[0][1:]
            pos = 1
        start = _front_matter_end(lines)
        pos += sum(len(raw) + 1 for raw in lines[:start])
        quick_field = _FIELD_LINE_RE.match
        for index in range(start, len(lines)):
            raw = lines[index]
            # The template's `  - _Key:_ value` lines are most of a large file:
            # read them here, without the general dispatch.
            quick = quick_field(raw) if self.draft is not None and self.fence is None else None
            if quick is not None:
                self._field_line(quick, index + 1)
            else:
                self._line(raw[:-1] if raw.endswith("\r") else raw, index + 1, pos)
            pos += len(raw) + 1
        if self.fence is not None:
            self._unclosed_fence(self.fence)
        self._finish()

    def _line(self, line: str, no: int, pos: int) -> None:
        if self.fence is not None:
            self._fenced(line, no)
            return
        body = line.strip()
        if not body:
            if self.draft is not None:
                self.draft.after_blank = True
            return
        indented = line[0] in " \t"
        if body[0] in "`~" and self._open_fence(body, no, indented):
            return
        if indented:
            self._indented(body, no)
            return
        if line[0] in "-*+":
            m = _TASK_RE.match(line)
            if m:
                self._start_task(m, no, pos)
                return
        self._finish()  # any other column-0 line ends the task

    def _start_task(self, m: re.Match[str], no: int, pos: int) -> None:
        self._finish()
        offset = self._byte_offset(pos + m.start(1))
        self.draft = _Draft(m.group(1), no, offset, _Block(m.group(2).strip(), no))

    def _field_line(self, quick: re.Match[str], no: int) -> None:
        draft = self.draft
        assert draft is not None
        content, key, value = quick.groups()
        field = _lone_field(key, value, quick.start(3) - quick.start(1))
        draft.blocks.append(_Block(content.rstrip(), no, field))
        draft.end_line = no
        draft.after_blank = False

    def _indented(self, stripped: str, no: int) -> None:
        draft = self.draft
        bullet = _BULLET_RE.match(stripped) if stripped[0] in "-*+0123456789" else None
        content = bullet.group(1) if bullet else None
        if content and content[0] == "[" and _NESTED_BOX_RE.match(content):
            self.ctx.note(
                Level.INFO,
                "tasks.nested-checkbox",
                "an indented checkbox is not a task",
                no,
                "sub-steps are plain bullets (`  - step`); make it a task at "
                "column 0 if it needs its own checkmark",
            )
        if draft is None:
            return
        draft.end_line = no
        if bullet:
            draft.blocks.append(_Block(content or "", no))
        elif draft.after_blank:
            draft.blocks.append(_Block(stripped, no))
        else:
            (draft.blocks[-1] if draft.blocks else draft.paragraph).add(stripped, no)
        draft.after_blank = False

    def _open_fence(self, stripped: str, no: int, indented: bool) -> bool:
        m = _FENCE_OPEN_RE.match(stripped)
        if not m or (m.group(1)[0] == "`" and "`" in m.group(2)):
            return False
        if not indented:
            self._finish()
        in_task = self.draft is not None
        if self.draft is not None:
            self.draft.end_line = no
        info = m.group(2).split(None, 1)
        is_mermaid = bool(info) and info[0].lower() == "mermaid"
        self.fence = _Fence(m.group(1)[0], len(m.group(1)), no, in_task, [] if is_mermaid else None)
        return True

    def _fenced(self, line: str, no: int) -> None:
        fence = self.fence
        assert fence is not None
        m = _FENCE_CLOSE_RE.match(line.strip(" \t"))
        if m and m.group(1)[0] == fence.char and len(m.group(1)) >= fence.length:
            self.fence = None
            self._close_chart(fence)
            if fence.in_task and self.draft is not None:
                self.draft.end_line = no
        elif fence.mermaid is not None:
            fence.mermaid.append(line)

    def _close_chart(self, fence: _Fence) -> None:
        if fence.mermaid is not None:
            chart = mermaid.parse_flowchart("\n".join(fence.mermaid), self.ctx.path, fence.line + 1)
            if chart is not None:
                self.charts.append(chart)

    def _unclosed_fence(self, fence: _Fence) -> None:
        self.ctx.note(
            Level.WARNING,
            "tasks.unclosed-fence",
            "this code fence is never closed, so nothing after it is read as tasks",
            fence.line,
            f"close it with a line `{fence.char * fence.length}`",
        )
        self._close_chart(fence)

    def _finish(self) -> None:
        draft, self.draft = self.draft, None
        if draft is None:
            return
        assembled = _assemble(draft, self.ctx)
        if assembled is not None:
            task, stated, unreadable = assembled
            if unreadable:
                self.unreadable.add(len(self.tasks))
            self.tasks.append(task)
            self.stated.append(stated)

    def _byte_offset(self, char_index: int) -> int:
        if self.ascii:
            return char_index
        # Encode only the text since the previous task: linear over the file.
        chunk = self.text[self.last_char : char_index]
        self.last_byte += len(chunk.encode("utf-8", "surrogatepass"))
        self.last_char = char_index
        return self.last_byte


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after the front matter (0 when there is none)."""
    if lines[0].rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return index + 1
    return 0  # unterminated: the front-matter reader reports it; read it all as markdown


# ---------------------------------------------------------------------------
# Assembling one task

_ID_RE = re.compile(
    r"(?P<t>[Tt])?(?P<num>[0-9]{1,9}(?:\.[0-9]{1,9})*)"
    r"(?P<sep>\.|\)|:|[ \t]*[—–]|[ \t]+-(?=[ \t]|$)|(?=\*\*)|(?=[ \t]|$))"
)
_PLAIN_HEAD_RE = re.compile(r"([Tt]?)([0-9]{1,9})[.):][ \t]+([^*]*)$")
_FIELD_RE = re.compile(
    r"(?<![\w*])(?P<open>\*\*|\*|_)"
    r"(?P<key>depends[ -]on|dependencies|requirements?|reqs?|tests?)"
    r"(?:[ \t]*:[ \t]*(?P=open)|(?P=open)[ \t]*:|[ \t]*:(?P<inner>))",
    re.IGNORECASE,
)
# Without emphasis only the exact keys count: a detail such as "Dependencies:
# add ruamel" is about packages, not tasks.
_PLAIN_FIELD_RE = re.compile(
    r"(?P<open>)(?P<key>depends[ -]on|requirements|test)[ \t]*:(?P<inner>)", re.IGNORECASE
)
_SEPARATORS = " \t—–·|"
_INLINE_REQ_RE = re.compile(r"\*\(([^()*]*)\)\*")
_PROSE_DEP_RE = re.compile(r"(?<!\w)depends[ \t]+on[ \t]+", re.IGNORECASE)
_PROSE_END_RE = re.compile(r"[.;](?![0-9])|[ \t][—–·|][ \t]|\*\(")
_MAX_CLAUSE = 200


class _Head(NamedTuple):
    """What the task paragraph says before its fields: id, title, the rest."""

    label: str
    id: str
    title: str
    rest: str  # only a bold title leaves a rest: the paragraph after the bold span
    rest_offset: int


# (kind, value, offset): kind is "dep", "req" or "tes"; offset is where the value
# starts in the block text. A plain tuple, as one is made per field line.
_Field = tuple[str, str, int]


@dataclass(slots=True)
class _Facts:
    """Fields gathered from a task's paragraph and sub-items."""

    depends: list[str] | None = None
    depends_line: int | None = None
    stated: bool = False
    unreadable: bool = False
    requirements: dict[str, None] = field(default_factory=dict)
    requirements_line: int | None = None
    test: str | None = None
    test_line: int | None = None
    details: list[str] = field(default_factory=list)


def _assemble(draft: _Draft, ctx: _Context) -> tuple[Task, bool, bool] | None:
    """Build the ``Task`` for ``draft``: ``(task, stated dependencies, unreadable)``."""
    para = draft.paragraph
    prose, fields = _split_fields(para.text, plain=False)
    head = _parse_head(prose)
    if head is None:
        _no_id(draft, prose, ctx)
        return None
    facts = _Facts()
    if head.rest:
        facts.details.append(head.rest)
        _read_bold_rest(head, para, facts, ctx)
    if fields:
        _take_fields(fields, para, facts, ctx, head.id)
    for block in draft.blocks:
        if block.field is not None:
            kind, value, _offset = block.field
            _take_field(kind, value, block.lines[0], facts, ctx, head.id)
            continue
        detail, block_fields = _split_fields(block.text, plain=True)
        if detail:
            facts.details.append(detail)
        if block_fields:
            _take_fields(block_fields, block, facts, ctx, head.id)
    if not head.title:
        ctx.note(
            Level.WARNING,
            "tasks.empty-title",
            f"task {head.label} has no title",
            draft.line,
            f"describe the task after its id: `- [ ] {head.label}. <title>`",
        )
    task = _new_task(
        {
            "id": head.id,
            "label": head.label,
            "title": head.title,
            "state": _STATE_OF_MARK.get(draft.mark) or _unknown_mark(draft, ctx),
            "line": draft.line,
            "end_line": draft.end_line,
            "mark_offset": draft.mark_offset,
            "depends_on": None if facts.depends is None else tuple(facts.depends),
            "depends_line": facts.depends_line,
            "requirements": tuple(facts.requirements),
            "requirements_line": facts.requirements_line,
            "test": facts.test,
            "test_line": facts.test_line,
            "details": tuple(facts.details),
        }
    )
    return task, facts.stated, facts.unreadable


def _new_task(values: dict[str, object]) -> Task:
    """A ``Task`` holding ``values``, built without the generated frozen ``__init__``.

    That ``__init__`` sets each of the 14 fields through ``object.__setattr__``,
    a tenth of the reader's time on a 100k-task file. Filling the instance
    dict gives an equal object as long as ``Task`` stays a plain frozen
    dataclass without ``__post_init__`` (``tests/test_tasks_reader.py`` pins
    both).
    """
    task = object.__new__(Task)
    task.__dict__.update(_TASK_DEFAULTS)
    task.__dict__.update(values)
    return task


# Defaults of fields added later fill in by themselves.
_TASK_DEFAULTS = {f.name: f.default for f in fields(Task) if f.default is not MISSING}


def _unknown_mark(draft: _Draft, ctx: _Context) -> TaskState:
    """An error for a mark other than ``[ ]``, ``[x]``, ``[X]``, ``[-]``; read as open."""
    ctx.note(
        Level.ERROR,
        "tasks.unknown-mark",
        f"unknown checkbox mark `[{draft.mark}]`; read as open",
        draft.line,
        "use `[ ]` (open), `[-]` (in progress) or `[x]` (done)",
    )
    return TaskState.OPEN


def _no_id(draft: _Draft, prose: str, ctx: _Context) -> None:
    title = prose.strip().replace("**", "") or "<title>"
    if len(title) > 40:
        title = title[:40] + "…"
    ctx.note(
        Level.ERROR,
        "tasks.no-id",
        "checkbox item has no task id, so it is not a task",
        draft.line,
        f"number it: `- [{draft.mark}] {ctx.next_number()}. {title}`",
    )


def _split_fields(s: str, *, plain: bool) -> tuple[str, list[_Field]]:
    """The prose before the first field marker, and each field after it."""
    if ":" not in s:  # every field form has a colon; most detail lines do not
        return s.strip(), []
    m: re.Match[str] | None = _FIELD_RE.search(s)
    if plain and (m is None or m.start() > 0):
        first = _PLAIN_FIELD_RE.match(s)
        if first:
            return "", _fields_from(s, first, m)
    if m is None:
        return s.strip(), []
    return s[: m.start()].strip().rstrip(_SEPARATORS), _fields_from(s, m, m)


def _fields_from(s: str, m: re.Match[str], nxt: re.Match[str] | None) -> list[_Field]:
    """Each field from marker ``m`` on; a value ends where the next marker starts."""
    fields = []
    while True:
        if nxt is m:
            nxt = _FIELD_RE.search(s, m.end())
        value = s[m.end() : nxt.start() if nxt else len(s)].strip()
        # Drop a separator before the next field, but keep a lone `—` (= none).
        value = value.rstrip(_SEPARATORS) or value
        key, opener, inner = m.group("key", "open", "inner")
        if opener and inner is not None and value.endswith(opener):
            value = value[: -len(opener)].rstrip()  # `_Key: value_`
        fields.append((key[:3].lower(), value, m.end()))
        if nxt is None:
            return fields
        m = nxt


def _lone_field(key: str, value: str, offset: int) -> _Field | None:
    """The field of a ``_Key:_ value`` sub-bullet, or None if more fields follow."""
    # Every field marker has a colon: without one, no second field can follow.
    if ":" in value and _FIELD_RE.search(value):
        return None
    value = value.rstrip()
    return (key[:3].lower(), value.rstrip(_SEPARATORS) or value, offset)


def _parse_head(prose: str) -> _Head | None:
    """Id, label and title from the paragraph text before its fields."""
    fast = _PLAIN_HEAD_RE.match(prose)
    if fast:  # the template's `3. Title`, which is most tasks
        t, number, title = fast.groups()
        return _Head(t + number, _canonical_id(number), _clean(title), "", 0)
    lead = len(prose) - len(prose.lstrip())
    text = prose[lead:]
    if text.startswith("**"):
        close = text.find("**", 2)
        m = _id_match(text[2:close]) if close > 2 else None
        if m:
            return _bold_head(m, text[2 + m.end() : close], text[close + 2 :], lead + close + 2)
    m = _id_match(text)
    if m is None:
        return None
    after = text[m.end() :]
    inner_lead = len(after) - len(after.lstrip())
    if after[inner_lead:].startswith("**"):
        close = after.find("**", inner_lead + 2)
        if close > inner_lead + 2:
            title = after[inner_lead + 2 : close]
            rest_at = lead + m.end() + close + 2
            return _bold_head(m, title, after[close + 2 :], rest_at)
    return _Head(_label(m), _canonical_id(m.group("num")), _clean(after), "", 0)


def _bold_head(m: re.Match[str], title: str, rest: str, rest_offset: int) -> _Head:
    cleaned = _clean(title)
    if cleaned.endswith("."):
        cleaned = cleaned[:-1].rstrip()
    stripped_rest = rest.strip(_SEPARATORS)
    if not cleaned:  # `**T3.** Title`: the bold span held only the id
        cleaned, stripped_rest = _clean(rest), ""
    # Keep the offset exact: lines of clauses in the rest are found through it.
    rest_offset += len(rest) - len(rest.lstrip(_SEPARATORS))
    return _Head(_label(m), _canonical_id(m.group("num")), cleaned, stripped_rest, rest_offset)


def _id_match(text: str) -> re.Match[str] | None:
    m = _ID_RE.match(text)
    if m is None:
        return None
    # A bare integer followed only by a space is a title ("3 retries"), not an id.
    if not m.group("sep") and not m.group("t") and "." not in m.group("num"):
        return None
    return m


def _label(m: re.Match[str]) -> str:
    return (m.group("t") or "") + m.group("num")


def _clean(text: str) -> str:
    return text.replace("**", "").strip().strip(_SEPARATORS)


def _canonical_id(number: str) -> str:
    # T03 and 3 are one task; lstrip (not int()) keeps any digit string safe.
    if number[0] != "0" and "." not in number:
        return number
    return ".".join(part.lstrip("0") or "0" for part in number.split("."))


def _take_fields(
    fields: list[_Field], block: _Block, facts: _Facts, ctx: _Context, task_id: str
) -> None:
    for kind, value, offset in fields:
        _take_field(kind, value, block.line_at(offset), facts, ctx, task_id)


def _take_field(
    kind: str, value: str, line: int, facts: _Facts, ctx: _Context, task_id: str
) -> None:
    if kind == "dep":
        _take_depends(value, line, facts, ctx, task_id)
    elif kind == "req":
        _take_requirements(value, line, facts, ctx)
    elif facts.test is None:
        facts.test, facts.test_line = value, line
        _check_test(value, line, ctx)
    else:
        facts.details.append(f"Test: {value}")


def _clause_value(rest: str, start: int) -> str | None:
    """The list after ``depends on``, up to the end of its sentence; None when too long.

    The search is bounded, so prose repeating "depends on" stays linear.
    """
    end = _PROSE_END_RE.search(rest, start, start + _MAX_CLAUSE + 1)
    if end is None and len(rest) - start > _MAX_CLAUSE:
        return None  # a list of task ids is never this long: prose
    return rest[start : end.start() if end else len(rest)].strip()


def _read_bold_rest(head: _Head, para: _Block, facts: _Facts, ctx: _Context) -> None:
    """``*(AC7, R2)*`` requirements and ``— depends on T1.`` clauses in a bold task."""
    rest = head.rest
    for m in _INLINE_REQ_RE.finditer(rest):
        line = para.line_at(head.rest_offset + m.start())
        _take_requirements(m.group(1), line, facts, ctx)
    for m in _PROSE_DEP_RE.finditer(rest):
        value = _clause_value(rest, m.end())
        line = para.line_at(head.rest_offset + m.start())
        if value is not None and _parse_depends(value) is not None:
            _take_depends(value, line, facts, ctx, head.id)
        elif rest[max(0, m.start() - 4) : m.start()].rstrip().endswith(("—", "–")):
            value = rest[m.end() : m.end() + _MAX_CLAUSE].strip()
            ctx.note(
                Level.WARNING,
                "tasks.depends-prose-unreadable",
                f"cannot read the dependency clause `depends on {value}`; it is ignored",
                line,
                "name task ids (`— depends on T1, T2.`) or add "
                "`  - _Depends on:_ 1, 2` under the task",
            )


# ---------------------------------------------------------------------------
# Depends-on values

_ALL: Literal["all"] = "all"
_MAX_RANGE = 100_000
_PAREN_RE = re.compile(r"\([^()]*\)")
_NONE_RE = re.compile(r"(?:none|nothing|n/a)(?![\w/])|[—–-]$", re.IGNORECASE)
_ALL_RE = re.compile(r"all(?:[ \t]+tasks)?(?:[ \t]+above)?\.?$", re.IGNORECASE)
_SIMPLE_DEPS_RE = re.compile(r"[0-9]{1,9}(?:, [0-9]{1,9})+$")
_DEP_SPLIT_RE = re.compile(r"[,;&]|[ \t]and[ \t]", re.IGNORECASE)
_DEP_ITEM_RE = re.compile(
    r"(?:tasks?[ \t]+)?[Tt]?([0-9]{1,9}(?:\.[0-9]{1,9})*)"
    r"(?:[ \t]*(?:[–—-]|\.\.|to)[ \t]*[Tt]?([0-9]{1,9}(?:\.[0-9]{1,9})*))?",
    re.IGNORECASE,
)


def _parse_depends(value: str) -> tuple[str, ...] | Literal["all"] | None:
    """Task ids named by a depends-on value, ``"all"``, or None when unreadable."""
    text = value.strip()
    if text.isdigit() and text.isascii():
        return (_canonical_id(text),)
    if _SIMPLE_DEPS_RE.match(text):  # `1, 4, 7`
        return tuple(dict.fromkeys(_canonical_id(n) for n in text.split(", ")))
    if _NONE_RE.match(text):
        return ()
    text = _PAREN_RE.sub(" ", text).strip().rstrip(".").strip()
    if _ALL_RE.match(text):
        return _ALL
    if not text:
        return None
    ids: dict[str, None] = {}
    for token in _DEP_SPLIT_RE.split(text):
        token = token.strip()
        if not token:
            continue
        m = _DEP_ITEM_RE.fullmatch(token)
        if m is None:
            return None
        if m.group(2) is None:
            ids[_canonical_id(m.group(1))] = None
            continue
        expanded = _expand(m.group(1), m.group(2))
        if expanded is None:
            return None
        ids.update(dict.fromkeys(expanded))
    return tuple(ids) if ids else None


def _expand(first: str, last: str) -> list[str] | None:
    """The ids from ``first`` to ``last`` (same depth, last part counting up)."""
    a = [p.lstrip("0") or "0" for p in first.split(".")]
    b = [p.lstrip("0") or "0" for p in last.split(".")]
    if len(b) < len(a):
        b = a[: len(a) - len(b)] + b  # `R1.1–7` means R1.1–R1.7
    if len(a) != len(b) or a[:-1] != b[:-1]:
        return None
    low, high = int(a[-1]), int(b[-1])
    if low > high or high - low >= _MAX_RANGE:
        return None
    head = ".".join(a[:-1])
    return [f"{head}.{n}" if head else str(n) for n in range(low, high + 1)]


def _take_depends(value: str, line: int, facts: _Facts, ctx: _Context, task_id: str) -> None:
    parsed = _parse_depends(value)
    facts.stated = True
    if facts.depends_line is None:
        facts.depends_line = line
    if parsed is None:
        facts.unreadable = True
        facts.depends = None
        shown = value or "(empty)"
        ctx.note(
            Level.ERROR,
            "tasks.depends-unreadable",
            f"cannot read the dependencies of task {task_id}: `{shown}`",
            line,
            "write task numbers: `_Depends on:_ 1, 3–5` (or `none`, or `all`)",
        )
        return
    if parsed == _ALL:
        parsed = ctx.ids_above(task_id)
        ctx.note(
            Level.INFO,
            "tasks.depends-all",
            f"`all` read as every task above task {task_id}: {_show(parsed)}",
            line,
        )
    if facts.unreadable:
        return
    if facts.depends is None:
        facts.depends = list(parsed)
        return
    merged = dict.fromkeys(facts.depends)
    merged.update(dict.fromkeys(parsed))
    facts.depends = list(merged)


# ---------------------------------------------------------------------------
# Requirement values

_REQ_RE = re.compile(
    r"(?<![\w.#])(?P<p>NFR|FR|AC|R)[ \t]?(?P<a>[0-9]{1,9}(?:\.[0-9]{1,9})*)"
    r"(?:[ \t]*(?:[–—-]|\.\.)[ \t]*"
    r"(?:(?P<q>NFR|FR|AC|R)[ \t]?)?(?P<b>[0-9]{1,9}(?:\.[0-9]{1,9})*))?"
    r"(?![\w])",
    re.IGNORECASE,
)
_SIMPLE_REQS_RE = re.compile(
    r"(?:(?:NFR|FR|AC|R)[0-9]{1,9}(?:\.[0-9]{1,9})*(?:, |$))+$", re.IGNORECASE
)
_ID_LIKE_RE = re.compile(r"(?<![\w.#])[A-Za-z]*[-_]?[0-9][\w.-]*")
_ALL_REQ_RE = re.compile(r"[ \t]*all\b", re.IGNORECASE)


def _take_requirements(value: str, line: int, facts: _Facts, ctx: _Context) -> None:
    found = _parse_requirements(value)
    for token in found.malformed:
        ctx.note(
            Level.WARNING,
            "tasks.requirement-malformed",
            f"`{token}` is not a requirement id this reader knows; it was skipped",
            line,
            "write ids like `R1`, `R1.2`, `AC7` or a range `R1–R3`",
        )
    if found.ids and facts.requirements_line is None:
        facts.requirements_line = line
    facts.requirements.update(dict.fromkeys(found.ids))


class _Requirements(NamedTuple):
    ids: tuple[str, ...]
    malformed: tuple[str, ...]


def _parse_requirements(value: str) -> _Requirements:
    """Requirement ids in ``value``; id-like tokens outside parentheses that are not ids."""
    if _SIMPLE_REQS_RE.match(value):  # `R1, R2.3, AC7`: ids as written, the common case
        return _Requirements(tuple(dict.fromkeys(value.upper().split(", "))), ())
    ids: dict[str, None] = {}
    malformed: list[str] = []
    if _ALL_REQ_RE.match(value):
        ids[_ALL] = None
    outside = _PAREN_RE.sub(lambda m: _collect_quietly(m.group(), ids), value)
    for m in _REQ_RE.finditer(outside):
        expanded = _requirement_ids(m)
        if expanded is None:
            malformed.append(m.group())
        else:
            ids.update(dict.fromkeys(expanded))
    leftover = _REQ_RE.sub(" ", outside)
    malformed.extend(t.rstrip(".-") for t in _ID_LIKE_RE.findall(leftover))
    return _Requirements(tuple(ids), tuple(malformed))


def _collect_quietly(group: str, ids: dict[str, None]) -> str:
    # Parentheses hold prose ("(design D2)", "(receiver)"): take ids, report nothing.
    for m in _REQ_RE.finditer(group):
        ids.update(dict.fromkeys(_requirement_ids(m) or ()))
    return " , "


def _requirement_ids(m: re.Match[str]) -> list[str] | None:
    prefix = m.group("p").upper()
    if m.group("b") is None:
        return [prefix + m.group("a")]
    if m.group("q") and m.group("q").upper() != prefix:
        return None
    numbers = _expand(m.group("a"), m.group("b"))
    return None if numbers is None else [prefix + n for n in numbers]


def _check_test(value: str, line: int, ctx: _Context) -> None:
    """Warn now when ``test_command`` would not be able to split the command."""
    if '"' not in value and "'" not in value and "\\" not in value:
        return  # shlex can only fail on quotes or backslashes
    span = _first_code_span(value)
    if span is None:
        return
    try:
        shlex.split(_command_text(span))
    except ValueError:
        ctx.note(
            Level.WARNING,
            "tasks.test-unparseable",
            f"the test command `{span}` cannot be split into arguments",
            line,
            "balance the quotes in the command's code span",
        )


# ---------------------------------------------------------------------------
# Where the edges come from


def _resolve_source(reader: _Reader) -> tuple[tuple[Task, ...], str]:
    ctx, tasks = reader.ctx, reader.tasks
    graphs = []
    for chart in reader.charts:
        if chart.mapped:
            graphs.append(chart)
            ctx.findings.extend(chart.findings)
        else:
            ctx.note(
                Level.INFO,
                "tasks.mermaid-no-tasks",
                "this mermaid flowchart names no tasks, so it is not read as the DAG",
                chart.line,
                "name task nodes `T<n>` (e.g. `T1 --> T2`)",
            )
    fields = any(reader.stated)
    if graphs:
        incoming = _incoming(graphs, tasks, ctx)
        if fields:
            _compare(tasks, reader.unreadable, incoming, graphs, ctx)
            return tuple(tasks), "both"
        return tuple(_from_graph(t, incoming) for t in tasks), "mermaid"
    if fields:
        return tuple(tasks), "fields"
    if len(tasks) > 1:
        ctx.note(
            Level.INFO,
            "tasks.no-dependencies",
            f"no task states its dependencies and there is no mermaid flowchart, "
            f"so the {len(tasks)} tasks are treated as independent",
            tasks[0].line,
            "add `  - _Depends on:_ 1, 2` (or `none`) under each task, or a "
            "```mermaid flowchart of `T1 --> T2` edges",
        )
    return tuple(tasks), "none"


def _incoming(
    graphs: list[mermaid.Flowchart], tasks: list[Task], ctx: _Context
) -> dict[str, list[mermaid.Edge]]:
    known = {t.id for t in tasks}
    incoming: dict[str, list[mermaid.Edge]] = {}
    seen: set[tuple[str, str]] = set()
    for chart in graphs:
        for edge in chart.edges:
            if edge.target not in known:
                ctx.note(
                    Level.WARNING,
                    "tasks.mermaid-unknown-task",
                    f"mermaid edge {edge.source} → {edge.target} points at a task this "
                    f"file does not list",
                    edge.line,
                    "fix the node id, or add the task to the list",
                )
                continue
            if (edge.source, edge.target) not in seen:
                seen.add((edge.source, edge.target))
                incoming.setdefault(edge.target, []).append(edge)
    return incoming


def _from_graph(task: Task, incoming: dict[str, list[mermaid.Edge]]) -> Task:
    edges = incoming.get(task.id, [])
    return replace(
        task,
        depends_on=tuple(e.source for e in edges),
        depends_line=edges[0].line if edges else None,
    )


def _compare(
    tasks: list[Task],
    unreadable: set[int],
    incoming: dict[str, list[mermaid.Edge]],
    graphs: list[mermaid.Flowchart],
    ctx: _Context,
) -> None:
    """Warn for every task whose fields and flowchart name different dependencies."""
    for index, task in enumerate(tasks):
        edges = incoming.get(task.id, [])
        graph = {e.source for e in edges}
        stated = set(task.depends_on or ())
        if index in unreadable or (task.depends_on is None and not graph) or stated == graph:
            continue
        said = (
            "states no dependencies"
            if task.depends_on is None
            else f"(line {task.depends_line}) says {_show(task.depends_on)}"
        )
        chart_line = edges[0].line if edges else graphs[0].line
        drawn = [e.source for e in edges]
        ctx.note(
            Level.WARNING,
            "tasks.mermaid-mismatch",
            f"task {task.label} {said}, but the mermaid flowchart (line {chart_line}) "
            f"says {_show(drawn)}",
            task.depends_line or task.line,
            "make the two agree; loop follows the `_Depends on:_` fields",
        )


def _show(ids: tuple[str, ...] | list[str]) -> str:
    if not ids:
        return "none"
    shown = ", ".join(ids[:12])
    return shown + (f", … ({len(ids)} tasks)" if len(ids) > 12 else "")
