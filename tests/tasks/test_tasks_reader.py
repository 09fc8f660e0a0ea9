"""The tasks.md reader: task lines, ids, titles, sub-bullets, findings."""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from the_loop.findings import Level
from the_loop.tasks import Task, TaskList, TaskState, parse_tasks, read_tasks
from the_loop.tasks import test_command as command_of  # not named test_*: pytest would collect it

BuildTree = Callable[[Mapping[str, str]], Path]


def parse(text: str) -> TaskList:
    return parse_tasks(textwrap.dedent(text), Path("tasks.md"))


def codes(result: TaskList) -> list[tuple[str, int | None]]:
    return [(f.code, f.where.line if f.where else None) for f in result.findings]


def only(result: TaskList) -> Task:
    assert len(result.tasks) == 1, result.tasks
    return result.tasks[0]


# --- the template style, end to end --------------------------------------------


def test_template_style_reads_every_field(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            "tasks.md": textwrap.dedent(
                """\
                ---
                type: tasks
                status: draft
                ---

                # Tasks: sample

                - [x] 1. Parse the config
                  - Reads `config.yaml` and validates it.
                  - _Depends on:_ none
                  - _Requirements:_ R1, R2
                  - _Test:_ `pytest tests/test_config.py -k parse` (red→green)
                - [ ] 2. Render the report
                  - _Depends on:_ 1
                  - _Requirements:_ R3.1
                  - _Test:_ `pytest tests/test_report.py`
                """
            )
        }
    )
    result = read_tasks(root / "tasks.md")
    assert result.path == root / "tasks.md"
    assert result.findings == ()
    assert result.dependency_source == "fields"
    first, second = result.tasks
    assert first == Task(
        id="1",
        label="1",
        title="Parse the config",
        state=TaskState.DONE,
        line=8,
        end_line=12,
        mark_offset=first.mark_offset,
        depends_on=(),
        depends_line=10,
        requirements=("R1", "R2"),
        requirements_line=11,
        test="`pytest tests/test_config.py -k parse` (red→green)",
        test_line=12,
        details=("Reads `config.yaml` and validates it.",),
    )
    assert second.depends_on == ("1",)
    assert (second.line, second.end_line, second.state) == (13, 16, TaskState.OPEN)
    assert command_of(first) == ["pytest", "tests/test_config.py", "-k", "parse"]
    data = (root / "tasks.md").read_bytes()
    assert data[first.mark_offset : first.mark_offset + 1] == b"x"
    assert data[second.mark_offset - 1 : second.mark_offset + 2] == b"[ ]"


@pytest.mark.parametrize(
    ("mark", "state"),
    [
        (" ", TaskState.OPEN),
        ("x", TaskState.DONE),
        ("X", TaskState.DONE),
        ("-", TaskState.IN_PROGRESS),
    ],
)
def test_checkbox_marks(mark: str, state: TaskState) -> None:
    assert only(parse(f"- [{mark}] 1. Title\n")).state is state


@pytest.mark.parametrize("bullet", ["-", "*", "+"])
def test_every_bullet_character(bullet: str) -> None:
    assert only(parse(f"{bullet} [ ] 4. Title\n")).id == "4"


# --- ids, labels and titles ------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "task_id", "label", "title"),
    [
        ("- [ ] 3. Title here", "3", "3", "Title here"),
        ("- [ ] 3) Title here", "3", "3", "Title here"),
        ("- [ ] 3: Title here", "3", "3", "Title here"),
        ("- [ ] 3 — Title here", "3", "3", "Title here"),
        ("- [ ] 3 - Title here", "3", "3", "Title here"),
        ("- [ ] T3. Title here", "3", "T3", "Title here"),
        ("- [ ] T3 Title here", "3", "T3", "Title here"),
        ("- [ ] t3 — Title here", "3", "t3", "Title here"),
        ("- [ ] T03. Title here", "3", "T03", "Title here"),
        ("- [ ] 3.2. Sub task", "3.2", "3.2", "Sub task"),
        ("- [ ] 3.2 Sub task", "3.2", "3.2", "Sub task"),
        ("- [ ] 3. Title with **bold** inside", "3", "3", "Title with bold inside"),
        ("- [ ] 12. Ends with a period.", "12", "12", "Ends with a period."),
        ("- [x] **T3 — Respawn on delivery.**", "3", "T3", "Respawn on delivery"),
        ("- [x] **T3: Respawn.**", "3", "T3", "Respawn"),
        ("- [x] **3. Respawn.**", "3", "3", "Respawn"),
        ("- [x] 1. **Bold title.**", "1", "1", "Bold title"),
        ("- [x] **T3.** Plain title after", "3", "T3", "Plain title after"),
    ],
)
def test_id_label_and_title(line: str, task_id: str, label: str, title: str) -> None:
    task = only(parse(line + "\n"))
    assert (task.id, task.label, task.title) == (task_id, label, title)


def test_bold_title_sends_the_rest_to_details() -> None:
    task = only(parse("- [x] **T1 — Add the flag.** Set it on the early return. *(AC7)*\n"))
    assert task.title == "Add the flag"
    assert task.details == ("Set it on the early return. *(AC7)*",)
    assert task.requirements == ("AC7",)


def test_bold_after_a_plain_id() -> None:
    task = only(parse("- [x] 1. **Split the runner.** More words here.\n"))
    assert (task.id, task.title, task.details) == ("1", "Split the runner", ("More words here.",))


def test_continuation_lines_join_the_title() -> None:
    task = only(parse("- [x] 2. Project footprint: schema, default\n  `config.yaml`, manifest\n"))
    assert task.title == "Project footprint: schema, default `config.yaml`, manifest"
    assert (task.line, task.end_line) == (1, 2)


def test_bold_title_may_wrap_onto_the_next_line() -> None:
    task = only(parse("- [ ] **T4 — A long\n  title.** Then prose.\n"))
    assert (task.title, task.details) == ("A long title", ("Then prose.",))


@pytest.mark.parametrize(
    "line",
    ["- [ ] Write the docs", "- [ ] 3 retries on failure", "- [ ]", "- [ ] **Bold only**"],
)
def test_checkbox_without_an_id_is_not_understood_and_not_a_task(line: str) -> None:
    result = parse(f"- [x] 1. First\n- [x] 7. Seventh\n{line}\n")
    assert [t.id for t in result.tasks] == ["1", "7"]
    (finding,) = [f for f in result.findings if f.level is not Level.INFO]
    assert (finding.code, finding.level, finding.where and finding.where.line) == (
        "tasks.no-id",
        Level.WARNING,
        3,
    )
    assert finding.message.startswith("not understood: ")
    assert finding.hint is not None and "`- [ ] 8. " in finding.hint


def test_the_no_id_hint_never_proposes_a_number_a_later_task_takes() -> None:
    result = parse("- [x] 1. A\n- [x] Unnumbered\n- [x] 2. B\n- [x] 3. C\n- [x] Another\n")
    hints = [f.hint for f in result.findings if f.code == "tasks.no-id"]
    assert hints == ["number it: `- [x] 4. Unnumbered`", "number it: `- [x] 5. Another`"]


def test_unknown_mark_is_not_understood_and_reads_as_open() -> None:
    result = parse("- [~] 1. Half done\n")
    assert only(result).state is TaskState.OPEN
    assert codes(result) == [("tasks.unknown-mark", 1)]
    assert result.findings[0].level is Level.WARNING


def test_empty_title_is_a_warning() -> None:
    result = parse("- [ ] 5.\n")
    assert only(result).title == ""
    assert codes(result) == [("tasks.empty-title", 1)]
    assert result.findings[0].level is Level.WARNING


def test_nested_checkbox_is_info_and_not_a_task() -> None:
    result = parse("- [ ] 1. Parent\n  - [ ] sub-step\n  - _Depends on:_ none\n")
    task = only(result)
    assert task.details == ("[ ] sub-step",)
    assert task.depends_on == ()
    assert codes(result) == [("tasks.nested-checkbox", 2)]
    assert result.findings[0].level is Level.INFO


def test_indented_checkbox_outside_a_task_is_info_too() -> None:
    result = parse("## Phase 1\n\n  - [ ] 1. Nested under nothing\n")
    assert result.tasks == ()
    # ... and a file whose only task-like line is no task says so loudly.
    assert codes(result) == [("tasks.nested-checkbox", 3), ("tasks.none-understood", 3)]


def test_duplicates_are_returned_in_file_order() -> None:
    result = parse("- [ ] 1. A\n- [ ] 2. B\n- [ ] 1. C\n")
    assert [(t.id, t.title) for t in result.tasks] == [("1", "A"), ("2", "B"), ("1", "C")]
    assert not [f for f in result.findings if f.level is not Level.INFO]


# --- structure: front matter, fences, where a task ends ---------------------------


def test_front_matter_is_skipped_and_lines_stay_absolute() -> None:
    result = parse("---\ntitle: x\n- [ ] 9. not a task\n---\n- [ ] 1. Real\n")
    assert [(t.id, t.line) for t in result.tasks] == [("1", 5)]


def test_unterminated_front_matter_is_read_as_markdown() -> None:
    assert [t.id for t in parse("---\n- [ ] 1. Real\n").tasks] == ["1"]


@pytest.mark.parametrize(
    "fence",
    [
        "```\n- [ ] 9. no\n```",
        "~~~\n- [ ] 9. no\n~~~",
        "````md\n```\n- [ ] 9. no\n```\n````",
        "~~~~\n- [ ] 9. no\n~~~\n- [ ] 8. no\n~~~~~",
    ],
)
def test_fenced_code_is_not_read(fence: str) -> None:
    result = parse(f"- [ ] 1. Before\n\n{fence}\n\n- [ ] 2. After\n")
    assert [t.id for t in result.tasks] == ["1", "2"]
    assert result.findings[-1].code == "tasks.no-dependencies"


def test_inline_triple_backticks_do_not_open_a_fence() -> None:
    result = parse("```not a fence``` text\n- [ ] 1. Task\n")
    assert [t.id for t in result.tasks] == ["1"]


def test_unclosed_fence_is_a_warning() -> None:
    result = parse("- [ ] 1. Before\n```\n- [ ] 2. Hidden\n")
    assert [t.id for t in result.tasks] == ["1"]
    assert codes(result) == [("tasks.unclosed-fence", 2)]


def test_indented_fence_belongs_to_the_task() -> None:
    result = parse("- [ ] 1. Task\n  ```bash\n  - _Depends on:_ 9\n  ```\n  - _Test:_ `make`\n")
    task = only(result)
    assert (task.depends_on, task.test, task.end_line) == (None, "`make`", 5)


def test_blank_lines_do_not_end_a_task() -> None:
    result = parse(
        "- [x] 1. One\n\n  - _Depends on:_ none\n\n- [x] 2. Two\n\n  - _Depends on:_ 1\n"
    )
    assert [(t.id, t.depends_on, t.end_line) for t in result.tasks] == [
        ("1", (), 3),
        ("2", ("1",), 7),
    ]


def test_a_column_zero_paragraph_or_heading_ends_a_task() -> None:
    result = parse("- [ ] 1. One\nSome paragraph.\n  - _Depends on:_ 7\n## Heading\n  - x\n")
    task = only(result)
    assert (task.end_line, task.depends_on, task.details) == (1, None, ())


def test_text_after_a_blank_line_in_a_task_is_its_own_detail() -> None:
    task = only(parse("- [ ] 1. One\n  - first\n    continues\n\n  new paragraph\n"))
    assert task.details == ("first continues", "new paragraph")


def test_crlf_and_bom_are_not_content() -> None:
    result = parse_tasks("\ufeff- [ ] 1. One\r\n  - _Depends on:_ none\r\n", Path("t.md"))
    task = only(result)
    assert (task.title, task.depends_on, task.mark_offset) == ("One", (), 6)


def test_mark_offset_counts_bytes_not_characters() -> None:
    text = "# Tâches — ünïcode 🚀\n- [ ] 1. Zweite Aufgabe\n"
    task = only(parse_tasks(text, Path("t.md")))
    data = text.encode("utf-8")
    assert data[task.mark_offset - 1 : task.mark_offset + 2] == b"[ ]"


# --- fields ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bullet",
    [
        "_Depends on:_ 1, 2",
        "*Depends on:* 1, 2",
        "**Depends on:** 1, 2",
        "_Depends on: 1, 2_",
        "_Depends on_: 1, 2",
        "**Depends on**: 1, 2",
        "_depends ON:_ 1, 2",
        "_Dependencies:_ 1, 2",
        "Depends on: 1, 2",
    ],
)
def test_depends_field_spellings(bullet: str) -> None:
    result = parse(f"- [ ] 1. A\n- [ ] 2. B\n- [ ] 3. C\n  - {bullet}\n")
    task = result.tasks[2]
    assert (task.depends_on, task.depends_line) == (("1", "2"), 4)


def test_plain_dependencies_bullet_is_a_detail() -> None:
    task = only(parse("- [ ] 1. A\n  - Dependencies: add ruamel to pyproject\n"))
    assert (task.depends_on, task.details) == (None, ("Dependencies: add ruamel to pyproject",))


@pytest.mark.parametrize("sep", [" — ", " – ", " · ", " | "])
def test_several_fields_on_one_line(sep: str) -> None:
    text = f"- [ ] 1. A\n- [ ] 4. B\n  - _Depends on:_ 1, 4{sep}_Requirements:_ R4, R7\n"
    task = parse(text).tasks[1]
    assert (task.depends_on, task.requirements) == (("1", "4"), ("R4", "R7"))
    assert task.depends_line == task.requirements_line == 3


def test_fields_closed_by_underscore_on_the_task_line() -> None:
    line = "- [x] 1. **Split the runner.** … _Requirements: (design D2)_ · _Test: T1_\n"
    task = only(parse(line))
    assert (task.title, task.requirements, task.test) == ("Split the runner", (), "T1")
    assert task.details == ("…",)


def test_fields_on_a_plain_task_line() -> None:
    task = only(parse("- [ ] 2. Wire it — _Depends on:_ none — _Test:_ `make check`\n"))
    assert (task.title, task.depends_on, task.test) == ("Wire it", (), "`make check`")


def test_test_value_keeps_dashes_and_continuation_lines() -> None:
    text = (
        "- [x] 1. Rename\n"
        "  - _Test:_ `uv build` then inspect — METADATA\n"
        "    `Name: x`, entry point.\n"
    )
    task = only(parse(text))
    assert task.test == "`uv build` then inspect — METADATA `Name: x`, entry point."
    assert task.test_line == 2


def test_field_line_on_a_continuation_line() -> None:
    task = only(parse("- [ ] 1. Title\n  - Details first\n    _Test:_ `make`\n"))
    assert (task.test, task.test_line, task.details) == ("`make`", 3, ("Details first",))


def test_second_test_field_goes_to_details() -> None:
    task = only(parse("- [ ] 1. T\n  - _Test:_ `a`\n  - _Test:_ `b`\n"))
    assert (task.test, task.details) == ("`a`", ("Test: `b`",))


# --- depends-on values ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("none", ()),
        ("None.", ()),
        ("nothing", ()),
        ("—", ()),
        ("none (task 1 and task 2 are the two halves of one red→green pair)", ()),
        ("1", ("1",)),
        ("1, 2", ("1", "2")),
        ("1 and 2", ("1", "2")),
        ("1, 2, and 3", ("1", "2", "3")),
        ("T2, T4, T5", ("2", "4", "5")),
        ("task 3", ("3",)),
        ("1–3", ("1", "2", "3")),
        ("1—3", ("1", "2", "3")),
        ("1-3", ("1", "2", "3")),
        ("1..3", ("1", "2", "3")),
        ("T1–T3", ("1", "2", "3")),
        ("1, 1–2", ("1", "2")),
        ("3.1–3.3", ("3.1", "3.2", "3.3")),
        ("4 (the schema part)", ("4",)),
        ("04", ("4",)),
    ],
)
def test_depends_values(value: str, expected: tuple[str, ...]) -> None:
    text = (
        "".join(f"- [ ] {n}. T{n}\n" for n in range(1, 5))
        + f"- [ ] 9. Last\n  - _Depends on:_ {value}\n"
    )
    task = parse(text).tasks[-1]
    assert task.depends_on == expected
    assert codes(parse(text)) == []


@pytest.mark.parametrize("value", ["the auth task", "", "3, maybe 4", "5–2", "1–T", "#3", "1 2"])
def test_unreadable_depends_is_not_understood_never_a_guess(value: str) -> None:
    result = parse(f"- [ ] 1. A\n- [ ] 2. B\n  - _Depends on:_ {value}\n")
    assert result.tasks[1].depends_on is None
    assert result.tasks[1].unread_depends_line == 3  # held back, not read as free
    assert result.dependency_source == "none"
    (finding,) = result.findings
    assert (finding.code, finding.level, finding.where and finding.where.line) == (
        "tasks.depends-unreadable",
        Level.WARNING,
        3,
    )
    assert finding.hint is not None and "_Depends on:_ 1, 3–5" in finding.hint


def test_all_means_every_task_above() -> None:
    text = (
        "- [ ] 1. A\n- [ ] 2. B\n- [ ] 2. B again\n- [ ] 4. D\n  - _Depends on:_ all\n- [ ] 5. E\n"
    )
    result = parse(text)
    assert result.tasks[3].depends_on == ("1", "2")
    (finding,) = result.findings
    assert (finding.code, finding.level, finding.where and finding.where.line) == (
        "tasks.depends-all",
        Level.INFO,
        5,
    )
    assert "1, 2" in finding.message


def test_depends_fields_accumulate() -> None:
    task = parse(
        "- [ ] 1. A\n- [ ] 2. B\n- [ ] 3. C\n  - _Depends on:_ 1\n  - _Depends on:_ 2, 1\n"
    )
    assert task.tasks[2].depends_on == ("1", "2")
    assert task.tasks[2].depends_line == 4


# --- prose dependencies in bold tasks --------------------------------------------------


def test_prose_dependencies_in_bold_tasks() -> None:
    text = textwrap.dedent(
        """\
        - [x] **T1 — First.** Do it. *(AC7, AC8)*
        - [x] **T2 — Second.** Do it. *(AC2, AC5)* — depends on nothing.
        - [x] **T3 — Third.** Do it. *(AC7)* — depends on T1.
        - [x] **T4 — Fourth.** Do it — depends on T2, T3.
        - [x] **T5 — Tests.** Unit and integration. *(all AC)* —
          depends on T1–T4.
        """
    )
    result = parse(text)
    assert result.dependency_source == "fields"
    assert [(t.id, t.depends_on, t.depends_line) for t in result.tasks] == [
        ("1", None, None),
        ("2", (), 2),
        ("3", ("1",), 3),
        ("4", ("2", "3"), 4),
        ("5", ("1", "2", "3", "4"), 6),
    ]
    assert [t.requirements for t in result.tasks] == [
        ("AC7", "AC8"),
        ("AC2", "AC5"),
        ("AC7",),
        (),
        ("all",),
    ]
    assert result.findings == ()


def test_unreadable_prose_clause_after_a_dash_is_a_warning() -> None:
    result = parse("- [ ] **T2 — Second.** Work — depends on the auth rework.\n")
    assert only(result).depends_on is None
    assert codes(result) == [("tasks.depends-prose-unreadable", 1)]
    assert result.findings[0].level is Level.WARNING


def test_prose_that_merely_mentions_depends_on_is_left_alone() -> None:
    result = parse("- [ ] **T2 — Second.** Whatever depends on the cache stays.\n")
    assert only(result).depends_on is None
    assert result.dependency_source == "none"
    assert codes(result) == []


def test_prose_in_plain_titles_is_not_read() -> None:
    task = only(parse("- [ ] 3. Remove what depends on 2\n"))
    assert (task.title, task.depends_on) == ("Remove what depends on 2", None)


# --- requirement values ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("R1, R2", ("R1", "R2")),
        ("R1.2, R3.1", ("R1.2", "R3.1")),
        ("AC7", ("AC7",)),
        ("AC 7", ("AC7",)),
        ("NFR1, FR2", ("NFR1", "FR2")),
        ("r1", ("R1",)),
        ("R1–R3", ("R1", "R2", "R3")),
        ("R1-R3", ("R1", "R2", "R3")),
        ("R1.1–R1.3", ("R1.1", "R1.2", "R1.3")),
        ("R6.1–R6.2, R7 (mechanics)", ("R6.1", "R6.2", "R7")),
        ("AC 1–3", ("AC1", "AC2", "AC3")),
        ("AC2–AC4", ("AC2", "AC3", "AC4")),
        ("all", ("all",)),
        ("all (evidence)", ("all",)),
        ("(AC7, AC8)", ("AC7", "AC8")),
        ("R9, R8 (receiver)", ("R9", "R8")),
        ("(design D2)", ()),
        ("R11 (each item has its own ticket #3–#10)", ("R11",)),
        ("R1.3, NFR back-compat", ("R1.3", "NFR")),
        ("NFR (no duplicated atomic writer)", ("NFR",)),
        ("R1a.1–R1a.3, R6b.2", ("R1a.1", "R1a.2", "R1a.3", "R6b.2")),
        ("AC2.1–2.3", ("AC2.1", "AC2.2", "AC2.3")),
        ("AC1.1–AC1.3, AC4", ("AC1.1", "AC1.2", "AC1.3", "AC4")),
        ("AC R1.2, AC R3.1", ("R1.2", "R3.1")),
        ("1.1, 1.3.", ("1.1", "1.3")),
        ("R1.3, R1.4, R1.5, Security abuse cases 1–2", ("R1.3", "R1.4", "R1.5")),
        ("R2.6, abuse cases 1, 2", ("R2.6",)),
        ("R2, Security §1–§4", ("R2",)),
        ("REQ-1, req 2", ("REQ1", "REQ2")),
        ("D2; R3.1, R3.3", ("D2", "R3.1", "R3.3")),
        ("all ACs", ("all",)),
        ("`R9` in code, R1", ("R1",)),
        ("R2, R1, R2", ("R2", "R1")),
        ("R1–R5 (demonstration)", ("R1", "R2", "R3", "R4", "R5")),
        ("process conformance", ()),
    ],
)
def test_requirement_values(value: str, expected: tuple[str, ...]) -> None:
    result = parse(f"- [ ] 1. A\n  - _Requirements:_ {value}\n")
    task = only(result)
    assert task.requirements == expected
    assert task.requirements_line == (2 if expected else None)
    assert [f.code for f in result.findings if f.code.startswith("tasks.req")] == []


@pytest.mark.parametrize(
    ("value", "kept", "bad"),
    [
        ("R1a–R1c, R2", ("R2",), "R1a–R1c"),
        ("R1, v2", ("R1",), "v2"),
        ("R3–R1", (), "R3–R1"),
        ("R1–AC3", (), "R1–AC3"),
        ("7", (), "7"),
    ],
)
def test_malformed_requirement_ids_are_warnings(
    value: str, kept: tuple[str, ...], bad: str
) -> None:
    result = parse(f"- [ ] 1. A\n  - _Requirements:_ {value}\n")
    assert only(result).requirements == kept
    (finding,) = result.findings
    assert (finding.code, finding.level, finding.where and finding.where.line) == (
        "tasks.requirement-malformed",
        Level.WARNING,
        2,
    )
    assert f"`{bad}`" in finding.message


# --- the test command ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("test", "argv"),
    [
        ("`pytest -q tests/x.py::test_y` (red→green)", ["pytest", "-q", "tests/x.py::test_y"]),
        ("run `make check` then `other`", ["make", "check"]),
        (
            "`T2 — pytest tests/test_x.py::test_y` (red→green)",
            ["pytest", "tests/test_x.py::test_y"],
        ),
        ('`rg "\\.the-loop/templates"` shows none', ["rg", "\\.the-loop/templates"]),
        ("``grep `x` file``", ["grep", "`x`", "file"]),
        ("inspection only", None),
        ("`  `", None),
    ],
)
def test_test_command(test: str, argv: list[str] | None) -> None:
    task = only(parse(f"- [ ] 1. A\n  - _Test:_ {test}\n"))
    assert command_of(task) == argv


def test_test_command_with_unbalanced_quotes_is_none_and_a_warning() -> None:
    result = parse('- [ ] 1. A\n  - _Test:_ `pytest -k "oops`\n')
    assert command_of(only(result)) is None
    assert codes(result) == [("tasks.test-unparseable", 2)]


def test_no_test_is_none() -> None:
    assert command_of(only(parse("- [ ] 1. A\n"))) is None


# --- the task value built without __init__ --------------------------------------------


def test_parsed_tasks_equal_constructed_ones() -> None:
    """The reader fills Task instances directly (speed); they must be ordinary values."""
    task = only(parse("- [x] **T1 — A.** b *(R1)* — depends on T0.\n  - _Test:_ `x`\n"))
    rebuilt = dataclasses.replace(task)  # reads every field: fails if one is unset
    assert rebuilt == task
    assert hash(rebuilt) == hash(task)
    assert not hasattr(Task, "__post_init__")
    assert all(f.default_factory is dataclasses.MISSING for f in dataclasses.fields(Task))
    with pytest.raises(dataclasses.FrozenInstanceError):
        task.id = "2"  # type: ignore[misc]
