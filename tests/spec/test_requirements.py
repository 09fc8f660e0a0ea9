"""Which ids requirements.md / bugfix.md define (docs/requirements-grammar.md).

Each grammar rule has a small inline file here, with exact ids, lines and
finding codes; the corpus tests live in test_requirements_corpus.py and the
traceability rules in test_requirements_trace.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from the_loop.errors import UnusableInputError
from the_loop.findings import Level
from the_loop.spec.requirements import (
    Requirement,
    RequirementSet,
    parse_requirements,
    read_requirements,
)

REQ = Path("docs/specs/issue-1/requirements.md")
BUG = Path("docs/specs/issue-2/bugfix.md")


def parse(text: str, path: Path = REQ) -> RequirementSet:
    return parse_requirements(text, path)


def lines_of(reqs: RequirementSet) -> dict[str, int]:
    return {req_id: req.line for req_id, req in reqs.ids.items()}


def codes(reqs: RequirementSet) -> list[tuple[str, int | None]]:
    return [(f.code, f.where.line if f.where else None) for f in reqs.findings]


# --------------------------------------------------------------------------- #
# Requirement headings
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    ("heading", "req_id", "text"),
    [
        ("### R1 — Work-item ticketing **[v0]**", "R1", "Work-item ticketing **[v0]**"),
        ("### R1: Tooling contract", "R1", "Tooling contract"),
        ("### R1 - plain dash", "R1", "plain dash"),
        ("### R1. Dotted", "R1", "Dotted"),
        ("### R12 Spaced", "R12", "Spaced"),
        ("### Requirement 4 — discovery and attach UX", "R4", "discovery and attach UX"),
        ("## requirement 2: lower case", "R2", "lower case"),
        ("#### FR3 — functional", "FR3", "functional"),
        ("### NFR1 — zero runtime deps", "NFR1", "zero runtime deps"),
        ("### R5 — closing hashes ###", "R5", "closing hashes"),
        ("### R7 — Use C#", "R7", "Use C#"),
        ("### R6", "R6", "R6"),
    ],
)
def test_heading_forms_define_a_top_level_id(heading: str, req_id: str, text: str) -> None:
    reqs = parse(f"# Requirements\n\n{heading}\n")
    assert dict(reqs.ids) == {req_id: Requirement(req_id, 3, text, None)}
    assert reqs.findings == ()


@pytest.mark.parametrize(
    "heading",
    ["## Requirements", "## Requirements 2.0", "### Release notes", "### R&D", "### Root cause"],
)
def test_headings_that_are_not_ids_define_nothing_silently(heading: str) -> None:
    reqs = parse(f"{heading}\n\n1. an item\n")
    assert dict(reqs.ids) == {}
    assert reqs.findings == ()


@pytest.mark.parametrize(
    "heading", ["### R1x2 — x", "### R1.2.3 — x", "### R1b2 — x", "### Requirement 1.2.3"]
)
def test_malformed_heading_ids_are_not_understood_and_open_no_section(heading: str) -> None:
    reqs = parse(f"## Requirements\n\n{heading}\n\n1. criterion\n")
    assert dict(reqs.ids) == {}
    assert codes(reqs) == [("req.malformed-id", 3)]
    assert reqs.findings[0].level is Level.WARNING
    assert reqs.findings[0].message.startswith("not understood: heading")
    assert not reqs.complete


@pytest.mark.parametrize(
    ("heading", "ids"),
    [
        ("### R1a — x", ["R1a", "R1a.1"]),
        ("## Requirement 0 — Audit", ["R0", "R0.1"]),
        ("### Requirement 6b — later", ["R6b", "R6b.1"]),
        ("### US4 — Login", ["US4", "US4.1"]),
        ("### SEC-2: Secrets", ["SEC2", "SEC2.1"]),
        ("#### R1.2 — a criterion as a heading", ["R1.2"]),
    ],
)
def test_any_family_letter_suffix_and_zero_define_ids(heading: str, ids: list[str]) -> None:
    reqs = parse(f"## Requirements\n\n{heading}\n\n1. criterion\n")
    assert list(reqs.ids) == ids
    assert reqs.findings == ()
    assert reqs.complete


@pytest.mark.parametrize("heading", ["### V2 API", "### H2 headings matter", "### S3 bucket"])
def test_a_capital_and_a_number_without_a_separator_is_a_plain_heading(heading: str) -> None:
    assert dict(parse(f"{heading}\n\n1. item\n").ids) == {}


# --------------------------------------------------------------------------- #
# Criteria
# --------------------------------------------------------------------------- #

ISSUE_STYLE = """\
---
type: requirements
status: draft
---

# Requirements: sample

## Introduction

1. an introduction list is prose
2. still prose

## Requirements

### R1 — Registry

**User story:** As a user, I want a registry.

#### Acceptance criteria (EARS)

1. The system SHALL persist sessions
   across restarts.
   - a nested bullet is a detail
   1. so is a nested numbered item
2. The CLI SHALL list sessions.

### R2 — Routing
1. WHEN an event arrives THEN route it.

## Non-functional requirements

- Zero runtime dependencies.
1. numbered, under the non-functional heading

## Out of scope

See R7.4 and (R2.1); nothing here defines ids.
"""


def test_numbered_items_in_a_requirement_section_are_its_criteria() -> None:
    reqs = parse(ISSUE_STYLE)
    # The numbered item under the non-functional heading is NFR1 (bullets there are prose).
    assert lines_of(reqs) == {
        "R1": 15,
        "R1.1": 21,
        "R1.2": 25,
        "R2": 27,
        "R2.1": 28,
        "NFR1": 33,
    }
    assert reqs.ids["R1.1"] == Requirement("R1.1", 21, "The system SHALL persist sessions", "R1")
    assert reqs.ids["R2.1"].text == "WHEN an event arrives THEN route it."
    assert reqs.ids["R2.1"].parent == "R2"
    assert reqs.ids["R1"].parent is None
    assert reqs.findings == ()


def test_a_requirement_without_criteria_is_fine() -> None:
    reqs = parse("### R1 — just a heading\n\nSome prose.\n\n### R2 — another\n")
    assert list(reqs.ids) == ["R1", "R2"]
    assert reqs.findings == ()


def test_position_wins_over_the_written_number_with_a_warning() -> None:
    reqs = parse("### R1 — t\n1. a\n2. b\n2. c\n")
    assert lines_of(reqs) == {"R1": 1, "R1.1": 2, "R1.2": 3, "R1.3": 4}
    assert codes(reqs) == [("req.numbering", 4)]
    assert "R1.3" in reqs.findings[0].message


def test_a_list_may_restart_at_one_under_a_sub_heading() -> None:
    text = "### R1 — t\n#### Criteria\n1. a\n2. b\n#### Abuse cases\n1. c\n"
    reqs = parse(text)
    assert lines_of(reqs) == {"R1": 1, "R1.1": 3, "R1.2": 4, "R1.3": 6}
    assert reqs.findings == ()


def test_lazy_one_dot_numbering_is_read_by_position_and_warned() -> None:
    reqs = parse("### R1 — t\n1. a\n1. b\n")
    assert list(reqs.ids) == ["R1", "R1.1", "R1.2"]
    assert codes(reqs) == [("req.numbering", 3)]


def test_a_same_level_heading_ends_the_section() -> None:
    reqs = parse("### R1 — t\n1. a\n### Notes\n1. not a criterion\n#### deeper\n2. nor this\n")
    assert list(reqs.ids) == ["R1", "R1.1"]


def test_paren_numbered_items_count() -> None:
    assert list(parse("### R1 — t\n1) a\n2) b\n").ids) == ["R1", "R1.1", "R1.2"]


def test_indented_numbered_items_are_not_criteria() -> None:
    assert list(parse("### R1 — t\n - x\n  1. nested\n   2. nested\n").ids) == ["R1"]


def test_fr_and_nfr_sections_number_their_criteria_too() -> None:
    reqs = parse("### FR2 — x\n1. a\n### NFR1 — y\n1. b\n")
    assert [(r.id, r.parent) for r in reqs.ids.values()] == [
        ("FR2", None),
        ("FR2.1", "FR2"),
        ("NFR1", None),
        ("NFR1.1", "NFR1"),
    ]


# --------------------------------------------------------------------------- #
# Bugfix acceptance criteria
# --------------------------------------------------------------------------- #

BUGFIX = """\
---
type: bugfix
severity: high
---

# Bugfix spec: sample

## Steps to reproduce

1. not an acceptance criterion
2. nor this

## Acceptance criteria (EARS)

### Retry budget

1. The system SHALL expose a budget.
2. WHEN a dispatch fails THEN retry
   it later.

### Respawn

1. WHEN the session is gone THEN respawn
   it. (AC3)
2. WHEN delivery fails otherwise THEN keep going. (AC4)

## Out of scope

- The respawn fix (AC3–4) is prose here.
"""


def test_bugfix_criteria_count_across_sub_sections_and_markers_confirm() -> None:
    reqs = parse(BUGFIX, BUG)
    assert reqs.kind == "bugfix"
    assert lines_of(reqs) == {"AC1": 17, "AC2": 18, "AC3": 23, "AC4": 25}
    assert all(req.parent is None for req in reqs.ids.values())
    assert reqs.ids["AC3"].text == "WHEN the session is gone THEN respawn"
    assert reqs.ids["AC4"].text == "WHEN delivery fails otherwise THEN keep going."
    assert reqs.findings == ()


def test_a_disagreeing_marker_wins_and_counting_resumes_after_it() -> None:
    text = "## Acceptance criteria\n\n1. a\n2. b (AC5)\n3. c\n"
    reqs = parse(text, BUG)
    assert lines_of(reqs) == {"AC1": 3, "AC5": 4, "AC6": 5}
    assert codes(reqs) == [("req.explicit-id-differs", 4)]
    assert reqs.findings[0].level is Level.WARNING
    assert "AC5" in reqs.findings[0].message and "AC2" in reqs.findings[0].message


def test_a_marker_going_backwards_is_a_duplicate() -> None:
    reqs = parse("## Acceptance criteria\n1. a\n2. b (AC1)\n", BUG)
    assert list(reqs.ids) == ["AC1"]
    assert sorted(codes(reqs)) == [("req.duplicate-id", 3), ("req.explicit-id-differs", 3)]


def test_acceptance_heading_inside_a_requirement_is_requirement_style() -> None:
    reqs = parse("## R1 — t\n### Acceptance criteria\n1. a\n")
    assert list(reqs.ids) == ["R1", "R1.1"]


def test_acceptance_section_in_a_requirements_file_also_defines_ac_ids() -> None:
    reqs = parse("## Acceptance Criteria\n1. a\n")
    assert reqs.kind == "requirements"
    assert list(reqs.ids) == ["AC1"]


def test_a_marker_on_a_requirements_criterion_is_its_other_name() -> None:
    reqs = parse("### R1 — t\n1. a (AC9)\n2. b, see (AC9) above\n   and more.\n")
    assert reqs.ids["R1.1"].text == "a"
    assert dict(reqs.aliases) == {"AC9": "R1.1"}  # a marker mid-text is a reference
    assert reqs.resolve("AC9") == "R1.1"
    assert reqs.findings == ()


# --------------------------------------------------------------------------- #
# Explicit labels
# --------------------------------------------------------------------------- #

LABELLED = """\
### Requirement 1 — Configurable workspace root

**User story:** As an operator, I want a root.

- **R1.1** The CLI config SHALL expose `root`.
- **R1.2:** WHEN `root` is unset, keep today's behaviour
  (spawn in `spawnWorkdir`).
- **Expected:** a bold word that is not an id
- a plain bullet

## Non-functional requirements

- **NFR1** Zero runtime dependencies.
- No id here.
"""


def test_labelled_items_define_their_ids() -> None:
    reqs = parse(LABELLED)
    assert [(r.id, r.line, r.parent) for r in reqs.ids.values()] == [
        ("R1", 1, None),
        ("R1.1", 5, "R1"),
        ("R1.2", 6, "R1"),
        ("NFR1", 13, None),
    ]
    assert reqs.ids["R1.1"].text == "The CLI config SHALL expose `root`."
    assert reqs.ids["R1.2"].text == "WHEN `root` is unset, keep today's behaviour"
    assert reqs.ids["NFR1"].text == "Zero runtime dependencies."
    assert reqs.findings == ()


def test_label_with_title_inside_the_bold() -> None:
    reqs = parse("- **R3 — Title** more text\n")
    assert reqs.ids["R3"] == Requirement("R3", 1, "Title more text", None)


def test_a_label_under_another_requirement_warns_but_counts() -> None:
    reqs = parse("### R1 — t\n- **R2.1** misplaced\n")
    assert list(reqs.ids) == ["R1", "R2.1"]
    assert codes(reqs) == [("req.misplaced-id", 2)]


def test_a_label_on_a_numbered_item_wins_over_its_position() -> None:
    reqs = parse("### R1 — t\n1. **R1.1** a\n2. **R1.5** b\n3. c\n")
    assert list(reqs.ids) == ["R1", "R1.1", "R1.5", "R1.6"]
    assert codes(reqs) == [("req.explicit-id-differs", 3)]


@pytest.mark.parametrize("label", ["R1.2.3", "R1x2", "R1.x", "AC1.2.3"])
def test_malformed_labels_are_not_understood(label: str) -> None:
    reqs = parse(f"- **{label}** text\n")
    assert dict(reqs.ids) == {}
    assert codes(reqs) == [("req.malformed-id", 1)]


# --------------------------------------------------------------------------- #
# Duplicates, skipped regions, file shapes
# --------------------------------------------------------------------------- #


def test_duplicate_heading_is_one_error_and_its_criteria_are_skipped() -> None:
    reqs = parse("### R1 — first\n1. a\n### R1 — again\n1. b\n2. c\n")
    assert lines_of(reqs) == {"R1": 1, "R1.1": 2}
    assert codes(reqs) == [("req.duplicate-id", 3)]
    finding = reqs.findings[0]
    assert finding.level is Level.ERROR
    assert finding.message == "R1 is defined again (first at line 1); the first definition counts"


def test_duplicate_label_is_an_error() -> None:
    reqs = parse("### R1 — t\n1. a\n- **R1.1** again\n")
    assert codes(reqs) == [("req.duplicate-id", 3)]


def test_front_matter_is_skipped_but_lines_stay_absolute() -> None:
    text = "---\ntype: requirements\nnote: |\n  ### R9 — not markdown\n---\n### R1 — t\n1. a\n"
    reqs = parse(text)
    assert lines_of(reqs) == {"R1": 6, "R1.1": 7}


def test_unterminated_front_matter_is_read_as_markdown() -> None:
    assert lines_of(parse("---\ntype: x\n### R1 — t\n")) == {"R1": 3}


def test_code_fences_and_html_comments_are_skipped() -> None:
    text = (
        "### R1 — t\n"
        "```markdown\n### R2 — example\n1. example\n```\n"
        "<!-- template hint\n### R3 — commented out\n-->\n"
        "<!-- one line --> \n"
        "~~~~\n```\n### R4 — still fenced\n~~~~\n"
        "1. a\n"
    )
    reqs = parse(text)
    assert lines_of(reqs) == {"R1": 1, "R1.1": 14}
    assert reqs.findings == ()


def test_an_unclosed_fence_is_a_warning() -> None:
    reqs = parse("### R1 — t\n```\n### R2 — hidden\n")
    assert list(reqs.ids) == ["R1"]
    assert codes(reqs) == [("req.unclosed-fence", 2)]


def test_crlf_and_bom() -> None:
    reqs = parse("\ufeff---\r\ntype: bugfix\r\n---\r\n## Acceptance criteria\r\n1. a (AC1)\r\n")
    assert lines_of(reqs) == {"AC1": 5}
    assert reqs.ids["AC1"].text == "a"
    assert reqs.findings == ()


@pytest.mark.parametrize(
    ("name", "front", "kind"),
    [
        ("requirements.md", "type: bugfix", "requirements"),  # the file name decides
        ("bugfix.md", "type: requirements", "bugfix"),
        ("spec.md", "type: bugfix", "bugfix"),
        ("spec.md", 'type: "requirements"', "requirements"),
        ("spec.md", "status: draft", "requirements"),
    ],
)
def test_kind(name: str, front: str, kind: str) -> None:
    assert parse(f"---\n{front}\n---\n", Path(name)).kind == kind


def test_values_are_frozen() -> None:
    reqs = parse("### R1 — t\n")
    with pytest.raises(dataclasses.FrozenInstanceError):
        reqs.kind = "bugfix"  # type: ignore[misc]
    with pytest.raises(TypeError):
        reqs.ids["R2"] = reqs.ids["R1"]  # type: ignore[index]


def test_findings_are_sorted_by_line() -> None:
    reqs = parse("### R1x2\n### R1 — t\n1. a\n3. b\n### R1 — dup\n")
    assert [line for _, line in codes(reqs)] == [1, 4, 5]


# --------------------------------------------------------------------------- #
# Reading files
# --------------------------------------------------------------------------- #


def test_read_requirements_reads_utf8(tmp_path: Path) -> None:
    path = tmp_path / "requirements.md"
    path.write_text("### R1 — café ☕\n1. naïve\n", encoding="utf-8")
    reqs = read_requirements(path)
    assert reqs.path == path
    assert reqs.ids["R1"].text == "café ☕"
    assert reqs.ids["R1.1"].text == "naïve"


def test_an_undecodable_file_is_a_finding(tmp_path: Path) -> None:
    path = tmp_path / "bugfix.md"
    path.write_bytes(b"## Acceptance criteria\n1. ok\n2. caf\xe9\n")
    reqs = read_requirements(path)
    assert reqs.kind == "bugfix"
    assert dict(reqs.ids) == {}
    assert codes(reqs) == [("req.undecodable", 3)]
    assert reqs.findings[0].level is Level.ERROR


def test_a_missing_file_is_unusable_input(tmp_path: Path) -> None:
    with pytest.raises(UnusableInputError) as info:
        read_requirements(tmp_path / "requirements.md")
    assert info.value.where is not None


# --------------------------------------------------------------------------- #
# Never raises
# --------------------------------------------------------------------------- #

FRAGMENTS = [
    "---",
    "type: bugfix",
    "### R1 — t",
    "## Requirement 2: x",
    "#### Acceptance criteria",
    "## Acceptance criteria",
    "### R1.2",
    "1. item",
    "2. item (AC2)",
    "  (AC9)",
    "9) x",
    "- **R1.1** x",
    "- **AC3** y",
    "- **R1.x**",
    "* **NFR2:** z",
    "```",
    "~~~",
    "<!--",
    "-->",
    "",
    "   indented",
    "text",
    "# ###",
    "\r",
    "\ufeff",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), max_size=40))
def test_never_raises_on_markdownish_text(parts: list[str]) -> None:
    text = "\n".join(parts)
    reqs = parse(text, BUG)
    line_count = len(text.split("\n"))
    for req_id, req in reqs.ids.items():
        assert req.id == req_id
        assert 1 <= req.line <= line_count
        assert req.parent is None or req_id.startswith(req.parent + ".")
    for finding in reqs.findings:
        assert finding.where is not None and finding.where.line is not None
        assert 1 <= finding.where.line <= line_count


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_arbitrary_text(text: str) -> None:
    parse(text)
