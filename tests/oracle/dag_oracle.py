"""A second, deliberately simple reading of the task DAG in a ``tasks.md`` (tests only).

The corpus tests compare what ``loop graph --json`` reports with what this module
extracts. It shares no code with ``the_loop`` and was written from reading the real
files in ``shared/corpus``, so a gap in the engine's grammar shows up as a difference
instead of being copied here. Kiro and Spec Kit files, where order is the dependency,
are read by ``order_oracle`` (which takes their charts and chains from here).

What it reads, and nothing else:

* **Tasks.** A checkbox list item at column 0 whose text starts with an id
  (``1.``, ``1)``, ``**T3 — …**``, ``**T3.**``, ``T3 — …``, ``T12b``), or a heading
  that starts with a ``T`` id (``### T4 — GraphLink``) whose first id-less checkbox
  (``- [x] Done``) gives its state. An id is its number without ``T`` or leading
  zeros, plus a lower-case letter suffix when there is one: ``T012b`` is ``12b``.
* **Dependency statements in a task's text**: every ``depends on`` in any spelling
  (``_Depends on:_``, ``**Depends on:**``, ``Depends on: T2.``, ``— depends on T1.``,
  split over two lines). The value is a list of ids and ranges joined by ``,``,
  ``+``, ``&`` or ``and``; ``none``/``nothing``/``—`` mean no dependencies and
  ``all`` every other task. Parenthesised asides are dropped.
* **Prose DAG lines** under a heading naming the DAG (``## DAG``,
  ``## Dependency graph (DAG)``), in plain text or in a non-mermaid fence: chains
  such as ``1 → {2, 3} → 5``, ``{1..5} → 6``, ``1..11, 13 → 12``, ``5 → 7/8``.
  Box-drawing art is not read.
* **Mermaid flowcharts** anywhere in the file: ``A --> B`` (also ``==>``, ``-.->``
  and ``& `` groups) means B depends on A; a node is a task by its id (``T3``,
  ``3``) or, failing that, by the number its label starts with.

Every edge keeps its source (``field``, ``prose``, ``mermaid``) and line. Whatever
looks like a dependency statement but does not read completely is listed in
``unread`` with its line: the engine is expected to report those places too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FIELD = "field"
PROSE = "prose"
MERMAID = "mermaid"


@dataclass(frozen=True)
class OracleTask:
    """One task: its canonical id, whether it is ticked, and its header line."""

    id: str
    done: bool
    line: int


@dataclass(frozen=True)
class Edge:
    """``task`` depends on ``dep``, as stated by ``source`` at ``line``."""

    dep: str
    task: str
    source: str
    line: int


@dataclass(frozen=True)
class Unread:
    """A place that states something about dependencies this reader could not read."""

    line: int
    text: str
    why: str


@dataclass(frozen=True)
class OracleDag:
    """The DAG of one ``tasks.md`` as this module reads it."""

    tasks: tuple[OracleTask, ...]
    edges: tuple[Edge, ...]
    unread: tuple[Unread, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        """Task ids in file order."""
        return tuple(t.id for t in self.tasks)

    def done(self) -> dict[str, bool]:
        """Task id → ticked (the first definition of a duplicated id counts)."""
        out: dict[str, bool] = {}
        for t in self.tasks:
            out.setdefault(t.id, t.done)
        return out

    def edge_set(self) -> set[tuple[str, str]]:
        """``(dep, task)`` pairs between tasks the file lists, every source together."""
        known = set(self.ids)
        return {
            (e.dep, e.task)
            for e in self.edges
            if e.dep in known and e.task in known and e.dep != e.task
        }

    def edges_by_source(self) -> dict[str, set[tuple[str, str]]]:
        """The ``(dep, task)`` pairs each source states on its own."""
        out: dict[str, set[tuple[str, str]]] = {FIELD: set(), PROSE: set(), MERMAID: set()}
        for e in self.edges:
            out[e.source].add((e.dep, e.task))
        return out

    def dangling(self) -> set[tuple[str, str]]:
        """Stated edges with an end the file does not list as a task."""
        known = set(self.ids)
        return {(e.dep, e.task) for e in self.edges if e.dep not in known or e.task not in known}

    def lines_of(self, pair: tuple[str, str]) -> set[int]:
        """Every line that states the edge ``pair``."""
        return {e.line for e in self.edges if (e.dep, e.task) == pair}


def read_dag(path: Path) -> OracleDag:
    """Read ``path`` (a ``tasks.md``) with this module's grammar."""
    return parse_dag(path.read_text(encoding="utf-8"))


def parse_dag(text: str) -> OracleDag:
    """Read the DAG stated in ``text``, the content of a ``tasks.md``."""
    return _Reader(text.splitlines()).read()


# ---------------------------------------------------------------------------
# Ids and values

_ID = r"[Tt]?0*(\d+)([a-z]?)"
_NUMBERED_HEAD = re.compile(r"(\d+)([a-z]?)[.)]\s")
_BOLD_HEAD = re.compile(r"\*\*\s*(?:Task\s+)?" + _ID + r"(?![\w])")
_T_HEAD = re.compile(r"T0*(\d+)([a-z]?)(?=[\s.:—–-])")
_HEADING_TASK = re.compile(r"(?:Task\s+)?T0*(\d+)([a-z]?)(?=[\s.:—–-])")
_ID_TOKEN = re.compile(r"(?:task\s+)?" + _ID + r"$", re.IGNORECASE)
_RANGE_TOKEN = re.compile(
    r"(?:tasks?\s+)?[Tt]?(\d+)\s*(?:\.\.|–|—|-|to)\s*[Tt]?(\d+)$", re.IGNORECASE
)
_NONE_VALUE = re.compile(r"(?:none|nothing|n/a)\b|[—–-](?:\s|$)", re.IGNORECASE)
_ALL_VALUE = re.compile(r"all\b", re.IGNORECASE)
_PARENS = re.compile(r"\([^()]*\)")
_DEPENDS = re.compile(r"depends\s+on\b", re.IGNORECASE)
_VALUE_END = re.compile(r"\.(?=\s|$)|;|\s[—–·|]\s|_(?=\s|$)|\*")
_SPLIT_VALUE = re.compile(r"\s*(?:,|\+|&|\band\b)\s*", re.IGNORECASE)


def canonical(number: str, suffix: str = "") -> str:
    """``("007", "B")`` → ``"7b"``: the id without padding, suffix lower-cased."""
    return str(int(number)) + suffix.lower()


def _expand(first: str, last: str) -> list[str] | None:
    lo, hi = int(first), int(last)
    if hi < lo or hi - lo > 1000:
        return None
    return [str(n) for n in range(lo, hi + 1)]


def _ids_in(value: str) -> tuple[list[str] | None, list[str]]:
    """Read a dependency value: ``(ids or None for "all", tokens not understood)``."""
    value = _PARENS.sub(" ", value).strip().strip("*_ .")
    if not value or _NONE_VALUE.match(value):
        return [], []
    if _ALL_VALUE.match(value):
        return None, []
    ids: list[str] = []
    bad: list[str] = []
    for token in _SPLIT_VALUE.split(value):
        token = token.strip().strip("*_`")
        if not token:
            continue
        one = _ID_TOKEN.match(token)
        span = _RANGE_TOKEN.match(token)
        if one:
            ids.append(canonical(one.group(1), one.group(2)))
        elif span and (run := _expand(span.group(1), span.group(2))) is not None:
            ids.extend(run)
        else:
            bad.append(token)
    return ids, bad


# ---------------------------------------------------------------------------
# Prose chains and mermaid

_BOX_ART = re.compile(r"[─│┌┐└┘├┤┬┴┼↑↓]")
_ARROW = re.compile(r"→|->|⟶")
_REF = r"[Tt]?\d+[a-z]?(?:\s*(?:\.\.|–|—)\s*[Tt]?\d+[a-z]?)?"
_LIST = _REF + r"(?:\s*[,/]\s*" + _REF + r")*"
_GROUP = r"(?:\{\s*" + _LIST + r"\s*\}|" + _LIST + r")"
_CHAIN = re.compile(_GROUP + r"(?:\s*(?:→|->|⟶)\s*" + _GROUP + r")+")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_DAG_HEADING = re.compile(r"\bDAG\b|dependency\s+graph", re.IGNORECASE)

_FLOW_HEADER = re.compile(r"(?:flowchart|graph)\b")
_MERMAID_SKIP = re.compile(
    r"(?:subgraph\b|end$|direction\b|classDef\b|class\b|style\b|linkStyle\b|click\b)"
)
_NODE_ID = re.compile(r"[A-Za-z0-9_]+")
_LINK = re.compile(r"\s*(?:-->|--->|==>|-\.->)\s*(?:\|[^|]*\|)?\s*")
_TASK_NODE = re.compile(r"[Tt]?0*(\d+)([a-z]?)$")
_LABEL_NUMBER = re.compile(r"[\"'\s]*[Tt]?0*(\d+)([a-z]?)\b")


def _group_ids(group: str) -> list[str] | None:
    ids, bad = _ids_in(group.strip().strip("{}").replace("/", ","))
    return None if bad or ids is None else ids


def _chains(text: str) -> tuple[list[tuple[list[str], list[str]]], bool]:
    """The edges ``(deps, tasks)`` of every chain in ``text``; False if an arrow is left over."""
    pairs: list[tuple[list[str], list[str]]] = []
    used: list[tuple[int, int]] = []
    for m in _CHAIN.finditer(text):
        groups = [_group_ids(g) for g in _ARROW.split(m.group(0))]
        if any(g is None for g in groups):
            continue
        for left, right in zip(groups, groups[1:], strict=False):
            assert left is not None and right is not None
            pairs.append((left, right))
        used.append(m.span())
    complete = all(any(a <= p.start() < b for a, b in used) for p in _ARROW.finditer(text))
    return pairs, complete


def _node(text: str, pos: int) -> tuple[str | None, str, int]:
    """Read ``ID`` plus an optional shape from ``pos``: ``(id, label, next position)``."""
    m = _NODE_ID.match(text, pos)
    if not m:
        return None, "", pos
    node, pos = m.group(0), m.end()
    if pos < len(text) and text[pos] in "[({>":
        # ``>`` opens only the asymmetric shape; inside a label it is text (``<br/>``).
        start, depth, quote = pos, 1, False
        pos += 1
        while pos < len(text):
            ch = text[pos]
            if ch == '"':
                quote = not quote
            elif not quote and ch in "[({":
                depth += 1
            elif not quote and ch in "])}":
                depth -= 1
                if depth == 0:
                    pos += 1
                    break
            pos += 1
        else:
            return None, "", pos
        return node, text[start + 1 : pos - 1], pos
    return node, "", pos


def _node_group(text: str, pos: int) -> tuple[list[tuple[str, str]] | None, int]:
    nodes: list[tuple[str, str]] = []
    while True:
        pos = len(text) - len(text[pos:].lstrip())
        node, label, pos = _node(text, pos)
        if node is None:
            return None, pos
        nodes.append((node, label))
        amp = re.match(r"\s*&\s*", text[pos:])
        if not amp:
            return nodes, pos
        pos += amp.end()


def _statement(text: str) -> list[list[tuple[str, str]]] | None:
    """The node groups of one mermaid statement, or None when it does not read."""
    groups: list[list[tuple[str, str]]] = []
    pos = 0
    while True:
        group, pos = _node_group(text, pos)
        if group is None:
            return None
        groups.append(group)
        link = _LINK.match(text, pos)
        if link is None:
            return groups if not text[pos:].strip() else None
        pos = link.end()


def _node_task(node: str, label: str) -> str | None:
    m = _TASK_NODE.match(node) or _LABEL_NUMBER.match(label)
    return canonical(m.group(1), m.group(2)) if m else None


# ---------------------------------------------------------------------------
# The line pass


@dataclass
class _Draft:
    """A task being read: its header facts and its text, cut into segments.

    A segment is one bullet or paragraph with its continuation lines; each keeps
    the line every piece came from, so a statement can be placed exactly.
    """

    id: str
    done: bool | None
    line: int
    heading: bool
    segments: list[list[tuple[int, str]]] = field(default_factory=list)

    def add(self, line: int, text: str, *, new: bool) -> None:
        if new or not self.segments:
            self.segments.append([])
        self.segments[-1].append((line, text.strip()))

    def texts(self) -> list[tuple[str, list[tuple[int, int]]]]:
        """Each segment as one string, with ``(offset, line)`` marks for its pieces."""
        out: list[tuple[str, list[tuple[int, int]]]] = []
        for pieces in self.segments:
            text, marks = "", []
            for line, piece in pieces:
                marks.append((len(text), line))
                text += piece + " "
            out.append((text, marks))
        return out


def _line_at(marks: list[tuple[int, int]], offset: int) -> int:
    return max((line for start, line in marks if start <= offset), default=marks[0][1])


_FENCE = re.compile(r"\s*(`{3,}|~{3,})\s*([\w-]*)")
_HEADING = re.compile(r"(#{1,6})\s+(.*?)\s*#*\s*$")
_CHECKBOX = re.compile(r"[-*+]\s+\[(.)\](?:\s+(.*))?$")
_BULLET = re.compile(r"\s*(?:[-*+]|\d+[.)])\s")


class _Reader:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.drafts: list[_Draft] = []
        self.current: _Draft | None = None
        self.edges: list[Edge] = []
        self.unread: list[Unread] = []
        self.in_dag_section = False

    def read(self) -> OracleDag:
        n = self._skip_front_matter()
        fence: tuple[str, str, int, list[tuple[int, str]]] | None = None
        while n < len(self.lines):
            raw, lineno = self.lines[n], n + 1
            n += 1
            if fence is not None:
                marker, lang, start, body = fence
                closing = raw.strip()
                if closing.startswith(marker) and set(closing) == {marker[0]}:
                    self._fenced(lang, start, body)
                    fence = None
                else:
                    body.append((lineno, raw))
                continue
            opened = _FENCE.match(raw)
            if opened:
                fence = (opened.group(1), opened.group(2).lower(), lineno, [])
                continue
            self._line(raw, lineno)
        if fence is not None:
            self.unread.append(Unread(fence[2], self.lines[fence[2] - 1], "unclosed fence"))
        return self._result()

    def _skip_front_matter(self) -> int:
        if self.lines and self.lines[0].strip() == "---":
            for i in range(1, len(self.lines)):
                if self.lines[i].strip() == "---":
                    return i + 1
        return 0

    def _line(self, raw: str, lineno: int) -> None:
        heading = _HEADING.match(raw)
        if heading:
            self._heading(heading.group(2), lineno)
            return
        box = _CHECKBOX.match(raw)
        if box:
            self._checkbox(box.group(1), box.group(2) or "", raw, lineno)
            return
        if self.current is not None:
            if not raw.strip():
                self.current.segments.append([])
                return
            if raw[0] in " \t" or self.current.heading:
                self.current.add(lineno, raw, new=bool(_BULLET.match(raw)))
                return
            self.current = None
        if self.in_dag_section:
            self._prose(raw, lineno)

    def _heading(self, text: str, lineno: int) -> None:
        self.in_dag_section = bool(_DAG_HEADING.search(text))
        m = _HEADING_TASK.match(text)
        if m:
            self.current = _Draft(canonical(m.group(1), m.group(2)), None, lineno, heading=True)
            self.current.add(lineno, text[m.end() :], new=True)
            self.drafts.append(self.current)
        else:
            self.current = None

    def _checkbox(self, mark: str, rest: str, raw: str, lineno: int) -> None:
        done = mark in "xX"
        stripped = rest.lstrip()
        m = (
            _NUMBERED_HEAD.match(stripped + " ")
            or _BOLD_HEAD.match(stripped)
            or _T_HEAD.match(stripped)
        )
        if m:
            self.current = _Draft(canonical(m.group(1), m.group(2)), done, lineno, heading=False)
            self.current.add(lineno, stripped[m.end() :], new=True)
            self.drafts.append(self.current)
            return
        if self.current is not None and self.current.heading and self.current.done is None:
            self.current.done = done
            return
        self.unread.append(Unread(lineno, raw, "checkbox without a task id"))

    def _prose(self, raw: str, lineno: int) -> None:
        if not _ARROW.search(raw):
            return
        if _BOX_ART.search(raw):
            self.unread.append(Unread(lineno, raw, "box-drawing art"))
            return
        pieces = _CODE_SPAN.findall(raw) + [_CODE_SPAN.sub(" ; ", raw)]
        complete = True
        for piece in pieces:
            for part in piece.split(";"):
                pairs, ok = _chains(part)
                complete = complete and ok
                for deps, tasks in pairs:
                    for d in deps:
                        for t in tasks:
                            self.edges.append(Edge(d, t, PROSE, lineno))
        if not complete:
            self.unread.append(Unread(lineno, raw, "an arrow outside a readable chain"))

    def _fenced(self, lang: str, start: int, body: list[tuple[int, str]]) -> None:
        if lang == "mermaid":
            self._mermaid(start, body)
        elif self.in_dag_section and self.current is None:
            for lineno, raw in body:
                self._prose(raw, lineno)

    def _mermaid(self, start: int, body: list[tuple[int, str]]) -> None:
        lines = [(n, raw.split("%%", 1)[0].strip()) for n, raw in body]
        lines = [(n, s) for n, s in lines if s]
        if not lines or not _FLOW_HEADER.match(lines[0][1]):
            return
        statements: list[tuple[int, str, list[list[tuple[str, str]]]]] = []
        labels: dict[str, str] = {}  # a node's label is given once and applies everywhere
        for lineno, stmt in lines[1:]:
            for piece in stmt.split(";"):
                piece = piece.strip()
                if not piece or _MERMAID_SKIP.match(piece):
                    continue
                groups = _statement(piece)
                if groups is None:
                    self.unread.append(Unread(lineno, stmt, "mermaid statement not read"))
                    continue
                for node, label in (n for g in groups for n in g):
                    if label:
                        labels.setdefault(node, label)
                statements.append((lineno, stmt, groups))
        for lineno, stmt, groups in statements:
            self._mermaid_edges(groups, labels, lineno, stmt)

    def _mermaid_edges(
        self,
        groups: list[list[tuple[str, str]]],
        labels: dict[str, str],
        lineno: int,
        stmt: str,
    ) -> None:
        for left, right in zip(groups, groups[1:], strict=False):
            for dep_node, _ in left:
                for task_node, _ in right:
                    dep = _node_task(dep_node, labels.get(dep_node, ""))
                    task = _node_task(task_node, labels.get(task_node, ""))
                    if dep is None or task is None:
                        self.unread.append(Unread(lineno, stmt, "mermaid node is not a task"))
                        continue
                    self.edges.append(Edge(dep, task, MERMAID, lineno))

    def _result(self) -> OracleDag:
        ids = [d.id for d in self.drafts]
        for d in self.drafts:
            for text, marks in d.texts():
                self._depends(d, ids, text, marks)
        tasks = tuple(OracleTask(d.id, bool(d.done), d.line) for d in self.drafts)
        return OracleDag(tasks, tuple(self.edges), tuple(self.unread))

    def _depends(
        self, draft: _Draft, ids: list[str], text: str, marks: list[tuple[int, int]]
    ) -> None:
        for m in _DEPENDS.finditer(text):
            lineno = _line_at(marks, m.start())
            start = m.end()
            while start < len(text) and text[start] in " \t:_*":
                start += 1
            rest = _PARENS.sub(lambda p: " " * len(p.group(0)), text[start:])
            end = _VALUE_END.search(rest)
            value = text[start : start + end.start()] if end else text[start:]
            deps, bad = _ids_in(value)
            if deps is None:
                deps = [i for i in ids if i != draft.id]
            if bad:
                self.unread.append(Unread(lineno, value.strip(), "dependency value not read"))
            for dep in deps:
                self.edges.append(Edge(dep, draft.id, FIELD, lineno))
