"""The wider task grammar: heading tasks, suffixed ids, clauses anywhere, the sources joined.

Each form is a small hand-written input; the corpora (tests/oracle) show the same
forms in real files.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from the_loop.findings import Level
from the_loop.tasks import TaskList, TaskState, parse_tasks, with_state


def parse(text: str) -> TaskList:
    return parse_tasks(textwrap.dedent(text), Path("tasks.md"))


def deps(result: TaskList) -> dict[str, tuple[str, ...] | None]:
    return {t.id: t.depends_on for t in result.tasks}


def codes(result: TaskList) -> list[tuple[str, int | None]]:
    return [(f.code, f.where.line if f.where else None) for f in result.findings]


# --- heading tasks ----------------------------------------------------------------------


HEADINGS = """\
    ## Task list

    ### T1 — `Runtime.start()` — enter the start node

    - **Requirements:** AC1, AC2
    - **Depends on:** —
    - **Green:** add `start()`.
    - [x] Done

    #### T2: Second, at another level

    Some words about it.
    - **Depends on:** T1
    - [ ] Done
    - [ ] a second checkbox is a detail, not the state

    ### T3 — no checkbox at all

    ## Task 4 — named with the word
    - [-] Done
    """


def test_a_heading_task_takes_its_state_from_the_first_checkbox_without_an_id() -> None:
    result = parse(HEADINGS)
    assert [(t.id, t.label, t.title, t.state) for t in result.tasks] == [
        ("1", "T1", "`Runtime.start()` — enter the start node", TaskState.DONE),
        ("2", "T2", "Second, at another level", TaskState.OPEN),
        ("4", "4", "named with the word", TaskState.IN_PROGRESS),
    ]
    first, second, _ = result.tasks
    assert (first.requirements, first.depends_on, first.depends_line) == (("AC1", "AC2"), (), 6)
    assert (second.depends_on, second.line, second.end_line) == (("1",), 10, 15)
    assert codes(result) == [("tasks.heading-no-checkbox", 17)]
    assert result.findings[0].level is Level.WARNING


def test_the_writer_ticks_a_heading_tasks_checkbox() -> None:
    text = textwrap.dedent(HEADINGS)
    second = parse(HEADINGS).tasks[1]
    data = with_state(text.encode(), second, TaskState.DONE)
    changed = [n for n, (a, b) in enumerate(zip(text.encode(), data, strict=True)) if a != b]
    assert len(changed) == 1
    assert data.decode().splitlines()[13] == "- [x] Done"


# --- ids --------------------------------------------------------------------------------


def test_letter_suffixed_ids_are_tasks_in_headers_fields_and_charts() -> None:
    result = parse(
        """\
        - [x] **T12 — Twelve.** *(AC1)*
        - [x] **T12b — Inserted later.** *(AC2)*
        - [ ] **T13 — After both.** — depends on T12b and T12.
        - [ ] 14. Fourteen
          - _Depends on:_ T1–T13
        ```mermaid
        flowchart LR
          T12 --> T12b[T12b regression]
          T12b --> T13
        ```
        """
    )
    assert [t.id for t in result.tasks] == ["12", "12b", "13", "14"]
    assert deps(result)["12b"] == ("12",)
    assert deps(result)["13"] == ("12b", "12")
    # Ranges expand over numbers only: 12b is not inside T1–T13.
    assert "12b" not in (deps(result)["14"] or ())


def test_a_range_with_a_suffixed_end_is_not_understood() -> None:
    result = parse("- [ ] 1. A\n- [ ] 2. B\n  - _Depends on:_ 12b–12d\n")
    assert result.tasks[1].unread_depends_line == 3
    assert codes(result) == [("tasks.depends-unreadable", 3)]


# --- dependency clauses anywhere ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # plain inline field in the paragraph, the value ending with its sentence
        (
            "- [x] **T3 — Three.** Words. Depends on: T1. Requirements: R5.1–R5.2.\n",
            (("1",), ("R5.1", "R5.2")),
        ),
        # a colon field whose aside wraps onto the next line
        ("- [x] **T3 — Three.** Words. Depends on: T1 (P3 defines the\n  target).\n", (("1",), ())),
        # a prose sentence without a colon
        ("- [x] **T3 — Three.** Words, `code: x`. Depends on T1 and T2.\n", (("1", "2"), ())),
        # `+` joins ids, asides dropped
        (
            "- [x] **T3 — Three.** *(AC3.1)* — depends on T1 (close path) + T2 (config).\n",
            (("1", "2"), ("AC3.1",)),
        ),
        # the clause in a detail sub-item
        ("- [x] 3. Three\n  - Runs last. Depends on T1, T2.\n", (("1", "2"), ())),
        # italic whole-field forms
        ("- [x] 3. Three\n  *Requirements: AC1, AC3.*\n", (None, ("AC1", "AC3"))),
        ("- [x] 3. Three\n  _Requirements: R1.1–R1.2_\n", (None, ("R1.1", "R1.2"))),
        # plain parentheses in the header paragraph cite; `(req 2)` too
        ("- [x] **T3 — Three.** (AC1.3, AC1.4).\n", (None, ("AC1.3", "AC1.4"))),
        ("- [x] T3 — Author the scene (req 2).\n", (None, ("REQ2",))),
        ("- [x] T3 — Scene (design A4; tests 1–8).\n", (None, ())),
        # a number in parentheses names nothing; italic and plain groups side by side
        ("- [x] 3. Load the worker (2) (1/3, 4.5)\n", (None, ())),
        ("- [x] 3. Load it (R2) (2)\n", (None, ("R2",))),
        ("- [x] 3. Load it _(AC1)_ (R2)\n", (None, ("AC1",))),
        ("- [x] 3. Load it (3) (R2) (NFR)\n", (None, ("R2", "NFR"))),
    ],
)
def test_clause_and_citation_forms(
    text: str, expected: tuple[tuple[str, ...] | None, tuple[str, ...]]
) -> None:
    result = parse("- [x] 1. A\n- [x] 2. B\n" + text)
    task = result.tasks[2]
    assert (task.depends_on, task.requirements) == expected
    assert [f for f in result.findings if f.level is not Level.INFO] == []


def test_plain_parentheses_cite_only_when_nothing_else_does_and_keep_their_line() -> None:
    result = parse(
        "- [ ] 1. Load it (R9)\n  - _Requirements:_ R1\n"  # the field cites: (R9) is a mention
        "- [ ] 2. Load it *(AC2)* (R9)\n"  # an italic group cites: the same
        "- [ ] 3. Load the worker\n  and its cache (R4, AC1)\n"  # nothing else: they cite
        "- [ ] 4. Load it (R5)\n  - Mentions (R6) in a detail.\n"  # only the header's count
    )
    cited = [(t.requirements, t.requirements_line) for t in result.tasks]
    assert cited == [(("R1",), 2), (("AC2",), 3), (("R4", "AC1"), 5), (("R5",), 6)]


def test_a_clause_in_the_middle_of_a_sentence_is_prose() -> None:
    result = parse(
        "- [ ] 1. A\n- [ ] 2. Remove what depends on 1\n  - Whatever depends on 1 stays.\n"
    )
    assert result.tasks[1].depends_on is None
    assert result.findings[-1].code == "tasks.no-dependencies"


def test_a_clause_that_starts_a_sentence_but_does_not_read_holds_the_task_back() -> None:
    result = parse("- [ ] 1. A\n- [ ] **T2 — B.** Depends on the auth rework.\n")
    task = result.tasks[1]
    assert (task.depends_on, task.unread_depends_line) == (None, 2)
    (finding,) = result.findings
    assert (finding.code, finding.level) == ("tasks.depends-prose-unreadable", Level.WARNING)
    assert finding.message.startswith("not understood: the dependency clause `depends on the")


def test_clauses_inside_code_are_not_read() -> None:
    task = parse("- [ ] 1. A\n  - Gherkin `Requirement: docs/x.md AC1` and `depends on 9`\n").tasks[
        0
    ]
    assert (task.depends_on, task.requirements) == (None, ())


# --- the sources joined ------------------------------------------------------------------------


def test_a_task_without_fields_takes_its_edges_from_the_chart() -> None:
    result = parse(
        """\
        - [x] 1. A
          - _Depends on:_ none
        - [x] 2. B
          - _Depends on:_ 1
        - [x] 3. C

        ```mermaid
        flowchart LR
          T1 --> T2 --> T3
        ```
        """
    )
    assert deps(result) == {"1": (), "2": ("1",), "3": ("2",)}
    assert result.dependency_source == "fields+mermaid"
    assert result.findings == ()


def test_prose_chains_in_a_dag_section_join_the_fields() -> None:
    result = parse(
        """\
        - [ ] 1. A
          - _Depends on:_ none
        - [ ] 2. B
          - _Depends on:_ 1
        - [ ] 3. C
        - [ ] 4. D
          - _Depends on:_ 2

        ## Dependency graph (DAG)

        `1 → 2 → {3, 4}`; `2 → 3` (again). Critical path: 1 → 2 → 4.
        The order follows design → tasks.
        """
    )
    assert deps(result) == {"1": (), "2": ("1",), "3": ("2",), "4": ("2",)}
    assert result.dependency_source == "fields+prose"
    assert result.findings == ()


def test_an_order_a_chain_adds_is_a_disagreement_what_it_leaves_out_is_not() -> None:
    result = parse(
        """\
        - [ ] 1. A
          - _Depends on:_ none
        - [ ] 2. B
          - _Depends on:_ none
        - [ ] 3. C
          - _Depends on:_ 1, 2

        ## DAG

        1 → 3
        2 → 1
        """
    )
    assert deps(result) == {"1": ("2",), "2": (), "3": ("1", "2")}
    assert codes(result) == [("tasks.dag-mismatch", 2)]
    assert "says none, but the dependency chain (line 11) says 2" in result.findings[0].message


def test_chains_outside_a_dag_section_are_prose() -> None:
    result = parse("- [ ] 1. A\n- [ ] 2. B\n\n## Notes\n\n1 → 2\n")
    assert deps(result) == {"1": None, "2": None}


# --- more spellings ---------------------------------------------------------------------


def test_tasks_in_an_ordered_list_take_the_number_it_shows() -> None:
    result = parse(
        """\
        1. [x] Parse config
           - _Depends on:_ none
        1. [ ] Render
           - _Blocked by:_ 1
        3. [ ] T7 — an explicit id wins
        - [ ] Task 4: Wire it
          - **Depends:** 2, T7
          - _Covers:_ R1.2
        """
    )
    assert [(t.id, t.label, t.title) for t in result.tasks] == [
        ("1", "1", "Parse config"),
        ("2", "2", "Render"),
        ("7", "T7", "an explicit id wins"),
        ("4", "Task 4", "Wire it"),
    ]
    assert deps(result) == {"1": (), "2": ("1",), "7": None, "4": ("2", "7")}
    assert result.tasks[3].requirements == ("R1.2",)
    assert [f for f in result.findings if f.level is not Level.INFO] == []


def test_an_ordered_task_is_ticked_in_place() -> None:
    text = "1. [ ] A\n2. [ ] B\n"
    task = parse(text).tasks[1]
    assert with_state(text.encode(), task, TaskState.DONE) == b"1. [ ] A\n2. [x] B\n"


def test_linked_and_zero_padded_citations() -> None:
    task = parse("- [ ] 1. A\n  - _Requirements:_ [R1.1](requirements.md#r11), FR-001\n").tasks[0]
    assert task.requirements == ("R1.1", "FR1")


def test_a_dependency_table_states_each_rows_dependencies() -> None:
    result = parse(
        """\
        - [ ] 1. A
        - [ ] 2. B
        - [ ] 3. C

        | Task | Depends on | Why |
        |------|------------|-----|
        | T2 | T1 | schema first |
        | 3 | 1, 2 | both |
        | 1 | — | root |
        | 9 | 1 | not a task |
        | 3b | maybe 2 | unread |

        | Name | Value |
        |------|-------|
        | 2 | 1 |
        """
    )
    assert deps(result) == {"1": (), "2": ("1",), "3": ("1", "2")}
    assert result.dependency_source == "table"
    assert codes(result) == [("tasks.dag-unknown-task", 10), ("tasks.dag-unreadable", 11)]


def test_mermaid_nodes_named_task1_map_to_tasks() -> None:
    result = parse("- [ ] 1. A\n- [ ] 2. B\n```mermaid\ngraph TD\n  task1 --> task_2\n```\n")
    assert deps(result) == {"1": (), "2": ("1",)}
