"""Where a task list's dependency edges come from: fields, a mermaid flowchart, prose chains.

A ``tasks.md`` may state its DAG in four places: the tasks' own dependency
statements (``_Depends on:_`` fields and ``— depends on T1.`` clauses), a
```` ```mermaid ```` flowchart, arrow chains in a DAG section and dependency
tables (both read by ``the_loop.tasks.prose_dag``). After the reader's pass this module joins them:

* **The union.** A task depends on every task any source says it depends on.
  No source is dropped because another one exists; ``depends_on`` is None only
  when no source says anything about the task (a chart states every task it
  draws, a chain every task an arrow points at, a field the task it belongs to).
* **Disagreements.** Two sources disagree about a task they both state when one
  of them orders a dependency before it that the other does not order before it
  at all, directly or through other tasks. A chart that draws only the transitive
  reduction of the fields (``1 → 2 → 3`` where task 3's field says ``1, 2``)
  agrees with them. A field or a chart lists every dependency of a task it
  states; a prose chain (a critical path) only some, so what a chain leaves out
  is no disagreement, but an order it adds is. Each disagreement is one warning
  naming both places.
* **Held back.** A task whose dependency statement was not understood keeps the
  line of that statement (``Task.unread_depends_line``), so the graph does not
  offer it as ready on the strength of what could be read.

It is a module of its own because it is a policy over the whole file, not part
of reading a line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from the_loop.findings import Level
from the_loop.tasks.assembly import Context, show_ids
from the_loop.tasks.model import Task
from the_loop.tasks.prose_dag import ProseDag

if TYPE_CHECKING:
    from the_loop.tasks import mermaid  # its classes and patterns load with a flowchart
    from the_loop.tasks.mermaid import Edge
    from the_loop.tasks.prose_dag import ProseEdge

# Ancestor searches made while comparing sources, at most (keeps a huge file linear).
_SEARCH_BUDGET = 2_000_000


class _Source:
    """One source's edges: target → {dependency: line}, and the tasks it states.

    A plain class (working state of one read): one dataclass fewer to build on every start.
    """

    __slots__ = ("name", "words", "complete", "deps", "stated")

    def __init__(self, name: str, words: str, *, complete: bool = True) -> None:
        self.name = name  # "fields" | "mermaid" | "prose"
        self.words = words  # how a message names it
        # Whether stating a task means stating all its direct dependencies. A field
        # lists them all and a chart draws them all; a chain in prose (a critical
        # path, `1 → {2, 3}`) states some orders and claims nothing about the rest.
        self.complete = complete
        self.deps: dict[str, dict[str, int]] = {}
        self.stated: dict[str, int] = {}  # task → line of the statement

    def add(self, dep: str, target: str, line: int) -> None:
        self.deps.setdefault(target, {}).setdefault(dep, line)
        self.stated.setdefault(target, line)

    def direct(self, task_id: str) -> set[str]:
        return set(self.deps.get(task_id, ()))


def resolve_source(
    ctx: Context,
    charts: list[mermaid.Flowchart],
    prose: ProseDag,
    *,
    relies_on_order: bool = False,
) -> tuple[tuple[Task, ...], str]:
    """The tasks read (``ctx.tasks``) with their final edges, and the sources used.

    ``relies_on_order``: the file's format makes order the dependency where
    nothing is stated (``the_loop.tasks.order``), so silence is not independence.

    The second value names the sources that state something, joined by ``+``
    (``"fields"``, ``"fields+mermaid"``, ``"mermaid+prose"``, …), or ``"none"``.
    """
    tasks = ctx.tasks
    known = {t.id for t in tasks}
    others = [
        s
        for s in (_charts(charts, known, ctx), _prose(prose, known, ctx), _table(prose, known, ctx))
        if s.stated
    ]
    unread = {tasks[i].id: line for i, line in ctx.unread_depends.items()}
    if not others:
        # The fields alone: each task already holds its answer (the common, large case).
        final = tuple(
            replace(t, unread_depends_line=unread[t.id]) if t.id in unread else t for t in tasks
        )
        fields = any(s and i not in ctx.unread_depends for i, s in enumerate(ctx.stated))
        sources = [_Source("fields", "")] if fields else []
    else:
        sources = [s for s in (_fields(ctx), *others) if s.stated]
        if len(sources) > 1:
            _compare(sources, tasks, unread, ctx)
        final = tuple(_joined(task, sources, unread) for task in tasks)
    if not sources and len(tasks) > 1 and not unread and not relies_on_order:
        ctx.note(
            Level.INFO,
            "tasks.no-dependencies",
            f"no task states its dependencies and there is no mermaid flowchart or "
            f"dependency chain, so the {len(tasks)} tasks are treated as independent",
            tasks[0].line,
            "add `  - _Depends on:_ 1, 2` (or `none`) under each task, or a "
            "```mermaid flowchart of `T1 --> T2` edges",
        )
    return final, "+".join(s.name for s in sources) or "none"


def _fields(ctx: Context) -> _Source:
    source = _Source("fields", "its dependency statement")
    for index, task in enumerate(ctx.tasks):
        if not ctx.stated[index] or index in ctx.unread_depends:
            continue
        line = task.depends_line or task.line
        source.stated.setdefault(task.id, line)
        for dep in task.depends_on or ():
            source.deps.setdefault(task.id, {}).setdefault(dep, line)
    return source


def _charts(charts: list[mermaid.Flowchart], known: set[str], ctx: Context) -> _Source:
    source = _Source("mermaid", "the mermaid flowchart")
    for chart in charts:
        if not chart.mapped:
            ctx.note(
                Level.INFO,
                "tasks.mermaid-no-tasks",
                "this mermaid flowchart names no tasks, so it is not read as the DAG",
                chart.line,
                "name task nodes `T<n>` (e.g. `T1 --> T2`)",
            )
            continue
        ctx.findings.extend(chart.findings)
        for task_id, line in chart.nodes:
            if task_id in known:
                source.stated.setdefault(task_id, line)
        _add_edges(source, chart.edges, known, ctx, "tasks.mermaid-unknown-task", "mermaid edge")
    return source


def _prose(prose: ProseDag, known: set[str], ctx: Context) -> _Source:
    source = _Source("prose", "the dependency chain", complete=False)
    ctx.findings.extend(prose.findings)
    _add_edges(source, prose.edges, known, ctx, "tasks.dag-unknown-task", "dependency chain")
    return source


def _table(prose: ProseDag, known: set[str], ctx: Context) -> _Source:
    """A dependency table: each row states all of its task's dependencies."""
    source = _Source("table", "the dependency table")
    for target, line in prose.table_stated.items():
        if target in known:
            source.stated.setdefault(target, line)
    _add_edges(
        source, prose.table_edges, known, ctx, "tasks.dag-unknown-task", "dependency table row"
    )
    return source


def _add_edges(
    source: _Source,
    edges: Iterable[Edge | ProseEdge],
    known: set[str],
    ctx: Context,
    code: str,
    what: str,
) -> None:
    """Each edge whose target is a task of the file; a warning for each other one."""
    for edge in edges:
        if edge.target in known:
            source.add(edge.source, edge.target, edge.line)
        else:
            _unknown_target(ctx, code, what, edge.source, edge.target, edge.line)


def _unknown_target(ctx: Context, code: str, what: str, src: str, target: str, line: int) -> None:
    ctx.note(
        Level.WARNING,
        code,
        f"{what} {src} → {target} points at a task this file does not list",
        line,
        "fix the id, or add the task to the list",
    )


def _joined(task: Task, sources: list[_Source], unread: dict[str, int]) -> Task:
    """``task`` with the union of what every source says about its dependencies."""
    line = unread.get(task.id)
    stated = [s for s in sources if task.id in s.stated]
    if not stated:
        if line is None:
            return task
        return replace(task, unread_depends_line=line)
    merged: dict[str, None] = {}
    first_line = task.depends_line if task.depends_on is not None else None
    for source in stated:
        deps = source.deps.get(task.id, {})
        merged.update(dict.fromkeys(deps))
        if first_line is None and deps:
            first_line = min(deps.values())
    return replace(
        task,
        depends_on=tuple(merged),
        depends_line=first_line,
        unread_depends_line=line,
    )


class _Ancestors:
    """Tasks ordered before a task by one source's edges alone (memoized, budgeted)."""

    def __init__(self, source: _Source) -> None:
        self.source = source
        self.memo: dict[str, set[str]] = {}
        self.spent = 0

    def of(self, task_id: str) -> set[str] | None:
        """Every task some chain of this source's edges leads from to ``task_id``."""
        if task_id in self.memo:
            return self.memo[task_id]
        seen: set[str] = set()
        stack = list(self.source.deps.get(task_id, ()))
        while stack:
            dep = stack.pop()
            if dep in seen:
                continue
            seen.add(dep)
            self.spent += 1
            if self.spent > _SEARCH_BUDGET:
                return None
            stack.extend(self.source.deps.get(dep, ()))
        self.memo[task_id] = seen
        return seen


def _compare(
    sources: list[_Source], tasks: list[Task], unread: dict[str, int], ctx: Context
) -> None:
    """One warning per task and pair of sources that order its dependencies differently."""
    closures = {s.name: _Ancestors(s) for s in sources}
    labels = {t.id: t.label for t in tasks}
    for index, first in enumerate(sources):
        for second in sources[index + 1 :]:
            for task_id in _common(first, second):
                if task_id in unread:
                    continue
                one, two = first.direct(task_id), second.direct(task_id)
                if one == two:
                    continue
                only_first = (
                    _unordered(one - two, closures[second.name].of(task_id))
                    if second.complete
                    else []
                )
                only_second = (
                    _unordered(two - one, closures[first.name].of(task_id))
                    if first.complete
                    else []
                )
                if only_first or only_second:
                    _disagree(
                        ctx,
                        labels.get(task_id, task_id),
                        task_id,
                        first,
                        second,
                        only_first,
                        only_second,
                    )


def _common(first: _Source, second: _Source) -> Iterable[str]:
    return [t for t in first.stated if t in second.stated]


def _unordered(deps: set[str], ancestors: set[str] | None) -> list[str]:
    """The dependencies the other source does not order before the task at all."""
    if ancestors is None:  # over budget: compare the direct lists only
        return sorted(deps)
    return sorted(d for d in deps if d not in ancestors)


def _disagree(
    ctx: Context,
    label: str,
    task_id: str,
    first: _Source,
    second: _Source,
    only_first: list[str],
    only_second: list[str],
) -> None:
    code = (
        "tasks.mermaid-mismatch" if "mermaid" in (first.name, second.name) else "tasks.dag-mismatch"
    )
    one = sorted(first.direct(task_id))
    two = sorted(second.direct(task_id))
    line_one, line_two = _line(first, task_id), _line(second, task_id)
    parts = []
    if only_first:
        parts.append(f"{show_ids(only_first)} only in {first.words}")
    if only_second:
        parts.append(f"{show_ids(only_second)} only in {second.words}")
    ctx.note(
        Level.WARNING,
        code,
        f"task {label}: {first.words} (line {line_one}) says {show_ids(one)}, but "
        f"{second.words} (line {line_two}) says {show_ids(two)} ({'; '.join(parts)}); "
        "loop uses both",
        line_one,
        "make the two agree; every dependency either one states is kept",
    )


def _line(source: _Source, task_id: str) -> int:
    deps = source.deps.get(task_id)
    return min(deps.values()) if deps else source.stated[task_id]
