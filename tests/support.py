"""Builders shared by acceptance tests: spec files written the way people write them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ruamel.yaml import YAML

REQUIREMENTS = """\
---
type: requirements
phase: requirements-definition
workItem: {item}
status: draft
approvedBy: []
overrides: {{}}
---

# Requirements: {title}

## Requirements

### R1 — bounded retries

1. WHEN a dispatch fails THEN the system SHALL retry it up to the budget.
2. WHEN the budget is exhausted THEN the system SHALL log a terminal failure.

### R2 — configurable budget

1. The system SHALL read the budget from `polling.maxRetries`.
"""

DESIGN = """\
---
type: design
phase: design
workItem: {item}
status: draft
approvedBy: []
overrides: {{}}
---

# Design: {title}

## Overview

A retry ledger in the poller, bounded by `polling.maxRetries`.
"""


def tasks_md(item: str, tasks: Sequence[tuple[int, str, Sequence[int], str]]) -> str:
    """A tasks.md in the template form: ``(id, title, depends on, requirement)``."""
    lines = [
        "---",
        "type: tasks",
        "phase: tasks-breakdown",
        f"workItem: {item}",
        "status: draft",
        "approvedBy: []",
        "overrides: {}",
        "---",
        "",
        "# Tasks: retries",
        "",
        "## Task list",
        "",
    ]
    for task_id, title, deps, req in tasks:
        lines.append(f"- [ ] {task_id}. {title}")
        lines.append(f"  - _Depends on:_ {', '.join(map(str, deps)) or 'none'}")
        lines.append(f"  - _Requirements:_ {req}")
        lines.append("  - _Test:_ `true`")
    return "\n".join(lines) + "\n"


# A 6-task DAG with two waves of parallel work: 1 → {2, 3} → 4 → {5, 6}.
SIX_TASKS = [
    (1, "Config key", [], "R2.1"),
    (2, "Retry ledger", [1], "R1.1"),
    (3, "Give-up log line", [1], "R1.2"),
    (4, "Wire ledger into poller", [2, 3], "R1"),
    (5, "Integration test", [4], "R1"),
    (6, "Docs", [4], "R2"),
]


def front_matter(path: Path) -> dict[str, object]:
    """The YAML front matter of a spec file, as plain data."""
    text = path.read_text()
    block = text.split("---\n", 2)[1]
    data = YAML(typ="safe").load(block)
    return dict(data or {})


def write_config(repo: Path, extra: str = "") -> None:
    """A minimal valid config, plus ``extra`` YAML lines."""
    folder = repo / ".the-loop"
    folder.mkdir(exist_ok=True)
    (folder / "config.yaml").write_text('version: "0.1.0"\n' + extra)
