"""``loop graph ID --format svg``: the task DAG drawn, by waves, states coloured.

The layout is grandalf's Sugiyama layout (layers, crossing reduction, Brandes–Köpf
coordinates); loop only tells it which layer each task belongs to: the done tasks
first (by their depth among done tasks), then wave 1, wave 2, … of the open ones, so
a column of the drawing is a wave. A graph with a cycle is left to grandalf's own
ranking (it reverses feedback edges). Layers run left to right.

Every task is one ``<g class="task">`` with ``data-task`` and ``data-state``
attributes and an ``id`` of ``task-<id>``, so a page (``loop board``) can restyle
it as states change; edges on the critical path carry ``class="edge critical"``.
grandalf is imported here alone, when an SVG is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from the_loop.dag.analysis import DagReport
from the_loop.dag.render import _state_class, _unique
from the_loop.tasks import Task, TaskList

NODE_W = 150
NODE_H = 46
GAP_X = 40  # between layers
GAP_Y = 18  # between tasks of a layer
MARGIN = 24
HEADER = 28  # room for the wave labels
TITLE_CHARS = 19

# fill, stroke per state (the palette of the mermaid and DOT renderers, plus the board's)
COLOURS: Mapping[str, tuple[str, str]] = {
    "done": ("#d3f9d8", "#2b8a3e"),
    "active": ("#fff3bf", "#e67700"),
    "ready": ("#d0ebff", "#1864ab"),
    "open": ("#f1f3f5", "#868e96"),
    "blocked": ("#ffe3e3", "#c92a2a"),
    "running": ("#ffec99", "#f08c00"),
    "queued": ("#e5dbff", "#6741d9"),
    "merged": ("#b2f2bb", "#2f9e44"),
    "evicted": ("#ffc9c9", "#e03131"),
}


@dataclass(frozen=True)
class Placed:
    """One task's box: its top-left corner, and the layer (column) it is in."""

    x: float
    y: float
    column: int


def render_svg(item: str, tasks: TaskList, dag: DagReport) -> str:
    """The whole graph as a standalone SVG document."""
    unique = _unique(tasks)
    ready, blocked = set(dag.ready), set(dag.unschedulable)
    states = {t.id: _state_class(t, dag, ready, blocked) for t in unique}
    known = {t.id for t in unique}
    edges = [(d, t.id) for t in unique for d in (t.depends_on or ()) if d in known]
    placed, columns = layout(unique, edges, dag)
    return draw(item, unique, edges, placed, columns, states, dag)


def layout(
    tasks: Sequence[Task], edges: Sequence[tuple[str, str]], dag: DagReport
) -> tuple[dict[str, Placed], list[str]]:
    """Where each task goes, laid out by grandalf; and the label of each column."""
    # grandalf: the graph-layout library, needed only when an SVG is drawn
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import VertexViewer

    columns, labels = _columns(tasks, edges, dag)
    vertices = {t.id: Vertex(t.id) for t in tasks}
    for vertex in vertices.values():
        # The layout's layers run top to bottom; the drawing turns them to run left to
        # right, so the box's height is the layout's width and its width the layout's height.
        vertex.view = VertexViewer(w=NODE_H + GAP_Y, h=NODE_W)
    graph = Graph(list(vertices.values()), [Edge(vertices[a], vertices[b]) for a, b in edges])
    placed: dict[str, Placed] = {}
    top = float(MARGIN + HEADER)
    for component in graph.C:
        sugiyama = _wave_layout(component, columns)
        sugiyama.yspace = GAP_X
        sugiyama.xspace = GAP_Y
        sugiyama.init_all()
        sugiyama.draw()
        lows = [v.view.xy[0] for v in component.sV]
        low = min(lows) - (NODE_H + GAP_Y) / 2
        for vertex in component.sV:
            across, along = vertex.view.xy
            column = sugiyama.grx[vertex].rank
            placed[vertex.data] = Placed(
                x=MARGIN + column * (NODE_W + GAP_X),
                y=top + across - low - (NODE_H + GAP_Y) / 2,
                column=column,
            )
        top = max(p.y for p in placed.values()) + NODE_H + GAP_Y * 2
    return placed, labels


def _wave_layout(component: Any, columns: Mapping[str, int] | None) -> Any:
    """grandalf's Sugiyama layout, its layers given as the waves (see the module docstring)."""
    from grandalf.layouts import Layer, SugiyamaLayout

    class WaveLayout(SugiyamaLayout):  # grandalf has no type hints: an untyped base
        def rank_all(self, roots: Any, optimize: bool = False) -> None:
            if columns is None:
                super().rank_all(roots, optimize)
                return
            used = sorted({columns[v.data] for v in self.g.sV})
            dense = {c: i for i, c in enumerate(used)}
            self.layers = [Layer([]) for _ in used]
            for vertex in self.g.sV:
                rank = dense[columns[vertex.data]]
                self.grx[vertex].rank = rank
                self.layers[rank].append(vertex)

    return WaveLayout(component)


def _columns(
    tasks: Sequence[Task], edges: Sequence[tuple[str, str]], dag: DagReport
) -> tuple[dict[str, int] | None, list[str]]:
    """Each task's column (done tasks first, then the waves), or None for a cyclic graph."""
    order = list(dag.order)
    if dag.cycles or len(order) < len(tasks):
        return None, []
    state = {t.id: t for t in tasks}
    before: dict[str, list[str]] = {}
    for a, b in edges:
        before.setdefault(b, []).append(a)
    done_depth: dict[str, int] = {}
    for task_id in order:
        if state[task_id].state.value == "done":
            done_depth[task_id] = 1 + max(
                (done_depth.get(d, -1) for d in before.get(task_id, ())), default=-1
            )
    done_columns = 1 + max(done_depth.values(), default=-1)
    wave_of = {t: i for i, wave in enumerate(dag.waves) for t in wave}
    column: dict[str, int] = {}
    for task_id in order:
        base = done_depth.get(task_id)
        base = base if base is not None else done_columns + wave_of.get(task_id, len(dag.waves))
        after = max((column[d] + 1 for d in before.get(task_id, ()) if d in column), default=0)
        column[task_id] = max(base, after)
    used = sorted(set(column.values()))
    labels = [_column_label(c, done_columns, len(dag.waves)) for c in used]
    return column, labels


def _column_label(column: int, done_columns: int, waves: int) -> str:
    """``done`` over the first column of done tasks, then ``wave N`` (the others unlabelled)."""
    if column < done_columns:
        return "done" if column == 0 else ""
    wave = column - done_columns + 1
    return f"wave {wave}" if wave <= waves else ""


def draw(
    item: str,
    tasks: Sequence[Task],
    edges: Sequence[tuple[str, str]],
    placed: Mapping[str, Placed],
    labels: Sequence[str],
    states: Mapping[str, str],
    dag: DagReport,
) -> str:
    """The SVG text for laid-out tasks."""
    critical = set(zip(dag.critical_path, dag.critical_path[1:], strict=False))
    on_path = set(dag.critical_path)
    width = max((p.x for p in placed.values()), default=0) + NODE_W + MARGIN
    height = max((p.y for p in placed.values()), default=0) + NODE_H + MARGIN
    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" class="loop-dag" '
        f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'data-item="{_attr(item)}" font-family="system-ui, sans-serif" font-size="12">',
        f"<title>{escape(item)}: task graph</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#868e96"/></marker>'
        '<marker id="arrow-critical" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#c92a2a"/></marker></defs>',
        "<style>.task text{pointer-events:none}.edge{fill:none;stroke:#adb5bd;"
        "stroke-width:1.5}.edge.critical{stroke:#c92a2a;stroke-width:3}"
        ".wave-label{fill:#495057;font-weight:600}</style>",
    ]
    for index, label in enumerate(labels):
        if not label:
            continue
        x = MARGIN + index * (NODE_W + GAP_X) + NODE_W / 2
        out.append(
            f'<text class="wave-label" x="{x:.0f}" y="{MARGIN + 10}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    for a, b in edges:
        start, end = placed[a], placed[b]
        x1, y1 = start.x + NODE_W, start.y + NODE_H / 2
        x2, y2 = end.x, end.y + NODE_H / 2
        bend = max((x2 - x1) / 2, 20)
        hot = (a, b) in critical
        out.append(
            f'<path class="edge{" critical" if hot else ""}" data-from="{_attr(a)}" '
            f'data-to="{_attr(b)}" d="M {x1:.1f} {y1:.1f} C {x1 + bend:.1f} {y1:.1f}, '
            f'{x2 - bend:.1f} {y2:.1f}, {x2:.1f} {y2:.1f}" '
            f'marker-end="url(#{"arrow-critical" if hot else "arrow"})"/>'
        )
    for task in tasks:
        out.append(_node(task, placed[task.id], states[task.id], task.id in on_path))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _node(task: Task, at: Placed, state: str, critical: bool) -> str:
    fill, stroke = COLOURS.get(state, COLOURS["open"])
    title = task.title if len(task.title) <= TITLE_CHARS else task.title[: TITLE_CHARS - 1] + "…"
    stroke_width = 3 if critical else 1.5
    return (
        f'<g class="task state-{state}{" critical" if critical else ""}" '
        f'id="task-{_attr(task.id)}" data-task="{_attr(task.id)}" data-state="{state}">'
        f"<title>{escape(task.id)}. {escape(task.title)} ({state})</title>"
        f'<rect x="{at.x:.1f}" y="{at.y:.1f}" width="{NODE_W}" height="{NODE_H}" rx="8" '
        f'fill="{fill}" stroke="{stroke}" stroke-width="{stroke_width}"/>'
        f'<text x="{at.x + 10:.1f}" y="{at.y + 19:.1f}" font-weight="600">'
        f"{escape(task.id)}. {escape(title)}</text>"
        f'<text class="state" x="{at.x + 10:.1f}" y="{at.y + 36:.1f}" fill="#495057">'
        f"{escape(state)}</text></g>"
    )


def _attr(text: str) -> str:
    return escape(text, {'"': "&quot;"})
