"""Requirement ids that ``requirements.md`` / ``bugfix.md`` define.

``parse_requirements`` reads which ids a requirements or bugfix file *defines*,
with the line and one-line text of each. It is pure and never raises on content.

Grammar (one linear pass over ``\\n``-separated lines; line numbers are 1-based
and absolute, so YAML front matter counts but is not read; fenced code blocks
and HTML comments are skipped). docs/requirements-grammar.md says it with
examples:

* **Requirement heading**: an ATX heading (any level) whose text starts with an
  id: ``R<n>``, ``FR<n>``, ``NFR<n>``, ``AC<n>``, ``REQ<n>``, ``US<n>`` or
  ``Requirement <n>`` (the last gives ``R<n>``), followed by the end of the line,
  a space, ``:``, ``.`` or a dash; or any other family of one to five capitals
  (``US4``, ``SEC-2``) followed by ``:``, ``.`` or a dash (``### V2 API`` stays a
  heading). The number may be ``0`` and may carry a letter (``Requirement 6b``).
  It defines that id and opens its section, which runs to the next heading of
  the same or a higher level. A dotted id in a heading (``R1.2``) defines that
  criterion and opens nothing. A heading that starts like an id but is not one
  (``R01``, ``R1.2.3``) is not understood (a warning) and opens nothing.
* **Criteria**: every numbered list item at column 0 (``1.`` or ``1)``) inside
  a requirement section ``R<n>`` defines ``R<n>.<k>``, where ``k`` is the number
  markdown renders for it: the first item of a list shows the number typed (a
  list typed ``0.`` renders 0, one typed ``3.`` renders 3), each later item one
  more. A later list in the same section (after a sub-heading) that starts again
  at 1 continues the count, so ids stay unique. A typed number that matches
  neither is a warning, never a remap. Nested (indented) items are details.
* **Acceptance criteria**: a heading starting ``Acceptance criteria`` that is
  not inside a requirement section, or a paragraph ``Acceptance criteria (EARS):``
  on its own line, opens an acceptance section; its numbered items at column 0
  are ``AC1``, ``AC2``, … counted across the whole section.
* **Markers**: a numbered item at column 0 whose last line ends in ``(AC7)`` names
  ``AC7``. In an acceptance section, or in no section at all (a requirement
  heading without an id), the marker is the item's id: it wins over the count (a
  warning when they disagree) and counting resumes after it. In a requirement
  section it is an alias: ``AC7`` names the criterion ``R2.1`` it ends. A marker
  in the middle of the text is a reference.
* **Labels**: a list item at column 0, anywhere, that starts with a bold id,
  ``- **R1.1** …``, ``- **AC3** — …``, ``1. **1.2** …``, defines that id. A bare
  ``1.2`` belongs to the section it sits in (``R1.2`` under ``R1``); ``AC1.2``
  under ``R1`` is ``R1.2`` with the alias ``AC1.2``. Inside a requirement or
  acceptance section a plain id also leads an item: ``- 1.1 WHEN …``,
  ``- AC3 — …``. A label wins over the position (a warning when they differ).
* **Tables**: a row whose first cell is an id (``| R1.2 | … |``, ``| **AC3** | … |``)
  defines it; inside a requirement or acceptance section a first cell holding
  only a number ``k`` is criterion ``k``. A first cell that starts like an id but
  is not one is not understood.
* Everything else is prose: ``Non-functional requirements`` bullets (the heading's
  line is kept in ``nfr_line``), numbered steps to reproduce, ids mentioned in
  text (``see R7.4``).

The parent of ``R1.2`` is ``R1``; ids without a dot have no parent. The first
definition of an id counts; later ones are errors, and the criteria under a
duplicated heading are skipped rather than reported one by one.

``RequirementSet.complete`` is False when a line that looks like a definition
was not understood (``NOT_UNDERSTOOD``): then an id that is not found may still
be defined in the part that was not read.

Traceability against the tasks lives in ``the_loop.spec.traceability``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from the_loop.errors import UnusableInputError, Where
from the_loop.findings import Finding, Level, sorted_findings
from the_loop.io.fences import unfenced_lines
from the_loop.io.textfile import SPEC_LIMIT, read_limited

if TYPE_CHECKING:
    from typing import Literal

    Kind = Literal["requirements", "bugfix"]

ALL = "all"  # the citation that covers every requirement

RECOGNIZED_FORMS = (
    "headings `### R1 — title` or `### Requirement 1 — title` with numbered criteria "
    "(R1.1, R1.2, …), labelled items `- **R1.1** …`, numbered items ending in `(AC1)`, "
    "or numbered items under an `## Acceptance criteria` heading (AC1, AC2, …); see "
    "docs/requirements-grammar.md"
)


@dataclass(frozen=True)
class Requirement:
    """One defined id: where it is defined and a one-line text to show for it.

    ``text`` is the heading title or the first line of the criterion.
    ``parent`` is ``"R1"`` for ``"R1.2"`` and None for ids without a dot.
    """

    id: str
    line: int
    text: str
    parent: str | None = None


@dataclass(frozen=True)
class RequirementSet:
    """Everything read from one ``requirements.md`` or ``bugfix.md``.

    ``ids`` keeps definition order. ``findings`` are about the file itself
    (duplicates, malformed ids, numbering); ``trace`` adds the cross-checks.
    """

    path: Path
    kind: Kind
    ids: Mapping[str, Requirement] = field(default_factory=lambda: MappingProxyType({}))
    findings: tuple[Finding, ...] = ()
    # Other names of defined ids: an `(AC7)` marker on criterion R2.1 makes
    # `AC7` → `R2.1`; a label `**AC1.2**` under R1 makes `AC1.2` → `R1.2`.
    aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # The line of the non-functional requirements heading, if there is one.
    nfr_line: int | None = None
    # Every id written at the start of a line (a label, in whatever form) → its line:
    # a citation of one is never "undefined", even where the form was not read.
    labels: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def complete(self) -> bool:
        """Whether every line that looks like a definition was understood.

        Only then is an id that is not found certainly undefined.
        """
        return not any(f.code in NOT_UNDERSTOOD for f in self.findings)

    def not_understood(self) -> Finding | None:
        """The first finding that makes the file incomplete, if any."""
        return next((f for f in self.findings if f.code in NOT_UNDERSTOOD), None)

    @cached_property
    def families(self) -> frozenset[str]:
        """The letters the defined ids and aliases start with (``R``, ``AC``, …), once."""
        return frozenset(_family(i) for i in (*self.ids, *self.aliases))

    def resolve(self, req_id: str) -> str | None:
        """The defined id ``req_id`` names, directly or through an alias; None if neither."""
        if req_id in self.ids:
            return req_id
        return self.aliases.get(req_id)


# --------------------------------------------------------------------------- #
# Reading
# --------------------------------------------------------------------------- #


def read_requirements(path: Path) -> RequirementSet:
    """Read and parse ``path`` as UTF-8.

    An undecodable file is a ``req.undecodable`` error finding and an empty
    set, not an exception. A missing or unreadable file raises
    ``UnusableInputError``: there is nothing to report findings about.
    """
    try:
        data = read_limited(path, SPEC_LIMIT, what="spec file")
    except OSError as e:
        raise UnusableInputError(
            f"cannot read {path.name}: {e.strerror or e}", where=Where(path)
        ) from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        finding = Finding(
            Level.ERROR,
            "req.undecodable",
            f"{path.name} is not valid UTF-8 (byte {e.start}); no requirement ids were read",
            Where(path, line),
            hint="save the file as UTF-8",
        )
        return RequirementSet(path, _kind_from_name(path) or "requirements", findings=(finding,))
    return parse_requirements(text, path)


def parse_requirements(text: str, path: Path) -> RequirementSet:
    """The ids ``text`` (the content of ``path``) defines, per the module grammar."""
    lines = text.split("\n")
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    body_start, doc_type = _front_matter(lines)
    kind: Kind = _kind_from_name(path) or ("bugfix" if doc_type == "bugfix" else "requirements")
    parser = _Parser(path)
    in_comment = False
    body = unfenced_lines(lines[body_start:], body_start + 1)
    for number, line, after_fence in body:
        if after_fence:
            parser.close_item()  # a code block ends the item above it
        if in_comment or ("<!--" in line and _COMMENT_OPEN.match(line)):
            in_comment = not _closes_comment(line, opening=not in_comment)
            continue
        parser.feed(number, line)
    parser.close_item()
    if body.unclosed is not None:
        parser.unclosed_fence(*body.unclosed)
    return RequirementSet(
        path,
        kind,
        MappingProxyType(dict(parser.ids)),
        tuple(sorted_findings(parser.findings)),
        MappingProxyType({a: t for a, t in parser.aliases.items() if t in parser.ids}),
        parser.nfr_line,
        MappingProxyType(parser.labels),
    )


def _kind_from_name(path: Path) -> Kind | None:
    if path.name == "bugfix.md":
        return "bugfix"
    if path.name == "requirements.md":
        return "requirements"
    return None


_TYPE_LINE = re.compile(r"""^type:[ \t]*["']?([A-Za-z-]+)""")


def _front_matter(lines: list[str]) -> tuple[int, str | None]:
    """``(index of the first body line, front-matter type)``.

    Only ``type`` is needed here, so a line match is enough; an unterminated
    block is read as markdown (the front-matter reader reports it).
    """
    if not lines or lines[0].rstrip() != "---":
        return 0, None
    doc_type = None
    for index in range(1, len(lines)):
        line = lines[index].rstrip()
        if line in ("---", "..."):
            return index + 1, doc_type
        m = _TYPE_LINE.match(line)
        if m and doc_type is None:
            doc_type = m.group(1)
    return 0, None


_COMMENT_OPEN = re.compile(r"^ {0,3}<!--")


def _closes_comment(line: str, *, opening: bool) -> bool:
    """Whether the HTML comment that is open on ``line`` (or opens there) ends on it."""
    start = line.index("<!--") + 4 if opening else 0
    return "-->" in line[start:]


# --------------------------------------------------------------------------- #
# The line grammar
# --------------------------------------------------------------------------- #

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
# Digits are spelled [0-9] (not \d, which matches other scripts) and capped at
# nine, so int() never meets a huge or non-ASCII number. `0` is a number people
# write (`Requirement 0 — Audit`); zero padding (`FR-001`) is read away: FR1.
_NUM = r"[0-9]{1,9}"
# `1`, `1a`, `1.2`, `1a.2`: a requirement, a letter-suffixed one, a criterion.
_ID_NUMBER = rf"{_NUM}[a-z]?(?:\.{_NUM}[a-z]?)?"
_KNOWN = r"NFR|FR|AC|REQ|US|R"
_REQ_HEADING = re.compile(
    rf"^(?:(?P<prefix>{_KNOWN})-?|(?i:requirement)[ \t]*)(?P<num>{_ID_NUMBER})"
    r"(?P<rest>(?:[ \t]*[:—–-]|\.?(?:[ \t]|$)).*|)$"
    # Any other family of capitals counts with a separator after the number only, so
    # that `### V2 API` stays a heading: `### US4 — Login`, `### SEC-2: Secrets`.
    rf"|^(?P<family>[A-Z]{{1,5}})-?(?P<fnum>{_ID_NUMBER})"
    r"(?P<frest>(?:[ \t]*[:—–]|[ \t]+-[ \t]|\.(?:[ \t]|$)).*|)$"
)
_REQ_HEADING_LIKE = re.compile(rf"^(?:(?:{_KNOWN})-?|(?i:requirement)[ \t]*)[0-9]")
_ACCEPTANCE_HEADING = re.compile(r"^(?i:acceptance[ \t]+criteria)\b")
# `Acceptance criteria (EARS):` as a paragraph of its own, before the list.
_ACCEPTANCE_PARAGRAPH = re.compile(
    r"^(?:(?:\*\*|__|\*|_)?(?i:acceptance[ \t]+criteria)\b[^:*_]{0,40}:(?:\*\*|__|\*|_)?"
    r"|(?:\*\*|__)(?i:acceptance[ \t]+criteria)\b[^:*_]{0,40}:?(?:\*\*|__):?)[ \t]*$"
)
_NON_FUNCTIONAL_HEADING = re.compile(r"(?i:non[- ]?functional)|\bNFRs?\b")
_NUMBERED = re.compile(r"^([0-9]{1,9})[.)](?:[ \t]+(.*))?$")
_BULLET = re.compile(r"^[-*+][ \t]+(.*)$")
# The first characters the three patterns above can match.
_HEADING_STARTS = frozenset(" #")
_DIGITS = frozenset("0123456789")
_BULLETS = frozenset("-*+")
_TABLE_ROW = re.compile(r"^\|(.*)\|[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t|:-]+$")
_LABEL = re.compile(r"^\*\*(?P<inner>[^*]+?)\*\*(?P<after>.*)$")
_ID_TOKEN = re.compile(rf"^(?:(?P<family>[A-Z]{{1,5}})-?)?(?P<num>{_ID_NUMBER})$")
_LABEL_LIKE = re.compile(r"^(?:[A-Z]{1,5}-?[0-9]|[0-9]+\.[0-9])")
# A plain id leading an item inside a section: `- 1.1 WHEN …`, `- AC3 — WHEN …`.
_PLAIN_LABEL = re.compile(
    rf"^(?P<id>{_NUM}\.{_NUM}[a-z]?)[ \t]+(?P<rest>\S.*)$"
    rf"|^(?P<fid>(?:[A-Z]{{1,5}})-?{_ID_NUMBER})(?:[ \t]*[:—–]|[ \t]+-[ \t])[ \t]*(?P<frest>.*)$"
    # `- R2.1 WHEN …`, `- NFR1 **Fast.** …`: a criterion's id, or an id before a bold title
    rf"|^(?P<sid>(?:[A-Z]{{1,5}})-?{_NUM}[a-z]?(?:\.{_NUM}[a-z]?|(?=[ \t]+\*\*)))"
    r"[ \t]+(?P<srest>\S.*)$"
)
# Any line's leading id, however it is written (`- **R1.1**`, `1.1 WHEN`, `| AC3 |`):
# an id written as a label is never reported undefined (at most unconfirmed).
_ANY_LABEL = re.compile(
    rf"^[ \t]*(?:[-*+|][ \t]*|[0-9]{{1,9}}[.)][ \t]+)?[*_`]*"
    rf"(?P<family>[A-Z]{{1,5}})?-?(?P<num>{_NUM}[a-z]?(?:\.{_NUM}[a-z]?)?)(?![\w.])"
)
# `### User Story 1 - Export records (Priority: P1)`: Spec Kit's story US1, whose
# numbered acceptance scenarios are US1.1, US1.2, …
_USER_STORY_HEADING = re.compile(
    rf"^(?i:user[ \t]+story)[ \t]*(?P<num>{_NUM})(?P<rest>(?:[ \t]*[:—–-]|\.?(?:[ \t]|$)).*|)$"
)
# `### Derived Requirement 3`, `### Non-functional requirement 2`: a requirement of a
# family of its own (DR3, NFR2), whose criteria restart at 1.
_QUALIFIED_REQ_HEADING = re.compile(
    rf"^(?P<words>[A-Za-z][\w]*(?:[ \t-][A-Za-z][\w]*){{0,2}})[ \t]+(?i:requirement)[ \t]*"
    rf"(?P<num>{_NUM}[a-z]?)(?P<rest>(?:[ \t]*[:—–-]|\.?(?:[ \t]|$)).*|)$"
)
_AC_MARKER = re.compile(rf"\([ \t]*AC[ \t]?({_NUM}(?:\.{_NUM})?)[ \t]*\)[ \t.]*$")
_SEPARATOR = re.compile(r"^[ \t]*(?:[:—–-]|\.(?=[ \t]|$))?[ \t]*")
_CELL_MARKUP = "*_` \t"

# Findings that mean a part of the file was not understood: with one of them, an
# id that is not found may still be defined in the part that was not read.
NOT_UNDERSTOOD = frozenset({"req.malformed-id", "req.unclosed-fence", "req.undecodable"})


def _heading_title(text: str) -> str:
    """The heading text without an optional closing ``###`` sequence.

    Done with str methods rather than a regex so that a long run of spaces
    cannot make it quadratic.
    """
    text = text.strip()
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1] in " \t"):
        return bare.strip()
    return text


def canonical_number(number: str) -> str:
    """An id's number without zero padding: ``"001"`` → ``"1"``, ``"01.02a"`` → ``"1.2a"``."""
    parts = []
    for part in number.split("."):
        stripped = part.lstrip("0")
        parts.append(stripped if stripped[:1].isdigit() else "0" + stripped)
    return ".".join(parts)


def _parent_of(req_id: str) -> str | None:
    head, dot, _ = req_id.partition(".")
    return head if dot else None


def _tail_number(req_id: str) -> int:
    """The last number of an id: 3 for ``R1.3``, 7 for ``AC7``."""
    digits = re.search(r"[0-9]+$", req_id)
    return int(digits.group()) if digits else 0


def _stem(req_id: str) -> str:
    """An id without its last number: ``R1.`` for ``R1.3``, ``AC`` for ``AC7``."""
    return req_id.rstrip("0123456789")


def _family(req_id: str) -> str:
    """The letters an id starts with: ``R`` for ``R1.2``, ``AC`` for ``AC7``."""
    return req_id[: len(req_id) - len(req_id.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))]


class _Section:
    """A requirement section (``owner`` is its id) or an acceptance section.

    Plain classes here, like the other working state of one read: building a
    dataclass costs every cold start.
    """

    __slots__ = ("kind", "level", "owner", "active", "count", "lists", "rendered", "bullets")

    def __init__(
        self,
        kind: Literal["requirement", "acceptance", "nfr"],
        level: int,
        owner: str | None = None,
        *,
        active: bool = True,
    ) -> None:
        self.kind = kind
        self.level = level
        self.owner = owner
        self.active = active  # False under a duplicated heading: its criteria are skipped
        self.count = 0  # the number of the last criterion (its id's last part)
        self.lists = 0  # how many numbered lists the section has started
        self.rendered = 0  # the number markdown shows for the last item of the current list
        # Whether bullets are criteria here: always in an acceptance section, and in a
        # requirement section under an `Acceptance criteria` sub-heading or paragraph.
        self.bullets = kind == "acceptance"

    def criterion_id(self, position: int) -> str:
        if self.kind == "nfr":
            return f"NFR{position}"  # `1. **Small.** …` under a non-functional heading
        return f"{self.owner}.{position}" if self.kind == "requirement" else f"AC{position}"


class _Item:
    """A list item being read; it is defined once its continuation lines are known."""

    __slots__ = ("line", "text", "label", "position", "numbered", "body")

    def __init__(
        self, line: int, text: str, label: str | None, position: int | None, numbered: bool = False
    ) -> None:
        self.line = line
        self.text = text
        self.label = label
        self.position = position  # None for a bullet, or a numbered item outside any section
        self.numbered = numbered
        self.body: list[str] = []


class _Parser:
    """The state of one pass: the open section, the open item, what was found."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ids: dict[str, Requirement] = {}
        self.aliases: dict[str, str] = {}
        self.findings: list[Finding] = []
        self.section: _Section | None = None
        self.item: _Item | None = None
        self.list_open = False  # the last item was numbered and nothing ended its list
        self.nfr_line: int | None = None
        self.weak: set[str] = set()  # ids only a table row or a bold paragraph defined
        self.labels: dict[str, int] = {}  # every id written at the start of a line → line

    def feed(self, lineno: int, line: str) -> None:
        # Each line form starts with its own characters: only its pattern can match.
        first = line[:1]
        if first != "#" and (label := _ANY_LABEL.match(line)) is not None:
            self._note_label(label, lineno)
        heading = _HEADING.match(line) if first in _HEADING_STARTS else None
        if heading:
            self.close_item()
            self.list_open = False
            title = _heading_title(heading.group(2) or "")
            self._heading(lineno, len(heading.group(1)), title)
            return
        numbered = _NUMBERED.match(line) if first in _DIGITS else None
        if numbered:
            self.close_item()
            self._numbered(lineno, int(numbered.group(1)), (numbered.group(2) or "").strip())
            self.list_open = True
            return
        bullet = _BULLET.match(line) if first in _BULLETS else None
        if bullet:
            self.close_item()
            self.list_open = False
            self._bullet(lineno, bullet.group(1).strip())
            return
        if self.item is not None and (not line.strip() or line[0] in " \t"):
            # Blank and indented lines continue the item; column-0 text ends it.
            self.item.body.append(line)
            return
        if line.strip():
            self.close_item()
            self.list_open = False
            if line[0] == "|":
                self._table_row(lineno, line)
            elif _ACCEPTANCE_PARAGRAPH.match(line.strip()):
                if self.section is None:  # closed by the next heading, whatever its level
                    self.section = _Section("acceptance", 7)
                else:
                    self.section.bullets = True
            elif line.startswith("**"):
                self._bold_paragraph(lineno, line.strip())
            elif first in _DIGITS or first.isupper():
                self._plain_paragraph(lineno, line.strip())

    def _note_label(self, m: re.Match[str], lineno: int) -> None:
        family, number = m.group("family"), canonical_number(m.group("num"))
        if family is None and "." not in number:
            return  # a list's own number
        self.labels.setdefault(f"{family or 'R'}{number}", lineno)

    def _plain_paragraph(self, lineno: int, text: str) -> None:
        """``1.1 WHEN …`` as a paragraph of its own inside a section: that criterion."""
        if self.section is None or not self.section.active:
            return
        label, rest = self._plain_label(text)
        if label is not None and "." in label:
            self._define_criterion(label, lineno, rest)

    # -- headings ---------------------------------------------------------- #

    def _heading(self, lineno: int, level: int, title: str, *, weak: bool = False) -> None:
        if self.section is not None and level <= self.section.level:
            self.section = None
        if _NON_FUNCTIONAL_HEADING.search(title) and not _REQ_HEADING.match(title):
            self.nfr_line = self.nfr_line or lineno
        m = _REQ_HEADING.match(title)
        if m:
            family = m.group("prefix") or m.group("family") or "R"
            number = m.group("num") or m.group("fnum")
            rest = m.group("rest") if m.group("rest") is not None else m.group("frest")
            req_id = f"{family}{canonical_number(number)}"
            text = _SEPARATOR.sub("", rest or "", count=1).strip()
            parent = _parent_of(req_id)
            fresh = self._define(req_id, lineno, text or title, parent, weak=weak)
            if parent is None:
                self.section = _Section("requirement", level, req_id, active=fresh)
            return
        story = _USER_STORY_HEADING.match(title)
        if story:
            req_id = f"US{canonical_number(story.group('num'))}"
            text = _SEPARATOR.sub("", story.group("rest") or "", count=1).strip()
            fresh = self._define(req_id, lineno, text or title, None, weak=weak)
            self.section = _Section("requirement", level, req_id, active=fresh)
            return
        qualified = _QUALIFIED_REQ_HEADING.match(title)
        if qualified and qualified.group("words").lower() not in ("the", "a", "one", "each"):
            initials = "".join(w[0] for w in re.split(r"[ \t-]+", qualified.group("words")))
            req_id = f"{initials.upper()}R{canonical_number(qualified.group('num'))}"
            text = _SEPARATOR.sub("", qualified.group("rest") or "", count=1).strip()
            fresh = self._define(req_id, lineno, text or title, None, weak=weak)
            self.section = _Section("requirement", level, req_id, active=fresh)
            return
        if _NON_FUNCTIONAL_HEADING.search(title) and self.section is None:
            self.section = _Section("nfr", level)
            return
        if _REQ_HEADING_LIKE.match(title):
            self._not_understood(
                "req.malformed-id",
                lineno,
                f"heading `{short(title)}`, which starts like a requirement id; it defines nothing",
                "write `R<n> — title` or `Requirement <n> — title` (optionally a letter: "
                "`R1a`); criteria are the numbered items under it",
            )
        elif self.section is None and _ACCEPTANCE_HEADING.match(title):
            self.section = _Section("acceptance", level)
            return
        if self.section is not None:
            self.section.rendered = 0
            # Under `#### Acceptance criteria`, a bulleted list is the criteria too.
            self.section.bullets = bool(_ACCEPTANCE_HEADING.match(title))

    # -- list items -------------------------------------------------------- #

    def _numbered(self, lineno: int, written: int, text: str) -> None:
        section = self.section
        label, text = self._label(lineno, text)
        if section is None or not section.active:
            self.item = _Item(lineno, text, label, None, numbered=True)
            return
        self.item = _Item(lineno, text, label, self._position(section, written, lineno), True)

    def _position(self, section: _Section, written: int, lineno: int) -> int:
        """The criterion number of a numbered item: the number markdown renders for it.

        A list's first item shows the number typed; each later item one more. The
        first list of a section numbers its criteria so (a list typed `0.` gives
        `R1.0`); a later list in the same section, started again at 1 under a
        sub-heading, continues the count so that ids stay unique.
        """
        if self.list_open:
            section.rendered += 1
            section.count += 1
        else:
            section.lists += 1
            section.rendered = written
            if section.lists == 1 or written > section.count:
                section.count = written
            else:
                section.count += 1
        if written not in (section.rendered, section.count):
            self._warn(
                "req.numbering",
                lineno,
                f"item written as `{written}.` is shown as {section.rendered} and is item "
                f"{section.count} of its section, so it is "
                f"{section.criterion_id(section.count)}",
                "number the items 1, 2, 3, … in order: ids come from the number shown",
            )
        return section.count

    def _bullet(self, lineno: int, text: str) -> None:
        label, text = self._label(lineno, text)
        section = self.section
        if label is None and section is not None and section.active and section.bullets:
            # An unlabelled bullet of a criteria list: the next criterion by position
            # (markdown shows no number, so the count is the only one there is).
            section.count += 1
            self.item = _Item(lineno, text, None, section.count, numbered=True)
        elif label is not None:
            self.item = _Item(lineno, text, label, None)

    def _label(self, lineno: int, text: str) -> tuple[str | None, str]:
        """``(explicit id, remaining text)`` of an item starting with an id."""
        m = _LABEL.match(text)
        if m is None:
            return self._plain_label(text)
        token, _, rest_inside = m.group("inner").strip().partition(" ")
        token = token.rstrip(":.")
        req_id = self._canonical(token)
        if req_id is not None:
            rest = " ".join(f"{rest_inside} {m.group('after')}".split())
            return req_id, _SEPARATOR.sub("", rest, count=1).strip()
        if _LABEL_LIKE.match(token):
            self._not_understood(
                "req.malformed-id",
                lineno,
                f"label `**{token}**`, which starts like a requirement id; it defines nothing",
                "label items `**R1**`, `**R1.2**`, `**NFR1**`, `**AC3**` or `**1.2**`",
            )
        return None, text

    def _plain_label(self, text: str) -> tuple[str | None, str]:
        """An id without bold, which counts only inside a requirement or acceptance section."""
        if self.section is None or not text[:1].isalnum():
            return None, text
        m = _PLAIN_LABEL.match(text)
        if m is None:
            return None, text
        token = m.group("id") or m.group("fid") or m.group("sid")
        req_id = self._canonical(token)
        if req_id is None:
            return None, text
        return req_id, (m.group("rest") or m.group("frest") or m.group("srest") or "").strip()

    def _canonical(self, token: str) -> str | None:
        """The id a label names, read against the section it sits in; None if not an id.

        A bare ``1.2`` belongs to the section's family (``R1.2`` under ``R1``,
        ``AC1.2`` in an acceptance section); ``AC1.2`` under ``R1`` is that
        requirement's criterion ``R1.2`` (its ``AC`` spelling becomes an alias).
        """
        m = _ID_TOKEN.match(token)
        if m is None:
            return None
        family, number = m.group("family"), canonical_number(m.group("num"))
        section = self.section
        owner = section.owner if section is not None else None
        if family is None:
            if "." not in number:
                return None
            if section is not None and section.kind == "acceptance":
                return f"AC{number}"
            return f"{_family(owner) if owner else 'R'}{number}"
        if family == "AC" and owner is not None and "." in number:
            head = number.partition(".")[0]
            if owner == f"{_family(owner)}{head}":
                self.aliases.setdefault(f"AC{number}", f"{_family(owner)}{number}")
                return f"{_family(owner)}{number}"
        return f"{family}{number}"

    def _bold_paragraph(self, lineno: int, text: str) -> None:
        """A paragraph opening in bold: a heading written in bold, or a labelled criterion.

        ``**Requirement 2 — title**`` alone on its line reads as a heading (below
        every real heading: the next heading of any level closes it);
        ``**AC3** WHEN …`` defines AC3 like a labelled item.
        """
        m = _LABEL.match(text)
        if m is None:
            return
        inner, after = m.group("inner").strip(), m.group("after").strip(" \t.:—–-")
        if not after and _REQ_HEADING.match(inner):
            self._heading(lineno, 7, inner, weak=True)
            return
        label, rest = self._label(lineno, text)
        if label is not None:
            self._define_criterion(label, lineno, rest, weak=True)

    def _table_row(self, lineno: int, line: str) -> None:
        """A table row whose first cell is an id (or a criterion number) defines it."""
        m = _TABLE_ROW.match(line)
        if m is None or _TABLE_RULE.match(line):
            return
        cells = [c.strip(_CELL_MARKUP) for c in m.group(1).split("|")]
        first, text = cells[0], (cells[1] if len(cells) > 1 else "")
        section = self.section
        if first.isdigit() and first.isascii() and section is not None and section.active:
            self._define_criterion(section.criterion_id(int(first)), lineno, text, weak=True)
            return
        req_id = self._canonical(first)
        if req_id is not None:
            self._define_criterion(req_id, lineno, text, weak=True)
        elif _LABEL_LIKE.match(first) and not first[:1].isdigit():
            self._not_understood(
                "req.malformed-id",
                lineno,
                f"table row `{short(first)}`, which starts like a requirement id; it defines "
                "nothing",
                "start a criteria row with its id: `| R1.2 | WHEN … |` or `| AC3 | … |`",
            )

    def _define_criterion(self, req_id: str, lineno: int, text: str, *, weak: bool = False) -> None:
        self._check_placement(lineno, req_id)
        self._define(req_id, lineno, text, _parent_of(req_id), weak=weak)

    def close_item(self) -> None:
        """Define the id of the item being read, now that all its lines are known."""
        item, self.item = self.item, None
        if item is None:
            return
        section = self.section
        marker = self._marker(item) if item.numbered else None
        if item.position is None or section is None:
            explicit = item.label or marker
            if explicit is not None:  # a labelled item outside any numbering
                self._define_criterion(explicit, item.line, item.text)
                if item.label and marker and marker != item.label:
                    self._alias(marker, item.label, item.line)
            return
        counted = section.criterion_id(item.position)
        if section.kind == "acceptance":
            explicit = item.label or marker
        else:
            explicit = item.label
            if marker is not None:
                self._alias(marker, explicit or counted, item.line)
        req_id = explicit or counted
        if explicit is not None and explicit != counted:
            self._explicit_differs(item, section, explicit, counted)
        self._define(req_id, item.line, item.text, _parent_of(req_id))

    def _marker(self, item: _Item) -> str | None:
        """The ``(AC7)`` marker ending a numbered item, if any."""
        whole = " ".join([item.text, *(b.strip() for b in item.body)]).rstrip()
        m = _AC_MARKER.search(whole)
        if m is None:
            return None
        on_first_line = _AC_MARKER.search(item.text)
        if on_first_line is not None:  # the marker is an id, not part of the text shown
            item.text = item.text[: on_first_line.start()].rstrip()
        return f"AC{canonical_number(m.group(1))}"

    def _alias(self, alias: str, target: str, lineno: int) -> None:
        """``alias`` (an ``(AC7)`` marker) names the criterion ``target`` too."""
        first = self.ids.get(alias)
        known = self.aliases.get(alias)
        if first is not None or (known is not None and known != target):
            seen = first or (self.ids.get(known) if known else None)
            line = seen.line if seen is not None else lineno
            self.findings.append(
                Finding(
                    Level.ERROR,
                    "req.duplicate-id",
                    f"{alias} is defined again (first at line {line}); the first definition counts",
                    Where(self.path, lineno),
                    hint=f"give this criterion its own marker, or drop ({alias})",
                )
            )
            return
        self.aliases[alias] = target

    def _explicit_differs(
        self, item: _Item, section: _Section, explicit: str, counted: str
    ) -> None:
        if _stem(explicit) == _stem(counted):
            section.count = _tail_number(explicit)  # counting resumes after the explicit id
        where = "label" if item.label is not None else "marker"
        self._warn(
            "req.explicit-id-differs",
            item.line,
            f"the item's {where} says {explicit} but its position makes it {counted}; "
            f"read as {explicit}",
            f"renumber the items or fix the {where} so that both say the same id",
        )

    def _check_placement(self, lineno: int, label: str) -> None:
        """A labelled criterion under another requirement's heading is likely a typo."""
        section = self.section
        parent = _parent_of(label)
        if section is None or section.kind != "requirement" or parent in (None, section.owner):
            return
        self._warn(
            "req.misplaced-id",
            lineno,
            f"{label} is labelled under the heading of {section.owner}",
            f"move it under {parent}, or relabel it {section.owner}.<n>",
        )

    # -- results ----------------------------------------------------------- #

    def _define(
        self, req_id: str, lineno: int, text: str, parent: str | None, *, weak: bool = False
    ) -> bool:
        """Record a definition; a repeated one is an error, unless either one is *weak*.

        A table row or a bold paragraph may be a summary of ids defined elsewhere
        (a table of the defects described above it), so what it defines is weak: a
        repeat of it is a mention, and a later heading, list item or label replaces it.
        """
        first = self.ids.get(req_id) or self.ids.get(self.aliases.get(req_id, ""))
        if first is not None and (weak or req_id in self.weak):
            if weak:
                return False
            self.weak.discard(req_id)
            self.ids[req_id] = Requirement(req_id, lineno, text, parent)
            return True
        if first is not None:
            self.findings.append(
                Finding(
                    Level.ERROR,
                    "req.duplicate-id",
                    f"{req_id} is defined again (first at line {first.line}); "
                    "the first definition counts",
                    Where(self.path, lineno),
                    hint=f"give this one an unused id or merge it into {req_id}",
                )
            )
            return False
        self.ids[req_id] = Requirement(req_id, lineno, text, parent)
        if weak:
            self.weak.add(req_id)
        return True

    def unclosed_fence(self, line: int, char: str, length: int) -> None:
        """A fence never closed hides the rest of the file: say so."""
        self._not_understood(
            "req.unclosed-fence",
            line,
            "the rest of the file: the code block opened here is never closed, so nothing "
            "after it was read for ids",
            f"close it with a line of {length} `{char}`",
        )

    def _not_understood(self, code: str, lineno: int, what: str, hint: str) -> None:
        self._warn(code, lineno, f"not understood: {what}", hint)

    def _warn(self, code: str, lineno: int, message: str, hint: str) -> None:
        self.findings.append(Finding(Level.WARNING, code, message, Where(self.path, lineno), hint))


def short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (for messages)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
