"""Edges from mermaid flowcharts, and how tasks.md uses them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from the_loop.findings import Level
from the_loop.tasks import parse_tasks
from the_loop.tasks.mermaid import Edge, Flowchart, node_task_id, parse_flowchart

PATH = Path("tasks.md")


def chart(source: str, first_line: int = 1) -> Flowchart:
    result = parse_flowchart(textwrap.dedent(source), PATH, first_line)
    assert result is not None
    return result


def pairs(result: Flowchart) -> list[tuple[str, str]]:
    return [(e.source, e.target) for e in result.edges]


def codes(result: Flowchart) -> list[tuple[str, int | None]]:
    return [(f.code, f.where.line if f.where else None) for f in result.findings]


@pytest.mark.parametrize(
    "header", ["flowchart LR", "flowchart TD", "flowchart", "graph TB", "graph BT", "graph RL"]
)
def test_flowchart_headers(header: str) -> None:
    assert pairs(chart(f"{header}\n  T1 --> T2\n")) == [("1", "2")]


@pytest.mark.parametrize(
    "source",
    ["sequenceDiagram\n  A->>B: hi\n", "", "\n\n", 'pie\n  "a": 1\n', "graphic LR\nT1 --> T2\n"],
)
def test_other_diagrams_are_not_flowcharts(source: str) -> None:
    assert parse_flowchart(source, PATH) is None


def test_comments_and_front_matter_before_the_header() -> None:
    source = "---\ntitle: DAG\n---\n%% the order\n\nflowchart LR\n  T1 --> T2\n"
    assert pairs(chart(source)) == [("1", "2")]


def test_edges_carry_absolute_lines() -> None:
    result = chart("flowchart LR\n  T1 --> T2\n\n  T2 --> T3\n", first_line=20)
    assert result.edges == (Edge("1", "2", 21), Edge("2", "3", 23))
    assert (result.line, result.end_line, result.mapped) == (20, 24, 3)


def test_chains_and_groups() -> None:
    result = chart(
        """\
        flowchart LR
          T1[1 config] --> T2[2 registry] & T4[4 router]
          T2 & T4 & T5 --> T7[7 dispatcher]
          T8 --> T9[9 docs] --> T10[10 records]
          T11 & T12 --> T13 & T14
        """
    )
    assert pairs(result) == [
        ("1", "2"),
        ("1", "4"),
        ("2", "7"),
        ("4", "7"),
        ("5", "7"),
        ("8", "9"),
        ("9", "10"),
        ("11", "13"),
        ("11", "14"),
        ("12", "13"),
        ("12", "14"),
    ]
    assert result.findings == ()


@pytest.mark.parametrize(
    "shape",
    [
        "[label]",
        "(label)",
        "{label}",
        "([label])",
        "[[label]]",
        "((label))",
        "{{label}}",
        ">label]",
        "[(label)]",
        '["label [with] brackets"]',
        "[/label/]",
        "",
    ],
)
def test_node_shapes(shape: str) -> None:
    assert pairs(chart(f"graph LR\n  T1{shape} --> T2{shape}\n")) == [("1", "2")]


@pytest.mark.parametrize(
    "arrow",
    [
        "-->",
        "--->",
        "==>",
        "-.->",
        "-..->",
        "-->|needs|",
        "-- needs -->",
        "== needs ==>",
        "-. needs .->",
        "--o",
        "--x",
    ],
)
def test_directed_links(arrow: str) -> None:
    assert pairs(chart(f"flowchart LR\n  T1 {arrow} T2\n")) == [("1", "2")]


def test_links_without_spaces() -> None:
    assert pairs(chart("graph LR\nT1-->T2\nT2-->|x|T3\n")) == [("1", "2"), ("2", "3")]


@pytest.mark.parametrize("arrow", ["---", "===", "-.-", "-- text ---"])
def test_open_links_state_no_order(arrow: str) -> None:
    result = chart(f"flowchart LR\n  T1 {arrow} T2\n")
    assert result.edges == ()
    assert codes(result) == [("tasks.mermaid-undirected", 2)]
    assert result.findings[0].level is Level.INFO


def test_bidirectional_link_is_a_warning() -> None:
    result = chart("flowchart LR\n  T1 <--> T2\n")
    assert result.edges == ()
    assert codes(result) == [("tasks.mermaid-bidirectional", 2)]


def test_invisible_link_is_ignored() -> None:
    result = chart("flowchart LR\n  T1 ~~~ T2\n")
    assert (result.edges, result.findings) == ((), ())


def test_styling_and_structure_lines_carry_no_edges() -> None:
    result = chart(
        """\
        flowchart LR
          %% T8 --> T9 is a comment
          classDef done fill:#9f9
          class T1,T2 done
          style T1 fill:#f9f
          linkStyle 0 stroke:#f00
          click T1 "https://example.invalid"
          subgraph phase1 [Phase one]
            direction TB
            T1:::done --> T2
          end
          T2 --> T3; T3 --> T4
        """
    )
    assert pairs(result) == [("1", "2"), ("2", "3"), ("3", "4")]
    assert result.findings == ()


def test_unreadable_statement_is_a_warning_and_adds_nothing() -> None:
    result = chart("flowchart LR\n  T1 --> T2\n  T3 --> broken((\n  T4 --> T5\n")
    assert pairs(result) == [("1", "2"), ("4", "5")]
    assert codes(result) == [("tasks.mermaid-unreadable", 3)]


@pytest.mark.parametrize(
    ("node", "label", "task_id"),
    [
        ("T7", None, "7"),
        ("t7", None, "7"),
        ("7", None, "7"),
        ("T07", None, "7"),
        ("A", "7 dispatcher", "7"),
        ("A", "T7: dispatcher", "7"),
        ("A", "7. dispatcher", "7"),
        ("A", '"7 quoted"', "7"),
        ("A", "3.2 sub", "3.2"),
        ("T7", "9 other", "7"),
        ("A", "dispatcher", None),
        ("A", "7dispatcher", None),
        ("A", None, None),
        ("Task7", None, "7"),
        ("task_7", None, "7"),
        ("Tusk7", None, None),
    ],
)
def test_node_task_id(node: str, label: str | None, task_id: str | None) -> None:
    assert node_task_id(node, label) == task_id


def test_labels_defined_once_apply_everywhere() -> None:
    result = chart("graph LR\n  A[7 dispatcher] --> B[8 wiring]\n  B --> C[9 docs]\n")
    assert pairs(result) == [("7", "8"), ("8", "9")]


def test_unmappable_node_is_a_warning_and_its_edges_drop() -> None:
    result = chart("graph LR\n  setup --> T1\n  T1 --> T2\n  T2 --> setup\n")
    assert pairs(result) == [("1", "2")]
    assert codes(result) == [("tasks.mermaid-unmappable", 2)]
    assert result.mapped == 2


def test_repeated_edges_are_read_once() -> None:
    assert chart("graph LR\n  T1 --> T2\n  T1 --> T2\n").edges == (Edge("1", "2", 2),)


# --- how tasks.md uses the flowchart ---------------------------------------------------


def tasks_file(body: str, mermaid: str) -> str:
    return textwrap.dedent(body) + "\n## DAG\n\n```mermaid\n" + textwrap.dedent(mermaid) + "```\n"


def test_mermaid_only_gives_the_dependencies() -> None:
    text = tasks_file(
        """\
        - [x] 1. **Split the runner.** … _Requirements: (design D2)_ · _Test: T1_
        - [ ] 2. Store it
        - [ ] 3. Core capability
        """,
        "flowchart LR\n  T1[1 runner split] --> T3[3 core]\n  T2[2 store] --> T3\n",
    )
    result = parse_tasks(text, PATH)
    assert result.dependency_source == "mermaid"
    assert [(t.id, t.depends_on, t.depends_line) for t in result.tasks] == [
        ("1", (), None),
        ("2", (), None),
        ("3", ("1", "2"), 9),
    ]
    assert result.findings == ()


def test_the_sources_join_and_a_transitive_reduction_agrees() -> None:
    text = tasks_file(
        """\
        - [ ] 1. One
          - _Depends on:_ none
        - [ ] 2. Two
          - _Depends on:_ 1
        - [ ] 3. Three
          - _Depends on:_ 1, 2
        - [ ] 4. Four
        """,
        "graph LR\n  1 --> 2\n  2 --> 3\n  3 --> 4\n",
    )
    result = parse_tasks(text, PATH)
    assert result.dependency_source == "fields+mermaid"
    # Task 3: the chart draws only 2 → 3, but 1 → 2 → 3 orders 1 first too. Task 4
    # states nothing in its fields, so the chart's 3 → 4 is its dependency.
    assert [t.depends_on for t in result.tasks] == [(), ("1",), ("1", "2"), ("3",)]
    assert [t.depends_line for t in result.tasks] == [2, 4, 6, 15]
    assert result.findings == ()


def test_a_real_disagreement_is_a_warning_with_both_places_and_both_edges_kept() -> None:
    text = tasks_file(
        """\
        - [ ] 1. One
          - _Depends on:_ none
        - [ ] 2. Two
          - _Depends on:_ none
        - [ ] 3. Three
          - _Depends on:_ 1
        """,
        "graph LR\n  T2 --> T3\n  T1 --> T2\n",
    )
    result = parse_tasks(text, PATH)
    assert [t.depends_on for t in result.tasks] == [(), ("1",), ("1", "2")]
    assert [(f.code, f.level, f.where and f.where.line) for f in result.findings] == [
        ("tasks.mermaid-mismatch", Level.WARNING, 4),
        ("tasks.mermaid-mismatch", Level.WARNING, 6),
    ]
    assert result.findings[1].message == (
        "task 3: its dependency statement (line 6) says 1, but the mermaid flowchart "
        "(line 12) says 2 (2 only in the mermaid flowchart); loop uses both"
    )


def test_edge_into_a_task_that_is_not_listed_is_a_warning() -> None:
    text = tasks_file("- [ ] 1. One\n- [ ] 2. Two\n", "graph LR\n  T1 --> T2\n  T2 --> T9\n")
    result = parse_tasks(text, PATH)
    assert [t.depends_on for t in result.tasks] == [(), ("1",)]
    assert [(f.code, f.where and f.where.line) for f in result.findings] == [
        ("tasks.mermaid-unknown-task", 9)
    ]


def test_a_flowchart_that_names_no_task_is_not_the_dag() -> None:
    text = tasks_file("- [ ] 1. One\n- [ ] 2. Two\n", "flowchart LR\n  api --> db\n")
    result = parse_tasks(text, PATH)
    assert result.dependency_source == "none"
    assert [(f.code, f.level, f.where and f.where.line) for f in result.findings] == [
        ("tasks.no-dependencies", Level.INFO, 1),
        ("tasks.mermaid-no-tasks", Level.INFO, 7),
    ]


def test_no_dependencies_anywhere_is_one_info_for_the_file() -> None:
    result = parse_tasks("- [ ] 1. A\n- [ ] 2. B\n- [ ] 3. C\n", PATH)
    assert result.dependency_source == "none"
    assert [t.depends_on for t in result.tasks] == [None, None, None]
    (finding,) = result.findings
    assert (finding.code, finding.level, finding.where and finding.where.line) == (
        "tasks.no-dependencies",
        Level.INFO,
        1,
    )
    assert "3 tasks are treated as independent" in finding.message
    assert finding.hint and "_Depends on:_" in finding.hint


def test_a_mermaid_block_inside_a_task_and_an_unclosed_one_still_count() -> None:
    text = "- [ ] 1. One\n- [ ] 2. Two\n  ```mermaid\n  graph LR\n    T1 --> T2\n  ```\n"
    assert [t.depends_on for t in parse_tasks(text, PATH).tasks] == [(), ("1",)]
    unclosed = parse_tasks("- [ ] 1. One\n- [ ] 2. Two\n```mermaid\ngraph LR\n  T1 --> T2\n", PATH)
    assert [t.depends_on for t in unclosed.tasks] == [(), ("1",)]
    assert [f.code for f in unclosed.findings] == ["tasks.unclosed-fence"]
