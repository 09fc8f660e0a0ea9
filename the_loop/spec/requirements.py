"""Requirement ids that ``requirements.md`` / ``bugfix.md`` define.

``parse_requirements`` reads which ids a requirements or bugfix file *defines*,
with the line and one-line text of each. It is pure and never raises on content.

Grammar (one linear pass over ``\\n``-separated lines; line numbers are 1-based
and absolute, so YAML front matter counts but is not read; fenced code blocks
and HTML comments are skipped). docs/requirements-grammar.md says it with
examples:

* **Requirement heading**: an ATX heading whose text starts with ``R<n>``,
  ``FR<n>``, ``NFR<n>`` or ``Requirement <n>`` (the last gives ``R<n>``),
  followed by the end of the line, a space, ``:``, ``.``, or a dash. It defines
  that id and opens its section, which runs to the next heading of the same or
  a higher level (deeper sub-headings such as ``#### Acceptance criteria`` stay
  inside). A heading that starts like an id but is not one (``R1a``,
  ``R0``, ``R1.2``) is a warning and opens nothing.
* **Criteria**: every numbered list item at column 0 (``1.`` or ``1)``) inside
  a requirement section ``R<n>`` defines ``R<n>.<k>``, where ``k`` is its
  position in the section, as markdown renders it. The number written in the
  file only has to agree with the position within the section or within its
  sub-section (a list may restart at 1 after a sub-heading); otherwise a
  warning. Nested (indented) items are details, not criteria.
* **Bugfix acceptance criteria**: a heading starting ``Acceptance criteria``
  that is not inside a requirement section opens an acceptance section; its
  numbered items at column 0 are ``AC1``, ``AC2``, … counted across the whole
  section, sub-sections included. An item ending in ``(AC7)`` names its id
  explicitly: the marker wins over the count (a warning when they disagree) and
  counting resumes after it.
* **Explicit labels**: a list item at column 0, anywhere, that starts with a
  bold id, ``- **R1.1** …`` or ``- **NFR2** …``, defines that id; inside a
  numbered item the label wins over the position (a warning when they differ).
* Everything else is prose: ``Non-functional requirements`` bullets, numbered
  steps to reproduce, ids mentioned in text (``see R7.4``).

The parent of ``R1.2`` is ``R1``; ids without a dot have no parent. The first
definition of an id counts; later ones are errors, and the criteria under a
duplicated heading are skipped rather than reported one by one.

Traceability against the tasks lives in ``the_loop.spec.traceability``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from the_loop.errors import UnusableInputError, Where
from the_loop.findings import Finding, Level, sorted_findings
from the_loop.io.fences import closes_fence, open_fence
from the_loop.io.textfile import SPEC_LIMIT, read_limited

Kind = Literal["requirements", "bugfix"]

ALL = "all"  # the citation that covers every requirement

RECOGNIZED_FORMS = (
    "headings `### R1 — title` or `### Requirement 1 — title` with numbered criteria "
    "(R1.1, R1.2, …), labelled items `- **R1.1** …`, or numbered items under an "
    "`## Acceptance criteria` heading (AC1, AC2, …); see docs/requirements-grammar.md"
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
    fence: _Fence | None = None
    in_comment = False
    for index in range(body_start, len(lines)):
        line = lines[index].rstrip("\r")
        if fence is not None:
            fence = None if fence.closed_by(line) else fence
            continue
        if in_comment or _COMMENT_OPEN.match(line):
            in_comment = not _closes_comment(line, opening=not in_comment)
            continue
        fence = _Fence.opened_by(line, index + 1)
        if fence is not None:
            parser.close_item()
            continue
        parser.feed(index + 1, line)
    parser.close_item()
    if fence is not None:
        parser.unclosed_fence(fence)
    return RequirementSet(
        path, kind, MappingProxyType(dict(parser.ids)), tuple(sorted_findings(parser.findings))
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


@dataclass(frozen=True)
class _Fence:
    char: str
    length: int
    line: int

    @classmethod
    def opened_by(cls, line: str, lineno: int) -> _Fence | None:
        opened = open_fence(line.lstrip(" \t"))
        return None if opened is None else cls(opened[0], opened[1], lineno)

    def closed_by(self, line: str) -> bool:
        return closes_fence(self.char, self.length, line)


# --------------------------------------------------------------------------- #
# The line grammar
# --------------------------------------------------------------------------- #

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
# Digits are spelled [0-9] (not \d, which matches other scripts) and capped at
# nine, so int() never meets a huge or non-ASCII number.
_NUM = r"[1-9][0-9]{0,8}"
_REQ_HEADING = re.compile(
    rf"^(?:(?P<prefix>NFR|FR|R)|(?i:requirement)[ \t]*)(?P<num>{_NUM})"
    r"(?P<rest>(?:[ \t]*[:—–-]|\.?(?:[ \t]|$)).*|)$"
)
_REQ_HEADING_LIKE = re.compile(r"^(?:NFR|FR|R|(?i:requirement)[ \t]*)[0-9]")
_ACCEPTANCE_HEADING = re.compile(r"^(?i:acceptance[ \t]+criteria)\b")
_NUMBERED = re.compile(r"^([0-9]{1,9})[.)](?:[ \t]+(.*))?$")
_BULLET = re.compile(r"^[-*+][ \t]+(.*)$")
_LABEL = re.compile(r"^\*\*(?P<inner>[^*]+?)\*\*(?P<after>.*)$")
_LABEL_ID = re.compile(rf"^(?:(?:NFR|FR|R){_NUM}(?:\.{_NUM})?|AC{_NUM})$")
_LABEL_LIKE = re.compile(r"^(?:NFR|FR|AC|R)[0-9]")
_AC_MARKER = re.compile(rf"\([ \t]*AC[ \t]?({_NUM})[ \t]*\)[ \t.]*$")
_SEPARATOR = re.compile(r"^[ \t]*(?:[:—–-]|\.(?=[ \t]|$))?[ \t]*")


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


@dataclass
class _Section:
    """A requirement section (``owner`` is its id) or an acceptance section."""

    kind: Literal["requirement", "acceptance"]
    level: int
    owner: str | None = None
    active: bool = True  # False under a duplicated heading: its criteria are skipped
    count: int = 0  # position of the last numbered item in the section
    sub_count: int = 0  # … and since the last sub-heading

    def criterion_id(self, position: int) -> str:
        return f"{self.owner}.{position}" if self.kind == "requirement" else f"AC{position}"


@dataclass
class _Item:
    """A list item being read; it is defined once its continuation lines are known."""

    line: int
    text: str
    label: str | None
    position: int | None  # None for a bullet (not numbered)
    body: list[str] = field(default_factory=list)


class _Parser:
    """The state of one pass: the open section, the open item, what was found."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ids: dict[str, Requirement] = {}
        self.findings: list[Finding] = []
        self.section: _Section | None = None
        self.item: _Item | None = None

    def feed(self, lineno: int, line: str) -> None:
        heading = _HEADING.match(line)
        if heading:
            self.close_item()
            title = _heading_title(heading.group(2) or "")
            self._heading(lineno, len(heading.group(1)), title)
            return
        numbered = _NUMBERED.match(line)
        if numbered:
            self.close_item()
            self._numbered(lineno, int(numbered.group(1)), (numbered.group(2) or "").strip())
            return
        bullet = _BULLET.match(line)
        if bullet:
            self.close_item()
            self._bullet(lineno, bullet.group(1).strip())
            return
        if self.item is not None:
            # Blank and indented lines continue the item; column-0 text ends it.
            if not line.strip() or line[0] in " \t":
                self.item.body.append(line)
            else:
                self.close_item()

    # -- headings ---------------------------------------------------------- #

    def _heading(self, lineno: int, level: int, title: str) -> None:
        if self.section is not None and level <= self.section.level:
            self.section = None
        m = _REQ_HEADING.match(title)
        if m:
            req_id = f"{m.group('prefix') or 'R'}{m.group('num')}"
            text = _SEPARATOR.sub("", m.group("rest"), count=1).strip()
            fresh = self._define(req_id, lineno, text or title, None)
            self.section = _Section("requirement", level, req_id, active=fresh)
            return
        if _REQ_HEADING_LIKE.match(title):
            self._warn(
                "req.malformed-id",
                lineno,
                f"heading `{short(title)}` starts like a requirement id but is not one; "
                "it defines nothing",
                "write `R<n> — title` or `Requirement <n> — title` (n from 1, no leading "
                "zero); criteria are the numbered items under it",
            )
        elif self.section is None and _ACCEPTANCE_HEADING.match(title):
            self.section = _Section("acceptance", level)
            return
        if self.section is not None:
            self.section.sub_count = 0

    # -- list items -------------------------------------------------------- #

    def _numbered(self, lineno: int, written: int, text: str) -> None:
        section = self.section
        label, text = self._label(lineno, text)
        if section is None or not section.active:
            if label is not None:
                self.item = _Item(lineno, text, label, None)
            return
        section.count += 1
        section.sub_count += 1
        if written not in (section.count, section.sub_count):
            self._warn(
                "req.numbering",
                lineno,
                f"item written as `{written}.` is item {section.count} of its section, "
                f"so it is {section.criterion_id(section.count)}",
                "number the items 1, 2, 3, … in order: ids come from their position",
            )
        self.item = _Item(lineno, text, label, section.count)

    def _bullet(self, lineno: int, text: str) -> None:
        label, text = self._label(lineno, text)
        if label is not None:
            self.item = _Item(lineno, text, label, None)

    def _label(self, lineno: int, text: str) -> tuple[str | None, str]:
        """``(explicit id, remaining text)`` of an item starting with a bold id."""
        m = _LABEL.match(text)
        if m is None:
            return None, text
        token, _, rest_inside = m.group("inner").strip().partition(" ")
        token = token.rstrip(":")
        if _LABEL_ID.match(token):
            rest = " ".join(f"{rest_inside} {m.group('after')}".split())
            return token, _SEPARATOR.sub("", rest, count=1).strip()
        if _LABEL_LIKE.match(token):
            self._warn(
                "req.malformed-id",
                lineno,
                f"`**{token}**` starts like a requirement id but is not one; it defines nothing",
                "label items `**R1**`, `**R1.2**`, `**NFR1**` or `**AC3**`",
            )
        return None, text

    def close_item(self) -> None:
        """Define the id of the item being read, now that all its lines are known."""
        item, self.item = self.item, None
        if item is None:
            return
        section = self.section
        explicit = item.label or self._marker(item)
        if item.position is None or section is None:
            if explicit is not None:  # a labelled item outside any numbering
                self._check_placement(item, explicit)
                self._define(explicit, item.line, item.text, _parent_of(explicit))
            return
        counted = section.criterion_id(item.position)
        req_id = explicit or counted
        if explicit is not None and explicit != counted:
            self._explicit_differs(item, section, explicit, counted)
        self._define(req_id, item.line, item.text, _parent_of(req_id))

    def _marker(self, item: _Item) -> str | None:
        """The ``(AC7)`` marker ending an acceptance item, if any."""
        if self.section is None or self.section.kind != "acceptance":
            return None
        whole = " ".join([item.text, *(b.strip() for b in item.body)]).rstrip()
        m = _AC_MARKER.search(whole)
        if m is None:
            return None
        on_first_line = _AC_MARKER.search(item.text)
        if on_first_line is not None:  # the marker is an id, not part of the text shown
            item.text = item.text[: on_first_line.start()].rstrip()
        return f"AC{m.group(1)}"

    def _explicit_differs(
        self, item: _Item, section: _Section, explicit: str, counted: str
    ) -> None:
        if _stem(explicit) == _stem(counted):
            section.count = _tail_number(explicit)  # counting resumes after the explicit id
        where = "marker" if item.label is None else "label"
        self._warn(
            "req.explicit-id-differs",
            item.line,
            f"the item's {where} says {explicit} but its position makes it {counted}; "
            f"read as {explicit}",
            f"renumber the items or fix the {where} so that both say the same id",
        )

    def _check_placement(self, item: _Item, label: str) -> None:
        """A labelled criterion under another requirement's heading is likely a typo."""
        section = self.section
        parent = _parent_of(label)
        if section is None or section.kind != "requirement" or parent in (None, section.owner):
            return
        self._warn(
            "req.misplaced-id",
            item.line,
            f"{label} is labelled under the heading of {section.owner}",
            f"move it under {parent}, or relabel it {section.owner}.<n>",
        )

    # -- results ----------------------------------------------------------- #

    def _define(self, req_id: str, lineno: int, text: str, parent: str | None) -> bool:
        first = self.ids.get(req_id)
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
        return True

    def unclosed_fence(self, fence: _Fence) -> None:
        """A fence never closed hides the rest of the file: say so."""
        self._warn(
            "req.unclosed-fence",
            fence.line,
            "code block opened here is never closed; nothing after it was read for ids",
            f"close it with a line of {fence.length} `{fence.char}`",
        )

    def _warn(self, code: str, lineno: int, message: str, hint: str) -> None:
        self.findings.append(Finding(Level.WARNING, code, message, Where(self.path, lineno), hint))


def short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (for messages)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
