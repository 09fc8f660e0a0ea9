"""Where a task list's dependency edges come from: the fields, a mermaid flowchart, or both.

A ``tasks.md`` may state its DAG in the tasks' ``_Depends on:_`` fields, in a
```` ```mermaid ```` flowchart, in both or in neither. After the reader's pass
this module decides which answer counts (``TaskList.dependency_source``), fills
in ``depends_on`` from the flowchart when it is the only source, and reports
where the two disagree; the rules are in ``the_loop.tasks``. It is a module of
its own because it is a policy over the whole file, not part of reading a line.
"""

from __future__ import annotations

from dataclasses import replace

from the_loop.findings import Level
from the_loop.tasks import mermaid
from the_loop.tasks.assembly import Context, show_ids
from the_loop.tasks.model import Task


def resolve_source(
    ctx: Context, charts: list[mermaid.Flowchart], stated: list[bool], unreadable: set[int]
) -> tuple[tuple[Task, ...], str]:
    """The tasks read so far (``ctx.tasks``) with their final edges, and the edges' source.

    ``stated`` says, per task, whether its fields or prose stated dependencies;
    ``unreadable`` holds the indices of tasks whose stated dependencies could not be read.
    """
    tasks = ctx.tasks
    graphs = []
    for chart in charts:
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
    fields = any(stated)
    if graphs:
        incoming = _incoming(graphs, tasks, ctx)
        if fields:
            _compare(tasks, unreadable, incoming, graphs, ctx)
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
    graphs: list[mermaid.Flowchart], tasks: list[Task], ctx: Context
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
    ctx: Context,
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
            else f"(line {task.depends_line}) says {show_ids(task.depends_on)}"
        )
        chart_line = edges[0].line if edges else graphs[0].line
        drawn = [e.source for e in edges]
        ctx.note(
            Level.WARNING,
            "tasks.mermaid-mismatch",
            f"task {task.label} {said}, but the mermaid flowchart (line {chart_line}) "
            f"says {show_ids(drawn)}",
            task.depends_line or task.line,
            "make the two agree; loop follows the `_Depends on:_` fields",
        )
