"""Unit tests for ``the_loop.dag.analysis`` on small hand-built graphs, with exact answers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from the_loop.dag.analysis import DagReport, analyze, id_sort_key
from the_loop.errors import DagError, Where
from the_loop.findings import Level
from the_loop.tasks import Task, TaskList, TaskState

PATH = Path("docs/specs/42/tasks.md")


def make_task(
    task_id: str,
    deps: Iterable[str] | None = None,
    *,
    state: TaskState = TaskState.OPEN,
    line: int = 1,
) -> Task:
    """A task as the parser would produce it: the depends line follows the task line."""
    return Task(
        id=task_id,
        label=task_id,
        title=f"task {task_id}",
        state=state,
        line=line,
        end_line=line + 3,
        mark_offset=0,
        depends_on=None if deps is None else tuple(deps),
        depends_line=None if deps is None else line + 1,
    )


def make_list(
    graph: Mapping[str, Iterable[str] | None],
    *,
    done: Iterable[str] = (),
    started: Iterable[str] = (),
) -> TaskList:
    """Tasks in dict order at lines 10, 14, 18, …; ``graph`` maps id → dependencies."""
    done, started = set(done), set(started)
    tasks = []
    for k, (task_id, deps) in enumerate(graph.items()):
        state = TaskState.OPEN
        if task_id in done:
            state = TaskState.DONE
        elif task_id in started:
            state = TaskState.IN_PROGRESS
        tasks.append(make_task(task_id, deps, state=state, line=10 + 4 * k))
    return TaskList(path=PATH, tasks=tuple(tasks), findings=())


def line_of(task_id: str, graph: Mapping[str, object]) -> int:
    return 10 + 4 * list(graph).index(task_id)


def codes(report: DagReport) -> list[str]:
    return [f.code for f in report.findings]


# --- id order ---------------------------------------------------------------------


def test_id_sort_key_orders_numbers_numerically_then_text() -> None:
    ids = ["T1", "10", "3.2", "a", "2", "3", "3.10", "²"]
    assert sorted(ids, key=id_sort_key) == ["2", "3", "3.2", "3.10", "10", "T1", "a", "²"]


def test_order_breaks_ties_by_numeric_id() -> None:
    report = analyze(make_list({"10": (), "T1": (), "2": (), "3.2": (), "3": (), "a": ()}))
    assert report.order == ("2", "3", "3.2", "10", "T1", "a")


def test_order_respects_dependencies_before_ids() -> None:
    report = analyze(make_list({"1": ("4",), "2": (), "3": ("1",), "4": ()}))
    assert report.order == ("2", "4", "1", "3")


# --- a clean graph: every answer ------------------------------------------------------


CLEAN = {
    "1": (),
    "2": ("1",),
    "3": ("1",),
    "4": ("2", "3"),
    "5": (),
    "6": ("4", "5"),
    "7": ("6",),
    "8": ("5",),
}


def test_clean_graph_answers() -> None:
    report = analyze(make_list(CLEAN, done={"1"}))
    assert report.findings == ()
    assert report.order == ("1", "2", "3", "4", "5", "6", "7", "8")
    assert report.ready == ("2", "3", "5")
    assert report.waves == (("2", "3", "5"), ("4", "8"), ("6",), ("7",))
    assert report.unschedulable == ()
    assert report.critical_path == ("2", "4", "6", "7")
    assert report.next == "2"
    assert report.blocked_by == {"4": ("2", "3"), "6": ("4", "5"), "7": ("6",), "8": ("5",)}
    assert report.cycles == ()
    assert (report.done, report.total) == (1, 8)


def test_ready_includes_in_progress_and_excludes_done() -> None:
    report = analyze(make_list({"1": (), "2": (), "3": ("1",)}, done={"1"}, started={"2"}))
    assert set(report.ready) == {"2", "3"}
    assert "1" not in report.blocked_by


def test_missing_depends_field_means_no_dependencies() -> None:
    report = analyze(make_list({"1": None, "2": ("1",)}))
    assert report.ready == ("1",)
    assert report.blocked_by == {"2": ("1",)}


def test_repeated_dependency_counts_once() -> None:
    report = analyze(make_list({"1": (), "2": ("1", "1")}, done={"1"}))
    assert report.findings == ()
    assert report.ready == ("2",)


def test_everything_done() -> None:
    report = analyze(make_list({"1": (), "2": ("1",)}, done={"1", "2"}))
    assert (report.ready, report.waves, report.critical_path, report.next) == ((), (), (), None)
    assert report.blocked_by == {}
    assert (report.done, report.total) == (2, 2)


def test_empty_list() -> None:
    report = analyze(TaskList(path=PATH, tasks=(), findings=()))
    assert report.findings == ()
    assert (report.order, report.ready, report.waves, report.next) == ((), (), (), None)
    assert (report.done, report.total) == (0, 0)


def test_task_lookup() -> None:
    report = analyze(make_list({"1": (), "2": ("1",)}))
    assert report.task("2").depends_on == ("1",)
    with pytest.raises(DagError, match="no task 9"):
        report.task("9")


# --- critical path ------------------------------------------------------------------


def test_critical_path_skips_done_and_prefers_lowest_ids() -> None:
    # Two chains of three unfinished tasks: 2→4→6 and 3→5→7; 1 is done.
    graph = {"1": (), "2": ("1",), "3": ("1",), "4": ("2",), "5": ("3",), "6": ("4",), "7": ("5",)}
    report = analyze(make_list(graph, done={"1"}))
    assert report.critical_path == ("2", "4", "6")


def test_critical_path_takes_lowest_id_at_each_step() -> None:
    report = analyze(make_list({"1": (), "2": ("1",), "3": ("1",), "4": ("3",), "5": ("2",)}))
    assert report.critical_path == ("1", "2", "5")


def test_critical_path_ignores_unschedulable_tasks() -> None:
    report = analyze(make_list({"1": (), "2": ("1", "99"), "3": ("2",), "4": ("1",)}))
    assert report.critical_path == ("1", "4")


# --- next: one test per ranking rule ------------------------------------------------------


def test_next_rule_1_in_progress_before_open() -> None:
    # 1 heads a chain of three; 5 is in progress with nothing after it: 5 wins.
    report = analyze(make_list({"1": (), "2": ("1",), "3": ("2",), "5": ()}, started={"5"}))
    assert report.next == "5"
    assert report.ready == ("5", "1")


def test_next_rule_2_longest_remaining_chain() -> None:
    # 1 heads 1→2 (height 2); 3 heads 3→4→5 (height 3), though 1 has more dependents.
    graph = {"1": (), "2": ("1",), "6": ("1",), "7": ("1",), "3": (), "4": ("3",), "5": ("4",)}
    report = analyze(make_list(graph))
    assert report.next == "3"
    assert report.ready == ("3", "1")


def test_next_rule_2_counts_only_unfinished_work() -> None:
    # 1's chain 1→2→3 is mostly done elsewhere: 2 and 3 are done, so its height is 1.
    graph = {"1": (), "2": ("1",), "3": ("2",), "4": (), "5": ("4",)}
    report = analyze(make_list(graph, done={"2", "3"}))
    assert report.next == "4"


def test_next_rule_3_more_unfinished_direct_dependents() -> None:
    # Heights tie at 2; 4 has two unfinished dependents, 1 has one (and one done).
    graph = {"1": (), "2": ("1",), "3": ("1",), "4": (), "5": ("4",), "6": ("4",)}
    report = analyze(make_list(graph, done={"3"}))
    assert report.next == "4"
    assert report.ready == ("4", "1")


def test_next_rule_4_lowest_id_numerically() -> None:
    report = analyze(make_list({"10": (), "9": (), "T1": ()}))
    assert report.next == "9"
    assert report.ready == ("9", "10", "T1")


def test_next_is_none_when_everything_is_blocked() -> None:
    report = analyze(make_list({"1": ("2",), "2": ("1",)}))
    assert report.next is None
    assert report.ready == ()


# --- dag.duplicate-id ------------------------------------------------------------------


def test_duplicate_id_reports_both_lines_and_uses_the_first() -> None:
    tasks = (
        make_task("1", (), line=10),
        make_task("2", (), line=14),
        make_task("1", ("2",), line=18),
        make_task("1", (), line=22),
    )
    report = analyze(TaskList(path=PATH, tasks=tasks, findings=()))
    assert codes(report) == ["dag.duplicate-id", "dag.duplicate-id"]
    first, second = report.findings
    assert first.level is Level.ERROR
    assert first.where == Where(PATH, 18)
    assert first.message == (
        "duplicate task id 1: defined at line 10 and again at line 18; the graph uses line 10"
    )
    assert second.where == Where(PATH, 22)
    assert report.task("1").line == 10
    # The later definition's dependency on 2 is ignored.
    assert report.ready == ("1", "2")
    assert report.total == 2


# --- dag.unknown-dependency ---------------------------------------------------------------


def test_unknown_dependency() -> None:
    graph = {"7": (), "8": ("9",), "10": (), "11": (), "12": ("8",), "13": ("7",)}
    report = analyze(make_list(graph))
    assert codes(report) == ["dag.unknown-dependency"]
    (finding,) = report.findings
    assert finding.level is Level.ERROR
    assert finding.where == Where(PATH, line_of("8", graph) + 1)  # the _Depends on:_ line
    assert finding.message == "task 8 at line 14 depends on 9, which does not exist"
    assert finding.hint == "no task has id 9; nearby ids: 7, 8, 10, 11"
    assert "8" not in report.ready
    assert report.unschedulable == ("8", "12")  # 12 waits on 8, which waits forever
    assert report.blocked_by["8"] == ("9",)
    assert report.blocked_by["12"] == ("8",)
    assert report.order == ("7", "8", "10", "11", "12", "13")  # no edge, still orderable


def test_unknown_dependency_of_a_done_task_is_reported() -> None:
    report = analyze(make_list({"1": ("T9",)}, done={"1"}))
    assert codes(report) == ["dag.unknown-dependency"]
    assert report.findings[0].hint == "no task has id T9; nearby ids: 1"


# --- dag.self-dependency --------------------------------------------------------------------


def test_self_dependency() -> None:
    graph = {"1": (), "2": ("1", "2"), "3": ("2",)}
    report = analyze(make_list(graph, done={"1"}))
    assert codes(report) == ["dag.self-dependency"]
    (finding,) = report.findings
    assert finding.message == "task 2 at line 14 depends on itself"
    assert finding.where == Where(PATH, 15)
    assert report.cycles == ()
    assert report.order == ("1",)
    assert report.ready == ()
    assert report.unschedulable == ("2", "3")
    assert report.blocked_by == {"2": ("2",), "3": ("2",)}


# --- dag.cycle --------------------------------------------------------------------------------


CYCLE = {
    "1": (),
    "3": ("1", "7"),
    "5": ("3",),
    "7": ("5",),
    "8": ("7",),  # downstream of the cycle: blocked, but not a member
    "9": ("8",),
    "10": ("1",),
}


def test_cycle_message_location_and_members() -> None:
    report = analyze(make_list(CYCLE, done={"1"}))
    assert codes(report) == ["dag.cycle"]
    (finding,) = report.findings
    assert finding.level is Level.ERROR
    assert finding.message == "cycle: 3 → 5 → 7 → 3"
    assert finding.where == Where(PATH, 14)
    assert finding.hint == (
        "→ means 'is needed by'; remove one of these dependencies:\n"
        f"    {PATH}:18: task 5 depends on 3\n"
        f"    {PATH}:22: task 7 depends on 5\n"
        f"    {PATH}:14: task 3 depends on 7"
    )
    assert report.cycles == (("3", "5", "7"),)


def test_cycle_blocks_members_and_everything_downstream_only() -> None:
    report = analyze(make_list(CYCLE, done={"1"}))
    assert report.order == ("1", "10")
    assert report.ready == ("10",)
    assert report.waves == (("10",),)
    assert report.unschedulable == ("3", "5", "7", "8", "9")
    assert report.blocked_by == {"3": ("7",), "5": ("3",), "7": ("5",), "8": ("7",), "9": ("8",)}


def test_one_finding_per_cyclic_component_with_its_shortest_cycle() -> None:
    # {1, 2, 3} is one component holding two cycles (1→2→1 and 2→3→2).
    graph = {"1": ("2",), "2": ("1", "3"), "3": ("2",), "4": ("5",), "5": ("4",)}
    report = analyze(make_list(graph))
    assert [f.message for f in report.findings] == ["cycle: 1 → 2 → 1", "cycle: 4 → 5 → 4"]
    assert report.cycles == (("1", "2"), ("4", "5"))


def test_cycle_with_a_done_member_is_still_never_ready() -> None:
    report = analyze(make_list({"1": ("2",), "2": ("1",)}, done={"1"}))
    assert sorted(codes(report)) == ["dag.cycle", "dag.done-depends-on-open"]
    assert report.ready == ()
    assert report.unschedulable == ("2",)
    assert report.blocked_by == {"2": ("1",)}  # its dependency on the cycle holds it up


# --- dag.done-depends-on-open -----------------------------------------------------------------


def test_done_depends_on_open_and_in_progress() -> None:
    graph = {"1": (), "2": (), "3": ("1", "2"), "4": ()}
    report = analyze(make_list(graph, done={"3"}, started={"2"}))
    assert codes(report) == ["dag.done-depends-on-open", "dag.done-depends-on-open"]
    assert [f.level for f in report.findings] == [Level.WARNING, Level.WARNING]
    assert [f.message for f in report.findings] == [
        "task 3 is done but depends on in-progress task 2",
        "task 3 is done but depends on open task 1",
    ]
    assert report.findings[1].hint == "finish task 1 (line 10) or reopen task 3"
    assert {f.where for f in report.findings} == {Where(PATH, 19)}


# --- all findings together ----------------------------------------------------------------------


def test_findings_are_sorted_and_all_located() -> None:
    graph = {"1": ("2",), "2": ("1",), "3": ("3",), "4": ("99",), "5": ("4",)}
    report = analyze(make_list(graph, done={"5"}))
    assert [(f.where.line if f.where else None, f.code) for f in report.findings] == [
        (10, "dag.cycle"),
        (19, "dag.self-dependency"),
        (23, "dag.unknown-dependency"),
        (27, "dag.done-depends-on-open"),
    ]
    assert all(f.where is not None and f.where.path == PATH for f in report.findings)


# --- shapes that break naive implementations -----------------------------------------------------


def test_ladder_of_100() -> None:
    graph = {str(i): tuple(str(d) for d in (i - 2, i - 1) if d >= 1) for i in range(1, 101)}
    report = analyze(make_list(graph))
    assert report.findings == ()
    assert report.order == tuple(str(i) for i in range(1, 101))
    assert report.waves == tuple((str(i),) for i in range(1, 101))
    assert len(report.critical_path) == 100
    assert report.next == "1"


@pytest.mark.slow
def test_chain_of_100k() -> None:
    n = 100_000
    tasks = tuple(
        make_task(str(i), (str(i - 1),) if i > 1 else (), line=i) for i in range(1, n + 1)
    )
    report = analyze(TaskList(path=PATH, tasks=tasks, findings=()))
    assert report.findings == ()
    assert len(report.order) == n
    assert len(report.critical_path) == n
    assert len(report.waves) == n
    assert report.next == "1"


@pytest.mark.slow
def test_ring_of_100k_is_one_cycle() -> None:
    n = 100_000
    tasks = tuple(make_task(str(i), (str(i - 1 or n),), line=i) for i in range(1, n + 1))
    report = analyze(TaskList(path=PATH, tasks=tasks, findings=()))
    assert codes(report) == ["dag.cycle"]
    assert report.cycles == (tuple(str(i) for i in range(1, n + 1)),)
    assert len(report.unschedulable) == n


# --- rendering titles literally ----------------------------------------------------


def test_mermaid_and_dot_labels_print_titles_literally() -> None:
    from the_loop.dag.render import render_dot, render_mermaid
    from the_loop.tasks import parse_tasks

    title = 'Say "hi" — uses `code`, a <b> tag and C:\\path'
    tasks = parse_tasks(f"- [ ] 1. {title}\n- [ ] 2. Next\n  - _Depends on:_ 1\n", Path("t.md"))
    dag = analyze(tasks)
    mermaid = render_mermaid("issue-1", tasks, dag)
    assert (
        '  T1["1 Say #quot;hi#quot; — uses `code`, a #lt;b#gt; tag and C:\\path"]:::ready'
        in mermaid.splitlines()
    )
    assert "\\u" not in mermaid and "\\#" not in mermaid
    dot = render_dot("issue-1", tasks, dag)
    assert (
        '  "1" [label="1. Say \\"hi\\" — uses `code`, a <b> tag and C:\\\\path\\n(ready)", '
        'fillcolor="#d0ebff"];' in dot.splitlines()
    )
    assert "\\u" not in dot


def test_an_unknown_dependency_is_an_error_only_when_every_task_line_was_read() -> None:
    from the_loop.tasks import parse_tasks

    certain = analyze(parse_tasks("- [ ] 1. A\n- [ ] 2. B\n  - _Depends on:_ 3\n", Path("t.md")))
    assert [(f.level, f.code) for f in certain.findings] == [
        (Level.ERROR, "dag.unknown-dependency")
    ]
    text = "- [ ] 1. A\n- [ ] Three, without its id\n- [ ] 2. B\n  - _Depends on:_ 3\n"
    unsure = analyze(parse_tasks(text, Path("t.md")))
    (finding,) = unsure.findings
    assert (finding.level, finding.code) == (Level.WARNING, "dag.unconfirmed-dependency")
    assert "line 2 was not understood" in finding.message
    assert unsure.ready == ("1",)  # task 2 still waits: its dependency is not done
