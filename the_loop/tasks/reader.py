"""Read ``tasks.md``: one linear pass over its lines, then the tasks it lists.

The pass skips front matter and fenced code (handing ``mermaid`` blocks to
``the_loop.tasks.mermaid``), starts a task at each column-0 checkbox line and at
each heading that names a task, and collects the lines it owns; lines of a DAG
section that belong to no task go to ``the_loop.tasks.prose_dag``.
``the_loop.tasks.assembly`` turns each draft into a ``Task`` and
``the_loop.tasks.edges`` joins the dependency sources. The grammar is described
in ``the_loop.tasks``, which re-exports ``parse_tasks`` and ``read_tasks``; the
writer reads files through here too.
"""

from __future__ import annotations

import re
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import UnusableInputError, Where
from the_loop.findings import Level
from the_loop.io.fences import closes_fence, open_fence
from the_loop.io.textfile import SPEC_LIMIT, decode_utf8, read_limited
from the_loop.tasks import mermaid
from the_loop.tasks.assembly import Block, Context, Draft, assemble, field_line, has_task_id
from the_loop.tasks.edges import resolve_source
from the_loop.tasks.model import TaskList
from the_loop.tasks.order import THE_LOOP, apply_order, detect_format, read_waves
from the_loop.tasks.prose_dag import DAG_HEADING_RE, ProseDag

if TYPE_CHECKING:
    from the_loop.tasks import mermaid


def parse_tasks(text: str, path: Path) -> TaskList:
    """Read the tasks in ``text`` (the content of ``path``); never raises on content.

    Every task is returned in file order, duplicates included; whatever cannot
    be read with certainty is a finding with ``path:line`` and a hint.
    """
    path = Path(path)
    reader = _Reader(text, path)
    reader.read()
    ctx = reader.ctx
    ctx.report_missing_ids()
    fmt = detect_format(path, text)
    tasks, source = resolve_source(
        ctx, reader.charts, reader.prose, relies_on_order=fmt != THE_LOOP
    )
    tasks, added = apply_order(tasks, fmt, reader.waves, ctx)
    if added:
        source = "+".join([s for s in source.split("+") if s != "none"] + added)
    if not tasks:
        _none_understood(text, ctx)
    findings = ctx.findings
    findings.sort(key=_line_of)  # stable: findings of one line keep their order
    return TaskList(path, tasks, tuple(findings), source, fmt)


# A line that looks like a task: a checkbox at any indentation, or a heading naming one.
_TASK_LIKE_RE = re.compile(
    r"^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])[ \t]+\[.\]|^#{1,6}[ \t]+(?:[Tt]ask[ \t]+)?[Tt]-?[0-9]", re.M
)


def _none_understood(text: str, ctx: Context) -> None:
    """A file whose task-like lines yield no task says so: nothing is silently "all done"."""
    m = _TASK_LIKE_RE.search(text)
    if m is None:
        return
    line = text.count("\n", 0, m.start()) + 1
    ctx.note(
        Level.WARNING,
        "tasks.none-understood",
        "not understood: this file has lines that look like tasks, but none of them reads "
        "as one, so loop sees no tasks at all",
        line,
        "write tasks as `- [ ] 1. Title` at the start of a line (see docs/formats.md)",
    )


def _line_of(finding: object) -> int:
    where = getattr(finding, "where", None)
    return (where.line or 0) if where is not None else 0


def read_tasks(path: Path) -> TaskList:
    """Read and parse ``path``.

    Raises ``UnusableInputError`` when the file is missing, unreadable or not
    UTF-8 (with the line of the first bad byte).
    """
    path = Path(path)
    return parse_tasks(decode(read_bytes(path), path), path)


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path``; ``UnusableInputError`` when it is missing or unreadable."""
    try:
        return read_limited(path, SPEC_LIMIT, what="spec file")
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


def decode(data: bytes, path: Path) -> str:
    """``data`` (read from ``path``) as text (see ``the_loop.io.textfile``)."""
    return decode_utf8(data, path)


# ---------------------------------------------------------------------------
# The line pass

# `- [ ] 1. Title`; `- [ ]* 2.2 Title` is Kiro's optional task.
_TASK_RE = re.compile(r"[-*+][ \t]+\[(.)\](\*?)((?:[ \t].*)?)$")
# An indented checkbox whose id extends a parent's (`  - [ ] 2.1 Decode`): a sub-task.
_SUBTASK_RE = re.compile(r"[ \t]+[-*+][ \t]+\[(.)\](\*?)([ \t]+(?:\*\*)?[Tt]?[0-9]{1,9}\.[0-9].*)$")
# A heading that opens a Spec Kit phase: `## Phase 2: Foundational`.
_PHASE_RE = re.compile(r"(?i:phase)[ \t]+[0-9]{1,4}\b")
# A line outside the tasks that states the order: `> DAG: T1 → T2 → T3.`
_ORDER_LINE_RE = re.compile(
    r"(?:>[ \t]*)*[*_]{0,2}(?:DAG|(?i:order|dependencies|dependency[ \t]+graph|critical[ \t]+path"
    r"|execution[ \t]+order))[*_]{0,2}[ \t]*:[*_]{0,2}[ \t]*(.*)$"
)
# `1. [x] Title`: a task in an ordered list; without an id of its own it is the
# number the list shows.
_ORDERED_TASK_RE = re.compile(r"([0-9]{1,9})[.)][ \t]+\[(.)\]((?:[ \t].*)?)$")
_NESTED_BOX_RE = re.compile(r"\[.\](?:[ \t]|$)")
_FIELD_LINE_RE = re.compile(
    r"[ \t]+[-*+][ \t]+(_(depends on|requirements|test):_[ \t]*(\S.*))", re.IGNORECASE
)
_BULLET_RE = re.compile(r"(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+(.*))?$")
_HEADING_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
# A heading that is a task: `### T1 — title`, `## Task 3: title` (the word is dropped).
_HEADING_TASK_RE = re.compile(r"(?=[Tt]-?[0-9])|[Tt]ask[ \t]+(?=[Tt]?[0-9])")
_COMMENT_OPEN = re.compile(r" {0,3}<!--")  # an HTML block: it ends at the line holding -->


class _Fence:
    """An open code fence: what closes it, and the lines of a mermaid block.

    A plain class (working state of one read): one dataclass fewer to build on every start.
    """

    __slots__ = ("char", "length", "line", "in_task", "mermaid", "in_dag", "json")

    def __init__(
        self,
        char: str,
        length: int,
        line: int,
        in_task: bool,
        mermaid: list[str] | None,
        in_dag: bool = False,
    ) -> None:
        self.char = char
        self.length = length
        self.line = line
        self.in_task = in_task
        self.mermaid = mermaid
        self.in_dag = in_dag  # a plain fence in a DAG section: its lines are chains
        self.json: list[str] | None = None  # a ```json block: it may hold Kiro's waves


class _Reader:
    """One pass over the lines: front matter, fences, tasks and their sub-lines."""

    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.ctx = Context(path)
        self.tasks = self.ctx.tasks
        self.charts: list[mermaid.Flowchart] = []
        self.prose = ProseDag(path)
        self.dag_level: int | None = None  # heading level of the DAG section we are in
        self.ordered: int | None = None  # the number the ordered task list showed last
        self.phase: tuple[int, int] | None = None  # (line, level) of the phase heading above
        self.waves: list[tuple[list[str], int]] = []  # Kiro's waves: (task ids, line) each
        self.waves_line: int | None = None
        self.task_like = 0  # lines that look like tasks (for `tasks.none-understood`)
        self.draft: Draft | None = None
        self.fence: _Fence | None = None
        self.in_comment = False  # inside a multi-line <!-- … --> block
        self.ascii = text.isascii()
        self.last_char = 0
        self.last_byte = 0

    def read(self) -> None:
        lines = self.text.split("\n")
        bom = 0
        if lines[0].startswith("\ufeff"):
            lines[0] = lines[0][1:]
            bom = 1
        start = _front_matter_end(lines)
        # Where each line starts in the text: summed in C, not per line in Python.
        # (Line `i` starts at ``ends[i] + i``: the lengths before it, plus their newlines.)
        ends = list(accumulate(map(len, lines), initial=bom))
        quick_field = _FIELD_LINE_RE.match
        quick_task = _TASK_RE.match
        for index in range(start, len(lines)):
            raw = lines[index]
            # The template's lines are most of a large file: `  - _Key:_ value`
            # and `- [ ] N. Title` are read here, without the general dispatch.
            if self.fence is None and not self.in_comment:
                if raw[:1] == "-":
                    # At column 0, outside a fence or comment, `_line` would only
                    # end an ordered list and try the checkbox pattern.
                    line = raw[:-1] if raw.endswith("\r") else raw
                    task = quick_task(line)
                    if task is not None:
                        self.ordered = None
                        self._checkbox(task, index + 1, ends[index] + index)
                        continue
                elif (draft := self.draft) is not None:
                    # (A field line is indented: it never starts with `-`.)
                    quick = quick_field(raw)
                    if quick is not None:
                        content, key, value = quick.groups()
                        draft.blocks.append(field_line(content, key, value, index + 1))
                        draft.end_line = index + 1
                        draft.after_blank = False
                        continue
            self._line(raw[:-1] if raw.endswith("\r") else raw, index + 1, ends[index] + index)
        if self.fence is not None:
            self._unclosed_fence(self.fence)
        self._finish()
        self.prose.finish()

    def _line(self, line: str, no: int, pos: int) -> None:
        if self.fence is not None:
            self._fenced(line, no)
            return
        if self.in_comment:
            # Commented-out text (a template's example tasks) is not live.
            self.in_comment = "-->" not in line
            return
        if (
            "<!--" in line
            and _COMMENT_OPEN.match(line)
            and "-->" not in line[line.index("<!--") + 4 :]
        ):
            if line[0] not in " \t":
                self._finish()  # like any other column-0 line
            self.in_comment = True
            return
        body = line.strip()
        if not body:
            if self.draft is not None:
                self.draft.after_blank = True
            self.prose.end_table()
            return
        indented = line[0] in " \t"
        if body[0] in "`~" and self._open_fence(body, no, indented):
            return
        if indented:
            if body[0] in "-*+" and "[" in body[:3]:
                sub = _SUBTASK_RE.match(line)
                if sub is not None and has_task_id(sub.group(3).strip()):
                    self._finish()
                    self._checkbox(sub, no, pos)
                    return
                self.task_like += "[" in body[:3]
            self._indented(body, no)
        else:
            self._column_zero(line, body, no, pos)

    def _column_zero(self, line: str, body: str, no: int, pos: int) -> None:
        """A line at column 0: a task, a heading, a sub-item of a heading task, or an end."""
        if line[0].isdigit():
            ordered = _ORDERED_TASK_RE.match(line)
            if ordered:
                self._ordered_task(ordered, no, pos)
                return
        self.ordered = None  # any other column-0 line ends an ordered list
        if line[0] in "-*+":
            m = _TASK_RE.match(line)
            if m:
                self._checkbox(m, no, pos)
                return
            if self.draft is not None and self.draft.heading:
                self._indented(body, no)  # a bullet of a heading task: one of its sub-items
                return
        elif line[0] == "#" and self._heading(line, no, pos):
            return
        if self.draft is not None and self.draft.heading:
            self._heading_text(body, no)
            return
        self._finish()  # any other column-0 line ends the task
        if line[0] == "|":
            self.prose.table_row(line, no)
            return
        self.prose.end_table()
        if self.dag_level is not None:
            self.prose.feed(line, no, fenced=False)
        elif ":" in line and (order := _ORDER_LINE_RE.match(line)) is not None:
            self.prose.feed(order.group(1), no, fenced=False)

    def _heading(self, line: str, no: int, pos: int) -> bool:
        m = _HEADING_RE.match(line)
        if m is None:
            return False
        self._finish()
        level, title = len(m.group(1)), (m.group(2) or "").strip()
        if self.dag_level is not None and level <= self.dag_level:
            self.dag_level = None
        if DAG_HEADING_RE.search(title):
            self.dag_level = level
        if _PHASE_RE.match(title):
            self.phase = (no, level)
        elif self.phase is not None and level <= self.phase[1]:
            self.phase = None
        named = _HEADING_TASK_RE.match(title)
        if named and has_task_id(title[named.end() :]):
            self.draft = Draft(None, no, 0, Block(title[named.end() :], no), heading=True)
        return True

    def _heading_text(self, body: str, no: int) -> None:
        """A column-0 paragraph line under a heading task: a detail of it."""
        draft = self.draft
        assert draft is not None
        draft.end_line = no
        if draft.after_blank or not draft.blocks:
            draft.blocks.append(Block(body, no))
        else:
            draft.last_block().add(body, no)
        draft.after_blank = False

    def _checkbox(self, m: re.Match[str], no: int, pos: int) -> None:
        draft = self.draft
        mark, star, content = m.groups()
        content = content.strip()
        if draft is not None:
            if draft.heading and not has_task_id(content):
                # `- [x] Done` under `### T1 — …`: the heading task's state (the first one).
                if draft.mark is None:
                    draft.mark = mark
                    draft.mark_offset = self._byte_offset(pos + m.start(1))
                draft.end_line = no
                return
            self.draft = None
            assemble(draft, self.ctx)  # (``_finish``, inlined: one call per task)
        offset = pos + m.start(1) if self.ascii else self._byte_offset(pos + m.start(1))
        # (positional: one call per task line)
        phase = self.phase[0] if self.phase is not None else None
        self.draft = Draft(mark, no, offset, Block(content, no), False, star == "*", phase)

    def _ordered_task(self, m: re.Match[str], no: int, pos: int) -> None:
        shown = int(m.group(1)) if self.ordered is None else self.ordered + 1
        self.ordered = shown
        self._finish()
        content = m.group(3).strip()
        text = content if has_task_id(content) else f"{shown}. {content}"
        offset = self._byte_offset(pos + m.start(2))
        self.draft = Draft(m.group(2), no, offset, Block(text, no))

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
            draft.blocks.append(Block(content or "", no))
        elif draft.after_blank:
            draft.blocks.append(Block(stripped, no))
        else:
            (draft.last_block() if draft.blocks else draft.paragraph).add(stripped, no)
        draft.after_blank = False

    def _open_fence(self, stripped: str, no: int, indented: bool) -> bool:
        opened = open_fence(stripped)
        if opened is None:
            return False
        char, length, info_text = opened
        if not indented and not (self.draft is not None and self.draft.heading):
            self._finish()
        in_task = self.draft is not None
        if self.draft is not None:
            self.draft.end_line = no
        info = info_text.split(None, 1)
        is_mermaid = bool(info) and info[0].lower() == "mermaid"
        in_dag = self.dag_level is not None and not is_mermaid and not in_task
        self.fence = _Fence(char, length, no, in_task, [] if is_mermaid else None, in_dag)
        if info and info[0].lower() == "json":
            self.fence.json = []
        return True

    def _fenced(self, line: str, no: int) -> None:
        fence = self.fence
        assert fence is not None
        if closes_fence(fence.char, fence.length, line):
            self.fence = None
            self._close_chart(fence)
            if fence.in_task and self.draft is not None:
                self.draft.end_line = no
        elif fence.mermaid is not None:
            fence.mermaid.append(line)
        elif fence.json is not None:
            fence.json.append(line)
        elif fence.in_dag:
            self.prose.feed(line, no, fenced=True)

    def _close_chart(self, fence: _Fence) -> None:
        if fence.json is not None and "waves" in "".join(fence.json):
            self.waves_line = fence.line
            self.waves = read_waves(fence.json, fence.line, self.ctx)
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
        if draft is not None:
            assemble(draft, self.ctx)

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
