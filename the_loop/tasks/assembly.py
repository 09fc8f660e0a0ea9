"""Assemble one task from the lines the reader collected for it.

``the_loop.tasks.reader`` makes one pass over the file and hands each task over
as a ``Draft``: its checkbox line's paragraph and its sub-items. This module
reads the id and title from the paragraph, finds the ``_Key:_`` fields in the
paragraph and the sub-items, turns their values into the task's fields (the
value grammar is ``the_loop.tasks.values``), reports what it cannot read as
findings, and builds the ``Task``. The grammar is described in
``the_loop.tasks``.

It is separate from the line pass because the two change for different
reasons: the line pass follows markdown structure (fences, indentation), this
follows the wording of one task.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from pathlib import Path

from the_loop.errors import Where
from the_loop.findings import Finding, Level
from the_loop.tasks.model import STATE_OF_MARK, Task, TaskState, new_task
from the_loop.tasks.values import (
    ALL,
    ID_RE,
    canonical_id,
    parse_depends,
    parse_requirements,
    quiet_ids,
    unsplittable_span,
)

# ---------------------------------------------------------------------------
# What the line reader hands over


class Block:
    """A paragraph or sub-item: its stripped lines, joined, and where each came from.

    A plain class with slots: one is made per task line and sub-bullet, so its
    cost is paid 100k times on large files.
    """

    __slots__ = ("parts", "lines", "_starts")

    def __init__(self, part: str, line: int) -> None:
        self.parts = [part]
        self.lines = [line]
        self._starts: list[int] | None = None

    def add(self, part: str, line: int) -> None:
        self.parts.append(part)
        self.lines.append(line)

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


class Draft:
    """A task whose lines are still being collected (a slots class: one per task).

    A heading task (``### T1 — title``) starts without a mark: its state is the
    first checkbox without an id below the heading (``- [x] Done``), and
    ``heading`` is True.
    """

    __slots__ = (
        "mark",
        "line",
        "mark_offset",
        "end_line",
        "paragraph",
        "blocks",
        "after_blank",
        "heading",
        "optional",
        "phase",
    )

    def __init__(
        self,
        mark: str | None,
        line: int,
        mark_offset: int,
        paragraph: Block,
        heading: bool = False,
        optional: bool = False,
        phase: int | None = None,
    ) -> None:
        self.mark = mark
        self.optional = optional  # Kiro's `- [ ]*`
        self.phase = phase  # the line of the Spec Kit phase heading above it
        self.line = line
        self.mark_offset = mark_offset
        self.end_line = line
        self.paragraph = paragraph
        self.blocks: list[Block | FieldLine] = []
        self.after_blank = False
        self.heading = heading

    def last_block(self) -> Block:
        """The last sub-item, as a ``Block`` that more lines can join."""
        last = self.blocks[-1]
        if type(last) is tuple:
            # A lone field whose value continues on the next line: from now on it
            # is read the general way, like any sub-item of several lines.
            last = self.blocks[-1] = Block(last[3].rstrip(), last[2])
        return last  # type: ignore[return-value]


class Context:
    """What assembling one task needs from the rest of the file; it gathers every finding.

    A plain class, like the reader's other working state: building a dataclass
    costs every cold start more than this one saves in lines.
    """

    __slots__ = ("path", "tasks", "findings", "no_id", "unread_depends", "stated", "shaped")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tasks: list[Task] = []  # read so far, in file order
        self.findings: list[Finding] = []
        # Checkbox items without an id, reported once every id in the file is known,
        # so the hint never proposes a taken one: (line, mark, title, previous task).
        self.no_id: list[tuple[int, str, str, str | None]] = []
        # Per task (index into ``tasks``): the line of a dependency statement that
        # could not be read, so the task is held back rather than read as free.
        self.unread_depends: dict[int, int] = {}
        self.stated: list[bool] = []
        # Whether a task's form says something about order (a sub-task id, a
        # checkpoint): without one, the-loop's order rule has nothing to add.
        self.shaped = False

    def note(
        self, level: Level, code: str, message: str, line: int | None, hint: str | None = None
    ) -> None:
        self.findings.append(Finding(level, code, message, Where(self.path, line), hint))

    def ids_above(self, task_id: str) -> tuple[str, ...]:
        """Distinct ids of the tasks read so far, without ``task_id`` (for ``all``)."""
        return tuple(i for i in dict.fromkeys(t.id for t in self.tasks) if i != task_id)

    def report_missing_ids(self) -> None:
        """The ``tasks.no-id`` findings, each hint naming a number no task uses."""
        if not self.no_id:
            return
        taken = {t.id for t in self.tasks}
        for line, mark, title, previous in self.no_id:
            number = _leading_number(previous) + 1
            while str(number) in taken:
                number += 1
            taken.add(str(number))
            self.note(
                Level.WARNING,
                "tasks.no-id",
                "not understood: a checkbox item without a task id (expected `N.` or `TN` "
                "after the checkbox), so it is not a task",
                line,
                f"number it: `- [{mark}] {number}. {title}`",
            )


def _leading_number(task_id: str | None) -> int:
    digits = ""
    for ch in task_id or "":
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else 0


# ---------------------------------------------------------------------------
# Assembling one task

_PLAIN_HEAD_RE = re.compile(r"([Tt]?)([0-9]{1,9})[.):][ \t]+([^*]*)$")
_FIELD_RE = re.compile(
    r"(?<![\w*])(?P<open>\*\*|\*|_)"
    r"(?P<key>depends(?:[ -]on)?|dependencies|blocked[ -]by|requirements?|reqs?|refs?"
    r"|covers|satisfies|implements|validates|traces(?:[ \t]to)?|tests?)"
    r"(?:[ \t]*:[ \t]*(?P=open)|(?P=open)[ \t]*:|[ \t]*:(?P<inner>))",
    re.IGNORECASE,
)
# Without emphasis only the exact keys count: a detail such as "Dependencies:
# add ruamel" is about packages, not tasks.
_PLAIN_FIELD_RE = re.compile(
    r"(?P<open>)(?P<key>depends[ -]on|blocked[ -]by|requirements|covers|test)[ \t]*:(?P<inner>)",
    re.IGNORECASE,
)
_SEPARATORS = " \t—–·|"
# `*(AC7, R2)*` or `_(AC7)_`: a citation group in the task's text.
_ITALIC_GROUP_RE = re.compile(r"\*\(([^()*]*)\)\*|(?<![\w])_\(([^()_]*)\)_")
# A plain `(AC1.3)` or `(req 2)` in the task's header paragraph.
_PAREN_GROUP_RE = re.compile(r"\(([^()]{1,200})\)")
# `depends on` and `Requirements:` in running text (the clause grammar of the module doc).
_CLAUSE_RE = re.compile(
    r"(?<![\w*_/-])(?:(?P<dep>depends[ \t]+on)|(?P<req>requirements?))(?![\w-])"
    r"[ \t]*(?P<colon>:)?[ \t]*",
    re.IGNORECASE,
)
_CLAUSE_END_RE = re.compile(r"[.;](?![0-9A-Za-z])|[ \t][—–·|][ \t]|\*\(|(?<![\w])_\(")
_SENTENCE_BREAKS = ".;:—–·|(!?"
_CODE_RE = re.compile(r"`+[^`]*`+")
_MAX_CLAUSE = 200


# What the task paragraph says before its fields: (label, id, title, rest,
# rest_offset). Only a bold title leaves a rest: the paragraph after the bold span,
# which starts at ``rest_offset``. A plain tuple: ``typing.NamedTuple`` would import
# typing into every cold start.
_Head = tuple[str, str, str, str, int]


# (kind, value, offset): kind is "dep", "req" or "tes"; offset is where the value
# starts in the block text. A plain tuple, as one is made per field line.
Field = tuple[str, str, int]
# A sub-bullet that is exactly one template field (`  - _Test:_ value`), recognised
# while reading the line so assembly skips the search: (kind, value, line, the
# bullet's text). A tuple rather than a ``Block``: they are most lines of a large
# file. ``Draft.last_block`` turns one into a ``Block`` when its value continues.
FieldLine = tuple[str, str, int, str]


class _Facts:
    """Fields gathered from a task's paragraph and sub-items (a slots class: one per task)."""

    __slots__ = (
        "depends",
        "depends_line",
        "stated",
        "unread_line",
        "requirements",
        "requirements_line",
        "in_parentheses",
        "in_parentheses_line",
        "header_parens",
        "test",
        "test_line",
        "details",
    )

    def __init__(self) -> None:
        self.depends: list[str] | None = None
        self.depends_line: int | None = None
        self.stated = False
        self.unread_line: int | None = None
        self.requirements: dict[str, None] = {}
        self.requirements_line: int | None = None
        # Ids in plain parentheses in the header: the task's citations only when it
        # has no other (`(incl. user education, R10.4)` beside `_Requirements:_ R10`
        # is a mention).
        self.in_parentheses: dict[str, None] = {}
        self.in_parentheses_line: int | None = None
        # The header's text for those plain parentheses, read only when nothing else
        # cites (most tasks cite in a field, and a title's `(3)` is common): the text
        # (code and italic groups blanked), its offset in the block, and the block.
        self.header_parens: tuple[str, int, Block] | None = None
        self.test: str | None = None
        self.test_line: int | None = None
        self.details: list[str] = []


def assemble(draft: Draft, ctx: Context) -> Task | None:
    """Build the ``Task`` for ``draft`` and record whether it states dependencies.

    Returns None (and records a finding) when ``draft`` is not a task.
    """
    para = draft.paragraph
    prose, fields = _split_fields(para.text, plain=False)
    fast = _PLAIN_HEAD_RE.match(prose)
    if fast is not None and draft.mark is not None:
        # The template's `3. Title`, which is most tasks: read without `_parse_head`.
        t, number, title = fast.groups()
        # (``canonical_id`` and ``_clean`` inlined: the number is digits, the title has no `*`.)
        label, task_id = t + number, number if number[0] != "0" else canonical_id(number)
        title = title.strip().strip(_SEPARATORS)
        rest, rest_offset = "", 0
    else:
        head = _parse_head(prose)
        if head is None or draft.mark is None:
            _not_a_task(draft, prose, head, ctx)
            return None
        label, task_id, title, rest, rest_offset = head
    facts = _Facts()
    if rest:
        facts.details.append(rest)
        _read_text(rest, rest_offset, para, facts, ctx, task_id, header=True)
    elif title and (
        "(" in title or "epends" in title or "EPENDS" in title or "equirement" in title
    ):
        # (``_worth_reading``, inlined: once per task)
        _read_text(prose, 0, para, facts, ctx, task_id, header=True)
    if fields:
        _take_fields(fields, para, facts, ctx, task_id)
    _take_blocks(draft.blocks, facts, ctx, task_id)
    if not facts.requirements and facts.header_parens is not None:
        _read_paren_groups(*facts.header_parens, facts)
        if facts.in_parentheses:
            facts.requirements = facts.in_parentheses
            facts.requirements_line = facts.in_parentheses_line
    parallel = False
    if title[:1] == "[" or title[-3:] == "(P)":
        title, parallel = _tags(title, facts)
    checkpoint = "heckpoint" in title and _CHECKPOINT_RE.match(title) is not None
    if checkpoint or "." in task_id:
        ctx.shaped = True
    if not title:
        ctx.note(
            Level.WARNING,
            "tasks.empty-title",
            f"task {label} has no title",
            draft.line,
            f"describe the task after its id: `- [ ] {label}. <title>`",
        )
    # Every field, in the order the instance dicts of parsed tasks have always had
    # (defaulted fields first), so a pickled parse cache stays byte for byte the same.
    task = new_task(
        {
            "depends_on": None if facts.depends is None else tuple(facts.depends),
            "depends_line": facts.depends_line,
            "requirements": tuple(facts.requirements),
            "requirements_line": facts.requirements_line,
            "test": facts.test,
            "test_line": facts.test_line,
            "details": tuple(facts.details),
            "unread_depends_line": None,  # set by ``the_loop.tasks.edges`` when it applies
            "id": task_id,
            "label": label,
            "title": title,
            "state": STATE_OF_MARK.get(draft.mark) or _unknown_mark(draft, ctx),
            "line": draft.line,
            "end_line": draft.end_line,
            "mark_offset": draft.mark_offset,
            "parent": None,  # set by ``the_loop.tasks.order``
            "optional": draft.optional,
            "checkpoint": checkpoint,
            "parallel": parallel,
            "phase": draft.phase,
            "effective": None,  # set by ``the_loop.tasks.order`` for a parent
        }
    )
    if facts.unread_line is not None:
        ctx.unread_depends[len(ctx.tasks)] = facts.unread_line
    ctx.tasks.append(task)
    ctx.stated.append(facts.stated)
    return task


# A checkpoint task: "Checkpoint - Ensure all tests pass", "**Checkpoint:** …".
_CHECKPOINT_RE = re.compile(r"[\W_]*checkpoint\b", re.IGNORECASE)
# Spec Kit's tags before a title: `[P]` (may run in parallel), `[US1]` (the story served).
_TAG_RE = re.compile(r"\[(P|US[0-9]{1,4})\][ \t]*")


def _tags(title: str, facts: _Facts) -> tuple[str, bool]:
    """``title`` without its markers, and whether one says the task may run in parallel.

    Spec Kit's leading ``[P]``/``[USn]`` tags (``[USn]`` cites user story ``n`` of
    ``spec.md``, the id ``USn``), and cc-sdd's ``(P)`` at the end, a word of its own.
    """
    parallel, at = False, 0
    while (m := _TAG_RE.match(title, at)) is not None:
        if m.group(1) == "P":
            parallel = True
        else:
            facts.requirements.setdefault(m.group(1), None)
        at = m.end()
    title = title[at:]
    if title[-3:] == "(P)" and title[-4:-3] in " \t":
        title, parallel = title[:-3].rstrip(), True
    return title, parallel


def _take_blocks(
    blocks: list[Block | FieldLine], facts: _Facts, ctx: Context, task_id: str
) -> None:
    """The task's sub-items, in order."""
    for block in blocks:
        if type(block) is not tuple:
            _read_block(block, facts, ctx, task_id)  # type: ignore[arg-type]
            continue
        # `  - _Key:_ value`: most lines of a large file (``_take_field``, inlined).
        kind, value, line = block[0], block[1], block[2]
        if kind == "dep":
            _take_depends(value, line, facts, ctx, task_id)
        elif kind == "req":
            _take_requirements(value, line, facts, ctx)
        elif facts.test is None:
            facts.test, facts.test_line = value, line
            if '"' in value or "'" in value or "\\" in value:  # shlex fails only on these
                _check_test(value, line, ctx)
        else:
            facts.details.append(f"Test: {value}")


def _read_block(block: Block, facts: _Facts, ctx: Context, task_id: str) -> None:
    """One sub-item that is not a lone field: its details, clauses and fields."""
    detail, block_fields = _split_fields(block.text, plain=True)
    if detail:
        facts.details.append(detail)
        if _worth_reading(detail):
            _read_text(detail, 0, block, facts, ctx, task_id, header=False)
    if block_fields:
        _take_fields(block_fields, block, facts, ctx, task_id)


def has_task_id(text: str) -> bool:
    """Whether ``text`` (a checkbox item's or a heading's text) starts with a task id."""
    return _parse_head(_split_fields(text, plain=False)[0]) is not None


def _worth_reading(text: str) -> bool:
    """Whether running text may hold a clause or a citation group (a cheap pre-check)."""
    return "(" in text or "epends" in text or "EPENDS" in text or "equirement" in text


def _unknown_mark(draft: Draft, ctx: Context) -> TaskState:
    """A mark other than ``[ ]``, ``[x]``, ``[X]``, ``[-]`` is not understood; read as open."""
    ctx.note(
        Level.WARNING,
        "tasks.unknown-mark",
        f"not understood: the checkbox mark `[{draft.mark}]` (expected `[ ]`, `[-]` or "
        "`[x]`); read as open",
        draft.line,
        "use `[ ]` (open), `[-]` (in progress) or `[x]` (done)",
    )
    return TaskState.OPEN


def _not_a_task(draft: Draft, prose: str, head: _Head | None, ctx: Context) -> None:
    if draft.mark is None:  # a heading task without its checkbox
        assert head is not None
        ctx.note(
            Level.WARNING,
            "tasks.heading-no-checkbox",
            f"not understood: heading `{head[0]}` reads as a task but has no checkbox "
            "below it (expected `- [ ] Done` before the next heading), so it is not a task",
            draft.line,
            "add a checkbox line `- [ ] Done` under the heading to track its state",
        )
        return
    title = prose.strip().replace("**", "") or "<title>"
    if len(title) > 40:
        title = title[:40] + "…"
    previous = ctx.tasks[-1].id if ctx.tasks else None
    ctx.no_id.append((draft.line, draft.mark, title, previous))


def _split_fields(s: str, *, plain: bool) -> tuple[str, list[Field]]:
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


def _fields_from(s: str, m: re.Match[str], nxt: re.Match[str] | None) -> list[Field]:
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
        fields.append((field_kind(key), value, m.end()))
        if nxt is None:
            return fields
        m = nxt


def field_line(content: str, key: str, value: str, line: int) -> FieldLine | Block:
    """A ``_Key:_ value`` sub-bullet (``content``): its one field, or a ``Block`` if more follow."""
    # Every field marker has a colon: without one, no second field can follow.
    if ":" in value and _FIELD_RE.search(value):
        return Block(content.rstrip(), line)
    kind = _KINDS.get(key) or field_kind(key)  # (the look-up first: a call fewer per line)
    # (`_SEPARATORS` holds the blanks: one strip for the value, a lone `—` kept; the
    # bullet's text is stripped only if a continuation line ever makes it a Block.)
    return (kind, value.rstrip(_SEPARATORS) or value.rstrip(), line, content)


def field_kind(key: str) -> str:
    """``dep``, ``req`` or ``tes`` for a field key as written (``Blocked by`` → ``dep``)."""
    kind = _KINDS.get(key)
    if kind is None:
        low = key[:4].lower()
        if low.startswith(("dep", "bloc")):
            kind = "dep"
        else:
            kind = "tes" if low.startswith("test") else "req"
        if len(_KINDS) < 256:  # a file spells its keys a few ways; bounded all the same
            _KINDS[key] = kind
    return kind


_KINDS: dict[str, str] = {}  # key as written -> kind: one look-up per field line


def _parse_head(prose: str) -> _Head | None:
    """Id, label and title from the paragraph text before its fields."""
    fast = _PLAIN_HEAD_RE.match(prose)
    if fast:  # the template's `3. Title`, which is most tasks
        t, number, title = fast.groups()
        return (t + number, canonical_id(number), _clean(title), "", 0)
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
    return (_label(m), canonical_id(m.group("num")), _clean(after), "", 0)


def _bold_head(m: re.Match[str], title: str, rest: str, rest_offset: int) -> _Head:
    cleaned = _clean(title)
    if cleaned.endswith("."):
        cleaned = cleaned[:-1].rstrip()
    stripped_rest = rest.strip(_SEPARATORS)
    if not cleaned or cleaned.endswith(":"):
        # `**T3.** Title`: the bold span held only the id; `**Security:** text`:
        # a lead-in, whose sentence is the title.
        cleaned, stripped_rest = _clean(f"{cleaned} {rest}"), ""
    # Keep the offset exact: lines of clauses in the rest are found through it.
    rest_offset += len(rest) - len(rest.lstrip(_SEPARATORS))
    return (_label(m), canonical_id(m.group("num")), cleaned, stripped_rest, rest_offset)


def _id_match(text: str) -> re.Match[str] | None:
    m = ID_RE.match(text)
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


def _take_fields(
    fields: list[Field], block: Block, facts: _Facts, ctx: Context, task_id: str
) -> None:
    for kind, value, offset in fields:
        _take_field(kind, value, block.line_at(offset), facts, ctx, task_id)


def _take_field(
    kind: str, value: str, line: int, facts: _Facts, ctx: Context, task_id: str
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


# ---------------------------------------------------------------------------
# Running text: clauses and citation groups


def _read_text(
    text: str,
    offset: int,
    block: Block,
    facts: _Facts,
    ctx: Context,
    task_id: str,
    *,
    header: bool,
) -> None:
    """Clauses (``— depends on T1.``, ``Requirements: R1.``) and citation groups in ``text``.

    ``offset`` is where ``text`` starts in ``block.text`` (for lines). Plain
    parenthesised citations count only in the task's header paragraph, and only
    when the task cites nothing in any other way.
    """
    if "`" in text:  # code is quoted, never a statement: blank it, keeping offsets
        text = _CODE_RE.sub(lambda m: " " * len(m.group()), text)
    # Both italic forms start with `*(` or `_(`: most text has neither.
    italic = "*(" in text or "_(" in text
    for m in _ITALIC_GROUP_RE.finditer(text) if italic else ():
        line = block.line_at(offset + m.start())
        _take_requirements(m.group(1) or m.group(2) or "", line, facts, ctx)
    if header and "(" in text:
        # Read by ``assemble`` once the task's other citations are known (none: these count).
        facts.header_parens = (
            _ITALIC_GROUP_RE.sub(" ", text) if italic else text,
            offset,
            block,
        )
    if text.isascii():
        # Lower-cased ASCII text holds a clause only with a keyword `_CLAUSE_RE` looks
        # for (beyond ASCII, case-insensitive matching has more spellings: search).
        lowered = text.lower()
        if "depends" not in lowered and "requirement" not in lowered:
            return
    for m in _CLAUSE_RE.finditer(text):
        _read_clause(text, m, offset, block, facts, ctx, task_id)


def _read_paren_groups(text: str, offset: int, block: Block, facts: _Facts) -> None:
    for m in _PAREN_GROUP_RE.finditer(text):
        ids = quiet_ids(m.group(1))
        if ids:
            if facts.in_parentheses_line is None:
                facts.in_parentheses_line = block.line_at(offset + m.start())
            facts.in_parentheses.update(dict.fromkeys(ids))


def _read_clause(
    text: str,
    m: re.Match[str],
    offset: int,
    block: Block,
    facts: _Facts,
    ctx: Context,
    task_id: str,
) -> None:
    colon = m.group("colon") is not None
    if m.group("req") is not None and not colon:
        return  # "the requirements say…": prose
    if not colon and not _starts_a_clause(text, m.start()):
        return  # "whatever depends on the cache": prose, not a statement
    value = _clause_value(text, m.end())
    line = block.line_at(offset + m.start())
    if m.group("req") is not None:
        if value:
            _take_requirements(value, line, facts, ctx)
        return
    if value is not None and parse_depends(value) is not None:
        _take_depends(value, line, facts, ctx, task_id)
        return
    shown = value if value is not None else text[m.end() : m.end() + 60] + "…"
    facts.stated = True
    facts.unread_line = facts.unread_line or line
    ctx.note(
        Level.WARNING,
        "tasks.depends-prose-unreadable",
        f"not understood: the dependency clause `depends on {shown}` (expected task ids "
        "such as `T1, T2`, a range `T1–T3`, or `nothing`); the task is held back until "
        "it reads",
        line,
        "name task ids (`— depends on T1, T2.`) or add `  - _Depends on:_ 1, 2` under the task",
    )


def _starts_a_clause(text: str, at: int) -> bool:
    """Whether ``at`` begins a sentence or a clause of ``text`` (markup ignored)."""
    before = text[max(0, at - 8) : at].rstrip(" \t*_")
    if not before:
        return text[:at].strip(" \t*_") == ""
    return before[-1] in _SENTENCE_BREAKS


def _clause_value(text: str, start: int) -> str | None:
    """The value after a clause keyword, up to the end of its clause; None when too long.

    The search is bounded, so prose repeating "depends on" stays linear.
    """
    end = _CLAUSE_END_RE.search(text, start, start + _MAX_CLAUSE + 1)
    if end is None and len(text) - start > _MAX_CLAUSE:
        return None  # a list of task ids is never this long: prose
    value = text[start : end.start() if end else len(text)]
    if ")" in value:  # "(depends on T3)": a `)` the value never opened ends the clause
        depth = 0
        for at, ch in enumerate(value):
            depth += (ch == "(") - (ch == ")")
            if depth < 0:
                value = value[:at]
                break
    return value.strip().rstrip(_SEPARATORS).strip()


# ---------------------------------------------------------------------------
# Recording field values


def _take_depends(value: str, line: int, facts: _Facts, ctx: Context, task_id: str) -> None:
    parsed = parse_depends(value)
    facts.stated = True
    if facts.depends_line is None:
        facts.depends_line = line
    if parsed is None:
        facts.unread_line = facts.unread_line or line
        shown = value or "(empty)"
        ctx.note(
            Level.WARNING,
            "tasks.depends-unreadable",
            f"not understood: the dependencies of task {task_id}, `{shown}` (expected task "
            "ids and ranges, `none` or `all`); the task is held back until they read",
            line,
            "write task numbers: `_Depends on:_ 1, 3–5` (or `none`, or `all`)",
        )
        return
    if parsed == ALL:
        parsed = ctx.ids_above(task_id)
        ctx.note(
            Level.INFO,
            "tasks.depends-all",
            f"`all` read as every task above task {task_id}: {show_ids(parsed)}",
            line,
        )
    if facts.depends is None:
        facts.depends = list(parsed)
        return
    merged = dict.fromkeys(facts.depends)
    merged.update(dict.fromkeys(parsed))
    facts.depends = list(merged)


def _take_requirements(value: str, line: int, facts: _Facts, ctx: Context) -> None:
    found = parse_requirements(value)
    for token in found.malformed:
        ctx.note(
            Level.WARNING,
            "tasks.requirement-malformed",
            f"not understood: `{token}` in a requirements citation (expected ids such as "
            "`R1`, `R1.2`, `AC7` or a range `R1–R3`); it was skipped",
            line,
            "write ids like `R1`, `R1.2`, `AC7` or a range `R1–R3`",
        )
    if found.ids and facts.requirements_line is None:
        facts.requirements_line = line
    facts.requirements.update(dict.fromkeys(found.ids))


def _check_test(value: str, line: int, ctx: Context) -> None:
    """Warn now when ``test_command`` would not be able to split the command."""
    span = unsplittable_span(value)
    if span is not None:
        ctx.note(
            Level.WARNING,
            "tasks.test-unparseable",
            f"the test command `{span}` cannot be split into arguments",
            line,
            "balance the quotes in the command's code span",
        )


def show_ids(ids: tuple[str, ...] | list[str]) -> str:
    """Ids for a message: ``none``, or the first twelve and how many there are."""
    if not ids:
        return "none"
    shown = ", ".join(ids[:12])
    return shown + (f", … ({len(ids)} tasks)" if len(ids) > 12 else "")
