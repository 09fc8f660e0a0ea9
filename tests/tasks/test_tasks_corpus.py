"""Every tasks.md of the upstream the-loop 0.14.2 snapshot: read, facts, byte round trip.

The corpus is read-only reference data beside the clone; each test copies what it
writes to ``tmp_path``. Expected facts were checked by reading the files.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers import CORPUS, requires_corpus

from the_loop.findings import Level
from the_loop.tasks import TaskList, TaskState, parse_tasks, read_tasks, set_state

pytestmark = requires_corpus()

SPECS = CORPUS / "docs" / "specs"
FILES = sorted(SPECS.glob("*/tasks.md")) if SPECS.is_dir() else []

# item: (tasks, done, dependency_source, [(finding code, line)])
EXPECTED: dict[str, tuple[int, int, str, list[tuple[str, int]]]] = {
    # The chains under "## Dependency graph (DAG)" (lines 94–97) order 1, 6 before 3,
    # 3 before 5 and 5, 7, 9 before 8; the fields of tasks 3, 5 and 8 do not.
    "issue-1": (
        25,
        15,
        "fields+prose",
        [("tasks.dag-mismatch", 26), ("tasks.dag-mismatch", 31), ("tasks.dag-mismatch", 37)],
    ),
    "issue-11": (5, 5, "fields+prose", []),
    "issue-12": (5, 5, "fields+prose", []),
    "issue-15": (10, 10, "fields+mermaid+prose", []),
    "issue-17": (6, 6, "fields+prose", []),
    "issue-18": (7, 7, "fields+prose", []),
    # The chart leaves out 3 → 6 but draws 3 → 4 → 6: the same order, no mismatch.
    "issue-21": (6, 6, "fields+mermaid", []),
    # Box-drawing art (lines 65–66) is not read; line 68 `(1 also → 5)` is.
    "issue-25": (7, 7, "fields+prose", [("tasks.dag-unreadable", 65)]),
    "issue-32": (8, 8, "fields+mermaid", []),
    "issue-36": (6, 6, "fields+prose", []),
    # `1 → {2, 3, 4, 5} → 6` (line 98) orders 5 before 6; task 6's field says 2, 3, 4.
    "issue-70": (10, 10, "fields+prose", [("tasks.dag-mismatch", 58)]),
    "issue-78": (5, 5, "none", [("tasks.no-dependencies", 15)]),
    "issue-80": (10, 10, "fields", []),
}


def corpus(item: str) -> TaskList:
    return read_tasks(SPECS / item / "tasks.md")


def test_the_corpus_has_the_files_this_suite_expects() -> None:
    assert sorted(p.parent.name for p in FILES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name)
def test_counts_source_and_findings(path: Path) -> None:
    count, done, source, findings = EXPECTED[path.parent.name]
    result = read_tasks(path)
    assert len(result.tasks) == count
    assert sum(t.state is TaskState.DONE for t in result.tasks) == done
    assert result.dependency_source == source
    assert [(f.code, f.where.line if f.where else 0) for f in result.findings] == findings
    assert len({t.id for t in result.tasks}) == count  # no duplicates upstream


def test_issue_80_bold_ids_and_prose_dependencies() -> None:
    result = corpus("issue-80")
    assert [t.label for t in result.tasks] == [f"T{n}" for n in range(1, 11)]
    assert [t.id for t in result.tasks] == [str(n) for n in range(1, 11)]
    deps = {t.id: t.depends_on for t in result.tasks}
    assert deps == {
        "1": None,
        "2": (),
        "3": ("1",),
        "4": None,
        "5": None,
        "6": ("2", "4", "5"),
        "7": ("3", "6"),
        "8": ("1", "2", "3", "4", "5", "6", "7"),
        "9": None,
        "10": None,
    }
    t6 = result.tasks[5]
    assert (t6.title, t6.line, t6.end_line, t6.depends_line) == (
        "`_process_item` retry flow",
        36,
        43,
        43,
    )
    assert t6.requirements == ("AC2", "AC3", "AC4", "AC5", "AC6")
    assert result.tasks[7].requirements == ("all",)
    assert result.tasks[7].depends_line == 52  # the clause wraps onto the next line


def test_issue_1_ranges_and_parenthetical_requirements() -> None:
    tasks = {t.id: t for t in corpus("issue-1").tasks}
    assert tasks["10"].depends_on == tuple(str(n) for n in range(1, 10))
    assert tasks["11"].requirements == ("R9", "R8")
    assert tasks["15"].requirements == ("R11",)
    assert tasks["2"].title.endswith("`manifest.yaml`, `external-tools.md`, `collaborators.yaml`")
    assert (tasks["2"].depends_on, tasks["2"].requirements) == ((), ("R2", "R3", "R5", "R7"))
    assert [t.id for t in corpus("issue-1").tasks if t.state is TaskState.OPEN] == [
        str(n) for n in range(16, 26)
    ]


def test_other_value_forms_in_the_corpus() -> None:
    assert corpus("issue-17").tasks[5].requirements == ("R1", "R2", "R3", "R4", "R5")
    assert corpus("issue-25").tasks[6].requirements == ("all",)
    assert corpus("issue-32").tasks[4].requirements == (
        "R1.1",
        "R1.2",
        "R1.3",
        "R1.4",
        "R2.1",
        "R2.2",
        "R3.1",
        "R3.2",
        "R3.3",
        "R7.1",
    )
    assert corpus("issue-32").tasks[7].requirements == ()  # "ready-to-ship gate (…)"
    first = corpus("issue-21").tasks[0]
    assert first.test is not None and "— METADATA `Name: the-loopy-one`" in first.test
    assert corpus("issue-78").tasks[0].requirements == ("AC1", "AC2", "AC3")
    assert len(corpus("issue-36").tasks[2].details) == 2


@pytest.mark.parametrize(
    ("item", "disagree"), [("issue-15", {}), ("issue-32", {}), ("issue-21", {"6": ("2", "4", "5")})]
)
def test_mermaid_graph_agrees_with_the_fields(
    item: str, disagree: dict[str, tuple[str, ...]]
) -> None:
    """Drop the `_Depends on:_` lines: the flowchart alone must give the same DAG."""
    text = (SPECS / item / "tasks.md").read_text()
    with_fields = parse_tasks(text, Path("tasks.md"))
    without = parse_tasks(re.sub(r"(?m)^  - _Depends on:_.*\n", "", text), Path("tasks.md"))
    assert without.dependency_source in ("mermaid", "mermaid+prose")
    assert [f for f in without.findings if f.level is not Level.INFO] == []
    from_graph = {t.id: t.depends_on for t in without.tasks}
    from_fields = {t.id: t.depends_on for t in with_fields.tasks}
    assert {k: v for k, v in from_graph.items() if from_fields[k] != v} == disagree


def test_a_chart_drawing_the_transitive_reduction_agrees_with_the_fields() -> None:
    """issue-21: task 6's field says 2, 3, 4, 5; the chart draws 3 → 4 → 6, not 3 → 6."""
    result = corpus("issue-21")
    assert result.findings == ()
    assert result.tasks[5].depends_on == ("2", "3", "4", "5")


def test_issue_70_mismatch_names_both_places() -> None:
    (finding,) = corpus("issue-70").findings
    assert (finding.level, finding.where and finding.where.line) == (Level.WARNING, 58)
    assert finding.message == (
        "task 6: its dependency statement (line 58) says 2, 3, 4, but the dependency chain "
        "(line 98) says 2, 3, 4, 5 (5 only in the dependency chain); loop uses both"
    )
    assert corpus("issue-70").tasks[5].depends_on == ("2", "3", "4", "5")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name)
def test_writer_round_trips_every_task_byte_for_byte(path: Path, tmp_path: Path) -> None:
    copy = tmp_path / "tasks.md"
    shutil.copyfile(path, copy)
    original = copy.read_bytes()
    for task in read_tasks(copy).tasks:
        assert set_state(copy, task.id, task.state) is False  # no-op leaves the file alone
        assert copy.read_bytes() == original
        for other in TaskState:
            if other is task.state:
                continue
            assert set_state(copy, task.id, other) is True
            after = copy.read_bytes()
            assert sum(a != b for a, b in zip(original, after, strict=True)) == 1
            assert set_state(copy, task.id, task.state) is True
            assert copy.read_bytes() == original
