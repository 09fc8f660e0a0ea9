"""Render a task DAG as text, mermaid or Graphviz DOT.

Every format shows each task's state, marks the ready tasks and the critical
path, and lists the waves. Rendering is linear in tasks and edges.

Titles print as written: an em dash stays an em dash. Only what each format
itself would misread is escaped: in a mermaid label ``"``, ``<`` and ``>``
become the entities ``#quot;``, ``#lt;`` and ``#gt;``; in a DOT string a
backslash and ``"`` get a backslash before them and a line break is written as
backslash-n.
"""

from __future__ import annotations

from the_loop.dag.analysis import DagReport
from the_loop.tasks import Task, TaskList, TaskState

_BOX = {TaskState.DONE: "[x]", TaskState.IN_PROGRESS: "[-]", TaskState.OPEN: "[ ]"}


def _deps(task: Task, known: set[str]) -> list[str]:
    return [d for d in (task.depends_on or ()) if d in known]


def _state_class(task: Task, dag: DagReport, ready: set[str], blocked: set[str]) -> str:
    if task.progress is TaskState.DONE:
        return "done"
    if task.id in blocked:
        return "blocked"
    if task.progress is TaskState.IN_PROGRESS:
        return "active"
    return "ready" if task.id in ready else "open"


def _unique(tasks: TaskList) -> list[Task]:
    seen: set[str] = set()
    result = []
    for task in tasks.tasks:
        if task.id not in seen:
            seen.add(task.id)
            result.append(task)
    return result


def render_text(item: str, tasks: TaskList, dag: DagReport) -> str:
    """A plain-text view: summary, waves, critical path, then one line per task."""
    unique = _unique(tasks)
    known = {t.id for t in unique}
    critical = set(dag.critical_path)
    ready = set(dag.ready)
    lines = [
        f"{item}: {dag.total} tasks, {dag.done} done, {len(dag.ready)} ready, "
        f"{len(dag.waves)} wave(s)"
    ]
    for number, wave in enumerate(dag.waves, 1):
        lines.append(f"  wave {number}: " + ", ".join(_mark(t, critical) for t in wave))
    if dag.critical_path:
        lines.append("  critical path: " + " → ".join(dag.critical_path))
    if dag.unschedulable:
        lines.append("  blocked for good: " + ", ".join(dag.unschedulable))
    lines.append("")
    for task in unique:
        deps = _deps(task, known) + [d for d in (task.depends_on or ()) if d not in known]
        after = f"  ← {', '.join(deps)}" if deps else ""
        flag = "  (ready)" if task.id in ready else ""
        lines.append(f"{_BOX[task.progress]} {_mark(task.id, critical)}. {task.title}{after}{flag}")
    return "\n".join(lines) + "\n"


def _mark(task_id: str, critical: set[str]) -> str:
    return f"{task_id}*" if task_id in critical else task_id


def render_mermaid(item: str, tasks: TaskList, dag: DagReport) -> str:
    """A mermaid flowchart; classes colour states, thick edges trace the critical path."""
    unique = _unique(tasks)
    known = {t.id for t in unique}
    ready, blocked = set(dag.ready), set(dag.unschedulable)
    path_edges = set(zip(dag.critical_path, dag.critical_path[1:], strict=False))
    lines = ["flowchart LR", f"  %% {item}: critical path marked with thick edges"]
    for task in unique:
        label = _mermaid_label(f"{task.id} {task.title}")
        lines.append(f'  {_node(task.id)}["{label}"]:::{_state_class(task, dag, ready, blocked)}')
    for task in unique:
        for dep in _deps(task, known):
            arrow = "==>" if (dep, task.id) in path_edges else "-->"
            lines.append(f"  {_node(dep)} {arrow} {_node(task.id)}")
    for number, wave in enumerate(dag.waves, 1):
        lines.append(f"  %% wave {number}: {', '.join(wave)}")
    lines += [
        "  classDef done fill:#d3f9d8,stroke:#2b8a3e",
        "  classDef active fill:#fff3bf,stroke:#e67700",
        "  classDef ready fill:#d0ebff,stroke:#1864ab",
        "  classDef open fill:#f1f3f5,stroke:#868e96",
        "  classDef blocked fill:#ffe3e3,stroke:#c92a2a",
    ]
    return "\n".join(lines) + "\n"


def _node(task_id: str) -> str:
    return "T" + "".join(ch if ch.isalnum() else "_" for ch in task_id)


_MERMAID_ENTITIES = str.maketrans({'"': "#quot;", "<": "#lt;", ">": "#gt;", "\n": " "})


def _mermaid_label(text: str) -> str:
    """``text`` for a quoted mermaid label: literal, with the characters mermaid reads escaped."""
    return text.translate(_MERMAID_ENTITIES)


def _dot(text: str) -> str:
    """``text`` as a DOT string, quotes included (DOT, unlike JSON, has no escape for ``—``)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_DOT_COLOURS = {
    "done": "#d3f9d8",
    "active": "#fff3bf",
    "ready": "#d0ebff",
    "open": "#f1f3f5",
    "blocked": "#ffe3e3",
}


def render_dot(item: str, tasks: TaskList, dag: DagReport) -> str:
    """Graphviz DOT; waves become ranks, the critical path is drawn bold."""
    unique = _unique(tasks)
    known = {t.id for t in unique}
    ready, blocked = set(dag.ready), set(dag.unschedulable)
    path_edges = set(zip(dag.critical_path, dag.critical_path[1:], strict=False))
    lines = [
        f"digraph {_dot(item)} {{",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
    ]
    for task in unique:
        state = _state_class(task, dag, ready, blocked)
        label = _dot(f"{task.id}. {task.title}\n({state})")
        lines.append(f'  {_dot(task.id)} [label={label}, fillcolor="{_DOT_COLOURS[state]}"];')
    for task in unique:
        for dep in _deps(task, known):
            style = ' [penwidth=3, color="#c92a2a"]' if (dep, task.id) in path_edges else ""
            lines.append(f"  {_dot(dep)} -> {_dot(task.id)}{style};")
    for wave in dag.waves:
        lines.append("  { rank=same; " + " ".join(_dot(t) + ";" for t in wave) + " }")
    lines.append("}")
    return "\n".join(lines) + "\n"


RENDERERS = {"text": render_text, "mermaid": render_mermaid, "dot": render_dot}
_STATE_NAMES = {state: state.value for state in TaskState}  # enum .value is slow per task


def graph_json(item: str, tasks: TaskList, dag: DagReport) -> dict[str, object]:
    """The whole graph as JSON data (``loop graph --json``): every task and every edge."""
    listed = tasks.tasks
    names = _STATE_NAMES
    return {
        "item": item,
        "order": list(dag.order),
        "ready": list(dag.ready),
        "waves": [list(w) for w in dag.waves],
        "criticalPath": list(dag.critical_path),
        "unschedulable": list(dag.unschedulable),
        "edges": [[d, t.id] for t in listed if t.depends_on for d in t.depends_on],
        "tasks": [
            {"id": t.id, "title": t.title, "state": names[t.progress], "line": t.line}
            for t in listed
        ],
    }
