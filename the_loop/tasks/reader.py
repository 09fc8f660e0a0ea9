"""Read ``tasks.md``: one linear pass over its lines, then the tasks it lists.

The pass skips front matter and fenced code (handing ``mermaid`` blocks to
``the_loop.tasks.mermaid``), starts a task at each column-0 checkbox line and
collects the lines it owns; ``the_loop.tasks.assembly`` turns each such draft
into a ``Task`` and ``the_loop.tasks.edges`` decides where the dependencies come
from. The grammar is described in ``the_loop.tasks``, which re-exports
``parse_tasks`` and ``read_tasks``; the writer reads files through here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import UnusableInputError, Where
from the_loop.findings import Level
from the_loop.io.fences import closes_fence, open_fence
from the_loop.io.textfile import SPEC_LIMIT, decode_utf8, read_limited
from the_loop.tasks import mermaid
from the_loop.tasks.assembly import Block, Context, Draft, assemble, lone_field
from the_loop.tasks.edges import resolve_source
from the_loop.tasks.model import TaskList


def parse_tasks(text: str, path: Path) -> TaskList:
    """Read the tasks in ``text`` (the content of ``path``); never raises on content.

    Every task is returned in file order, duplicates included; whatever cannot
    be read with certainty is a finding with ``path:line`` and a hint.
    """
    reader = _Reader(text, Path(path))
    reader.read()
    tasks, source = resolve_source(reader.ctx, reader.charts, reader.stated, reader.unreadable)
    return TaskList(Path(path), tasks, tuple(reader.ctx.findings), source)


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

_TASK_RE = re.compile(r"[-*+][ \t]+\[(.)\]((?:[ \t].*)?)$")
_NESTED_BOX_RE = re.compile(r"\[.\](?:[ \t]|$)")
_FIELD_LINE_RE = re.compile(
    r"[ \t]+[-*+][ \t]+(_(depends on|requirements|test):_[ \t]*(\S.*))", re.IGNORECASE
)
_BULLET_RE = re.compile(r"(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+(.*))?$")
_COMMENT_OPEN = re.compile(r" {0,3}<!--")  # an HTML block: it ends at the line holding -->


@dataclass
class _Fence:
    """An open code fence: what closes it, and the lines of a mermaid block."""

    char: str
    length: int
    line: int
    in_task: bool
    mermaid: list[str] | None


class _Reader:
    """One pass over the lines: front matter, fences, tasks and their sub-lines."""

    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.ctx = Context(path)
        self.tasks = self.ctx.tasks
        self.stated: list[bool] = []
        self.unreadable: set[int] = set()
        self.charts: list[mermaid.Flowchart] = []
        self.draft: Draft | None = None
        self.fence: _Fence | None = None
        self.in_comment = False  # inside a multi-line <!-- … --> block
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
            live = self.draft is not None and self.fence is None and not self.in_comment
            quick = quick_field(raw) if live else None
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
        if self.in_comment:
            # Commented-out text (a template's example tasks) is not live.
            self.in_comment = "-->" not in line
            return
        if _COMMENT_OPEN.match(line) and "-->" not in line[line.index("<!--") + 4 :]:
            if line[0] not in " \t":
                self._finish()  # like any other column-0 line
            self.in_comment = True
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
        self.draft = Draft(m.group(1), no, offset, Block(m.group(2).strip(), no))

    def _field_line(self, quick: re.Match[str], no: int) -> None:
        draft = self.draft
        assert draft is not None
        content, key, value = quick.groups()
        field = lone_field(key, value, quick.start(3) - quick.start(1))
        draft.blocks.append(Block(content.rstrip(), no, field))
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
            draft.blocks.append(Block(content or "", no))
        elif draft.after_blank:
            draft.blocks.append(Block(stripped, no))
        else:
            (draft.blocks[-1] if draft.blocks else draft.paragraph).add(stripped, no)
        draft.after_blank = False

    def _open_fence(self, stripped: str, no: int, indented: bool) -> bool:
        opened = open_fence(stripped)
        if opened is None:
            return False
        char, length, info_text = opened
        if not indented:
            self._finish()
        in_task = self.draft is not None
        if self.draft is not None:
            self.draft.end_line = no
        info = info_text.split(None, 1)
        is_mermaid = bool(info) and info[0].lower() == "mermaid"
        self.fence = _Fence(char, length, no, in_task, [] if is_mermaid else None)
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
        assembled = assemble(draft, self.ctx)
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
