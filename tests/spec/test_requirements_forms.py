"""The wider requirements grammar and the citation mapping, one small input per form."""

from __future__ import annotations

from pathlib import Path

import pytest

from the_loop.findings import Level
from the_loop.spec.requirements import RequirementSet, parse_requirements
from the_loop.spec.traceability import resolve_citation, trace
from the_loop.tasks import Task, TaskList, TaskState

REQ = Path("docs/specs/issue-1/requirements.md")
BUG = Path("docs/specs/issue-2/bugfix.md")


def parse(text: str, path: Path = REQ) -> RequirementSet:
    return parse_requirements(text, path)


def lines(reqs: RequirementSet) -> dict[str, int]:
    return {req_id: req.line for req_id, req in reqs.ids.items()}


# --- criteria: the number markdown shows -----------------------------------------------


@pytest.mark.parametrize(
    ("items", "ids"),
    [
        ("0. a\n1. b\n", ["R1.0", "R1.1"]),  # a list typed `0.` renders 0, 1
        ("3. a\n4. b\n", ["R1.3", "R1.4"]),  # one typed `3.` renders 3, 4
        ("1. a\n1. b\n1. c\n", ["R1.1", "R1.2", "R1.3"]),  # `1.` each time renders 1, 2, 3
    ],
)
def test_a_criterion_is_the_number_its_list_renders(items: str, ids: list[str]) -> None:
    reqs = parse(f"### R1 — t\n\n{items}")
    assert list(reqs.ids)[1:] == ids


def test_a_typed_number_that_differs_from_the_rendered_one_is_a_warning_not_a_remap() -> None:
    reqs = parse("### R1 — t\n0. a\n5. b\n")
    assert list(reqs.ids) == ["R1", "R1.0", "R1.1"]
    (finding,) = reqs.findings
    assert (finding.code, finding.level) == ("req.numbering", Level.WARNING)
    assert reqs.complete


# --- labels -------------------------------------------------------------------------------


def test_bold_bare_criterion_labels_belong_to_their_requirement() -> None:
    reqs = parse(
        "### Requirement 1 — t\n#### Acceptance criteria\n1. **1.1** WHEN a\n2. **1.2** b\n"
    )
    assert list(reqs.ids) == ["R1", "R1.1", "R1.2"]
    assert reqs.findings == ()


def test_plain_criterion_ids_lead_bullets_inside_a_requirement() -> None:
    reqs = parse("### Requirement 2 — t\n- 2.1 WHEN a\n- 2.2 The system SHALL b\n- 3 apples\n")
    assert list(reqs.ids) == ["R2", "R2.1", "R2.2"]
    assert reqs.ids["R2.1"].text == "WHEN a"


def test_plain_ids_outside_any_section_are_prose() -> None:
    assert dict(parse("## Notes\n- 1.1 is the old version\n").ids) == {}


def test_an_ac_label_under_a_requirement_is_that_requirements_criterion() -> None:
    reqs = parse("### Requirement 1 — t\n- **AC1.1** WHEN a\n- **AC1.2** b\n")
    assert list(reqs.ids) == ["R1", "R1.1", "R1.2"]
    assert dict(reqs.aliases) == {"AC1.1": "R1.1", "AC1.2": "R1.2"}


def test_ac_labels_in_sections_without_ids_stand_alone() -> None:
    reqs = parse(
        "## Requirements\n### Starting\n- **AC1** — WHEN a\n### Advancing\n- **AC2** — b\n"
    )
    assert lines(reqs) == {"AC1": 3, "AC2": 5}
    assert reqs.ids["AC1"].text == "WHEN a"


# --- markers --------------------------------------------------------------------------------


def test_markers_number_criteria_across_the_file_as_aliases() -> None:
    text = (
        "### Requirement 1 — one\n1. a (AC1)\n2. b\n   continued. (AC2)\n"
        "### Requirement 2 — two\n1. c, left open (AC1) THEN more. (AC6)\n"
    )
    reqs = parse(text)
    assert list(reqs.ids) == ["R1", "R1.1", "R1.2", "R2", "R2.1"]
    assert dict(reqs.aliases) == {"AC1": "R1.1", "AC2": "R1.2", "AC6": "R2.1"}
    assert reqs.findings == ()


def test_markers_in_sections_without_ids_define_the_ac_ids() -> None:
    text = (
        "## Requirements\n### Read the commands\n1. a (AC1)\n2. b (AC2)\n"
        "### Nothing else\n1. c (AC11)\n"
    )
    reqs = parse(text, BUG)
    assert lines(reqs) == {"AC1": 3, "AC2": 4, "AC11": 6}


def test_a_marker_used_twice_is_a_duplicate() -> None:
    reqs = parse("### R1 — t\n1. a (AC1)\n2. b (AC1)\n")
    assert [(f.code, f.level) for f in reqs.findings] == [("req.duplicate-id", Level.ERROR)]


# --- paragraphs, tables, non-functional ------------------------------------------------


def test_an_acceptance_criteria_paragraph_opens_a_flat_list() -> None:
    reqs = parse(
        "## Requirements\n\nAcceptance criteria (EARS):\n\n1. a\n2. b\n\n## Security\n1. x\n"
    )
    assert lines(reqs) == {"AC1": 5, "AC2": 6}


def test_table_rows_define_criteria() -> None:
    text = (
        "### R1 — t\n\n| # | Criterion |\n|---|---|\n| 1 | WHEN a |\n| 2 | WHEN b |\n\n"
        "## Acceptance criteria\n\n| Id | Text |\n|----|------|\n| **AC3** | c |\n"
        "\n## Findings\n\n| A | prose table |\n"
    )
    reqs = parse(text)
    assert lines(reqs) == {"R1": 1, "R1.1": 5, "R1.2": 6, "AC3": 12}
    assert reqs.ids["R1.2"].text == "WHEN b"


def test_a_table_row_that_starts_like_an_id_but_is_not_one_is_not_understood() -> None:
    reqs = parse("### R1 — t\n| R1x2 | x |\n")
    assert [f.code for f in reqs.findings] == ["req.malformed-id"]
    assert not reqs.complete


def test_the_non_functional_section_is_remembered() -> None:
    assert parse("### R1 — t\n## Non-functional requirements\n- fast\n").nfr_line == 2


# --- citations mapped -------------------------------------------------------------------------

MAPPED = (
    "### Requirement 1 — one\n1. a\n2. b\n"
    "### Requirement 2 — two\n1. c (AC7)\n"
    "## Non-functional requirements\n- **Docs.** kept\n"
)


@pytest.mark.parametrize(
    ("cited", "found"),
    [
        ("R1.2", ("R1.2",)),
        ("AC7", ("R2.1",)),  # a marker
        ("AC1.2", ("R1.2",)),  # criterion 2 of Requirement 1
        ("1.2", ("R1.2",)),  # bare
        ("REQ2", ("R2",)),
        ("AC3", ()),  # the file numbers ACs by markers: AC3 is not R3
        ("R3", ()),
    ],
)
def test_resolve_citation(cited: str, found: tuple[str, ...]) -> None:
    assert resolve_citation(parse(MAPPED), cited) == found


def test_ac_without_a_dot_is_the_requirement_when_the_file_has_no_ac_ids() -> None:
    assert resolve_citation(parse("### Requirement 4 — x\n1. a\n"), "AC4") == ("R4",)


def _task(*cited: str) -> Task:
    return Task("1", "1", "t", TaskState.OPEN, 10, 11, 0, requirements=cited, requirements_line=11)


def _trace(text: str, *cited: str) -> list[tuple[str, str]]:
    tasks = TaskList(Path("tasks.md"), (_task(*cited),), ())
    return [(f.level.value, f.code) for f in trace(parse(text), tasks)]


def test_a_file_read_completely_makes_an_absent_id_an_error() -> None:
    assert _trace("### R1 — t\n", "R1", "R9") == [("error", "trace.undefined")]


def test_a_file_with_a_line_not_understood_makes_it_a_warning() -> None:
    findings = _trace("### R1 — t\n### R1x2 — broken\n", "R1", "R9")
    assert ("warning", "trace.unconfirmed") in findings
    assert not [f for f in findings if f[0] == "error"]


def test_other_families_and_nfr_are_never_errors() -> None:
    assert _trace(MAPPED, "R1", "R2", "D2", "NFR") == [("info", "trace.other-reference")]
    assert _trace("### R1 — t\n", "R1", "NFR") == [("info", "trace.nfr-unresolved")]


def test_uncited_ids_of_other_families_are_not_owed_a_task() -> None:
    text = "### R1 — t\n## Root cause\n| C1 | `a.py` |\n| C2 | `b.py` |\n"
    assert _trace(text, "R1", "C1") == []


# --- bold paragraphs ---------------------------------------------------------------------


def test_a_requirement_heading_written_in_bold_opens_its_section() -> None:
    text = "## Requirements\n\n**Requirement 1 — one**\n\n1. a\n2. b\n\n**R2: two**\n1. c\n"
    reqs = parse(text)
    assert lines(reqs) == {"R1": 3, "R1.1": 5, "R1.2": 6, "R2": 8, "R2.1": 9}
    assert reqs.ids["R1"].text == "one"


def test_a_paragraph_opening_with_a_bold_id_defines_it() -> None:
    text = "### Requirement 1 — t\n\n**AC1.1** WHEN a THEN b.\n\n**User story:** prose\n"
    reqs = parse(text)
    assert list(reqs.ids) == ["R1", "R1.1"]
    assert reqs.ids["R1.1"].text == "WHEN a THEN b."
    assert reqs.findings == ()


def test_a_table_or_bold_paragraph_repeating_an_id_is_a_mention_not_a_duplicate() -> None:
    text = (
        "**B1 — two pollers run.** prose\n\n| # | Where |\n|---|---|\n| B1 | `poll.py` |\n"
        "| R1 | summary row before the heading |\n\n### R1 — real\n1. a\n"
    )
    reqs = parse(text)
    assert lines(reqs) == {"B1": 1, "R1": 8, "R1.1": 9}
    assert reqs.findings == ()


def test_a_bold_label_may_end_with_a_period() -> None:
    reqs = parse("## Steps to reproduce\n\n**B1.** Start a poller.\n")
    assert lines(reqs) == {"B1": 3}
    assert reqs.findings == ()


def test_bulleted_criteria_under_an_acceptance_heading_count_by_position() -> None:
    text = (
        "### R1 — t\n#### Acceptance criteria\n- WHEN a\n- WHEN b (AC4)\n"
        "#### Notes\n- a note, not a criterion\n"
        "## Acceptance criteria\n- c\n- d\n"
    )
    reqs = parse(text)
    assert lines(reqs) == {"R1": 1, "R1.1": 3, "R1.2": 4, "AC1": 8, "AC2": 9}
    assert dict(reqs.aliases) == {"AC4": "R1.2"}


def test_zero_padded_ids_are_read_without_the_padding() -> None:
    reqs = parse("### FR-001 — x\n1. a\n### Requirement 02\n**Acceptance Criteria**\n- b\n")
    assert list(reqs.ids) == ["FR1", "FR1.1", "R2", "R2.1"]
    assert reqs.findings == ()


# Ids written out in the file, in the forms later the-loop items use (issue 19).
SPELLED_OUT = """\
### R1 — Reading

1.1 WHEN the file is read THEN it SHALL parse.

1.2 WHEN it is bad THEN it SHALL say so.

### R2 — Writing

- R2.2 WHEN two THEN the second.
- R2.1 WHEN one THEN the first.

## Non-functional requirements

1. **Small.** Under a thousand lines.

- NFR2 **Fast.** Answers at once.

### Derived Requirement 1: extra

1. one
"""


def test_ids_spelled_out_in_the_file_are_defined_by_their_label() -> None:
    reqs = parse_requirements(SPELLED_OUT, Path("requirements.md"))
    assert list(reqs.ids) == [
        "R1", "R1.1", "R1.2", "R2", "R2.2", "R2.1", "NFR1", "NFR2", "DR1", "DR1.1",
    ]  # fmt: skip
    # keyed by the label, never by position: R2.1's text is R2.1's
    assert reqs.ids["R2.1"].text == "WHEN one THEN the first."
    assert reqs.findings == ()


def test_a_derived_requirement_restarts_its_numbering_without_duplicates() -> None:
    text = "### Requirement 1\n\n1. a\n2. b\n\n### Derived Requirement 1\n\n1. c\n2. d\n"
    reqs = parse_requirements(text, Path("requirements.md"))
    assert [f.code for f in reqs.findings] == []
    assert {"R1.1", "R1.2", "DR1.1", "DR1.2"} <= set(reqs.ids)
