"""Helpers for every test: the repository's places, real git, the one CLI runner, spec builders.

Fixtures live in ``tests/conftest.py``; everything a test imports by name lives
here (``from helpers import …``), and ``helpers.project`` drives a real project
into implementation for the checkpoint suites.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest
from ruamel.yaml import YAML

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
SHARED = (REPO_ROOT.parent / "shared").resolve()  # CI may lay it as a link
CORPUS = SHARED / "corpus" / "the-loop-0.14.2"
CORPUS_HEAD = SHARED / "corpus" / "the-loop-head-a"

T = TypeVar("T")

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Loop Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.invalid",
    "GIT_COMMITTER_NAME": "Loop Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.invalid",
}


def write_tree(root: Path, files: Mapping[str, str]) -> Path:
    """Write ``{relative path: text}`` under ``root``; return ``root``."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


LOOP_STATE = ".the-loop/state"
LOOP_CACHE = ".the-loop/state/cache"


def without_loop_cache(tree: Mapping[str, T]) -> dict[str, T]:
    """A tree snapshot (``{relative path: content}``, folders ending in ``/``) minus loop's cache.

    Reads may leave parse-cache entries in ``.the-loop/state/cache/`` (and make
    the state folder, with its ``.gitignore``, for them); that is runtime state,
    not a change to the project.
    """
    # the state folder's own .gitignore marks it runtime-only, whoever made the folder
    marker = LOOP_STATE + "/.gitignore"
    kept = {k: v for k, v in tree.items() if not k.startswith(LOOP_CACHE) and k != marker}
    state = [k for k in kept if k.startswith(LOOP_STATE + "/")]
    if set(state) <= {LOOP_STATE + "/", LOOP_STATE + "/.gitignore"}:
        kept = {k: v for k, v in kept.items() if k not in state}
    return kept


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the real git in ``cwd``; tests never mock git."""
    return subprocess.run(["git", *args], cwd=cwd, check=check, text=True, capture_output=True)


@dataclass
class Result:
    """What a ``loop`` run produced."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def invoke(
    args: Sequence[str], env: Mapping[str, str] | None = None, input: str | None = None
) -> Result:
    """The one in-process CLI runner: ``loop args…`` through click's test runner."""
    from click.testing import CliRunner

    from the_loop.cli import cli

    res = CliRunner().invoke(
        cli, list(args), input=input, env=dict(env or {}), catch_exceptions=False, prog_name="loop"
    )
    return Result(res.exit_code, res.stdout, res.stderr)


def processes_naming(text: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def requires_corpus() -> pytest.MarkDecorator:
    """Skip, with a visible reason, when ``../shared/corpus`` is not beside the clone."""
    return pytest.mark.skipif(
        not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS} (../shared is absent)"
    )


# ---- spec files written the way people write them (acceptance tests) ----

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
