"""Forms later the-loop items write, each read by the rule it follows (issue 19).

Each of these once gave a wrong or unsafe ``next``: a `—.` that held a task back, a
chain above the list that was ignored, heading tasks read as nothing, a test-plan
row label run as the program, a section reference reported as a malformed id.
"""

from __future__ import annotations

from pathlib import Path

from the_loop.dag.analysis import analyze
from the_loop.tasks import parse_tasks
from the_loop.tasks import test_command as command_of

PATH = Path("docs/specs/issue-7/tasks.md")
FRONT = "---\ntype: tasks\nstatus: draft\n---\n"


def test_a_dash_with_a_full_stop_means_none() -> None:
    # rule: `—` is `none`; the sentence's full stop does not change that
    tasks = parse_tasks(FRONT + "- [ ] 1. One\n  - Depends on: —.\n- [ ] 2. Two\n", PATH)
    assert tasks.tasks[0].depends_on == ()
    assert tasks.findings == ()
    assert analyze(tasks).ready == ("1", "2")


def test_a_labelled_chain_anywhere_in_the_file_is_read() -> None:
    # rule: explicit statements anywhere are unioned, a chain above the list included
    text = FRONT + "> DAG: T1 → T2 → T3.\n\n- [ ] T1. a\n- [ ] T2. b\n- [ ] T3. c\n"
    report = analyze(parse_tasks(text, PATH))
    assert report.ready == ("1",)
    assert report.waves == (("1",), ("2",), ("3",))


def test_heading_tasks_with_a_dashed_id_are_tasks() -> None:
    text = FRONT + "### T-1 — first\n\n- [x] Done\n\n### T-2 — second\n\n- [ ] Done\n"
    tasks = parse_tasks(text, PATH)
    assert [(t.id, t.label, t.state.value) for t in tasks.tasks] == [
        ("1", "T-1", "done"),
        ("2", "T-2", "open"),
    ]


def test_a_file_whose_task_lines_read_as_nothing_says_so() -> None:
    tasks = parse_tasks(FRONT + "### Tx — first\n\n- [ ] Do it\n", PATH)
    assert tasks.tasks == ()
    assert "tasks.none-understood" in [f.code for f in tasks.findings]


def test_a_test_plan_row_label_of_several_rows_is_not_the_program() -> None:
    text = FRONT + "- [ ] 1. a\n  - _Test:_ `T1/T8 — pytest -q tests/test_a.py`\n"
    assert command_of(parse_tasks(text, PATH).tasks[0]) == ["pytest", "-q", "tests/test_a.py"]


def test_a_numbered_section_reference_is_not_a_malformed_citation() -> None:
    text = FRONT + "- [ ] 1. a\n  - _Requirements:_ R1.1 (abuse cases 1 & 3), steps 2 and 4\n"
    tasks = parse_tasks(text, PATH)
    assert tasks.tasks[0].requirements == ("R1.1",)
    assert [f.code for f in tasks.findings] == []


def test_a_depends_on_clause_in_parentheses_ends_at_its_parenthesis() -> None:
    # rule: a `)` the value never opened ends the clause (found by the order oracle)
    text = FRONT + "- [ ] 1. Parser\n- [ ] 2. Loader (depends on 1)\n- [ ] 3. Docs (depends on 1)\n"
    tasks = parse_tasks(text, PATH)
    assert [t.depends_on for t in tasks.tasks] == [None, ("1",), ("1",)]
    assert tasks.findings == ()
    report = analyze(tasks)
    assert report.ready == ("1",)
    assert report.waves == (("1",), ("2", "3"))
