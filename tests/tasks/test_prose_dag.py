"""Arrow chains in a DAG section: every form of the grammar on a small input."""

from __future__ import annotations

from pathlib import Path

import pytest

from the_loop.tasks.prose_dag import DAG_HEADING_RE, ProseDag


def read(lines: list[str], *, fenced: bool = False) -> ProseDag:
    dag = ProseDag(Path("tasks.md"))
    for number, line in enumerate(lines, 1):
        dag.feed(line, number, fenced=fenced)
    dag.finish()
    return dag


def edges(dag: ProseDag) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in dag.edges}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("1 → 2 → 3", {("1", "2"), ("2", "3")}),
        ("`1 → {2, 3} → 4`", {("1", "2"), ("1", "3"), ("2", "4"), ("3", "4")}),
        ("{1..3} → 4", {("1", "4"), ("2", "4"), ("3", "4")}),
        ("1..2, 5 → 6", {("1", "6"), ("2", "6"), ("5", "6")}),
        ("`5 → 7/8 → 9`", {("5", "7"), ("5", "8"), ("7", "9"), ("8", "9")}),
        ("T1 -> T2", {("1", "2")}),
        ("3 ← 1", {("1", "3")}),
        (
            "after 1 → {2, 4}; after 2 → {3, 5}; 6 alongside 7.",
            {
                ("1", "2"),
                ("1", "4"),
                ("2", "3"),
                ("2", "5"),
            },
        ),
        ("Critical path: `1 → 4 → 12b`. Tasks 2/3 are independent.", {("1", "4"), ("4", "12b")}),
        ("`1 → 2`; `3 → 4` (the two chains meet at 5).", {("1", "2"), ("3", "4")}),
        ("- `1 → 2`, `6`, all → `3 → 4`.", {("1", "2"), ("3", "4")}),
        ("6 (also ← 1) → 7", {("1", "6"), ("6", "7")}),
        ("(1 also → 5)", {("1", "5")}),
        ("The order follows design → tasks", set()),
        ("02 → 03", {("2", "3")}),
    ],
)
def test_chain_forms(line: str, expected: set[tuple[str, str]]) -> None:
    dag = read([line])
    assert edges(dag) == expected
    assert dag.findings == []


def test_a_line_starting_with_an_arrow_continues_the_group_above_it() -> None:
    dag = read(
        [
            "1 → 2 → 3",
            "      → 4",
            "      → 5 → 6",
            "          → 7",
            "        8 → 9",
        ],
        fenced=True,
    )
    assert edges(dag) == {
        ("1", "2"),
        ("2", "3"),
        ("2", "4"),
        ("2", "5"),
        ("5", "6"),
        ("5", "7"),
        ("8", "9"),
    }
    assert [(e.source, e.target, e.line) for e in dag.edges if e.target == "7"] == [("5", "7", 4)]


@pytest.mark.parametrize(
    "lines",
    [
        ["1 ─┬─→ 3", "   ├─→ 4"],  # box-drawing art
        ["1 → 2 and then 3 more"],  # leftover numbers
        ["→ 4"],  # a leading arrow with nothing above it
    ],
)
def test_what_does_not_read_is_one_warning_per_run_and_no_edge(lines: list[str]) -> None:
    dag = read(lines, fenced=True)
    assert dag.edges == []
    (finding,) = dag.findings
    assert (finding.code, finding.where and finding.where.line) == ("tasks.dag-unreadable", 1)
    assert finding.message.startswith("not understood: the dependency drawing on line")


@pytest.mark.parametrize(
    ("title", "is_dag"),
    [
        ("Dependency graph (DAG)", True),
        ("DAG", True),
        ("Dependencies", True),
        ("Critical path", True),
        ("Task list", False),
        ("Dagger notes", False),
    ],
)
def test_which_headings_open_a_dag_section(title: str, is_dag: bool) -> None:
    assert bool(DAG_HEADING_RE.search(title)) is is_dag
