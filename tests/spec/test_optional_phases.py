"""Optional phases from `workflow.phases`: testing-plan.md tracked, locked and checked.

Runs the real CLI on a temp project: with `test-planning` listed, testing-plan.md is
the next artifact after the design, `loop work-on` writes it, `loop approve` locks
it, tasks.md depends on it, and an edit to it makes tasks.md stale. Items planned
before the phase was listed (tasks.md already written) are not held back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from helpers import DESIGN, REQUIREMENTS, SIX_TASKS, Result, tasks_md, write_config, write_tree

Loop = Callable[..., Result]
PHASES = (
    "workflow:\n  phases: [not-started, phase-selection, requirements-definition, design, "
    "test-planning, tasks-breakdown, implementation, verification, needs-review, complete, "
    "cleanup]\n"
)
ITEM = "docs/specs/issue-5"


def _project(tmp_path: Path, *, with_tasks: bool = False) -> Path:
    files = {
        f"{ITEM}/requirements.md": REQUIREMENTS.format(item="issue-5", title="retries"),
        f"{ITEM}/design.md": DESIGN.format(item="issue-5", title="retries"),
    }
    if with_tasks:
        files[f"{ITEM}/tasks.md"] = tasks_md("issue-5", SIX_TASKS)
    write_tree(tmp_path, files)
    write_config(tmp_path, PHASES)
    return tmp_path


def _status(loop: Loop, root: Path) -> dict[str, object]:
    result = loop("-C", str(root), "status", "issue-5", "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def _fill_in(plan: Path) -> None:
    """Write the plan: every `<…>` slot of the template replaced by text."""
    plan.write_text(re.sub(r"(?m)^<[^>]*>$", "Unit tests prove R1.1 and R2.1.", plan.read_text()))


def _approve(loop: Loop, root: Path, *names: str) -> None:
    for name in names:
        result = loop("-C", str(root), "approve", "issue-5", name, "--by", "@alice")
        assert result.exit_code == 0, result.output


def test_the_testing_plan_comes_after_the_design_and_before_the_tasks(
    tmp_path: Path, loop: Loop
) -> None:
    root = _project(tmp_path)
    _approve(loop, root, "requirements", "design")
    status = _status(loop, root)
    assert status["phase"]["implied"] == "test-planning"  # type: ignore[index]
    assert list(status["artifacts"]) == [  # type: ignore[call-overload]
        "requirements.md",
        "design.md",
        "testing-plan.md",
        "tasks.md",
        "execution-log.md",
    ]
    assert status["next"]["text"] == (  # type: ignore[index]
        "write testing-plan.md from the approved requirements and design"
    )
    result = loop("-C", str(root), "work-on", "issue-5", "--json")
    assert result.exit_code == 0, result.output
    plan = root / ITEM / "testing-plan.md"
    assert plan.read_text().startswith("---\ntype: testing-plan\nphase: test-planning\n")
    refused = loop("-C", str(root), "approve", "issue-5", "testing-plan", "--by", "@alice")
    assert refused.exit_code == 1  # the template's slots are still there
    _fill_in(plan)
    _approve(loop, root, "testing-plan")
    assert _status(loop, root)["phase"]["implied"] == "tasks-breakdown"  # type: ignore[index]


def test_an_edited_testing_plan_makes_the_tasks_stale(tmp_path: Path, loop: Loop) -> None:
    root = _project(tmp_path)
    _approve(loop, root, "requirements", "design")
    assert loop("-C", str(root), "work-on", "issue-5").exit_code == 0
    _fill_in(root / ITEM / "testing-plan.md")
    _approve(loop, root, "testing-plan")
    write_tree(root, {f"{ITEM}/tasks.md": tasks_md("issue-5", SIX_TASKS)})
    _approve(loop, root, "tasks")
    assert _status(loop, root)["phase"]["implied"] == "implementation"  # type: ignore[index]
    plan = root / ITEM / "testing-plan.md"
    plan.write_text(plan.read_text() + "\nOne more scenario.\n")
    check = json.loads(loop("-C", str(root), "--json", "check", "issue-5").stdout)
    stale = {(f["code"], Path(f["path"]).name) for f in check["findings"] if f["level"] == "error"}
    assert ("lock.stale", "testing-plan.md") in stale
    assert ("lock.stale", "tasks.md") in stale


def test_an_item_planned_before_the_phase_was_listed_is_not_held_back(
    tmp_path: Path, loop: Loop
) -> None:
    root = _project(tmp_path, with_tasks=True)
    _approve(loop, root, "requirements", "design", "tasks")
    status = _status(loop, root)
    assert status["phase"]["implied"] == "implementation"  # type: ignore[index]
    assert "testing-plan.md" not in status["artifacts"]  # type: ignore[operator]


def test_phases_no_artifact_shows_are_the_logs_to_decide(tmp_path: Path, loop: Loop) -> None:
    root = _project(tmp_path, with_tasks=True)
    tasks = root / ITEM / "tasks.md"
    tasks.write_text(tasks.read_text().replace("- [ ]", "- [x]"))
    _approve(loop, root, "requirements", "design", "tasks")
    write_tree(root, {f"{ITEM}/execution-log.md": "---\nphase: verification\n---\n"})
    phase = _status(loop, root)["phase"]
    assert (phase["implied"], phase["relation"]) == ("verification", "same")  # type: ignore[index]
