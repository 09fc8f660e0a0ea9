"""Kiro and Spec Kit items as first-class inputs: format, artifacts, phase, `init`, `adopt`.

Every item here is written for this test in the shape each format uses: no front
matter, approvals that happen outside the files, progress that is the ticks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

from helpers import Result

Loop = Callable[..., Result]
Build = Callable[[Mapping[str, str]], Path]

KIRO_REQUIREMENTS = """\
# Requirements Document

### Requirement 1: Shelf

**User Story:** As a reader, I want a shelf, so that books stay put.

#### Acceptance Criteria

1. WHEN a book is added THEN the system SHALL keep it
2. IF the shelf is full THEN the system SHALL say so
"""
KIRO_TASKS = """\
# Implementation Plan

- [x] 1. Make the shelf module
  - _Requirements: 1.1_
- [x] 2. Guard the shelf
  - [x] 2.1 Count the books
    - _Requirements: 1.2_
  - [ ]* 2.2 Property tests for counting
- [x] 3. Checkpoint - make sure every test passes
"""
SPEC = """\
# Feature Specification: Shelf

### User Story 1 - Add a book (Priority: P1)

**Acceptance Scenarios**:

1. **Given** an empty shelf, **When** a book is added, **Then** it is on the shelf.

### Functional Requirements

- **FR-001**: System MUST keep every book added.
"""
SPEC_TASKS = """\
## Phase 1: Setup
- [x] T001 Make the layout in src/

## Phase 2: Foundational
- [ ] T002 Write the book type in src/book.py
- [ ] T003 [P] Document it in docs/book.md

## Phase 3: User Story 1 - Add a book (Priority: P1)
- [ ] T004 [P] [US1] Contract test in tests/test_add.py (FR-001)
- [ ] T005 [US1] Implement adding in src/shelf.py
"""


def kiro(build_tree: Build, tasks: str = KIRO_TASKS) -> Path:
    return build_tree(
        {
            ".kiro/specs/shelf/requirements.md": KIRO_REQUIREMENTS,
            ".kiro/specs/shelf/design.md": "# Design\n\nOne module.\n",
            ".kiro/specs/shelf/tasks.md": tasks,
        }
    )


def spec_kit(build_tree: Build) -> Path:
    return build_tree(
        {
            "specs/004-shelf/spec.md": SPEC,
            "specs/004-shelf/plan.md": "# Implementation Plan: Shelf\n",
            "specs/004-shelf/tasks.md": SPEC_TASKS,
        }
    )


def test_init_finds_kiro_specs_and_configures_them(loop: Loop, build_tree: Build) -> None:
    root = kiro(build_tree)
    assert loop("init", cwd=root).exit_code == 0
    assert "specDir: .kiro/specs" in (root / ".the-loop/config.yaml").read_text()


def test_a_kiro_item_with_every_required_box_ticked_is_past_implementation(
    loop: Loop, build_tree: Build
) -> None:
    root = kiro(build_tree)
    loop("init", cwd=root)
    result = loop("status", "shelf", "--json", cwd=root)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["format"] == "kiro"
    assert data["phase"]["implied"] == "needs-review"  # the optional 2.2 is not required
    assert {a["status"] for a in data["artifacts"].values() if "status" in a} == {"external"}
    check = loop("check", "shelf", "--json", cwd=root)
    assert json.loads(check.stdout)["counts"]["error"] == 0


def test_an_open_kiro_item_is_never_sent_back_to_write_requirements(
    loop: Loop, build_tree: Build
) -> None:
    root = kiro(build_tree, KIRO_TASKS.replace("[x]", "[ ]"))
    loop("init", cwd=root)
    data = json.loads(loop("status", "shelf", "--json", cwd=root).stdout)
    assert data["phase"]["implied"] == "implementation"
    ready = json.loads(loop("next", "shelf", "--all-ready", "--json", cwd=root).stdout)
    assert [t["id"] for t in ready["ready"]] == ["1"]


def test_spec_kit_spec_and_plan_are_requirements_and_design(loop: Loop, build_tree: Build) -> None:
    root = spec_kit(build_tree)
    assert loop("init", cwd=root).exit_code == 0
    assert "specDir: specs" in (root / ".the-loop/config.yaml").read_text()
    data = json.loads(loop("status", "4", "--json", cwd=root).stdout)
    assert data["format"] == "spec-kit"
    assert list(data["artifacts"])[:3] == ["spec.md", "plan.md", "tasks.md"]
    assert data["phase"]["implied"] == "implementation"
    check = json.loads(loop("check", "4", "--json", cwd=root).stdout)
    codes = {f["code"] for f in check["findings"]}
    assert "trace.undefined" not in codes and "trace.other-reference" not in codes  # US1, FR1
    ready = json.loads(loop("next", "4", "--all-ready", "--json", cwd=root).stdout)
    assert [t["id"] for t in ready["ready"]] == ["2"]  # phase 2 blocks the story


def test_adopt_records_the_outside_approvals_as_locks(loop: Loop, build_tree: Build) -> None:
    root = kiro(build_tree)
    loop("init", cwd=root)
    result = loop("adopt", "shelf", "--by", "@ann", cwd=root)
    assert result.exit_code == 0, result.output
    tasks = (root / ".kiro/specs/shelf/tasks.md").read_text()
    assert tasks.startswith("---\ntype: tasks\nworkItem: shelf\nstatus: approved\n")
    assert tasks.endswith(KIRO_TASKS)  # the author's text is kept byte for byte
    (root / ".kiro/specs/shelf/requirements.md").write_text(
        (root / ".kiro/specs/shelf/requirements.md").read_text() + "3. one more\n"
    )
    data = json.loads(loop("status", "shelf", "--json", cwd=root).stdout)
    assert data["artifacts"]["requirements.md"]["stale"] is True


def test_adopt_without_by_records_git_s_user_name(loop: Loop, build_tree: Build) -> None:
    import subprocess

    root = kiro(build_tree)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    loop("init", cwd=root)
    result = loop("adopt", "shelf", cwd=root)
    assert result.exit_code == 0, result.output
    tasks = (root / ".kiro/specs/shelf/tasks.md").read_text()
    assert "Loop Tester" in tasks.split("---")[1]  # the hermetic git identity's name


def test_next_never_says_all_zero_tasks_are_done(loop: Loop, build_tree: Build) -> None:
    root = kiro(build_tree, "# Implementation Plan\n\n### Tx — unread\n\n- [ ] Do it\n")
    loop("init", cwd=root)
    result = loop("next", "shelf", cwd=root)
    assert "all 0 tasks are done" not in result.output
    assert "lists no task loop can read" in result.output
    check = json.loads(loop("check", "shelf", "--json", cwd=root).stdout)
    assert "tasks.none-understood" in {f["code"] for f in check["findings"]}


STORY_SPEC = """\
# Feature Specification: Notes

### User Story 1 - Write a note (Priority: P1)

1. **Given** no notes, **When** a note is written, **Then** it is listed.

### User Story 2 - Search notes (Priority: P2)

1. **Given** notes, **When** a word is searched, **Then** the matching notes show.

### Functional Requirements

- **FR-001**: System MUST store notes.
- **FR-002**: System MUST find notes by a word.
"""
STORY_TASKS = """\
## Phase 1: Setup
- [ ] T001 Create the layout in src/

## Phase 3: User Story 1 - Write a note (Priority: P1)
- [ ] T002 [US1] Implement writing in src/notes.py
"""


def test_tasks_that_trace_by_story_owe_each_story_a_task_not_each_fr(
    loop: Loop, build_tree: Build
) -> None:
    # Spec Kit tags tasks [USn] and never says which task delivers FR-001: an
    # "FR-001 is not covered" per requirement would be false, a story with no task true.
    root = build_tree(
        {
            "specs/007-notes/spec.md": STORY_SPEC,
            "specs/007-notes/plan.md": "# Implementation Plan: Notes\n",
            "specs/007-notes/tasks.md": STORY_TASKS,
        }
    )
    loop("init", cwd=root)

    check = json.loads(loop("check", "7", "--json", cwd=root).stdout)

    found = {(f["code"], f["level"], f["line"]) for f in check["findings"] if "trace" in f["code"]}
    assert ("trace.uncovered", "warning", 7) in found  # User Story 2: no task
    assert ("trace.story-level", "info", 13) in found  # FR-001 on: judged per story
    uncovered = [f["message"] for f in check["findings"] if f["code"] == "trace.uncovered"]
    assert len(uncovered) == 1 and uncovered[0].startswith("US2 ")
