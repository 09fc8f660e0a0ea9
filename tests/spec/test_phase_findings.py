"""The phase mirror against the artifacts: ``loop check`` reports every disagreement.

The artifacts imply a phase; ``execution-log.md`` records one. A mirror one
step (or more) behind is a boundary waiting to be crossed (info); a mirror
ahead of the artifacts, or none at all, is a warning at the log's ``phase:``
line with the command that fixes it. Agreement says nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from helpers import Result

Loop = Callable[..., Result]
Build = Callable[[Mapping[str, str]], Path]

ITEM = "docs/specs/issue-4"


def approved(kind: str) -> str:
    return f"---\ntype: {kind}\nworkItem: issue-4\nstatus: approved\n---\n\n# {kind}\n\n"


REQUIREMENTS = approved("requirements") + "### R1 — retries\n\n1. The system SHALL retry.\n"


def tasks(done: int) -> str:
    """Three approved tasks, the first ``done`` of them ticked."""
    lines = [
        f"- [{'x' if n <= done else ' '}] {n}. step {n}\n  - _Requirements:_ R1\n"
        for n in (1, 2, 3)
    ]
    return approved("tasks") + "".join(lines)


def log(phase: str | None) -> str:
    """A log whose front matter records ``phase`` (line 4), or no phase at all."""
    recorded = f"phase: {phase}\n" if phase else ""
    return f"---\ntype: execution-log\nworkItem: issue-4\n{recorded}---\n\n# Log\n"


def phase_findings(
    loop: Loop, build_tree: Build, *, done: int, phase: str | None
) -> list[dict[str, Any]]:
    files = {
        ".the-loop/config.yaml": 'version: "0.1.0"\n',
        f"{ITEM}/requirements.md": REQUIREMENTS,
        f"{ITEM}/design.md": approved("design"),
        f"{ITEM}/tasks.md": tasks(done),
    }
    if phase != "no log":
        files[f"{ITEM}/execution-log.md"] = log(phase)
    root = build_tree(files)
    result = loop("check", "4", "--json", cwd=root)
    assert result.exit_code == 0, result.output  # phase findings never fail a check
    findings = json.loads(result.stdout)["findings"]
    return [f for f in findings if f["code"].startswith("phase.")]


@pytest.mark.parametrize(("done", "phase"), [(0, "implementation"), (3, "needs-review")])
def test_a_mirror_that_agrees_says_nothing(
    loop: Loop, build_tree: Build, done: int, phase: str
) -> None:
    assert phase_findings(loop, build_tree, done=done, phase=phase) == []


def test_a_mirror_ahead_of_the_artifacts_is_a_warning_at_its_line(
    loop: Loop, build_tree: Build
) -> None:
    (found,) = phase_findings(loop, build_tree, done=1, phase="needs-review")

    assert (found["level"], found["code"]) == ("warning", "phase.mismatch")
    assert (found["path"], found["line"]) == (f"{ITEM}/execution-log.md", 4)
    assert found["message"] == (
        "the log says phase needs-review, but the artifacts imply implementation "
        "(1 of 3 tasks done)"
    )
    assert "`loop work-on issue-4 --sync`" in found["hint"]


@pytest.mark.parametrize(
    ("done", "phase", "implied"),
    [(0, "tasks-breakdown", "implementation"), (0, "design", "implementation"),
     (3, "implementation", "needs-review")],
)  # fmt: skip
def test_a_mirror_behind_is_a_pending_boundary(
    loop: Loop, build_tree: Build, done: int, phase: str, implied: str
) -> None:
    (found,) = phase_findings(loop, build_tree, done=done, phase=phase)

    assert (found["level"], found["code"]) == ("info", "phase.pending")
    assert found["message"].startswith(
        f"phase boundary pending: the log says {phase}, the artifacts imply {implied}"
    )
    assert "`loop work-on issue-4`" in found["hint"]


def test_a_log_without_a_phase_is_a_warning(loop: Loop, build_tree: Build) -> None:
    (found,) = phase_findings(loop, build_tree, done=0, phase=None)

    assert (found["level"], found["code"]) == ("warning", "phase.unrecorded")
    assert found["path"] == f"{ITEM}/execution-log.md"
    assert "records implementation" in found["hint"]


def test_no_log_at_all_is_noted(loop: Loop, build_tree: Build) -> None:
    (found,) = phase_findings(loop, build_tree, done=0, phase="no log")

    assert (found["level"], found["code"], found["path"]) == ("info", "phase.no-log", ITEM)
