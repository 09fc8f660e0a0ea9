"""The requirements grammar and traceability against the-loop 0.14.2's own specs.

Every requirements.md / bugfix.md of the corpus must parse cleanly; the facts
asserted below were checked by reading the files. The trace test retypes what
each corpus tasks.md cites in its ``_Requirements:_`` fields (or ``*(AC…)*``
markers), so it does not depend on the tasks.md parser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import CORPUS, requires_corpus

from the_loop.spec.requirements import RequirementSet, read_requirements
from the_loop.spec.traceability import trace
from the_loop.tasks import Task, TaskList, TaskState

pytestmark = requires_corpus()

SPECS = CORPUS / "docs" / "specs"


def spec_files() -> list[Path]:
    if not SPECS.is_dir():
        return []
    return sorted(SPECS.glob("*/requirements.md")) + sorted(SPECS.glob("*/bugfix.md"))


def read(item: str) -> RequirementSet:
    folder = SPECS / item
    path = folder / "requirements.md"
    return read_requirements(path if path.exists() else folder / "bugfix.md")


def shape(reqs: RequirementSet) -> dict[str, int]:
    """Top-level id → number of criteria under it."""
    result = {r.id: 0 for r in reqs.ids.values() if r.parent is None}
    for req in reqs.ids.values():
        if req.parent is not None:
            result[req.parent] += 1
    return result


def test_the_corpus_has_22_requirement_files() -> None:
    # 19 requirements.md + 3 bugfix.md; issue-37 has only a brainstorm.
    assert len(spec_files()) == 22


@pytest.mark.parametrize("path", spec_files(), ids=lambda p: p.parent.name)
def test_every_corpus_file_parses_cleanly(path: Path) -> None:
    reqs = read_requirements(path)
    assert reqs.findings == ()
    assert reqs.ids, "every corpus spec defines ids in a form the grammar reads"
    assert reqs.kind == ("bugfix" if path.name == "bugfix.md" else "requirements")


def test_issue_1_r1_to_r11_with_numbered_criteria() -> None:
    reqs = read("issue-1")
    assert shape(reqs) == {
        "R1": 3, "R2": 5, "R3": 3, "R4": 8, "R5": 3, "R6": 3,
        "R7": 4, "R8": 3, "R9": 3, "R10": 6, "R11": 8,
    }  # fmt: skip
    assert (reqs.ids["R1"].line, reqs.ids["R1"].text) == (28, "Work-item ticketing **[v0]**")
    assert reqs.ids["R1.1"].line == 32
    assert reqs.ids["R11"].line == 152
    # "formerly R10.4" in the open questions and the bullets of the
    # non-functional section are prose.
    assert reqs.ids["R10.4"].line == 143
    assert not any(req_id.startswith("NFR") for req_id in reqs.ids)


def test_issue_48_requirement_n_headings() -> None:
    reqs = read("issue-48")
    assert shape(reqs) == {"R1": 4, "R2": 3, "R3": 2, "R4": 3, "R5": 3}
    assert [reqs.ids[f"R1.{k}"].line for k in range(1, 5)] == [48, 51, 54, 56]
    assert (
        reqs.ids["R1"].text == "clearing and compaction are distinguished and applied deliberately"
    )
    assert reqs.ids["R1.4"].text.startswith("The system SHALL NOT clear mid-task")


def test_issue_15_criteria_under_acceptance_sub_headings() -> None:
    reqs = read("issue-15")
    assert shape(reqs) == {"R1": 2, "R2": 4, "R3": 5, "R4": 5, "R5": 3, "R6": 6}
    assert reqs.ids["R2.1"].line == 52
    assert reqs.ids["R2.1"].parent == "R2"
    assert reqs.ids["R2.1"].text == "The system SHALL persist, per session: a work-item reference"
    assert reqs.ids["R6.6"].line == 143


def test_issue_80_bugfix_ac1_to_ac10_across_sub_sections() -> None:
    reqs = read("issue-80")
    assert reqs.kind == "bugfix"
    assert {r.id: r.line for r in reqs.ids.values()} == {
        "AC1": 85, "AC2": 87, "AC3": 91, "AC4": 95, "AC5": 98,
        "AC6": 101, "AC7": 107, "AC8": 112, "AC9": 116, "AC10": 122,
    }  # fmt: skip
    # The (AC7)…(AC10) markers sit on the items' last lines and confirm the count.
    assert (
        reqs.ids["AC7"].text
        == "WHEN a routed event is delivered to a tmux-mode session AND that session's"
    )


def test_issue_36_and_78_bugfix_criteria_not_the_steps_to_reproduce() -> None:
    assert {r.id: r.line for r in read("issue-36").ids.values()} == {
        "AC1": 50, "AC2": 52, "AC3": 54, "AC4": 57,
    }  # fmt: skip
    assert {r.id: r.line for r in read("issue-78").ids.values()} == {
        "AC1": 51, "AC2": 54, "AC3": 56, "AC4": 58,
    }  # fmt: skip


def test_issue_76_bold_labelled_criteria() -> None:
    reqs = read("issue-76")
    assert shape(reqs) == {"R1": 3, "R2": 4, "R3": 4, "R4": 3, "R5": 3}
    assert reqs.ids["R1.1"].line == 35
    assert reqs.ids["R1.1"].text == (
        "The CLI config SHALL expose `webhooks.ghWebhook.routing.workspace.root`."
    )
    # R3.2's nested `worktree` / `clone` bullets are details, not criteria.
    assert reqs.ids["R3.3"].line == 67


def test_issue_63_intro_list_and_indented_abuse_cases_are_prose() -> None:
    reqs = read("issue-63")
    assert shape(reqs) == {"R1": 3, "R2": 4, "R3": 5, "R4": 3}
    assert reqs.ids["R1"].line == 37


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("issue-32", {"R1": 5, "R2": 3, "R3": 4, "R4": 4, "R5": 4, "R6": 3, "R7": 3}),
        ("issue-34", {"R1": 5, "R2": 6, "R3": 4, "R4": 4, "R5": 3, "R6": 4, "R7": 4, "R8": 6}),
        ("issue-25", {"R1": 2, "R2": 3, "R3": 1, "R4": 4, "R5": 3, "R6": 4, "R7": 1}),
        ("issue-11", {"R1": 3, "R2": 3, "R3": 2, "R4": 1}),
        ("issue-46", {"R1": 3, "R2": 4, "R3": 2}),
        ("issue-70", {"R1": 4, "R2": 4, "R3": 4, "R4": 4, "R5": 4}),
    ],
)
def test_more_corpus_shapes(item: str, expected: dict[str, int]) -> None:
    assert shape(read(item)) == expected


# --------------------------------------------------------------------------- #
# Traceability against the corpus task lists
# --------------------------------------------------------------------------- #

# item → (task id, task line, _Requirements:_ line, citations as the file writes
# them after the tasks reader's reading: prose such as "(receiver)" or
# "NFR back-compat" dropped, "all (evidence)" and "(all AC)" read as `all`).
CITATIONS: dict[str, list[tuple[str, int, int, str]]] = {
    "issue-15": [
        ("1", 19, 25, "R2, R3, R5"),
        ("2", 27, 32, "R2.1, R2.3, R2.4"),
        ("3", 34, 38, "R2.2"),
        ("4", 40, 46, "R3.1, R3.4, R3.5"),
        ("5", 48, 53, "R4.1, R4.2, R4.4, R4.5"),
        ("6", 55, 60, "R4.1, R4.3, R4.4, R4.5"),
        ("7", 62, 68, "R3.2, R3.3, R5.1, R5.2, R5.3"),
        ("8", 70, 76, "R3, R4, R5"),
        ("9", 78, 84, "R2.2, R4.3"),
        ("10", 86, 91, "R1.2"),
    ],
    "issue-32": [
        ("1", 18, 22, "R1.3"),
        ("2", 24, 28, "R2.1, R2.3"),
        ("3", 30, 34, "R1.1, R3.1, R6.1–R6.2, R7"),
        ("4", 36, 40, "R1.2, R5.1–R5.2"),
        ("5", 42, 46, "R1.1–R1.4, R2.1–R2.2, R3.1–R3.3, R7.1"),
        ("6", 48, 52, "R5.1–R5.4, R6.1–R6.2"),
        ("7", 54, 58, "R4.1–R4.4, R7.2–R7.3"),
        ("8", 60, 64, ""),
    ],
    "issue-36": [
        ("1", 16, 19, "R2"),
        ("2", 21, 25, "R1, R3"),
        ("3", 27, 32, "R1, R3"),
        ("4", 34, 37, "R4"),
        ("5", 39, 44, "R4"),
        ("6", 46, 48, "R1–R4"),
    ],
    "issue-80": [
        ("1", 16, 18, "AC7, AC8"),
        ("2", 19, 21, "AC2, AC5"),
        ("3", 22, 27, "AC7, AC9"),
        ("4", 28, 31, "AC1"),
        ("5", 32, 35, "AC2–AC6"),
        ("6", 36, 43, "AC2–AC6"),
        ("7", 44, 46, "AC10"),
        ("8", 47, 51, "all"),
        ("9", 53, 0, ""),
        ("10", 56, 0, ""),
    ],
    "issue-78": [
        ("1", 15, 17, "AC1–AC3"),
        ("2", 18, 20, "AC4"),
        ("3", 21, 23, "AC1–AC2"),
        ("4", 24, 0, ""),
        ("5", 26, 0, ""),
    ],
    "issue-25": [
        ("1", 18, 21, "R2.3, R6.1"),
        ("2", 23, 27, "R6.2"),
        ("3", 29, 33, "R6.3"),
        ("4", 35, 40, "R4, R5, R6.4"),
        ("5", 42, 47, "R1, R2, R3, R4, R7"),
        ("6", 49, 53, "R2"),
        ("7", 55, 59, "all"),
    ],
    "issue-70": [
        ("1", 20, 24, "R1, R2"),
        ("2", 26, 31, "R1, R2"),
        ("3", 33, 38, "R3.2"),
        ("4", 41, 45, "R3.1, R3.3"),
        ("5", 47, 52, "R4"),
        ("6", 54, 59, "R5"),
        ("7", 61, 67, "R3.1, R3.3"),
        ("8", 70, 73, ""),
        ("9", 75, 82, "R3.1, R3.4"),
        ("10", 85, 92, "R4, R5.4"),
    ],
    "issue-1": [
        ("1", 19, 20, "R7"),
        ("2", 21, 23, "R2, R3, R5, R7"),
        ("3", 24, 26, "R1, R4, R6"),
        ("4", 27, 28, "R4, R7"),
        ("5", 29, 31, "R2, R3, R4, R5"),
        ("6", 32, 33, "R6"),
        ("7", 34, 35, "R4, R6"),
        ("8", 36, 37, "R7"),
        ("9", 38, 39, "R4"),
        ("10", 40, 41, "R2, R7"),
        ("11", 42, 44, "R9, R8"),
        ("12", 45, 49, "R2"),
        ("13", 50, 53, "R10"),
        ("14", 54, 58, "R7"),
        ("15", 59, 63, "R11"),
        ("16", 67, 68, "R7"),
        ("17", 69, 71, "R2"),
        ("18", 72, 73, "R2"),
        ("19", 74, 76, "R2"),
        ("20", 77, 79, "R3"),
        ("21", 80, 81, "R5"),
        ("22", 82, 84, "R4, R10"),
        ("23", 85, 86, "R8"),
        ("24", 87, 88, "R8"),
        ("25", 89, 90, "R8, R7"),
    ],
    "issue-11": [
        ("1", 16, 20, "R1, R2"),
        ("2", 22, 26, "R2"),
        ("3", 28, 32, "R1, R3, R4"),
        ("4", 34, 38, "R1, R3, R4"),
        ("5", 40, 44, "R4"),
    ],
    "issue-12": [
        ("1", 16, 21, "R1"),
        ("2", 23, 28, "R2"),
        ("3", 30, 34, "R3"),
        ("4", 36, 40, "R2"),
        ("5", 42, 47, "R1, R4"),
    ],
    "issue-17": [
        ("1", 17, 20, "R1"),
        ("2", 22, 25, "R2"),
        ("3", 27, 31, "R1, R4"),
        ("4", 33, 37, "R3"),
        ("5", 39, 43, "R4, R5"),
        ("6", 45, 48, "R1–R5"),
    ],
    "issue-18": [
        ("1", 17, 20, "R2"),
        ("2", 22, 25, "R1"),
        ("3", 27, 30, "R1"),
        ("4", 32, 36, "R3, R4"),
        ("5", 38, 42, "R5"),
        ("6", 44, 47, "R1–R5"),
        ("7", 49, 53, "R1–R5"),
    ],
    "issue-21": [
        ("1", 19, 23, "R1"),
        ("2", 28, 31, "R4"),
        ("3", 34, 38, "R3"),
        ("4", 42, 49, "R2, R3"),
        ("5", 52, 57, "R5"),
        ("6", 60, 63, "R1–R5"),
    ],
}

_RANGE = re.compile(r"^([A-Z]+)([0-9]+\.)?([0-9]+)–\1?([0-9]+\.)?([0-9]+)$")


def expand(citations: str) -> tuple[str, ...]:
    """``R1.1–R1.3, AC2`` → ``("R1.1", "R1.2", "R1.3", "AC2")``."""
    ids: list[str] = []
    for part in filter(None, (p.strip() for p in citations.split(","))):
        m = _RANGE.match(part)
        if m is None:
            ids.append(part)
            continue
        prefix, stem = m.group(1), m.group(2) or ""
        ids.extend(f"{prefix}{stem}{n}" for n in range(int(m.group(3)), int(m.group(5)) + 1))
    return tuple(ids)


def corpus_tasks(item: str) -> TaskList:
    tasks = tuple(
        Task(
            id=task_id,
            label=task_id,
            title=f"{item} task {task_id}",
            state=TaskState.DONE,
            line=line,
            end_line=line,
            mark_offset=0,
            requirements=expand(citations),
            requirements_line=req_line or None,
        )
        for task_id, line, req_line, citations in CITATIONS[item]
    )
    return TaskList(SPECS / item / "tasks.md", tasks, ())


def test_expand() -> None:
    assert expand("R1.1–R1.3, AC2–AC4, R1–R2, all") == (
        "R1.1", "R1.2", "R1.3", "AC2", "AC3", "AC4", "R1", "R2", "all",
    )  # fmt: skip


EXPECTED_TRACE: dict[str, list[tuple[str, str, str, int | None]]] = {
    # R1.1 (evaluate the MCP approach) is the only criterion of R1 no task
    # cites; R6 (label-gated auto-execution) was added after the task plan.
    "issue-15": [
        ("warning", "trace.uncovered", "requirements.md", 38),
        ("warning", "trace.uncovered", "requirements.md", 123),
    ],
    # R1.5 (receiver restarts), R3.4 (visibility) and R6.3 (ttyd download)
    # are the criteria the granular citations skip; task 8 cites only prose.
    "issue-32": [
        ("warning", "trace.uncovered", "requirements.md", 53),
        ("warning", "trace.uncovered", "requirements.md", 89),
        ("warning", "trace.uncovered", "requirements.md", 141),
        ("info", "trace.unlinked-task", "tasks.md", 60),
    ],
    # The bugfix numbers AC1–AC4, but its tasks cite R1–R4: every citation is
    # undefined, so every criterion is uncovered.
    "issue-36": [
        ("warning", "trace.uncovered", "bugfix.md", 50),
        ("warning", "trace.uncovered", "bugfix.md", 52),
        ("warning", "trace.uncovered", "bugfix.md", 54),
        ("warning", "trace.uncovered", "bugfix.md", 57),
        ("error", "trace.undefined", "tasks.md", 19),
        ("error", "trace.undefined", "tasks.md", 25),
        ("error", "trace.undefined", "tasks.md", 25),
        ("error", "trace.undefined", "tasks.md", 32),
        ("error", "trace.undefined", "tasks.md", 32),
        ("error", "trace.undefined", "tasks.md", 37),
        ("error", "trace.undefined", "tasks.md", 44),
        ("error", "trace.undefined", "tasks.md", 48),
        ("error", "trace.undefined", "tasks.md", 48),
        ("error", "trace.undefined", "tasks.md", 48),
        ("error", "trace.undefined", "tasks.md", 48),
    ],
    "issue-80": [
        ("info", "trace.unlinked-task", "tasks.md", 53),
        ("info", "trace.unlinked-task", "tasks.md", 56),
    ],
    "issue-78": [
        ("info", "trace.unlinked-task", "tasks.md", 24),
        ("info", "trace.unlinked-task", "tasks.md", 26),
    ],
    "issue-70": [("info", "trace.unlinked-task", "tasks.md", 70)],
    "issue-25": [],
    "issue-1": [],
    "issue-11": [],
    "issue-12": [],
    "issue-17": [],
    "issue-18": [],
    "issue-21": [],
}


@pytest.mark.parametrize("item", sorted(EXPECTED_TRACE))
def test_corpus_trace(item: str) -> None:
    findings = trace(read(item), corpus_tasks(item))
    assert [
        (f.level.value, f.code, Path(f.where.path).name, f.where.line)
        for f in findings
        if f.where is not None
    ] == EXPECTED_TRACE[item]


def test_issue_36_hints_point_at_the_ac_ids() -> None:
    findings = trace(read("issue-36"), corpus_tasks("issue-36"))
    first = next(f for f in findings if f.code == "trace.undefined")
    assert first.message == "task 1 cites R2, which bugfix.md does not define"
    assert first.hint == "bugfix.md numbers its acceptance criteria AC1–AC4: did you mean AC2?"


def test_issue_15_uncovered_messages() -> None:
    findings = trace(read("issue-15"), corpus_tasks("issue-15"))
    assert [f.message for f in findings] == [
        'R1.1 "The design SHALL evaluate the preferred approach (GitHub MC…" is not covered: '
        "tasks cite other criteria of R1, not this one",
        'R6 "Label-gated auto-execution (GitHub workflow)" is not covered: no task cites it '
        "or any of its criteria (R6.1–R6.6)",
    ]
