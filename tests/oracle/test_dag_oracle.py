"""The second DAG reader itself: each form it claims to read, on a small input.

The corpus test trusts ``dag_oracle`` as the reference, so its grammar is pinned
here by examples shaped like the real files (see the module docstring).
"""

from __future__ import annotations

import pytest
from dag_oracle import FIELD, MERMAID, PROSE, parse_dag

FRONT = "---\ntype: tasks\nstatus: draft\n---\n\n"


def test_template_fields_numbered_ids_and_done_flags() -> None:
    dag = parse_dag(
        FRONT + "## Task list\n\n"
        "- [x] 1. Schema\n  - _Depends on:_ none\n  - _Requirements:_ R1\n"
        "- [ ] 2. Loader\n  - _Depends on:_ 1 — _Requirements:_ R2\n"
        "- [-] 3. Docs\n  - _Depends on:_ 1–2\n"
    )
    assert dag.ids == ("1", "2", "3")
    assert dag.done() == {"1": True, "2": False, "3": False}
    assert dag.edge_set() == {("1", "2"), ("1", "3"), ("2", "3")}
    assert {e.line for e in dag.edges if e.task == "2"} == {12}


@pytest.mark.parametrize(
    ("head", "value", "deps"),
    [
        ("- [x] **T3 — Wire.** text", "— depends on T1, T2.", {"1", "2"}),
        ("- [x] **T3 — Wire.** text", "— depends\n  on T1–T2.", {"1", "2"}),
        ("- [x] **T3 — Wire.** text", "— depends on nothing.", set()),
        ("- [x] **T3 — Wire.** text", "— depends on T1 (same path) + T2 (config).", {"1", "2"}),
        ("- [x] **T3 — Wire.** text", "Depends on T1 and T2.", {"1", "2"}),
        ("- [x] **T3 — Wire.** text", "Depends on: T1 (why). Requirements: R1.", {"1"}),
        ("- [x] 3. **Wire.** text", "- **Depends on:** 1, 2", {"1", "2"}),
        ("- [x] 3. Wire", "- _Depends on:_ 1 · _Requirements:_ R1", {"1"}),
        ("- [x] 3. Wire", "- _Depends on:_ all", {"1", "2"}),
        ("- [x] T3 — Wire", "- _Depends on:_ —", set()),
    ],
)
def test_dependency_spellings(head: str, value: str, deps: set[str]) -> None:
    dag = parse_dag(f"- [x] 1. One\n- [x] 2. Two\n{head}\n  {value}\n")
    assert {d for d, t in dag.edge_set() if t == "3"} == deps
    assert dag.unread == ()


def test_heading_tasks_take_their_state_from_the_done_checkbox() -> None:
    dag = parse_dag(
        "## Task list\n\n### T1 — Start\n\n- **Depends on:** —\n- [x] Done\n\n"
        "### T2 — Link\n\n- **Depends on:** T1\n- [ ] Done\n"
    )
    assert dag.done() == {"1": True, "2": False}
    assert dag.edge_set() == {("1", "2")}


def test_letter_suffixes_and_padding_are_part_of_the_id() -> None:
    dag = parse_dag(
        "- [x] **T12 — a.** x\n- [x] **T12b — b.** x — depends on T12.\n- [ ] T013 — c\n"
        "```mermaid\nflowchart LR\n  T12b[T12b b] --> T13[T13 c]\n```\n"
    )
    assert dag.ids == ("12", "12b", "13")
    assert dag.edge_set() == {("12", "12b"), ("12b", "13")}


def test_mermaid_groups_quoted_labels_and_label_numbers() -> None:
    dag = parse_dag(
        "- [x] 1. a\n- [x] 2. b\n- [x] 3. c\n- [x] 4. d\n\n"
        "```mermaid\ngraph LR\n"
        '  A["1 · red<br/>(first)"] --> B[2 b] & C[3 c]\n'
        "  %% a comment --> ignored\n"
        "  B & C --> T4[T4 d]\n"
        "  subgraph S\n  end\n"
        "```\n"
    )
    assert dag.edges_by_source()[MERMAID] == {("1", "2"), ("1", "3"), ("2", "4"), ("3", "4")}
    assert dag.unread == ()


def test_prose_chains_only_under_a_dag_heading() -> None:
    dag = parse_dag(
        "- [x] 1. a\n- [x] 2. b\n- [x] 3. c\n- [x] 4. d\n- [x] 5. e\n\n"
        "## Notes\n\n`1 → 5` is not a dependency statement here.\n\n"
        "## Dependency graph (DAG)\n\n"
        "`1 → {2, 3}`; `3 → 4/5` (prose after it)\n"
        "```\n{1..3} → 4\n```\n"
    )
    assert dag.edges_by_source()[PROSE] == {
        ("1", "2"),
        ("1", "3"),
        ("3", "4"),
        ("3", "5"),
        ("2", "4"),
        ("1", "4"),
    }
    assert dag.edges_by_source()[FIELD] == set()


def test_what_it_cannot_read_is_listed_with_its_line() -> None:
    dag = parse_dag(
        "- [x] 1. a\n  - _Depends on:_ the schema task\n- [x] no id here\n\n"
        "## DAG\n\n1 ─┬─→ 3\n      → 4\n"
        "```mermaid\nflowchart LR\n  X[schema] --> T1\n  T1 --- T2\n```\n"
    )
    assert sorted((u.line, u.why) for u in dag.unread) == [
        (2, "dependency value not read"),
        (3, "checkbox without a task id"),
        (7, "box-drawing art"),
        (8, "an arrow outside a readable chain"),
        (11, "mermaid node is not a task"),
        (12, "mermaid statement not read"),
    ]


def test_edges_to_unlisted_tasks_are_dangling_not_dropped() -> None:
    dag = parse_dag("- [ ] 1. a\n  - _Depends on:_ 7\n")
    assert dag.edge_set() == set()
    assert dag.dangling() == {("7", "1")}
