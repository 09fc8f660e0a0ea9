"""Traceability: task citations against defined ids (docs/requirements-grammar.md).

Tasks are built directly as ``Task`` values, so these tests depend only on the
``_Requirements:_`` values a task list carries, not on how tasks.md is parsed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from the_loop.errors import Where
from the_loop.findings import Finding, Level
from the_loop.spec.requirements import RequirementSet, parse_requirements
from the_loop.spec.traceability import coverage, trace
from the_loop.tasks import Task, TaskList, TaskState

REQ_PATH = Path("docs/specs/issue-7/requirements.md")
BUG_PATH = Path("docs/specs/issue-8/bugfix.md")
TASKS_PATH = Path("docs/specs/issue-7/tasks.md")

REQUIREMENTS = """\
## Requirements

### R1 — Registry
1. Persist sessions.
2. Provide `sessions list`.

### R2 — Routing
1. Route events.
2. Deduplicate deliveries.
3. Filter event types.
4. Order per session.

### R3 — Docs
"""
# R1:3 R1.1:4 R1.2:5 R2:7 R2.1:8 R2.2:9 R2.3:10 R2.4:11 R3:13


def reqs_of(text: str = REQUIREMENTS, path: Path = REQ_PATH) -> RequirementSet:
    return parse_requirements(text, path)


def task(task_id: str, *cited: str, line: int = 0, req_line: int | None = None) -> Task:
    """A task whose `_Requirements:_` line is ``req_line`` (defaults to the line after it)."""
    line = line or int(task_id) * 10
    return Task(
        id=task_id,
        label=task_id,
        title=f"task {task_id}",
        state=TaskState.OPEN,
        line=line,
        end_line=line + 2,
        mark_offset=0,
        requirements=cited,
        requirements_line=(req_line or line + 1) if cited else None,
    )


def tasks_of(*tasks: Task) -> TaskList:
    return TaskList(TASKS_PATH, tuple(tasks), ())


def summary(findings: list[Finding]) -> list[tuple[str, str, str, int | None]]:
    return [
        (f.level.value, f.code, Path(f.where.path).name, f.where.line)
        for f in findings
        if f.where is not None
    ]


def test_everything_covered_is_silent() -> None:
    tasks = tasks_of(task("1", "R1"), task("2", "R2.1", "R2.2", "R2.3", "R2.4"), task("3", "R3"))
    assert trace(reqs_of(), tasks) == []


def test_an_undefined_citation_is_an_error_at_the_tasks_requirements_line() -> None:
    tasks = tasks_of(task("1", "R1", "R2", "R3", "R9", req_line=14))
    findings = trace(reqs_of(), tasks)
    assert len(findings) == 1
    finding = findings[0]
    assert finding.level is Level.ERROR
    assert finding.code == "trace.undefined"
    assert finding.where == Where(TASKS_PATH, 14)
    assert finding.message == "task 1 cites R9, which requirements.md does not define"
    assert finding.hint == "requirements.md defines R1–R3"


def test_the_task_line_is_used_when_the_requirements_line_is_unknown() -> None:
    bare = Task("4", "T4", "t", TaskState.DONE, 33, 34, 0, requirements=("R7",))
    tasks = tasks_of(task("1", "R1", "R2", "R3"), bare)
    assert summary(trace(reqs_of(), tasks)) == [("error", "trace.undefined", "tasks.md", 33)]


def test_hints_name_the_nearest_defined_ids() -> None:
    tasks = tasks_of(task("1", "R1", "R2", "R3", "R2.5", "R3.1", "R1.3", "AC4", "NFR1"))
    hints = {f.message.split()[3].rstrip(","): f.hint for f in trace(reqs_of(), tasks)}
    assert hints == {
        "R2.5": "R2 has criteria R2.1–R2.4",
        "R3.1": "R3 has no numbered criteria: cite R3",
        "R1.3": "R1 has criteria R1.1, R1.2",
        "AC4": "requirements.md defines R1–R3",
        "NFR1": "requirements.md defines R1–R3",
    }


def test_r_citations_against_a_bugfix_suggest_the_ac_id() -> None:
    bug = reqs_of("## Acceptance criteria\n1. a\n2. b\n3. c\n", BUG_PATH)
    tasks = TaskList(
        BUG_PATH.with_name("tasks.md"), (task("1", "AC1", "AC3"), task("2", "R2", "R7")), ()
    )
    findings = trace(bug, tasks)
    assert [(f.code, f.message, f.hint) for f in findings] == [
        (
            "trace.uncovered",
            'AC2 "b" is not covered by any task',
            "cite AC2 in a task's _Requirements:_, or move it out of scope",
        ),
        (
            "trace.undefined",
            "task 2 cites R2, which bugfix.md does not define",
            "bugfix.md numbers its acceptance criteria AC1–AC3: did you mean AC2?",
        ),
        (
            "trace.undefined",
            "task 2 cites R7, which bugfix.md does not define",
            "bugfix.md defines AC1–AC3",
        ),
    ]


def test_citing_a_parent_covers_all_its_criteria() -> None:
    assert trace(reqs_of(), tasks_of(task("1", "R1", "R2", "R3"))) == []


def test_an_uncovered_requirement_is_reported_once_at_its_heading() -> None:
    findings = trace(reqs_of(), tasks_of(task("1", "R1", "R3")))
    assert summary(findings) == [("warning", "trace.uncovered", "requirements.md", 7)]
    assert findings[0].message == (
        'R2 "Routing" is not covered: no task cites it or any of its criteria (R2.1–R2.4)'
    )
    assert findings[0].hint == (
        "cite R2 (or some of its criteria) in a task's _Requirements:_, or move it out of scope"
    )


def test_a_requirement_without_criteria_uncovered() -> None:
    findings = trace(reqs_of(), tasks_of(task("1", "R1", "R2")))
    assert summary(findings) == [("warning", "trace.uncovered", "requirements.md", 13)]
    assert findings[0].message == 'R3 "Docs" is not covered by any task'


def test_a_partly_covered_requirement_reports_each_uncovered_criterion() -> None:
    findings = trace(reqs_of(), tasks_of(task("1", "R1", "R3"), task("2", "R2.1", "R2.3")))
    assert summary(findings) == [
        ("warning", "trace.uncovered", "requirements.md", 9),
        ("warning", "trace.uncovered", "requirements.md", 11),
    ]
    assert findings[0].message == (
        'R2.2 "Deduplicate deliveries." is not covered: tasks cite other criteria of R2, '
        "not this one"
    )
    assert findings[0].hint == "cite R2.2 (or R2 as a whole) in a task's _Requirements:_"


def test_a_parent_cited_by_one_task_covers_criteria_others_skip() -> None:
    tasks = tasks_of(task("1", "R2.1"), task("2", "R2"), task("3", "R1", "R3"))
    assert trace(reqs_of(), tasks) == []


def test_all_covers_everything() -> None:
    tasks = tasks_of(task("1", "R2.1"), task("2", "all"))
    assert trace(reqs_of(), tasks) == []


def test_all_does_not_hide_undefined_citations() -> None:
    tasks = tasks_of(task("1", "all"), task("2", "R4"))
    assert summary(trace(reqs_of(), tasks)) == [("error", "trace.undefined", "tasks.md", 21)]


def test_no_references_is_one_info_and_nothing_else() -> None:
    findings = trace(reqs_of(), tasks_of(task("1"), task("2")))
    assert len(findings) == 1
    finding = findings[0]
    assert (finding.level, finding.code, finding.where) == (
        Level.INFO,
        "trace.no-references",
        Where(TASKS_PATH, 10),  # the first task: every finding with a file has a line
    )
    assert finding.message == "no task in tasks.md cites a requirement; traceability is not in use"


def test_no_ids_is_one_warning_at_the_requirements_file() -> None:
    prose = reqs_of("# Requirements\n\n- The system shall work.\n")
    tasks = tasks_of(task("1", "R1", "R2"), task("2", "R3", "R4.1"), task("3", "R1"))
    findings = trace(prose, tasks)
    assert len(findings) == 1
    finding = findings[0]
    assert (finding.level, finding.code, finding.where) == (
        Level.WARNING,
        "trace.no-ids",
        Where(REQ_PATH, 1),
    )
    assert finding.message == (
        "requirements.md defines no requirement ids, but tasks cite R1, R2, R3, …; "
        "citations cannot be checked"
    )
    assert finding.hint is not None
    assert "### R1 — title" in finding.hint and "Acceptance criteria" in finding.hint


def test_an_empty_task_list_reports_nothing() -> None:
    assert trace(reqs_of(), tasks_of()) == []


def test_tasks_citing_nothing_are_infos_when_traceability_is_in_use() -> None:
    tasks = tasks_of(task("1", "R1", "R2", "R3"), task("2"))
    findings = trace(reqs_of(), tasks)
    assert summary(findings) == [("info", "trace.unlinked-task", "tasks.md", 20)]
    assert findings[0].message == "task 2 cites no requirement"


def test_a_labelled_criterion_without_its_heading_stands_alone() -> None:
    reqs = reqs_of("- **R1.1** a\n- **R1.2** b\n")
    findings = trace(reqs, tasks_of(task("1", "R1.1"), task("2", "R1")))
    assert [(f.code, f.where.line if f.where else None, f.hint) for f in findings] == [
        ("trace.uncovered", 2, "cite R1.2 in a task's _Requirements:_, or move it out of scope"),
        ("trace.undefined", 21, "R1 is not defined itself, but R1.1, R1.2 are"),
    ]


def test_findings_are_sorted() -> None:
    tasks = tasks_of(task("2", "R9"), task("1", "R2.1"))
    findings = trace(reqs_of(), tasks)
    assert summary(findings) == [
        ("warning", "trace.uncovered", "requirements.md", 3),
        ("warning", "trace.uncovered", "requirements.md", 9),
        ("warning", "trace.uncovered", "requirements.md", 10),
        ("warning", "trace.uncovered", "requirements.md", 11),
        ("warning", "trace.uncovered", "requirements.md", 13),
        ("error", "trace.undefined", "tasks.md", 21),
    ]


def test_doc_example() -> None:
    """The worked example in docs/requirements-grammar.md, verbatim."""
    text = (
        "## Requirements\n\n### R1 — Registry\n1. Persist sessions.\n"
        "2. Provide `sessions list`.\n\n### R2 — Routing\n1. Route events.\n"
    )
    reqs = parse_requirements(text, REQ_PATH)
    assert {r.id: r.line for r in reqs.ids.values()} == {
        "R1": 3,
        "R1.1": 4,
        "R1.2": 5,
        "R2": 7,
        "R2.1": 8,
    }
    findings = trace(reqs, tasks_of(task("1", "R1.1", "R3")))
    assert [(f.code, f.where.line if f.where else None, f.hint) for f in findings] == [
        ("trace.uncovered", 5, "cite R1.2 (or R1 as a whole) in a task's _Requirements:_"),
        (
            "trace.uncovered",
            7,
            "cite R2 (or some of its criteria) in a task's _Requirements:_, "
            "or move it out of scope",
        ),
        ("trace.undefined", 11, "requirements.md defines R1, R2"),
    ]
    assert findings[1].message.endswith("no task cites it or any of its criteria (R2.1)")


# --------------------------------------------------------------------------- #
# coverage
# --------------------------------------------------------------------------- #


def test_coverage_maps_every_id_to_its_tasks() -> None:
    tasks = tasks_of(
        task("1", "R1"),
        task("2", "R2.1", "R2.3"),
        task("3", "R2.1", "R9"),
        task("4"),
        task("5", "all"),
    )
    assert dict(coverage(reqs_of(), tasks)) == {
        "R1": ("1", "5"),
        "R1.1": ("1", "5"),
        "R1.2": ("1", "5"),
        "R2": ("2", "3", "5"),  # partly, through its criteria
        "R2.1": ("2", "3", "5"),
        "R2.2": ("5",),
        "R2.3": ("2", "5"),
        "R2.4": ("5",),
        "R3": ("5",),
    }


def test_coverage_of_uncovered_ids_is_empty_and_order_is_definition_order() -> None:
    result = coverage(reqs_of(), tasks_of(task("1", "R2.2", "R2", "R2.2")))
    assert list(result) == ["R1", "R1.1", "R1.2", "R2", "R2.1", "R2.2", "R2.3", "R2.4", "R3"]
    assert result["R1"] == ()
    assert result["R2.2"] == ("1",)


def test_coverage_without_ids_is_empty() -> None:
    assert dict(coverage(reqs_of(""), tasks_of(task("1", "R1")))) == {}


# --------------------------------------------------------------------------- #
# Scale
# --------------------------------------------------------------------------- #


@pytest.mark.slow
def test_a_hundred_thousand_tasks_trace_in_linear_time() -> None:
    reqs = reqs_of()
    cited = ("R1", "R2.1", "R2.2", "R9")
    many = tasks_of(*(task(str(i), *cited, line=i + 1) for i in range(100_000)))
    few = tasks_of(*(task(str(i), *cited, line=i + 1) for i in range(10_000)))
    start = time.perf_counter()
    findings = trace(reqs, many)
    result = coverage(reqs, many)
    elapsed = time.perf_counter() - start
    start = time.perf_counter()
    trace(reqs, few)
    coverage(reqs, few)
    elapsed_few = time.perf_counter() - start
    assert len(findings) == 100_000 + 3  # one undefined R9 per task; R2.3, R2.4, R3 uncovered
    assert len(result["R1.1"]) == 100_000
    assert elapsed < 40 * elapsed_few + 0.5  # 10x the tasks; a quadratic pass would be 100x


def test_a_bare_citation_past_the_last_criterion_of_a_complete_file_is_an_error() -> None:
    reqs = parse_requirements("### Requirement 3\n\n1. a\n2. b\n", Path("requirements.md"))
    findings = trace(reqs, tasks_of(task("1", "3.1", "3.2", "3.9")))
    assert [(f.level, f.code) for f in findings] == [(Level.ERROR, "trace.undefined")]
    assert "3.9" in findings[0].message


def test_an_id_written_as_a_label_is_never_undefined() -> None:
    # `R4.1` leads a line in a form the reader does not take as a definition (under no
    # requirement section): a citation of it is unconfirmed, not an error.
    text = "### R1 — t\n\n1. a\n\n## Notes\n\n- R4.1 WHEN loose THEN it stays.\n"
    reqs = parse_requirements(text, Path("requirements.md"))
    findings = trace(reqs, tasks_of(task("1", "R1.1", "R4.1")))
    assert [(f.level, f.code) for f in findings] == [(Level.WARNING, "trace.unconfirmed")]
