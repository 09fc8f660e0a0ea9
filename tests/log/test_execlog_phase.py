"""The phase mirror in ``execution-log.md``: front matter and the Phase transitions table.

``sync_phase`` changes only the ``phase:``/``status:`` values (comments, key
order and the body kept); ``record_transition`` fills or adds one row of the
table and is idempotent, since a recovered checkpoint may apply it twice.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from the_loop.io.templating import render
from the_loop.log.execution_log import record_transition, sync_phase
from the_loop.spec.front_matter import parse_front_matter

TEMPLATE = render("execution-log.md.j2", item="issue-5", title="the mirror", phase="design")
HEADER = "| Phase | Entered | Reviewed/approved by | Notes |"
SEPARATOR = "|-------|---------|----------------------|-------|"


def split_front(text: str) -> tuple[list[str], str]:
    """The front-matter lines (between the fences) and the body after the closing fence."""
    assert text.startswith("---\n")
    close = text.index("\n---\n", 4)
    return text[4:close].split("\n"), text[close + 5 :]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "execution-log.md"
    path.write_text(TEMPLATE)
    return path


# --- sync_phase ----------------------------------------------------------------------


def test_template_front_matter_is_what_the_tests_expect() -> None:
    front, body = split_front(TEMPLATE)
    assert [line.split(":")[0] for line in front] == ["type", "workItem", "phase", "status"]
    assert front[2].startswith("phase: design  # not-started | brainstorming |")
    assert body.startswith("\n# Execution Log: the mirror\n")


def test_sync_phase_changes_only_the_phase_value(log: Path) -> None:
    assert sync_phase(log, "implementation") is True
    text = log.read_text()
    old_front, old_body = split_front(TEMPLATE)
    new_front, new_body = split_front(text)
    assert new_body == old_body  # the body is byte-identical
    assert len(new_front) == len(old_front)
    changed = [i for i, (a, b) in enumerate(zip(old_front, new_front, strict=True)) if a != b]
    assert changed == [2]
    # the value changed; the comment is kept (its alignment may move)
    comment = old_front[2].split("#", 1)[1]
    assert new_front[2].startswith("phase: implementation ")
    assert new_front[2].endswith("#" + comment)
    fm = parse_front_matter(text, log)
    assert fm.get("phase") == "implementation"
    assert fm.get("status") == "in-progress"
    assert fm.get("workItem") == "issue-5"


def test_sync_phase_and_status(log: Path) -> None:
    assert sync_phase(log, "complete", status="complete") is True
    old_front, old_body = split_front(TEMPLATE)
    new_front, new_body = split_front(log.read_text())
    assert new_body == old_body
    assert new_front[:2] == old_front[:2]
    assert new_front[2].startswith("phase: complete ")
    assert new_front[3].startswith("status: complete ")
    assert new_front[3].endswith("# in-progress | complete")


def test_sync_phase_without_a_change_returns_false_and_does_not_write(log: Path) -> None:
    inode = os.stat(log).st_ino
    assert sync_phase(log, "design") is False
    assert sync_phase(log, "design", status="in-progress") is False
    assert log.read_text() == TEMPLATE
    assert os.stat(log).st_ino == inode  # not even rewritten with the same bytes


def test_sync_phase_twice_changes_once(log: Path) -> None:
    assert sync_phase(log, "implementation", status="in-progress") is True
    once = log.read_bytes()
    assert sync_phase(log, "implementation", status="in-progress") is False
    assert log.read_bytes() == once


def test_sync_phase_keeps_comments_and_key_order(tmp_path: Path) -> None:
    front = (
        "---\n"
        "# written by hand\n"
        "status: in-progress  # in-progress | complete\n"
        "type: execution-log\n"
        "phase: implementation  # the phase mirror\n"
        "workItem: issue-9\n"
        "extra: [a, b]  # unknown keys stay\n"
        "---\n"
    )
    body = "\n# Execution Log: x\n\n## Progress entries\n\n### 2026-07-24 — a\n\n- **Next:** n\n"
    path = tmp_path / "execution-log.md"
    path.write_text(front + body)
    assert sync_phase(path, "needs-review") is True
    new_front, new_body = split_front(path.read_text())
    assert new_body == body
    assert new_front[0] == "# written by hand"
    assert new_front[1] == "status: in-progress  # in-progress | complete"
    assert new_front[2] == "type: execution-log"
    assert new_front[3].startswith("phase: needs-review")
    assert new_front[3].endswith("# the phase mirror")
    assert new_front[4:] == ["workItem: issue-9", "extra: [a, b]  # unknown keys stay"]


def test_sync_phase_adds_a_missing_phase_key(tmp_path: Path) -> None:
    path = tmp_path / "execution-log.md"
    path.write_text("---\ntype: execution-log\n---\n\n# body\n")
    assert sync_phase(path, "design") is True
    front, body = split_front(path.read_text())
    assert front == ["type: execution-log", "phase: design"]
    assert body == "\n# body\n"


def test_sync_phase_with_a_transition(log: Path) -> None:
    assert sync_phase(log, "implementation", transition=("2026-07-24", "@owner", "")) is True
    text = log.read_text()
    assert f"{SEPARATOR}\n| implementation | 2026-07-24 | @owner |  |\n\n## Review cycles" in text
    # applied again (a recovered checkpoint): nothing changes
    inode = os.stat(log).st_ino
    assert sync_phase(log, "implementation", transition=("2026-07-24", "@owner", "")) is False
    assert log.read_text() == text
    assert os.stat(log).st_ino == inode


def test_sync_phase_records_a_transition_even_when_the_phase_is_current(log: Path) -> None:
    assert sync_phase(log, "design", transition=("2026-07-24", "", "work item created")) is True
    assert "| design | 2026-07-24 |  | work item created |" in log.read_text()
    assert split_front(log.read_text())[0] == split_front(TEMPLATE)[0]


# --- record_transition -------------------------------------------------------------------


def test_first_row_goes_under_the_template_header() -> None:
    text = record_transition(TEMPLATE, "design", "2026-07-24", "@owner", "approved on PR #3")
    assert text == TEMPLATE.replace(
        f"{HEADER}\n{SEPARATOR}\n",
        f"{HEADER}\n{SEPARATOR}\n| design | 2026-07-24 | @owner | approved on PR #3 |\n",
    )


def test_rows_are_added_in_order_after_the_last_filled_row() -> None:
    text = TEMPLATE
    for phase in ("requirements-definition", "design", "tasks-breakdown"):
        text = record_transition(text, phase, "2026-07-24", "", "")
    table = text[text.index(HEADER) : text.index("\n\n## Review cycles")]
    assert table.split("\n") == [
        HEADER,
        SEPARATOR,
        "| requirements-definition | 2026-07-24 |  |  |",
        "| design | 2026-07-24 |  |  |",
        "| tasks-breakdown | 2026-07-24 |  |  |",
    ]


PREFILLED = f"""\
# Execution Log: docs site

## Phase transitions

{HEADER}
{SEPARATOR}
| requirements-definition | 2026-07-23 | @owner (issue #70 body) | constraints from the issue |
| design | 2026-07-23 | @owner (PR #71 review) | decision-033 |
| implementation |  |  |  |
| needs-review |  |  |  |
| complete |  |  |  |

## Progress entries
"""


def test_an_empty_row_of_the_phase_is_filled_in_place() -> None:
    text = record_transition(PREFILLED, "implementation", "2026-07-24", "", "site built")
    assert text == PREFILLED.replace(
        "| implementation |  |  |  |", "| implementation | 2026-07-24 |  | site built |"
    )
    text = record_transition(text, "complete", "2026-07-25", "@owner", "merged")
    assert text.endswith(
        "| needs-review |  |  |  |\n| complete | 2026-07-25 | @owner | merged |\n\n"
        "## Progress entries\n"
    )


def test_a_filled_phase_row_gets_a_new_row_after_the_last_filled_one() -> None:
    # design entered again (a rework): a new row, before the empty placeholder rows
    text = record_transition(PREFILLED, "design", "2026-07-25", "@owner", "rework")
    lines = text.split("\n")
    start = lines.index(SEPARATOR) + 1
    assert lines[start : start + 6] == [
        "| requirements-definition | 2026-07-23 | @owner (issue #70 body) | "
        "constraints from the issue |",
        "| design | 2026-07-23 | @owner (PR #71 review) | decision-033 |",
        "| design | 2026-07-25 | @owner | rework |",
        "| implementation |  |  |  |",
        "| needs-review |  |  |  |",
        "| complete |  |  |  |",
    ]
    assert len(lines) == len(PREFILLED.split("\n")) + 1


@pytest.mark.parametrize(
    "row",
    [
        ("implementation", "2026-07-24", "", "site built"),  # fills an empty row
        ("design", "2026-07-25", "@owner", "rework"),  # adds a row
        ("design", "2026-07-23", "@owner (PR #71 review)", "decision-033"),  # already there
    ],
)
def test_record_transition_is_idempotent(row: tuple[str, str, str, str]) -> None:
    once = record_transition(PREFILLED, *row)
    assert record_transition(once, *row) == once


def test_a_missing_table_is_created_before_the_progress_entries() -> None:
    text = (
        "---\ntype: execution-log\n---\n\n# Execution Log: old\n\n"
        "## Progress entries\n\n### 2026-07-24 — a\n\n- **Next:** n\n"
    )
    new = record_transition(text, "design", "2026-07-24", "@owner", "")
    assert new == text.replace(
        "## Progress entries\n",
        "## Phase transitions\n\n"
        f"{HEADER}\n{SEPARATOR}\n| design | 2026-07-24 | @owner |  |\n\n"
        "## Progress entries\n",
    )
    assert record_transition(new, "design", "2026-07-24", "@owner", "") == new
    again = record_transition(new, "implementation", "2026-07-25", "", "")
    assert again.count("## Phase transitions") == 1
    assert "| design | 2026-07-24 | @owner |  |\n| implementation | 2026-07-25 |  |  |\n" in again


def test_a_missing_table_without_progress_entries_goes_at_the_end() -> None:
    text = "# Execution Log: bare\n"
    new = record_transition(text, "design", "2026-07-24", "", "")
    assert new == (
        "# Execution Log: bare\n\n## Phase transitions\n\n"
        f"{HEADER}\n{SEPARATOR}\n| design | 2026-07-24 |  |  |\n"
    )
    assert record_transition(new, "design", "2026-07-24", "", "") == new


@pytest.mark.parametrize(
    "section",
    [
        "## Phase transitions\n\nnone yet\n\n",
        f"## Phase transitions\n{HEADER}\n\n",
    ],
)
def test_a_transitions_heading_without_a_table(section: str) -> None:
    text = "# Execution Log: x\n\n" + section + "## Progress entries\n"
    once = record_transition(text, "design", "2026-07-24", "", "")
    assert "| design | 2026-07-24 |  |  |" in once
    assert once.count("## Phase transitions") == 1
    assert record_transition(once, "design", "2026-07-24", "", "") == once


def test_a_pipe_in_the_notes_stays_in_its_cell() -> None:
    text = record_transition(TEMPLATE, "design", "2026-07-24", "@a (PR #3 | LGTM)", "x | y")
    row = next(line for line in text.split("\n") if line.startswith("| design"))
    cells = row.replace("\\|", "¦").strip("|").split("|")
    assert len(cells) == 4
