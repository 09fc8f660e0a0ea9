"""The Kiro and Spec Kit reader itself: each rule it claims, on a small input worked by hand.

``test_order_oracle_items`` trusts ``order_oracle`` as the reference, so every rule of
its docstring is pinned here by an example whose answer is written out below it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from order_oracle import KIRO, SPEC_KIT, closure, detect, parse_plan


def test_kiro_sub_tasks_optional_marks_and_derived_done() -> None:
    plan = parse_plan(
        "# Implementation Plan\n\n"
        "- [x] 1. Top\n"
        "  - a detail, not a task\n"
        "  - [ ] 1.1 Open child of a ticked parent\n"
        "- [ ] 2. Parent left open\n"
        "- [x] 2.1 Flat child, ticked\n"
        "- [x]* 2.2 Optional child\n"
        "- [ ]* 3. Optional top-level task\n",
        KIRO,
    )
    assert plan.ids == ["1", "1.1", "2", "2.1", "2.2", "3"]
    assert [t.parent for t in plan.tasks] == [None, "1", None, "2", "2", None]
    assert [t.optional for t in plan.tasks] == [False, False, False, False, True, True]
    # 1 is ticked but its required child is open; 2 is open but its children are done.
    assert plan.done() == {
        "1": False,
        "1.1": False,
        "2": True,
        "2.1": True,
        "2.2": True,
        "3": False,
    }
    assert plan.optional_open() == 1


def test_kiro_order_is_every_required_task_above_and_a_tick_releases_nothing() -> None:
    plan = parse_plan("- [ ] 1. a\n- [ ]* 2. b\n- [x] 3. c\n- [ ] 4. d\n", KIRO)
    assert plan.known_edges() == {("1", "3"), ("1", "4"), ("3", "4"), ("1", "2")}
    assert plan.ready() == {"1"}  # 4 waits for 1 through the ticked 3


def test_kiro_families_parent_last_children_inherit() -> None:
    plan = parse_plan(
        "- [x] 1. a\n- [ ] 2. b\n  - [ ] 2.1 c\n  - [ ]* 2.2 d\n  - [ ] 2.3 e\n- [ ] 3. f\n",
        KIRO,
    )
    edges = plan.known_edges()
    assert {("2.1", "2"), ("2.3", "2")} <= edges and ("2.2", "2") not in edges
    assert {("1", "2.1"), ("1", "2.2"), ("1", "2.3"), ("2.1", "2.3"), ("2", "3")} <= edges
    assert plan.ready() == {"2.1"}  # never the parent 2; 2.3 waits for 2.1


def test_a_checkpoint_gates_both_ways_and_skips_its_own_parent() -> None:
    plan = parse_plan(
        "- [x] 1. a\n- [ ] 2. b\n  - [x] 2.1 c\n  - [ ] 2.2 Checkpoint - tests pass\n"
        "  - [ ] 2.3 d\n- [ ] 3. **Checkpoint** all green\n- [ ] 4. e\n",
        KIRO,
    )
    assert [t.checkpoint for t in plan.tasks] == [False, False, False, True, False, True, False]
    edges = plan.known_edges()
    assert {("1", "2.2"), ("2.1", "2.2"), ("2.2", "2.3"), ("2.2", "3"), ("2.2", "4")} <= edges
    assert ("2", "2.2") not in edges  # the parent waits for its checkpoint, not the reverse
    assert {("2.3", "3"), ("3", "4")} <= edges
    assert plan.ready() == {"2.2"}


WAVES = '```json\n{"waves": [%s]}\n```\n'


def _waves(*groups: str) -> str:
    return WAVES % ", ".join(f'{{"id": {i}, "tasks": [{g}]}}' for i, g in enumerate(groups))


def test_waves_replace_the_order_among_listed_tasks_only() -> None:
    plan = parse_plan(
        "- [x] 1. a\n- [ ] 2. b\n- [x] 3. c\n- [ ] 4. unlisted\n\n" + _waves('"1"', '"2", "3"'),
        KIRO,
    )
    assert plan.known_edges() == {("1", "2"), ("1", "3"), ("1", "4"), ("2", "4"), ("3", "4")}
    assert plan.ready() == {"2"}  # not 4: the ticked 3 does not release the open 2
    assert plan.wave_lines == range(6, 9)


def test_a_wave_naming_an_unknown_task_holds_the_next_wave_back() -> None:
    plan = parse_plan(
        "- [x] 1. a\n- [ ] 2. b\n- [ ] 3. c\n\n" + _waves('"1", "9"', '"2"', '"3"'), KIRO
    )
    assert plan.dangling() == {("9", "2"), ("9", "3")}  # wave 2 waits for waves 0 and 1
    assert plan.ready() == set()
    assert "9" in plan.waits_for("3")


def test_spec_kit_runs_phases_and_lines_that_are_no_tasks() -> None:
    plan = parse_plan(
        "## Format: `[ID] [P?] [Story] Description`\n"
        "- **[P]**: may run in parallel\n\n"
        "## Phase 1: Setup\n"
        "- [x] T001 a\n- [ ] T002 [P] b\n- [ ] T003 [P] c\n- [ ] T004 d\n"
        "**Checkpoint**: setup done\n\n"
        "## Phase 2: User Story 1 - x (Priority: P1)\n"
        "- [ ] T005 [P] [US1] e\n- [ ] T006 [US1] f\n",
        SPEC_KIT,
    )
    assert plan.ids == ["1", "2", "3", "4", "5", "6"]
    assert [t.parallel for t in plan.tasks] == [False, True, True, False, True, False]
    assert [t.phase for t in plan.tasks] == [1, 1, 1, 1, 2, 2]
    edges = plan.known_edges()
    assert {("1", "2"), ("1", "3"), ("2", "4"), ("3", "4"), ("5", "6")} <= edges
    assert ("2", "3") not in edges  # one run: side by side
    assert {(a, b) for a in "1234" for b in "56"} <= edges  # phase 2 waits for phase 1
    assert plan.ready() == {"2", "3"}


@pytest.mark.parametrize(
    ("line", "deps", "unread"),
    [
        ("- [ ] T003 [P] c in src/c.py (depends on T001)", {"1", "2"}, False),
        ("- [ ] T003 [P] c — depends on T001 and T002.", {"1", "2"}, False),
        ("- [ ] T003 [P] c, a file the tests depends on", {"2"}, False),
        ("- [ ] T003 [P] c. Depends on the schema.", {"2"}, True),
    ],
)
def test_explicit_statements_are_unioned_with_the_order(
    line: str, deps: set[str], unread: bool
) -> None:
    plan = parse_plan(f"## Phase 1\n- [x] T001 a\n- [ ] T002 b\n{line}\n", SPEC_KIT)
    assert {a for a, b in plan.known_edges() if b == "3"} == deps
    assert bool(plan.unread) is unread
    assert ("3" in plan.ready()) is False  # T002 is open, or the statement holds it back


def test_a_kiro_field_with_dotted_ids_and_a_labelled_chain() -> None:
    plan = parse_plan(
        "- [ ] 1. a\n  - [ ] 1.1 b\n- [ ] 2. c\n  - _Depends on: 1.1_\n\n"
        + _waves('"1", "2"')
        + "\nCritical path: 1 → 2\n",
        KIRO,
    )
    assert plan.stated == {("1.1", "2"): {4}, ("1", "2"): {10}}
    assert plan.ready() == {"1.1"}


def test_closure_and_where_a_file_says_its_format() -> None:
    assert closure(["1", "2", "3"], {("1", "2"), ("2", "3")}) == {
        ("1", "2"),
        ("2", "3"),
        ("1", "3"),
    }
    assert detect(Path("/p/.kiro/specs/feature/tasks.md")) == KIRO
    assert detect(Path("/p/specs/004-feature/tasks.md")) == SPEC_KIT
    with pytest.raises(ValueError, match="neither"):
        detect(Path("/p/docs/specs/issue-1/tasks.md"))


def test_a_tick_releases_what_a_statement_orders_but_not_the_order() -> None:
    plan = parse_plan(
        "- [x] 1. a\n- [ ] 2. b\n- [ ] 3. c\n  - [x] 3.1 d\n    - _Depends on: 2_\n"
        "  - [ ]* 3.2 e\n\n" + _waves('"1"', '"2", "3"'),
        KIRO,
    )
    assert ("2", "3.1") in plan.edges and ("2", "3.1") not in plan.order
    assert ("3.1", "3.2") in plan.order
    # 3.2 comes after the ticked 3.1 by order; 3.1 waits for the open 2 only by its field.
    assert plan.blockers("3.2") == {"1", "3.1"}
    assert plan.ready() == {"2", "3.2"}


def test_a_wave_of_optional_tasks_only_does_not_release_the_next() -> None:
    plan = parse_plan("- [ ] 1. a\n- [ ]* 2. b\n- [ ] 3. c\n\n" + _waves('"1"', '"2"', '"3"'), KIRO)
    assert plan.ready() == {"1"}  # 3 waits for 1 although wave 1 holds only the optional 2
