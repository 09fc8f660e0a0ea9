"""The order rule: sub-tasks, optional tasks, checkpoints, Kiro waves, Spec Kit phases and [P].

Each case is a small plan written for this test, read the way the format means it:
the ready set is what may start at once, so a wrong answer here puts two agents on
work that depends on each other.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from the_loop.dag.analysis import analyze
from the_loop.tasks import TaskList, TaskState, parse_tasks
from the_loop.tasks.order import detect_format

KIRO = Path(".kiro/specs/shelf/tasks.md")
SPEC_KIT = Path("specs/004-shelf/tasks.md")
THE_LOOP = Path("docs/specs/issue-9/tasks.md")


def read(text: str, path: Path = KIRO) -> TaskList:
    return parse_tasks(dedent(text), path)


def deps(tasks: TaskList) -> dict[str, tuple[str, ...]]:
    return {t.id: tuple(sorted(t.depends_on or ())) for t in tasks.tasks}


NESTED = """\
    # Implementation Plan

    - [ ] 1. Make the shelf package
      - _Requirements: 1.1_
    - [ ] 2. Read shelf entries
      - [ ] 2.1 Split one entry
      - [ ]* 2.2 Property tests for splitting
      - [ ] 2.3 Report a broken entry
    - [ ] 3. Checkpoint - make sure every test passes
    - [ ] 4. Print the shelf
    """


def test_kiro_sub_tasks_and_optional_tasks_are_tasks() -> None:
    tasks = read(NESTED)
    assert tasks.format == "kiro"
    assert [(t.id, t.parent, t.optional) for t in tasks.tasks] == [
        ("1", None, False),
        ("2", None, False),
        ("2.1", "2", False),
        ("2.2", "2", True),
        ("2.3", "2", False),
        ("3", None, False),
        ("4", None, False),
    ]
    assert [t.checkpoint for t in tasks.tasks] == [False] * 5 + [True, False]


def test_kiro_order_is_the_dependency_and_a_parent_waits_for_its_required_children() -> None:
    d = deps(read(NESTED))
    assert d["2.1"] == ("1",)
    assert d["2.3"] == ("1", "2.1")  # after 2.1; never waits for the optional 2.2
    assert d["2"] == ("1", "2.1", "2.3")
    assert d["3"] == ("1", "2")  # the checkpoint: every required task above it
    assert d["4"] == ("3",)


def test_ready_sets_walk_the_plan_in_order() -> None:
    report = analyze(read(NESTED))
    assert report.ready == ("1",)
    ticked = read(NESTED.replace("- [ ] 1.", "- [x] 1.").replace("- [ ] 2.1", "- [x] 2.1"))
    report = analyze(ticked)
    assert report.ready == ("2.3", "2.2")  # required first, the optional task after
    assert report.total == 6  # the open optional task is not required


def test_a_ticked_parent_does_not_hide_its_open_sub_tasks() -> None:
    text = NESTED.replace("- [ ] 1.", "- [x] 1.").replace("- [ ] 2. Read", "- [x] 2. Read")
    tasks = read(text)
    parent = next(t for t in tasks.tasks if t.id == "2")
    assert parent.progress is not TaskState.DONE and parent.state is TaskState.DONE
    assert ("tasks.parent-ticked-early", 5) in [(f.code, f.where.line) for f in tasks.findings]
    report = analyze(tasks)
    assert report.ready == ("2.1",)  # neither the checkpoint nor 4


def test_an_open_parent_whose_sub_tasks_are_done_is_done_and_never_offered() -> None:
    text = (
        NESTED.replace("- [ ] 1.", "- [x] 1.")
        .replace("- [ ] 2.1", "- [x] 2.1")
        .replace("- [ ] 2.3", "- [x] 2.3")
    )
    report = analyze(read(text))
    assert report.task("2").progress is TaskState.DONE  # its box stays open
    assert report.ready == ("3", "2.2")


def test_flat_sub_tasks_at_column_zero_are_read_the_same() -> None:
    flat = "- [ ] 1. One\n- [ ] 2. Two\n- [ ] 2.1 Half\n- [ ] 2.2 Other half\n- [ ] 3. Three\n"
    d = deps(read(flat))
    assert d == {"1": (), "2": ("1", "2.1", "2.2"), "2.1": ("1",), "2.2": ("1", "2.1"), "3": ("2",)}


def test_a_checkpoint_gates_the_tasks_below_it_even_beside_explicit_fields() -> None:
    text = """\
        ---
        status: draft
        ---
        - [ ] 1. One
          - _Depends on:_ none
        - [ ] 2. Two
          - _Depends on:_ none
        - [ ] 3. Checkpoint: all tests pass
        - [ ] 4. Four
          - _Depends on:_ none
        """
    report = analyze(read(text, THE_LOOP))
    assert report.ready == ("1", "2")
    assert deps(read(text, THE_LOOP))["4"] == ("3",)


def test_kiro_waves_replace_the_file_order() -> None:
    text = """\
        - [ ] 1. Types
        - [ ] 2. Reader
        - [ ] 3. Writer
        - [ ] 4. Both together

        ```json
        {"waves": [{"id": 0, "tasks": ["1"]}, {"id": 1, "tasks": ["2", "3"]},
                   {"id": 2, "tasks": ["4"]}]}
        ```
        """
    tasks = read(text)
    assert tasks.dependency_source == "waves"
    # wave 2 waits for wave 1 and for the still open wave 0
    assert deps(tasks) == {"1": (), "2": ("1",), "3": ("1",), "4": ("1", "2", "3")}


def test_a_wave_naming_an_unknown_task_holds_the_next_wave_back() -> None:
    text = """\
        - [ ] 1. Types
        - [ ] 2. Reader

        ```json
        {"waves": [{"id": 0, "tasks": ["1", "9"]}, {"id": 1, "tasks": ["2"]}]}
        ```
        """
    tasks = read(text)
    assert "tasks.waves-unknown-task" in [f.code for f in tasks.findings]
    assert analyze(tasks).ready == ("1",)


def test_a_listed_task_waits_for_the_unlisted_task_the_file_puts_above_it() -> None:
    # The waves leave the groundwork out: the file still says it comes first.
    text = """\
        - [ ] 1. The shared client every other task uses
        - [ ] 2. Send the welcome mail
        - [ ] 3. Send the reminder
        - [ ] 4. Footer link

        ```json
        {"waves": [{"id": 0, "tasks": ["2", "3"]}, {"id": 1, "tasks": ["4"]}]}
        ```
        """
    tasks = read(text)
    assert deps(tasks) == {"1": (), "2": ("1",), "3": ("1",), "4": ("1", "2", "3")}
    assert analyze(tasks).ready == ("1",)


def test_a_checkpoint_sub_task_holds_back_the_task_a_wave_puts_beside_its_parent() -> None:
    text = """\
        - [x] 1. The record
        - [ ] 2. Refunds through the provider
          - [ ] 2.1 Call the provider
          - [ ] 2.2 Checkpoint - the provider tests pass before anything builds on it
        - [ ] 3. Tell the customer

        ```json
        {"waves": [{"id": 0, "tasks": ["1"]}, {"id": 1, "tasks": ["2", "3"]}]}
        ```
        """
    tasks = read(text)
    d = deps(tasks)
    assert d["2.2"] == ("1", "2.1")  # not its own parent: that would be a cycle
    assert d["3"] == ("1", "2.2")
    assert analyze(tasks).ready == ("2.1",)


SPEC = """\
    ## Phase 1: Setup
    - [x] T001 Make the layout in src/
    - [ ] T002 [P] Configure the formatter in pyproject.toml
    - [ ] T003 [P] Add a CI job in .ci/run

    ## Phase 2: Foundational
    - [ ] T004 Write the record type in src/records.py

    ## Phase 3: User Story 1 - Export (Priority: P1)
    - [ ] T005 [P] [US1] Contract test in tests/test_export.py
    - [ ] T006 [P] [US1] Writer test in tests/test_writer.py
    - [ ] T007 [US1] Implement export in src/export.py
    """


def test_spec_kit_phases_block_and_p_opens_the_order() -> None:
    tasks = read(SPEC, SPEC_KIT)
    assert tasks.format == "spec-kit"
    assert [t.parallel for t in tasks.tasks] == [False, True, True, False, True, True, False]
    assert tasks.tasks[4].requirements == ("US1",)
    assert tasks.tasks[4].title == "Contract test in tests/test_export.py"
    report = analyze(tasks)
    assert report.waves == (("2", "3"), ("4",), ("5", "6"), ("7",))


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        (KIRO, "- [ ] 1. a\n", "kiro"),
        (SPEC_KIT, "- [ ] T001 a\n", "spec-kit"),
        (THE_LOOP, "---\nstatus: draft\n---\n- [ ] 1. a\n", "the-loop"),
        (THE_LOOP, "- [ ] T001 a\n", "spec-kit"),
        (THE_LOOP, "- [ ] 1. a\n  - [ ]* 1.1 b\n", "kiro"),
        (THE_LOOP, "- [ ] 1. a\n  - _Depends on:_ none\n", "the-loop"),
    ],
)
def test_the_format_is_detected_per_item(path: Path, text: str, expected: str) -> None:
    assert detect_format(path, text) == expected


UNREAD_IN_THE_MIDDLE = """\
    - [ ] 1. Lay out the package
    - [{mark}] Wire the settings in (no id: not a task)
    - [ ] 2. Read the input
    - [ ] 3. Write the output
    """


def test_an_open_checkbox_that_is_no_task_holds_back_what_the_order_puts_after_it() -> None:
    tasks = read(UNREAD_IN_THE_MIDDLE.format(mark=" "))
    assert [t.id for t in tasks.tasks] == ["1", "2", "3"]
    assert "tasks.no-id" in [f.code for f in tasks.findings]
    report = analyze(tasks)
    assert report.ready == ("1",)
    assert [t.unread_depends_line for t in tasks.tasks] == [None, 2, 2]


def test_a_ticked_checkbox_that_is_no_task_holds_nothing_back() -> None:
    tasks = read(UNREAD_IN_THE_MIDDLE.format(mark="x"))
    assert [t.unread_depends_line for t in tasks.tasks] == [None, None, None]


def test_in_the_loop_format_an_unread_checkbox_holds_nothing_back() -> None:
    # the-loop's tasks say what they wait for in their fields: a task that states nothing
    # is a root, and a line that is no task changes no one's fields.
    text = "- [ ] 1. One\n  - _Depends on:_ none\n- [ ] Two\n- [ ] 3. Three\n  - _Depends on:_ 1\n"
    tasks = read(text, THE_LOOP)
    assert [t.unread_depends_line for t in tasks.tasks] == [None, None]


def test_cc_sdd_s_trailing_p_marker_lets_siblings_run_side_by_side() -> None:
    text = """\
        - [ ] 1. Foundation
        - [ ] 1.1 Make the layout (P)
          - _Requirements: 1.1_
        - [ ] 1.2 Add the lint settings (P)
          - _Requirements: 1.2_
        - [ ] 1.3 Wire both into CI
        - [ ] 2. Loader(P)
        """
    tasks = read(text)
    assert [(t.id, t.title, t.parallel) for t in tasks.tasks] == [
        ("1", "Foundation", False),
        ("1.1", "Make the layout", True),
        ("1.2", "Add the lint settings", True),
        ("1.3", "Wire both into CI", False),
        ("2", "Loader(P)", False),  # a marker is a word of its own
    ]
    d = deps(tasks)
    assert d["1.2"] == ()  # beside 1.1, not after it
    assert d["1.3"] == ("1.1", "1.2")  # the next plain task waits for the whole run
    assert analyze(tasks).ready == ("1.1", "1.2")
