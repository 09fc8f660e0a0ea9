"""Strongly connected components, and a shortest cycle through each: the cycles of a task graph.

``the_loop.dag.analysis`` orders what it can with Kahn's algorithm; whatever is left
sits on a cycle or downstream of one. This module finds the cycles in that
rest: an iterative Tarjan for the strongly connected components, then a
breadth-first search for a shortest (so elementary) cycle through the
lowest-id member of each. It works on plain adjacency lists of task indices
(index order is id order) and knows nothing of tasks or findings; it is apart
from ``dag`` because the iterative Tarjan is the subtlest code there and reads
best on its own.
"""

from __future__ import annotations

from collections import deque


def cyclic_groups(dependents: list[list[int]], ordered: list[bool]) -> list[int]:
    """Per task, the id of its non-trivial strongly connected component, or -1.

    Only the tasks Kahn could not order (``ordered`` false) can sit on a cycle,
    so Tarjan runs on those alone; on an acyclic graph this costs nothing.
    """
    group = [-1] * len(ordered)
    rest = [i for i, done in enumerate(ordered) if not done]
    for number, component in enumerate(_tarjan(dependents, rest, ordered)):
        if len(component) > 1:  # a lone task is a self-dependency, reported apart
            for v in component:
                group[v] = number
    return group


def _tarjan(succ: list[list[int]], roots: list[int], skip: list[bool]) -> list[list[int]]:
    """Strongly connected components of the subgraph of ``roots`` (iterative Tarjan).

    Nodes with ``skip`` set are outside the subgraph. An explicit stack of
    ``(node, next edge position)`` frames replaces recursion, so depth is
    bounded by memory, not by the interpreter's recursion limit.
    """
    unvisited = -1
    index = [unvisited] * len(succ)
    low = [0] * len(succ)
    on_stack = [False] * len(succ)
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root in roots:
        if index[root] != unvisited:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        frames = [(root, 0)]
        while frames:
            v, pos = frames[-1]
            edges = succ[v]
            descended = False
            while pos < len(edges):
                w = edges[pos]
                pos += 1
                if skip[w]:
                    continue
                if index[w] == unvisited:
                    frames[-1] = (v, pos)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    frames.append((w, 0))
                    descended = True
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            frames.pop()
            if frames:
                parent = frames[-1][0]
                if low[v] < low[parent]:
                    low[parent] = low[v]
            if low[v] == index[v]:
                components.append(_pop_component(stack, on_stack, v))
    return components


def _pop_component(stack: list[int], on_stack: list[bool], root: int) -> list[int]:
    """Pop one finished component (everything above and including ``root``)."""
    component: list[int] = []
    while True:
        w = stack.pop()
        on_stack[w] = False
        component.append(w)
        if w == root:
            return component


def group_starts(group: list[int]) -> list[int]:
    """The lowest-id member of each cyclic component, in id order."""
    seen: set[int] = set()
    starts = []
    for v, g in enumerate(group):
        if g >= 0 and g not in seen:
            seen.add(g)
            starts.append(v)
    return starts


def cycle_through(
    dependents: list[list[int]], group: list[int], start: int, ids: list[str]
) -> list[int]:
    """A shortest cycle through ``start`` inside its component (breadth-first).

    A shortest cycle is elementary, and breadth-first search visits each
    member and edge of the component once. Neighbours are taken in id order,
    so the answer is deterministic. ``ids`` are only for naming ``start`` in
    the error a component without a cycle would be (a bug).
    """
    own = group[start]
    parent = {start: start}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in dependents[v]:
            if w == start:
                return _path_to(parent, start, v)
            if group[w] == own and w not in parent:
                parent[w] = v
                queue.append(w)
    # Every member of a strongly connected component lies on a cycle.
    raise AssertionError(f"no cycle through task {ids[start]}")


def _path_to(parent: dict[int, int], start: int, end: int) -> list[int]:
    """The breadth-first tree path ``start … end``."""
    path = [end]
    while path[-1] != start:
        path.append(parent[path[-1]])
    path.reverse()
    return path
