"""Property tests for ``the_loop.dag.analysis``: random graphs against a brute-force model.

The model answers every question the slow, obvious way (reachability sets,
repeated scans) on graphs small enough for that; ``analyze`` must agree.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from the_loop.dag.analysis import DagReport, analyze, id_sort_key
from the_loop.tasks import Task, TaskList, TaskState

PATH = Path("tasks.md")
ID_POOL = [str(k) for k in range(1, 31)] + ["3.1", "3.2", "10.1", "T1", "T2", "x"]
MISSING_IDS = ["99", "3.9", "T9"]
# The default run stays quick; the slow-marked twins below dig deeper.
PROPERTY_SETTINGS = settings(max_examples=50, deadline=None)
THOROUGH_SETTINGS = settings(max_examples=1500, deadline=None)


@dataclass
class Model:
    """A random graph: listed dependencies (maybe unknown or self) and states."""

    deps: dict[str, tuple[str, ...]]
    state: dict[str, TaskState]
    file_order: list[str]
    line: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.line = {t: 10 + 5 * k for k, t in enumerate(self.file_order)}

    def task_list(self, order: Iterable[str] | None = None) -> TaskList:
        order = list(order) if order is not None else self.file_order
        tasks = tuple(
            Task(
                id=t,
                label=t,
                title=f"task {t}",
                state=self.state[t],
                line=10 + 5 * k,
                end_line=10 + 5 * k + 4,
                mark_offset=0,
                depends_on=self.deps[t],
                depends_line=10 + 5 * k + 1,
            )
            for k, t in enumerate(order)
        )
        return TaskList(path=PATH, tasks=tasks, findings=())

    # --- brute-force answers -------------------------------------------------------

    @cached_property
    def ids(self) -> list[str]:
        return sorted(self.state, key=id_sort_key)

    def done(self, t: str) -> bool:
        return self.state[t] is TaskState.DONE

    @cached_property
    def known(self) -> dict[str, list[str]]:
        return {
            t: [d for d in dict.fromkeys(self.deps[t]) if d in self.state and d != t]
            for t in self.ids
        }

    @cached_property
    def dependents(self) -> dict[str, list[str]]:
        users: dict[str, list[str]] = {t: [] for t in self.ids}
        for t in self.ids:
            for d in self.known[t]:
                users[d].append(t)
        return users

    @cached_property
    def reach(self) -> dict[str, set[str]]:
        """Tasks reachable from each task along "is needed by" edges (one step or more)."""
        result = {}
        for t in self.ids:
            seen: set[str] = set()
            todo = list(self.dependents[t])
            while todo:
                w = todo.pop()
                if w not in seen:
                    seen.add(w)
                    todo += self.dependents[w]
            result[t] = seen
        return result

    def same_component(self, a: str, b: str) -> bool:
        return a != b and b in self.reach[a] and a in self.reach[b]

    @cached_property
    def components(self) -> list[frozenset[str]]:
        """Non-trivial strongly connected components."""
        found = {
            frozenset({t} | {u for u in self.ids if self.same_component(t, u)}) for t in self.ids
        }
        return sorted(
            (c for c in found if len(c) > 1), key=lambda c: id_sort_key(min(c, key=id_sort_key))
        )

    @cached_property
    def on_cycle(self) -> set[str]:
        return set().union(*self.components) if self.components else set()

    @cached_property
    def self_loops(self) -> set[str]:
        return {t for t in self.ids if t in self.deps[t]}

    @cached_property
    def with_unknown(self) -> set[str]:
        return {t for t in self.ids if any(d not in self.state for d in self.deps[t])}

    @cached_property
    def orderable(self) -> set[str]:
        roots = self.on_cycle | self.self_loops
        downstream = set().union(*(self.reach[r] for r in roots)) if roots else set()
        return set(self.ids) - roots - downstream

    @cached_property
    def order(self) -> list[str]:
        """Kahn's algorithm by repeated scanning: lowest available id each time."""
        emitted: list[str] = []
        left = set(self.orderable)
        while left:
            available = [t for t in left if all(d in emitted for d in self.known[t])]
            pick = min(available, key=id_sort_key)
            emitted.append(pick)
            left.remove(pick)
        return emitted

    @cached_property
    def waves(self) -> list[list[str]]:
        blocked = self.on_cycle | self.self_loops | self.with_unknown
        placed: set[str] = set()
        waves: list[list[str]] = []
        while True:
            wave = [
                t
                for t in self.ids
                if not self.done(t)
                and t not in placed
                and t not in blocked
                and all(d in placed for d in self.known[t] if not self.done(d))
            ]
            if not wave:
                return waves
            waves.append(wave)
            placed |= set(wave)

    @cached_property
    def height(self) -> dict[str, int]:
        height: dict[str, int] = {}
        for wave in reversed(self.waves):
            for t in wave:
                height[t] = 1 + max((height.get(w, 0) for w in self.dependents[t]), default=0)
        return height

    @cached_property
    def ready(self) -> list[str]:
        def rank(t: str) -> tuple[bool, int, int, tuple[int, tuple[int, ...], str]]:
            open_users = sum(not self.done(w) for w in self.dependents[t])
            started = self.state[t] is TaskState.IN_PROGRESS
            return (not started, -self.height[t], -open_users, id_sort_key(t))

        return sorted(self.waves[0], key=rank) if self.waves else []

    @cached_property
    def blocked_by(self) -> dict[str, tuple[str, ...]]:
        result = {}
        for t in self.ids:
            if self.done(t) or t in self.ready:
                continue
            holders = {d for d in self.known[t] if not self.done(d) or self.same_component(t, d)}
            holders |= {d for d in self.deps[t] if d not in self.state}
            holders |= {t} & self.self_loops
            result[t] = tuple(sorted(holders, key=id_sort_key))
        return result


def _pick_deps(draw: st.DrawFn, candidates: list[str]) -> list[str]:
    if not candidates:
        return []
    return draw(st.lists(st.sampled_from(candidates), max_size=3, unique=True))


@st.composite
def models(
    draw: st.DrawFn,
    *,
    min_tasks: int = 0,
    max_tasks: int = 14,
    back_edges: bool = False,
    extras: bool = False,
    inject_cycle: bool = False,
) -> Model:
    """A random graph. Without ``back_edges`` each task depends only on tasks
    drawn before it (a DAG); ``extras`` sprinkles unknown ids and self-edges;
    ``inject_cycle`` closes a random chain of 2-5 distinct tasks into a cycle."""
    ids = draw(
        st.lists(st.sampled_from(ID_POOL), min_size=min_tasks, max_size=max_tasks, unique=True)
    )
    deps = {}
    for k, t in enumerate(ids):
        candidates = [u for u in ids if u != t] if back_edges else ids[:k]
        listed = _pick_deps(draw, candidates)
        if extras and draw(st.integers(0, 5)) == 0:
            listed.append(draw(st.sampled_from([*MISSING_IDS, t])))
        deps[t] = listed
    if inject_cycle:
        members = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=5, unique=True))
        for a, b in zip(members, members[1:] + members[:1], strict=True):
            if a not in deps[b]:
                deps[b].append(a)  # b depends on a: the edge a → b
    state = {t: draw(st.sampled_from(list(TaskState))) for t in ids}
    file_order = draw(st.permutations(ids))
    return Model(deps={t: tuple(d) for t, d in deps.items()}, state=state, file_order=file_order)


def check_answers(report: DagReport, model: Model) -> None:
    """Every answer equals the brute-force model's, plus structural invariants."""
    assert report.order == tuple(model.order)
    assert report.waves == tuple(tuple(w) for w in model.waves)
    assert report.ready == tuple(model.ready)
    assert report.next == (model.ready[0] if model.ready else None)
    assert dict(report.blocked_by) == model.blocked_by
    assert (report.done, report.total) == (sum(map(model.done, model.ids)), len(model.ids))

    position = {t: k for k, t in enumerate(report.order)}
    for t in report.order:
        assert all(position[d] < position[t] for d in model.known[t])

    for t in report.ready:
        assert not model.done(t)
        assert all(d in model.state and model.done(d) for d in model.deps[t])
        assert t not in model.on_cycle

    scheduled = [t for wave in report.waves for t in wave]
    assert len(scheduled) == len(set(scheduled))
    not_done = {t for t in model.ids if not model.done(t)}
    assert set(scheduled) | set(report.unschedulable) == not_done
    assert not set(scheduled) & set(report.unschedulable)
    wave_of = {t: k for k, wave in enumerate(report.waves) for t in wave}
    for t in scheduled:
        open_deps = [d for d in model.known[t] if not model.done(d)]
        assert all(wave_of[d] < wave_of[t] for d in open_deps)
        assert wave_of[t] == (1 + max(wave_of[d] for d in open_deps) if open_deps else 0)
    assert all(report.blocked_by[t] for t in not_done - set(report.ready))

    check_critical_path(report, model)


def check_critical_path(report: DagReport, model: Model) -> None:
    """A real chain of scheduled open tasks, as long as the waves, lowest ids on ties."""
    path = report.critical_path
    assert len(path) == len(report.waves) == max(model.height.values(), default=0)
    if not path:
        return
    height = model.height
    assert path[0] == min((t for t in height if height[t] == len(path)), key=id_sort_key)
    for a, b in zip(path, path[1:], strict=False):
        assert a in model.known[b]
        assert b == min(
            (w for w in model.dependents[a] if height.get(w) == height[a] - 1), key=id_sort_key
        )


def check_findings(report: DagReport, model: Model) -> None:
    """Exactly the expected findings, each located in the task list's file."""
    found = [f.code for f in report.findings]
    unknown = sum(d not in model.state for t in model.ids for d in dict.fromkeys(model.deps[t]))
    stale = sum(model.done(t) and not model.done(d) for t in model.ids for d in model.known[t])
    assert found.count("dag.unknown-dependency") == unknown
    assert found.count("dag.self-dependency") == len(model.self_loops)
    assert found.count("dag.done-depends-on-open") == stale
    assert found.count("dag.cycle") == len(model.components)
    assert found.count("dag.duplicate-id") == 0
    assert all(f.where is not None and f.where.path == PATH for f in report.findings)
    assert list(report.findings) == sorted(report.findings, key=lambda f: f.sort_key())


def check_cycles(report: DagReport, model: Model) -> None:
    """One real, elementary cycle per component, naming only its members."""
    assert len(report.cycles) == len(model.components)
    messages = [f for f in report.findings if f.code == "dag.cycle"]
    for cycle, component in zip(report.cycles, model.components, strict=True):
        assert len(cycle) >= 2
        assert len(set(cycle)) == len(cycle)
        assert set(cycle) <= component
        assert cycle[0] == min(component, key=id_sort_key)
        for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True):
            assert a in model.known[b], f"{b} does not depend on {a}"
        finding = next(f for f in messages if f.where and f.where.line == model.line[cycle[0]])
        assert finding.message == "cycle: " + " → ".join([*cycle, cycle[0]])
        named = set(finding.message.removeprefix("cycle: ").split(" → "))
        assert named == set(cycle)
        # Tasks that merely reach the cycle (its dependents) are never named.
        assert not named & (set(model.ids) - model.on_cycle)


# --- the properties ---------------------------------------------------------------------


def random_dag_properties(model: Model) -> None:
    """On a DAG: no errors, everything orderable and schedulable, every answer right."""
    report = analyze(model.task_list())
    assert not [f for f in report.findings if f.code != "dag.done-depends-on-open"]
    assert report.unschedulable == ()
    assert len(report.order) == len(model.ids)
    check_answers(report, model)
    check_findings(report, model)


def injected_cycle_properties(model: Model) -> None:
    """The injected cycle is always found, as real cycles, and blocks its members."""
    report = analyze(model.task_list())
    assert report.cycles, "the injected cycle was not found"
    check_cycles(report, model)
    check_answers(report, model)
    check_findings(report, model)
    for t in model.on_cycle:
        assert t not in report.ready
        assert t not in report.order
        assert model.done(t) or t in report.unschedulable


def general_graph_properties(model: Model) -> None:
    """Any graph at all: unknown ids, self-edges, cycles or none."""
    report = analyze(model.task_list())
    check_cycles(report, model)
    check_answers(report, model)
    check_findings(report, model)


@PROPERTY_SETTINGS
@given(models())
def test_random_dags(model: Model) -> None:
    random_dag_properties(model)


@PROPERTY_SETTINGS
@given(models(min_tasks=2, back_edges=True, inject_cycle=True))
def test_random_graphs_with_an_injected_cycle(model: Model) -> None:
    injected_cycle_properties(model)


@PROPERTY_SETTINGS
@given(models(back_edges=True, extras=True))
def test_random_graphs_with_unknown_ids_and_self_edges(model: Model) -> None:
    general_graph_properties(model)


@pytest.mark.slow
@THOROUGH_SETTINGS
@given(models(max_tasks=30))
def test_random_dags_thoroughly(model: Model) -> None:
    random_dag_properties(model)


@pytest.mark.slow
@THOROUGH_SETTINGS
@given(models(min_tasks=2, max_tasks=30, back_edges=True, inject_cycle=True))
def test_random_graphs_with_an_injected_cycle_thoroughly(model: Model) -> None:
    injected_cycle_properties(model)


@pytest.mark.slow
@THOROUGH_SETTINGS
@given(models(max_tasks=30, back_edges=True, extras=True))
def test_random_graphs_with_unknown_ids_and_self_edges_thoroughly(model: Model) -> None:
    general_graph_properties(model)


@PROPERTY_SETTINGS
@given(models(back_edges=True, extras=True), st.randoms(use_true_random=False))
def test_answers_do_not_depend_on_file_order(model: Model, rnd: random.Random) -> None:
    shuffled = list(model.file_order)
    rnd.shuffle(shuffled)
    a, b = analyze(model.task_list()), analyze(model.task_list(shuffled))
    assert (a.order, a.ready, a.waves, a.critical_path, a.next, a.cycles) == (
        b.order,
        b.ready,
        b.waves,
        b.critical_path,
        b.next,
        b.cycles,
    )
    assert dict(a.blocked_by) == dict(b.blocked_by)
    assert sorted(f.code for f in a.findings) == sorted(f.code for f in b.findings)


@PROPERTY_SETTINGS
@given(models(min_tasks=1, back_edges=True, extras=True), st.data())
def test_a_later_duplicate_changes_nothing_but_a_finding(model: Model, data: st.DataObject) -> None:
    original = model.task_list()
    copied = data.draw(st.sampled_from(original.tasks))
    duplicate = Task(
        id=copied.id,
        label=copied.label,
        title="a second definition",
        state=data.draw(st.sampled_from(list(TaskState))),
        line=1000,
        end_line=1004,
        mark_offset=0,
        depends_on=tuple(data.draw(st.lists(st.sampled_from([*ID_POOL, *MISSING_IDS])))),
        depends_line=1001,
    )
    with_duplicate = TaskList(path=PATH, tasks=(*original.tasks, duplicate), findings=())
    a, b = analyze(original), analyze(with_duplicate)
    (extra,) = [f for f in b.findings if f.code == "dag.duplicate-id"]
    assert extra.where is not None and extra.where.line == 1000
    assert tuple(f for f in b.findings if f is not extra) == a.findings
    assert (a.order, a.ready, a.waves, a.unschedulable, a.critical_path, a.cycles) == (
        b.order,
        b.ready,
        b.waves,
        b.unschedulable,
        b.critical_path,
        b.cycles,
    )
    assert (a.done, a.total) == (b.done, b.total)
    assert b.task(copied.id) is copied
