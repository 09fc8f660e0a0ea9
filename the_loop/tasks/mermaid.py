"""Read task dependencies from a mermaid flowchart.

Some ``tasks.md`` files state their DAG only as a fenced ```` ```mermaid ````
block. This module reads the edges of one such block; ``the_loop.tasks`` finds
the blocks and decides whether the edges count (see its docstring).

What is read, and why:

* The block must start (after blank lines, ``%%`` comments and an optional
  ``---`` front-matter block) with ``flowchart`` or ``graph`` and an optional
  direction (``TB``, ``TD``, ``BT``, ``RL``, ``LR``). Any other diagram is not
  a dependency graph and gives ``None``.
* A statement is a chain of node groups joined by links: ``A --> B --> C``
  gives A→B and B→C; ``A & B --> C & D`` gives every pair. Statements may be
  separated by ``;``.
* Nodes are an id (letters, digits, ``_``) with an optional shape holding a
  label: ``T1[label]``, ``T1(label)``, ``T1{label}``, ``T1([label])``,
  ``T1[[label]]``, ``T1((label))``, ``T1{{label}}``, ``T1>label]``, quoted
  labels, and a ``:::class`` suffix.
* Links with an arrow head are dependencies, the arrow pointing from the task
  that must finish first: ``-->``, ``--->``, ``==>``, ``-.->``, ``--o``,
  ``--x``, with a label as ``-->|text|`` or ``-- text -->``. An open link
  (``---``, ``===``, ``-.-``) has no direction, so it is reported (info) and
  read as no edge rather than guessed; ``<-->`` would be a cycle, so it is a
  warning and no edge; ``~~~`` is an invisible layout link and is ignored.
* ``classDef``, ``class``, ``style``, ``linkStyle``, ``click``, ``subgraph``,
  ``end``, ``direction`` and ``%%`` comment lines carry no edges.
* A node maps to a task id through its id (``T7``, ``t7``, ``7`` → ``"7"``;
  ``T12b`` → ``"12b"``), else through a leading number in its label
  (``A[7 dispatcher]`` → ``"7"``). A label given once holds for the node in every
  later statement.
  A node that maps to nothing is a warning; its edges are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from the_loop.errors import Where
from the_loop.findings import Finding, Level

_HEADER_RE = re.compile(r"(?:flowchart|graph)(?:[ \t]+(?:TB|TD|BT|RL|LR))?[ \t]*(?:;|$)")
_NODE_ID_RE = re.compile(r"\w+")
_CLASS_SUFFIX_RE = re.compile(r":::[\w-]+")
_TASK_NODE_RE = re.compile(r"(?:[Tt](?:ask)?_?)?([0-9]{1,9}[a-z]?)")
_LABEL_NUMBER_RE = re.compile(r"[Tt]?([0-9]{1,9}(?:\.[0-9]{1,9})*[a-z]?)\b")
_ARROW_RE = re.compile(r"<?(?:-{2,}|={2,}|-\.+-|~{3,})(?:>|[ox](?!\w))?")
_PIPE_LABEL_RE = re.compile(r"\|[^|]*\|")
_IGNORED_KEYWORDS = frozenset(
    {
        "classDef",
        "class",
        "style",
        "linkStyle",
        "click",
        "subgraph",
        "end",
        "direction",
        "accTitle",
        "accDescr",
    }
)
# Opening shape markers, longest first, with the text that closes each.
_SHAPES = (
    ("(((", ")))"),
    ("((", "))"),
    ("([", "])"),
    ("[[", "]]"),
    ("[(", ")]"),
    ("{{", "}}"),
    ("[/", "]"),
    ("[\\", "]"),
    ("[", "]"),
    ("(", ")"),
    ("{", "}"),
    (">", "]"),
)
# Text-on-link openers (``A -- text --> B``) and the arrow that closes each.
_TEXT_LINK_CLOSERS = {
    "-- ": re.compile(r"-{2,}(?:>|[ox](?!\w))?"),
    "== ": re.compile(r"={2,}(?:>|[ox](?!\w))?"),
    "-. ": re.compile(r"\.-+(?:>|[ox](?!\w))?"),
}


@dataclass(frozen=True)
class Edge:
    """``source`` must finish before ``target`` starts; both are task ids."""

    source: str
    target: str
    line: int


@dataclass(frozen=True)
class Flowchart:
    """The edges of one flowchart block, and what could not be read in it.

    ``line`` is the first line of the block's content; ``mapped`` counts the
    nodes that name a task, so a caller can tell a task graph from a diagram
    of something else.
    """

    line: int
    end_line: int
    edges: tuple[Edge, ...]
    findings: tuple[Finding, ...]
    mapped: int
    # The task ids the chart draws, each with the line of its first appearance.
    nodes: tuple[tuple[str, int], ...] = ()


@dataclass
class _Statement:
    """One parsed chain: node groups and the link kind between neighbours."""

    groups: list[list[str]] = field(default_factory=list)
    arrows: list[str] = field(default_factory=list)
    labels: list[tuple[str, str | None]] = field(default_factory=list)  # node, label


class _Syntax(Exception):
    """A statement this reader does not understand (never leaves the module)."""


def parse_flowchart(source: str, path: Path, first_line: int = 1) -> Flowchart | None:
    """Read the edges of a mermaid block's content (the lines inside the fence).

    ``first_line`` is the file line of the first content line, so edges and
    findings carry absolute line numbers. Returns None when the block is not a
    flowchart. Never raises on content.
    """
    lines = source.split("\n")
    found = _header(lines)
    if found is None:
        return None
    start, rest = found
    reader = _Reader(path)
    reader.statement_line(rest, first_line + start)
    for index in range(start + 1, len(lines)):
        reader.statement_line(lines[index], first_line + index)
    return reader.result(first_line, first_line + len(lines) - 1)


def node_task_id(node_id: str, label: str | None) -> str | None:
    """The task id a node stands for: by its id, else by its label's leading number."""
    m = _TASK_NODE_RE.fullmatch(node_id)
    if m:
        return _canonical(m.group(1))
    if label:
        m = _LABEL_NUMBER_RE.match(label.strip().strip("\"'`*"))
        if m:
            return ".".join(_canonical(part) for part in m.group(1).split("."))
    return None


def _canonical(number: str) -> str:
    # Leading zeros do not make another task (T01 is task 1); no int() so huge
    # digit strings cannot hit the interpreter's int-size limit.
    stripped = number.lstrip("0")
    return stripped if stripped[:1].isdigit() else "0" + stripped


def _header(lines: list[str]) -> tuple[int, str] | None:
    """The index of the ``flowchart``/``graph`` line and any statement after it."""
    in_front_matter = False
    for index, raw in enumerate(lines):
        line = raw.strip()
        if in_front_matter:
            in_front_matter = line != "---"
            continue
        if not line or line.startswith("%%"):
            continue
        if line == "---" and index == 0:
            in_front_matter = True
            continue
        m = _HEADER_RE.match(line)
        return (index, line[m.end() :]) if m else None
    return None


class _Reader:
    """Collects nodes, labels and links statement by statement."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.labels: dict[str, str] = {}
        self.first_seen: dict[str, int] = {}
        self.links: list[tuple[str, str, int]] = []
        self.findings: list[Finding] = []

    def statement_line(self, raw: str, line_no: int) -> None:
        text = raw.strip()
        if not text or text.startswith("%%"):
            return
        keyword = text.split(None, 1)[0]
        if keyword in _IGNORED_KEYWORDS:
            return
        pos = 0
        while pos < len(text):
            try:
                statement, pos = _statement(text, pos)
            except _Syntax as exc:
                self._note(
                    Level.WARNING,
                    "tasks.mermaid-unreadable",
                    f"cannot read this mermaid statement ({exc}); it adds no edges",
                    line_no,
                    "write edges as `T1 --> T2`, one per line",
                )
                return
            self._commit(statement, line_no)
            pos = _skip_space(text, pos)
            if pos < len(text) and text[pos] == ";":
                pos += 1
                pos = _skip_space(text, pos)

    def _commit(self, statement: _Statement, line_no: int) -> None:
        """Record a statement's nodes and links (only once it has been read whole)."""
        for node, label in statement.labels:
            self.first_seen.setdefault(node, line_no)
            if label is not None:
                self.labels.setdefault(node, label)
        for left, arrow, right in zip(
            statement.groups[:-1], statement.arrows, statement.groups[1:], strict=True
        ):
            if arrow.startswith("~"):
                continue  # invisible layout link
            if arrow.startswith("<"):
                self._note(
                    Level.WARNING,
                    "tasks.mermaid-bidirectional",
                    f"`{arrow}` points both ways, which is a cycle; no edge read",
                    line_no,
                    "point the arrow from the earlier task: `T1 --> T2`",
                )
                continue
            if not arrow.endswith((">", "o", "x")):
                self._note(
                    Level.INFO,
                    "tasks.mermaid-undirected",
                    f"`{arrow}` has no arrow head, so it states no order; no edge read",
                    line_no,
                    "use `-->` from the task that must finish first",
                )
                continue
            self.links.extend((a, b, line_no) for a in left for b in right)

    def result(self, first_line: int, end_line: int) -> Flowchart:
        ids: dict[str, str | None] = {}
        for node, seen in self.first_seen.items():
            ids[node] = node_task_id(node, self.labels.get(node))
            if ids[node] is None:
                self._note(
                    Level.WARNING,
                    "tasks.mermaid-unmappable",
                    f"mermaid node `{node}` names no task; its edges are ignored",
                    seen,
                    "name task nodes `T<n>` or start the label with the "
                    "task number, e.g. `A[7 dispatcher]`",
                )
        edges: dict[tuple[str, str], Edge] = {}
        for a, b, line_no in self.links:
            source, target = ids[a], ids[b]
            if source is not None and target is not None:
                edges.setdefault((source, target), Edge(source, target, line_no))
        nodes: dict[str, int] = {}
        for node, task_id in ids.items():
            if task_id is not None:
                nodes.setdefault(task_id, self.first_seen[node])
        return Flowchart(
            first_line,
            end_line,
            tuple(edges.values()),
            tuple(self.findings),
            len(nodes),
            tuple(nodes.items()),
        )

    def _note(self, level: Level, code: str, message: str, line_no: int, hint: str) -> None:
        self.findings.append(Finding(level, code, message, Where(self.path, line_no), hint))


def _statement(text: str, pos: int) -> tuple[_Statement, int]:
    """One chain of node groups and links, from ``pos`` to its end or a ``;``."""
    statement = _Statement()
    group, pos = _group(text, pos, statement)
    statement.groups.append(group)
    while True:
        arrow, after = _link(text, pos)
        if arrow is None:
            break
        group, pos = _group(text, after, statement)
        statement.arrows.append(arrow)
        statement.groups.append(group)
    pos = _skip_space(text, pos)
    if pos < len(text) and text[pos] != ";":
        raise _Syntax(f"unexpected {text[pos : pos + 12]!r}")
    return statement, pos


def _group(text: str, pos: int, statement: _Statement) -> tuple[list[str], int]:
    """Nodes joined by ``&``."""
    nodes = []
    while True:
        node, pos = _node(text, _skip_space(text, pos), statement)
        nodes.append(node)
        after = _skip_space(text, pos)
        if after < len(text) and text[after] == "&":
            pos = after + 1
            continue
        return nodes, pos


def _node(text: str, pos: int, statement: _Statement) -> tuple[str, int]:
    """A node id with its optional shape and ``:::class``."""
    m = _NODE_ID_RE.match(text, pos)
    if not m:
        raise _Syntax(f"expected a node at {text[pos : pos + 12]!r}")
    node = m.group()
    label, pos = _shape(text, m.end())
    statement.labels.append((node, label))
    suffix = _CLASS_SUFFIX_RE.match(text, pos)
    return node, suffix.end() if suffix else pos


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _shape(text: str, pos: int) -> tuple[str | None, int]:
    """The label of a node shape starting at ``pos``, and the position after it."""
    shape = next(((o, c) for o, c in _SHAPES if text.startswith(o, pos)), None)
    if shape is None:
        return None, pos
    opener, closer = shape
    start = pos + len(opener)
    search_from = start
    if text.startswith('"', start):
        quote_end = text.find('"', start + 1)
        if quote_end < 0:
            raise _Syntax("unclosed quoted label")
        search_from = quote_end + 1
    end = text.find(closer, search_from)
    if end < 0:
        raise _Syntax(f"unclosed {opener!r} shape")
    label = text[start:end]
    if opener in ("[/", "[\\") and label[-1:] in "/\\":
        label = label[:-1]
    return label.strip().strip('"'), end + len(closer)


def _link(text: str, pos: int) -> tuple[str | None, int]:
    """The arrow at ``pos`` (labels dropped) and the position after it, if any."""
    pos = _skip_space(text, pos)
    for opener, closer in _TEXT_LINK_CLOSERS.items():
        if text.startswith(opener, pos):
            end = closer.search(text, pos + 3)
            if end:
                return opener[:2] + end.group(), end.end()
    m = _ARROW_RE.match(text, pos)
    if not m:
        return None, pos
    after = _skip_space(text, m.end())
    label = _PIPE_LABEL_RE.match(text, after)
    return m.group(), label.end() if label else m.end()
