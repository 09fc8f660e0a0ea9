"""Reason about the task graph of one ``tasks.md``: validity, order, readiness.

``analyze`` turns a ``TaskList`` into a ``DagReport``: findings about the graph
(duplicate ids, unknown dependencies, self-dependencies, cycles, done tasks that
depend on unfinished ones), a topological order, the ready set, waves of tasks
that may run in parallel, the critical path, a deterministic ``next`` task and,
for every task that is not ready, the dependencies that block it.

Conventions
-----------
* **Edges.** ``5 depends on 3`` is the edge ``3 → 5``: an arrow reads "comes
  before" (is needed by), as in the template's textual DAG ``1 → 2 → 3``. A
  cycle is printed the same way: ``cycle: 3 → 5 → 7 → 3`` means 5 depends on 3,
  7 on 5 and 3 on 7.
* **Ids** are compared by ``id_sort_key``: dotted numbers as tuples of ints
  (``"3" < "3.2" < "10"``), then every non-numeric id, lexicographically. Every
  tie anywhere in this module is broken by that order ("lowest id").
* **Duplicates.** The first definition of an id (in file order) is the task the
  graph uses; later ones are reported and otherwise ignored.
* **Blocked for good.** A task that is not done is *unschedulable* when it sits
  on a cycle (a non-trivial strongly connected component, or a
  self-dependency), depends on an id that does not exist, has a dependency
  statement the reader did not understand (``Task.unread_depends_line``: it may
  wait for something loop cannot see), or depends on a task that is not done and
  unschedulable. Only unfinished dependencies block: a done task never holds
  anything up.

The ``next`` ranking
--------------------
Among the ready tasks (open or in progress, every dependency done, not on a
cycle), ``next`` is the first by:

0. required before optional (Kiro's ``- [ ]*``): optional work never comes first;
1. in-progress before open: finish what was started before starting more;
2. greater *height*: the number of tasks in the longest chain of unfinished,
   schedulable work that starts at the task and runs through its dependents.
   Heading the longest remaining chain is the linear-time stand-in for
   "unblocks the most remaining work" (counting every transitive dependent
   exactly is super-linear on a DAG), and it keeps the critical path moving;
3. more unfinished direct dependents;
4. lowest id.

``ready`` lists the ready tasks in that same ranking, so ``next == ready[0]``.

Cost
----
Every pass is iterative (no recursion, so a 100k-task chain is fine) and visits
each task and each edge a constant number of times: Kahn's algorithm for the
order, an iterative Tarjan for strongly connected components (run only on what
Kahn could not order), one breadth-first search per cyclic component (those two
in ``the_loop.dag.cycles``), and a level-by-level Kahn for the waves. The only
super-linear steps are sorting the ids once and the heap that breaks ties in
the order, O(N log N).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from heapq import heappop, heappush
from pathlib import Path
from types import MappingProxyType

from the_loop.dag.cycles import cycle_through, cyclic_groups, group_starts
from the_loop.errors import DagError, Where
from the_loop.findings import Finding, Level, sorted_findings
from the_loop.io import collector
from the_loop.tasks import Task, TaskList, TaskState

IdKey = tuple[int, tuple[int, ...], str]

# How many existing ids on each side of an unknown one the hint suggests.
_NEARBY = 2


def id_sort_key(task_id: str) -> IdKey:
    """Sort key for task ids: dotted numbers numerically, then the rest by text.

    ``"3"`` < ``"3.2"`` < ``"10"`` < ``"10b"`` < ``"11"`` < ``"T1"``. The id itself is the last
    element so that ``"03"`` and ``"3"`` still compare deterministically.
    """
    if task_id.isdigit() and task_id.isascii():  # the common case, kept cheap
        return (0, (int(task_id),), task_id)
    parts = task_id.split(".")
    # isascii: str.isdigit() also accepts digits such as "²" that int() rejects.
    if all(p.isascii() and p.isdigit() for p in parts):
        return (0, tuple(int(p) for p in parts), task_id)
    head, last = parts[:-1], parts[-1]
    if (
        len(last) > 1
        and last[-1].isalpha()
        and all(p.isascii() and p.isdigit() for p in (*head, last[:-1]))
    ):
        # `12b` sorts right after 12 (same numbers, then the suffixed id)
        return (0, tuple(int(p) for p in (*head, last[:-1])), task_id)
    return (1, (), task_id)


@dataclass(frozen=True)
class DagReport:
    """Everything ``analyze`` knows about one task graph.

    Task ids appear as strings throughout; ``task(id)`` returns the ``Task``.

    * ``findings``: every problem found, sorted by place then severity.
    * ``order``: a topological order of every task not on or downstream of a
      cycle, done tasks included, lowest id first among the available ones.
    * ``ready``: unfinished tasks whose dependencies are all done, best first.
    * ``waves``: wave 1 is ``ready`` (in id order); wave k holds the unfinished
      tasks whose unfinished dependencies all sit in earlier waves.
    * ``unschedulable``: unfinished tasks that no wave reaches.
    * ``critical_path``: the longest chain of scheduled unfinished tasks.
    * ``next``: ``ready[0]``, or ``None`` when nothing is ready.
    * ``blocked_by``: for every unfinished task that is not ready, the ids
      that hold it up (unfinished, unknown, or on its own cycle), in id order.
    * ``cycles``: one elementary cycle per cyclic component, in edge order,
      without repeating the first member (the ``dag.cycle`` findings print them).
    * ``done`` / ``total``: counts of distinct ids.
    """

    findings: tuple[Finding, ...]
    order: tuple[str, ...]
    ready: tuple[str, ...]
    waves: tuple[tuple[str, ...], ...]
    unschedulable: tuple[str, ...]
    critical_path: tuple[str, ...]
    next: str | None
    blocked_by: Mapping[str, tuple[str, ...]]
    cycles: tuple[tuple[str, ...], ...]
    done: int
    total: int
    tasks_by_id: Mapping[str, Task] = field(
        default_factory=lambda: MappingProxyType({}), repr=False, compare=False
    )

    def task(self, task_id: str) -> Task:
        """The task the graph uses for ``task_id`` (its first definition)."""
        try:
            return self.tasks_by_id[task_id]
        except KeyError:
            raise DagError(
                f"no task {task_id} in the task list",
                hint="use the id of a top-level task in tasks.md",
            ) from None


class _Graph:
    """The graph over task indices; index order is id order (lowest id = 0).

    Working in ints keeps the hot loops cheap and makes "lowest id" plain
    integer comparison. ``deps`` and ``dependents`` hold known edges only
    (deduplicated, no self-edges); ``dependents`` lists are ascending.
    ``unknown`` is sparse: only tasks that name a missing id have an entry.
    A plain class (working state, never compared or stored): building a
    dataclass costs every cold start.
    """

    def __init__(
        self,
        *,
        path: Path,
        ids: list[str],
        index: dict[str, int],
        tasks: list[Task],
        done: list[bool],
        deps: list[list[int]],
        dependents: list[list[int]],
        unknown: dict[int, list[str]],
        self_loop: list[bool],
    ) -> None:
        self.path = path
        self.ids = ids
        self.index = index  # id -> its index
        self.tasks = tasks
        self.done = done
        self.deps = deps
        self.dependents = dependents
        self.unknown = unknown
        self.self_loop = self_loop

    @property
    def size(self) -> int:
        return len(self.ids)

    @cached_property
    def keys(self) -> list[IdKey]:
        """The sort key of every id, in index order (for the hints about unknown ids)."""
        return [id_sort_key(task_id) for task_id in self.ids]

    def where(self, line: int) -> Where:
        return Where(self.path, line)


class _Schedule:
    """Waves over the unfinished, schedulable tasks, and their heights (a plain class)."""

    __slots__ = ("waves", "height")

    def __init__(self, *, waves: list[list[int]], height: list[int]) -> None:
        self.waves = waves
        self.height = height


def analyze(task_list: TaskList) -> DagReport:
    """Check the task graph of ``task_list`` and answer every scheduling question.

    Never raises on content: problems become findings, and the answers cover
    whatever part of the graph is still meaningful (see the module docstring).
    It allocates a few small containers per task and keeps nearly all of them,
    so the cyclic collector is paused meanwhile (see ``the_loop.io.collector``).
    """
    with collector.paused(expected_objects=10 * len(task_list.tasks)):
        return _analyze(task_list)


def _analyze(task_list: TaskList) -> DagReport:
    """``analyze`` itself, run with the collector paused."""
    findings: list[Finding] = []
    first = _first_definitions(task_list, findings)
    graph = _build_graph(task_list.path, first)
    findings += _edge_findings(graph, task_list.not_understood())

    order, ordered = _topological_order(graph)
    group = cyclic_groups(graph.dependents, ordered)
    cycles = [
        cycle_through(graph.dependents, group, start, graph.ids) for start in group_starts(group)
    ]
    findings += (_cycle_finding(graph, cycle) for cycle in cycles)

    tasks = graph.tasks
    blocked = [
        not graph.done[i]
        and (
            group[i] >= 0
            or graph.self_loop[i]
            or i in graph.unknown
            or tasks[i].unread_depends_line is not None
        )
        for i in range(graph.size)
    ]
    schedule = _schedule(graph, blocked)
    ready = _rank_ready(graph, schedule)
    ids = graph.ids
    return DagReport(
        findings=tuple(sorted_findings(findings)),
        order=tuple(ids[i] for i in order),
        ready=tuple(ids[i] for i in ready),
        waves=tuple(tuple(ids[i] for i in wave) for wave in schedule.waves),
        unschedulable=tuple(ids[i] for i in _unschedulable(graph, schedule)),
        critical_path=tuple(ids[i] for i in _critical_path(graph, schedule)),
        next=ids[ready[0]] if ready else None,
        blocked_by=BlockedBy(graph, group, set(ready)),
        cycles=tuple(tuple(ids[i] for i in cycle) for cycle in cycles),
        done=sum(graph.done),
        # An open optional task (Kiro's `- [ ]*`) is never required for the item to be done.
        total=graph.size
        - sum(t.optional and not d for t, d in zip(tasks, graph.done, strict=True)),
        tasks_by_id=MappingProxyType(first),
    )


def _open_optional(tasks: list[Task], done: list[bool]) -> int:
    """How many optional tasks are not done (they never count towards "all done")."""
    return sum(task.optional and not is_done for task, is_done in zip(tasks, done, strict=True))


# --- building the graph ------------------------------------------------------


def _first_definitions(task_list: TaskList, findings: list[Finding]) -> dict[str, Task]:
    """Map each id to its first definition; report every later one."""
    first: dict[str, Task] = {}
    for task in task_list.tasks:
        kept = first.setdefault(task.id, task)
        if kept is not task:
            findings.append(
                Finding(
                    Level.ERROR,
                    "dag.duplicate-id",
                    f"duplicate task id {task.id}: defined at line {kept.line} and again at "
                    f"line {task.line}; the graph uses line {kept.line}",
                    Where(task_list.path, task.line),
                    hint=f"give each task its own id; references to {task.id} "
                    f"mean the task at line {kept.line}",
                )
            )
    return first


def _build_graph(path: Path, first: Mapping[str, Task]) -> _Graph:
    """Index the tasks in id order and resolve every dependency once."""
    ids = _sorted_ids(first)
    tasks = [first[task_id] for task_id in ids]
    done_state = TaskState.DONE
    n = len(ids)
    index = {task_id: i for i, task_id in enumerate(ids)}
    graph = _Graph(
        path=path,
        ids=ids,
        index=index,
        tasks=tasks,
        done=[task.progress is done_state for task in tasks],
        deps=[[] for _ in range(n)],
        dependents=[[] for _ in range(n)],
        unknown={},
        self_loop=[False] * n,
    )
    deps, dependents = graph.deps, graph.dependents
    # Visiting i in ascending order keeps every dependents list ascending.
    for i, task in enumerate(tasks):
        listed = task.depends_on
        if not listed:
            continue
        try:  # the common case: known ids, no repeats, no self-dependency
            found = [index[dep] for dep in listed]
        except KeyError:
            _add_edges_carefully(graph, i, listed)
            continue
        if i in found or (len(found) > 1 and len(set(found)) < len(found)):
            _add_edges_carefully(graph, i, listed)
            continue
        deps[i] = found
        for j in found:
            dependents[j].append(i)
    return graph


def _sorted_ids(first: Mapping[str, Task]) -> list[str]:
    """The ids in ``id_sort_key`` order (no key tuple per id when every id is a number)."""
    if all(task_id.isdigit() and task_id.isascii() for task_id in first):
        if not any(task_id[0] == "0" and len(task_id) > 1 for task_id in first):
            return sorted(first, key=int)  # distinct numbers: the value decides
        # Same order as id_sort_key: by value, then by the text ("03" and "3").
        return sorted(first, key=lambda task_id: (int(task_id), task_id))
    return [key[2] for key in sorted(id_sort_key(task_id) for task_id in first)]


def _add_edges_carefully(graph: _Graph, i: int, listed: tuple[str, ...]) -> None:
    """Task ``i``'s edges when it repeats an id, names itself or names an unknown id."""
    for dep in dict.fromkeys(listed):  # "1, 1" is one edge
        j = graph.index.get(dep)
        if j is None:
            graph.unknown.setdefault(i, []).append(dep)
        elif j == i:
            graph.self_loop[i] = True
        else:
            graph.deps[i].append(j)
            graph.dependents[j].append(i)


def _edge_findings(graph: _Graph, unread: Finding | None) -> list[Finding]:
    """Unknown dependencies, self-dependencies, done tasks with unfinished deps.

    A dependency on an id no task has is an error only when every task-like line
    was read (``unread`` is None); otherwise it may be the task loop could not
    read, and it is a warning naming that line.
    """
    findings: list[Finding] = []
    tasks, done = graph.tasks, graph.done
    for i, missing in graph.unknown.items():
        task = tasks[i]
        findings += (_unknown_dependency(graph, task, dep, unread) for dep in missing)
    for i in (i for i, loops in enumerate(graph.self_loop) if loops):
        task = tasks[i]
        findings.append(
            Finding(
                Level.ERROR,
                "dag.self-dependency",
                f"task {task.id} at line {task.line} depends on itself",
                _depends_where(graph, task),
                hint=f"remove {task.id} from its own _Depends on:_ list",
            )
        )
    for i, deps in enumerate(graph.deps):
        if done[i]:
            findings += (_done_on_open(graph, tasks[i], tasks[j]) for j in deps if not done[j])
    return findings


def _unknown_dependency(graph: _Graph, task: Task, dep: str, unread: Finding | None) -> Finding:
    if unread is None:
        return Finding(
            Level.ERROR,
            "dag.unknown-dependency",
            f"task {task.id} at line {task.line} depends on {dep}, which does not exist",
            _depends_where(graph, task),
            hint=_nearby_hint(graph, dep),
        )
    line = unread.where.line if unread.where else None
    return Finding(
        Level.WARNING,
        "dag.unconfirmed-dependency",
        f"task {task.id} at line {task.line} depends on {dep}, which is not among the tasks "
        f"read; line {line} was not understood and may be that task",
        _depends_where(graph, task),
        hint=_nearby_hint(graph, dep),
    )


def _depends_where(graph: _Graph, task: Task) -> Where:
    """Where a dependency problem is fixed: the ``_Depends on:_`` line if known."""
    return graph.where(task.depends_line or task.line)


def _done_on_open(graph: _Graph, task: Task, dep: Task) -> Finding:
    """A done task whose dependency is not done: the checkmarks disagree."""
    return Finding(
        Level.WARNING,
        "dag.done-depends-on-open",
        f"task {task.id} is done but depends on {dep.progress.value} task {dep.id}",
        _depends_where(graph, task),
        hint=f"finish task {dep.id} (line {dep.line}) or reopen task {task.id}",
    )


def _nearby_hint(graph: _Graph, missing: str) -> str:
    """Name the existing ids that sort next to a missing one (likely typos)."""
    if not graph.ids:
        return "the task list defines no tasks"
    # Binary search in the sorted keys keeps this O(log N) per unknown id.
    at = bisect_left(graph.keys, id_sort_key(missing))
    near = graph.ids[max(0, at - _NEARBY) : at + _NEARBY]
    return f"no task has id {missing}; nearby ids: {', '.join(near)}"


# --- order and cycles ---------------------------------------------------------


def _topological_order(graph: _Graph) -> tuple[list[int], list[bool]]:
    """Kahn's algorithm, lowest id first among the available tasks.

    Tasks on a cycle (a self-dependency included) and everything downstream of
    one never reach in-degree zero, so they are left out: the order covers the
    acyclic part. Returns the order and a per-task "was ordered" flag.

    When every task depends only on lower ids (the usual plan: tasks build on
    earlier ones), that order is simply the id order, and no heap is needed:
    the lowest unordered id always has all its dependencies ordered already.
    """
    dependents = graph.dependents
    # dependents lists ascend, so each one's first entry is its lowest.
    forward = not any(graph.self_loop) and all(
        not users or users[0] > j for j, users in enumerate(dependents)
    )
    if forward:
        return list(range(graph.size)), [True] * graph.size
    indegree = [len(d) + s for d, s in zip(graph.deps, graph.self_loop, strict=True)]
    # Indices ascend, so the initial list already satisfies the heap invariant.
    heap = [i for i, d in enumerate(indegree) if d == 0]
    order: list[int] = []
    while heap:
        v = heappop(heap)
        order.append(v)
        for w in dependents[v]:
            indegree[w] -= 1
            if indegree[w] == 0:
                heappush(heap, w)
    ordered = [False] * graph.size
    for v in order:
        ordered[v] = True
    return order, ordered


def _cycle_finding(graph: _Graph, cycle: list[int]) -> Finding:
    """One ``dag.cycle`` finding: the path, and each member's ``file:line``."""
    ids = graph.ids
    names = [ids[v] for v in cycle]
    steps = [
        f"    {graph.where(graph.tasks[b].line)}: task {ids[b]} depends on {ids[a]}"
        for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True)
    ]
    return Finding(
        Level.ERROR,
        "dag.cycle",
        f"cycle: {' → '.join([*names, names[0]])}",
        graph.where(graph.tasks[cycle[0]].line),
        hint="→ means 'is needed by'; remove one of these dependencies:\n" + "\n".join(steps),
    )


# --- scheduling -----------------------------------------------------------------


def _schedule(graph: _Graph, blocked: list[bool]) -> _Schedule:
    """Waves of unfinished tasks (level-by-level Kahn), then each one's height.

    Wave 1 is the ready set; a task joins wave k once all its unfinished
    dependencies sit in earlier waves. ``blocked`` tasks never join, so neither
    does anything downstream of them: their pending count never reaches zero.
    """
    done, dependents = graph.done, graph.dependents
    pending = [0] * graph.size  # unfinished dependencies per task
    for j, users in enumerate(dependents):
        if not done[j]:
            for w in users:
                pending[w] += 1
    wave = [i for i in range(graph.size) if not done[i] and not blocked[i] and pending[i] == 0]
    waves: list[list[int]] = []
    while wave:
        waves.append(wave)
        following = []
        for v in wave:
            for w in dependents[v]:
                pending[w] -= 1
                if pending[w] == 0 and not done[w] and not blocked[w]:
                    following.append(w)
        following.sort()
        wave = following
    return _Schedule(waves=waves, height=_heights(graph, waves))


def _heights(graph: _Graph, waves: list[list[int]]) -> list[int]:
    """Longest chain of scheduled unfinished work starting at each task.

    Walking the waves backwards visits every dependent before its dependency;
    done and unschedulable tasks keep height 0, so they add nothing.
    """
    height = [0] * graph.size
    dependents = graph.dependents
    for wave in reversed(waves):
        for v in wave:
            below = dependents[v]
            height[v] = 1 + max([height[w] for w in below]) if below else 1
    return height


def _unschedulable(graph: _Graph, schedule: _Schedule) -> list[int]:
    """Unfinished tasks that no wave reaches, in id order."""
    scheduled = [False] * graph.size
    for wave in schedule.waves:
        for v in wave:
            scheduled[v] = True
    return [i for i in range(graph.size) if not graph.done[i] and not scheduled[i]]


def _critical_path(graph: _Graph, schedule: _Schedule) -> list[int]:
    """The longest chain of scheduled unfinished tasks, lowest ids on ties.

    It starts at the lowest-id task of greatest height (such a task is always
    in wave 1) and steps each time to the lowest-id dependent one shorter.
    """
    if not schedule.waves:
        return []
    height = schedule.height
    start = min(schedule.waves[0], key=lambda v: (-height[v], v))
    path = [start]
    while height[path[-1]] > 1:
        v = path[-1]
        path.append(next(w for w in graph.dependents[v] if height[w] == height[v] - 1))
    return path


def _rank_ready(graph: _Graph, schedule: _Schedule) -> list[int]:
    """The ready tasks in ``next`` order (see the module docstring)."""
    if not schedule.waves:
        return []
    done, height, dependents = graph.done, schedule.height, graph.dependents

    def rank(v: int) -> tuple[bool, bool, int, int, int]:
        task = graph.tasks[v]
        started = task.progress is TaskState.IN_PROGRESS
        unfinished_dependents = sum(not done[w] for w in dependents[v])
        # Optional work is never offered before required work that is ready with it.
        return (task.optional, not started, -height[v], -unfinished_dependents, v)

    return sorted(schedule.waves[0], key=rank)


class BlockedBy(Mapping[str, tuple[str, ...]]):
    """``DagReport.blocked_by``: what holds up each unfinished task that is not ready.

    Unfinished and unknown dependencies block; so does the task itself when it
    depends on itself, and so does every dependency on the same cycle even if
    it is ticked, because a cycle cannot be satisfied by checkmarks. Holders are
    in id order; tasks iterate in id order.

    An entry is worked out when it is first read: on a large plan most tasks
    are blocked and a report reads a few of them.
    """

    def __init__(self, graph: _Graph, group: list[int], ready: set[int]) -> None:
        done = graph.done
        self._graph = graph
        self._group = group
        self._order = [i for i in range(graph.size) if not done[i] and i not in ready]
        self._is_blocked = bytearray(graph.size)
        for i in self._order:
            self._is_blocked[i] = 1
        self._memo: dict[int, tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[str]:
        ids = self._graph.ids
        return (ids[i] for i in self._order)

    def __getitem__(self, task_id: str) -> tuple[str, ...]:
        i = self._graph.index.get(task_id)
        if i is None or not self._is_blocked[i]:
            raise KeyError(task_id)
        holders = self._memo.get(i)
        if holders is None:
            holders = self._memo[i] = self._holders(i)
        return holders

    def _holders(self, i: int) -> tuple[str, ...]:
        graph, group = self._graph, self._group
        ids, done, own = graph.ids, graph.done, group[i]
        held = [j for j in graph.deps[i] if not done[j] or (own >= 0 and group[j] == own)]
        if graph.self_loop[i]:
            held.append(i)
        held.sort()  # index order is id order
        holders = [ids[j] for j in held]
        if i in graph.unknown:
            holders = sorted(holders + graph.unknown[i], key=id_sort_key)
        unread = graph.tasks[i].unread_depends_line
        if unread is not None:
            holders.append(f"what line {unread} says (not understood)")
        return tuple(holders)
