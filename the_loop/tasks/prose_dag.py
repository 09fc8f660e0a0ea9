"""Read the dependency chains people write in prose: ``1 → {2, 3} → 5``.

Under a heading that names the DAG (``## Dependency graph (DAG)``, ``## DAG``,
``## Dependencies``, ``## Critical path``, …), many ``tasks.md`` files state the
order as arrow chains instead of (or beside) the tasks' fields. The reader hands
this module every line of such a section that belongs to no task; the module
reads the chains in them. The rules:

* **Where a chain is.** On a line with code spans, each span holding an arrow is a
  chain and the text around the spans is prose. On a line without code spans (or
  inside a plain code fence), the whole line is read, split into segments at
  ``;``. A segment without an arrow is prose (``6 alongside 7``).
* **Arrows.** ``→``, ``⟶``, ``->``, ``-->`` and ``=>`` point from the task that
  comes first; ``←``, ``<-`` and ``<--`` point back.
* **Groups** between arrows: a task id (``3``, ``T3``, ``12b``), a range
  (``1..5``, ``1–5``), a brace set ``{1, 2, 6}`` or ``{1..5}``, a comma list
  ``1..11, 13``, or ``7/8`` (both). ``a → {b, c} → d`` gives every pair of
  neighbouring groups.
* **Words.** Text before the first group and after the last one is prose when it
  holds no digit (``after 1 → {2, 4}``, ``Critical path: …``); the words
  ``also``, ``after``, ``then``, ``and`` and ``both`` may sit anywhere. A
  parenthesised aside is dropped, unless it holds an arrow: ``6 (also ← 1)``
  reads as ``6 ← 1``, and ``(1 also → 5)`` on its own line as ``1 → 5``.
* **Continuation.** A line of a fence or of plain text that starts with an arrow
  continues the group written above the same column: under ``1 → 2 → 3``, a
  line ``      → 4`` (its arrow below the arrow after ``2``) reads as ``2 → 4``.
* **Not understood.** Any other segment with an arrow (box-drawing art, leftover
  numbers, a leading arrow with nothing above it) adds no edge and is reported
  with its line, once per run of such lines.
* **Tables**, anywhere in the file: a table whose header names a task column
  (``Task``, ``Id``, ``#``) and a dependency column (``Depends on``, ``Blocked by``,
  ``After``, ``Prerequisites``) states, per row, what that task depends on, in the
  grammar of a ``_Depends on:_`` value. A cell that does not read is not understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import Where
from the_loop.findings import Finding, Level
from the_loop.tasks.values import parse_depends

# A heading that names the dependency order of the tasks.
DAG_HEADING_RE = re.compile(
    r"\bDAG\b|(?i:dependency[ \t]+graph|dependencies|task[ \t]+graph|task[ \t]+order"
    r"|critical[ \t]+path|execution[ \t]+order|\bordering\b|\bwaves?\b)"
)
_ARROW_RE = re.compile(r"<-{1,2}(?!>)|←|-{1,2}>|=>|→|⟶")
_BACKWARD = frozenset({"<-", "<--", "←"})
_ID = r"(?:[Tt]-?)?[0-9]{1,9}(?:\.[0-9]{1,9})*[a-z]?"
_ITEM = rf"{_ID}(?:[ \t]*(?:\.\.|[–—-])[ \t]*{_ID})?"
_GROUP = (
    rf"\{{[ \t]*{_ITEM}(?:[ \t]*,[ \t]*{_ITEM})*[ \t]*\}}"
    rf"|{_ITEM}(?:[ \t]*/[ \t]*{_ITEM})+"
    rf"|{_ITEM}(?:[ \t]*,[ \t]*{_ITEM})*"
)
_GROUP_RE = re.compile(_GROUP)
_TRAILING_GROUP_RE = re.compile(rf"(?:^|(?<=[\s(:]))(?:{_GROUP})[ \t]*$")
_LEADING_GROUP_RE = re.compile(rf"[ \t]*(?:{_GROUP})(?![\w.])")
_ITEM_RE = re.compile(
    r"(?:[Tt]-?)?([0-9]{1,9}(?:\.[0-9]{1,9})*[a-z]?)"
    r"(?:[ \t]*(?:\.\.|[–—-])[ \t]*(?:[Tt]-?)?([0-9]{1,9}(?:\.[0-9]{1,9})*[a-z]?))?"
)
_NOISE_RE = re.compile(r"\b(?:also|after|then|and|both)\b", re.IGNORECASE)
_CODE_SPAN_RE = re.compile(r"`([^`]+)`")
_ASIDE_RE = re.compile(r"\(([^()]*)\)")
_BOX_ART_RE = re.compile(r"[\u2500-\u257f↑↓]")
_BULLET_RE = re.compile(r"^(?:[-*+]|[0-9]{1,9}[.)])[ \t]+")
_MAX_RANGE = 10_000
_TASK_HEADER_RE = re.compile(r"(?i:tasks?|ids?|#|no\.?|step)")
_DEPS_HEADER_RE = re.compile(
    r"(?i:depends(?:[ \t]+on)?|dependencies|deps|blocked[ \t]+by|after"
    r"|prerequisites?)"
)
_ROW_ID_RE = re.compile(r"[Tt]?([0-9]{1,9}(?:\.[0-9]{1,9})*[a-z]?)")


@dataclass(frozen=True)
class ProseEdge:
    """``target`` depends on ``source``, as a chain on ``line`` states."""

    source: str
    target: str
    line: int


class ProseDag:
    """The chains read so far, and the lines with arrows that were not understood.

    A plain class (working state of one read, never compared or printed): one
    dataclass fewer to build on every start.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.edges: list[ProseEdge] = []
        self.findings: list[Finding] = []
        # Column of each arrow on the lines above → the group it leaves from, for
        # lines that start with an arrow.
        self._columns: dict[int, list[str]] = {}
        self._unread_run: tuple[int, int] | None = None
        # (task column, depends column) of the open table
        self._table: tuple[int, int] | None = None
        self._table_header = False  # the header row was just read; the rule row comes next
        # What dependency tables state: every row's task (→ its line) and its edges.
        self.table_stated: dict[str, int] = {}
        self.table_edges: list[ProseEdge] = []

    def table_row(self, raw: str, line: int) -> None:
        """One row of a markdown table at column 0 (header, rule or body row)."""
        cells = [c.strip().strip("*_` ") for c in raw.strip().strip("|").split("|")]
        if self._table is None:
            task_col = next((i for i, c in enumerate(cells) if _TASK_HEADER_RE.fullmatch(c)), None)
            deps_col = next((i for i, c in enumerate(cells) if _DEPS_HEADER_RE.fullmatch(c)), None)
            if task_col is not None and deps_col is not None:
                self._table, self._table_header = (task_col, deps_col), True
            return
        if self._table_header:
            self._table_header = False
            return  # the |---|---| rule
        task_col, deps_col = self._table
        if max(task_col, deps_col) >= len(cells):
            return
        task = _ROW_ID_RE.fullmatch(cells[task_col])
        if task is None:
            return
        target = _canonical(task.group(1))
        deps = parse_depends(cells[deps_col])
        if deps is None or deps == "all":
            self._open_run(line)
            self._close_run()
            return
        self.table_stated.setdefault(target, line)
        self.table_edges.extend(ProseEdge(dep, target, line) for dep in deps if dep != target)

    def end_table(self) -> None:
        """A line that is not a table row: the open table, if any, has ended."""
        self._table = None
        self._table_header = False

    def feed(self, raw: str, line: int, *, fenced: bool) -> None:
        """Read one line of a DAG section (``fenced``: inside a plain code fence)."""
        if not _ARROW_RE.search(raw):
            self._columns = {}
            self._close_run()
            return
        spans = None if fenced else _CODE_SPAN_RE.findall(raw)
        chains: list[tuple[str, int | None]]
        if spans:
            chains = [(span, None) for span in spans]
        elif fenced:
            chains = [(segment, start) for segment, start in _segments(raw)]
        else:
            text = _BULLET_RE.sub("", raw.strip(), count=1)
            chains = [(segment, None) for segment, _ in _segments(text)]
        # Arrows between words ("design → tasks") are prose; a chain names tasks.
        ok = all(
            self._chain(chain, line, column)
            for chain, column in chains
            if _ARROW_RE.search(chain) and any(ch.isdigit() for ch in chain)
        )
        if spans:
            self._columns = {}
        if ok:
            self._close_run()
        else:
            self._columns = {}
            self._open_run(line)

    def finish(self) -> None:
        """Report the last run of unread lines, if any."""
        self._close_run()

    # -- one chain --------------------------------------------------------------

    def _chain(self, text: str, line: int, column: int | None) -> bool:
        """Read one chain; False (and no edge) when any part of it is not understood."""
        if _BOX_ART_RE.search(text):
            return False
        text, asides = _asides(text)
        arrows = list(_ARROW_RE.finditer(text))
        groups = _groups(text, arrows)
        if groups[0] is None and column is not None and not text[: arrows[0].start()].strip():
            groups[0] = self._columns.get(column + arrows[0].start())
        resolved = [g for g in groups if g is not None]
        if len(resolved) != len(groups):
            return False
        found: list[tuple[str, str]] = []
        for left, arrow, right in zip(resolved, arrows, resolved[1:], strict=False):
            backward = arrow.group() in _BACKWARD
            found.extend((b, a) if backward else (a, b) for a in left for b in right)
        for subject_at, aside in asides:
            edges = _aside_edges(_last_group_before(text, subject_at), aside)
            if edges is None:
                return False
            found.extend(edges)
        if column is not None:
            for m, group in zip(arrows, resolved, strict=False):
                self._columns[column + m.start()] = group
        self.edges.extend(ProseEdge(a, b, line) for a, b in found if a != b)
        return True

    # -- findings ---------------------------------------------------------------

    def _open_run(self, line: int) -> None:
        if self._unread_run is not None and self._unread_run[1] == line - 1:
            self._unread_run = (self._unread_run[0], line)
            return
        self._close_run()
        self._unread_run = (line, line)

    def _close_run(self) -> None:
        run, self._unread_run = self._unread_run, None
        if run is None:
            return
        first, last = run
        lines = f"line {first}" if first == last else f"lines {first}–{last}"
        self.findings.append(
            Finding(
                Level.WARNING,
                "tasks.dag-unreadable",
                f"not understood: the dependency drawing on {lines} (expected chains such "
                "as `1 → {2, 3} → 5`); it adds no edges",
                Where(self.path, first),
                "write one chain per line (`1 → 3 → 5`), or state each task's `_Depends on:_`",
            )
        )


def _segments(text: str) -> list[tuple[str, int]]:
    """``text`` split at ``;`` outside braces, each part with its start column."""
    out: list[tuple[str, int]] = []
    start = depth = 0
    for i, ch in enumerate(text):
        if ch in "{(":
            depth += 1
        elif ch in "})":
            depth = max(0, depth - 1)
        elif ch == ";" and depth == 0:
            out.append((text[start:i], start))
            start = i + 1
    out.append((text[start:], start))
    return out


def _groups(text: str, arrows: list[re.Match[str]]) -> list[list[str] | None]:
    """The group of each part of a chain (the text between its arrows)."""
    parts: list[str] = []
    at = 0
    for m in arrows:
        parts.append(text[at : m.start()])
        at = m.end()
    parts.append(text[at:])
    last = len(parts) - 1
    return [_part_group(part, first=i == 0, last=i == last) for i, part in enumerate(parts)]


def _asides(text: str) -> tuple[str, list[tuple[int, str]]]:
    """``text`` without its parenthesised asides; those holding an arrow, with where they were.

    An aside's place is kept as a run of spaces of the same length, so columns and
    the group before it stay where they were.
    """
    kept: list[tuple[int, str]] = []

    def blank(m: re.Match[str]) -> str:
        if _ARROW_RE.search(m.group(1)):
            kept.append((m.start(), m.group(1)))
        return " " * len(m.group())

    if "(" not in text:
        return text, kept
    stripped = _ASIDE_RE.sub(blank, text)
    if not stripped.strip() and kept:  # `(1 also → 5)` alone: the aside is the chain
        return text.strip()[1:-1], []
    return stripped, kept


def _part_group(part: str, *, first: bool, last: bool) -> list[str] | None:
    """The ids of the group in one part of a chain; None when the part does not read."""
    text = _NOISE_RE.sub(" ", part).strip().rstrip(".,:")
    if not text:
        return None
    if first and last:
        return None
    if first:
        m = _TRAILING_GROUP_RE.search(text)
        if m is None or any(ch.isdigit() for ch in text[: m.start()]):
            return None
        return _ids(m.group())
    if last:
        m = _LEADING_GROUP_RE.match(text)
        if m is None or any(ch.isdigit() for ch in text[m.end() :]):
            return None
        return _ids(m.group())
    m = _GROUP_RE.fullmatch(text)
    return _ids(m.group()) if m else None


def _ids(group: str) -> list[str] | None:
    ids: list[str] = []
    for m in _ITEM_RE.finditer(group):
        first, last = m.group(1), m.group(2)
        if last is None:
            ids.append(_canonical(first))
            continue
        if not (first.isdigit() and last.isdigit()):
            return None  # only numbers expand
        low, high = int(first), int(last)
        if low > high or high - low > _MAX_RANGE:
            return None
        ids.extend(str(n) for n in range(low, high + 1))
    return ids or None


def _canonical(number: str) -> str:
    parts = []
    for part in number.split("."):
        stripped = part.lstrip("0")
        parts.append(stripped if stripped[:1].isdigit() else "0" + stripped)
    return ".".join(parts)


def _last_group_before(text: str, at: int) -> list[str] | None:
    m = _TRAILING_GROUP_RE.search(_NOISE_RE.sub(" ", text[:at]).rstrip())
    return _ids(m.group()) if m else None


def _aside_edges(subject: list[str] | None, aside: str) -> list[tuple[str, str]] | None:
    """``6 (also ← 1)``: the aside's arrow joins the group before it to the aside's group."""
    text = _NOISE_RE.sub(" ", aside).strip()
    m = _ARROW_RE.match(text)
    if subject is None or m is None:
        return None
    other = _part_group(text[m.end() :], first=False, last=True)
    if other is None:
        return None
    backward = m.group() in _BACKWARD
    return [(o, s) if backward else (s, o) for s in subject for o in other]
