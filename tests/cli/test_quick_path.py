"""The quick path answers the plain read-only reports exactly as the click commands do.

``the_loop.cli.quick.run`` is what ``loop`` (the console script) and ``python -m
the_loop`` try first; whatever it does not answer goes to click. Each form it
answers is run both ways here, in the same project, and must print the same
bytes with the same exit code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from helpers import REPO_ROOT, Result, invoke

from the_loop.cli import quick

Build = Callable[[Mapping[str, str]], Path]

TASKS = """\
---
type: tasks
workItem: {item}
status: draft
---

# Tasks

- [x] 1. First
  - _Depends on:_ none
  - _Requirements:_ R1.1
- [-] 2. Second
  - _Depends on:_ 1
  - _Requirements:_ R1.1
  - _Test:_ `pytest -q`
- [ ] 3. Third
  - _Depends on:_ 2, 9
- [ ] 4. Fourth
  - _Depends on:_ 1
"""
REQUIREMENTS = """\
---
type: requirements
workItem: {item}
status: approved
---

# Requirements: x

### R1 — one

1. WHEN a THEN b SHALL c.

### R2 — two

1. WHEN d THEN e SHALL f.
"""
PROJECT = {
    ".the-loop/config.yaml": 'version: "0.1.0"\n',
    "docs/specs/issue-1/tasks.md": TASKS.format(item="issue-1"),
    "docs/specs/issue-1/requirements.md": REQUIREMENTS.format(item="issue-1"),
    "docs/specs/issue-2/tasks.md": TASKS.format(item="issue-2").replace(", 9", ""),
}

FORMS = [
    ["next", "1"],
    ["next", "2", "--json"],
    ["--json", "next", "2"],
    ["next", "2", "--all-ready", "--json", "--full"],
    ["next", "1", "--json"],  # exit 1: the graph has an error
    ["status", "2"],
    ["status", "1", "--json"],
    ["status", "--all"],
    ["status", "--all", "--json", "--full"],
    ["check", "1"],
    ["check", "2", "--strict"],
    ["check", "--all", "--json"],
    ["--no-cache", "check", "--all"],
    ["graph", "2"],
    ["graph", "2", "--json"],
]


@pytest.mark.parametrize("args", FORMS, ids=" ".join)
def test_the_quick_path_prints_what_click_prints(
    args: list[str],
    build_tree: Build,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = build_tree(PROJECT)
    monkeypatch.chdir(root)
    by_click: Result = invoke(args)

    code = quick.run(args)

    assert code is not None, "the quick path should answer this form"
    assert (capsys.readouterr().out, code) == (by_click.stdout, by_click.exit_code)


@pytest.mark.parametrize(
    "args",
    [
        ["-C", "elsewhere", "check", "--all"],
        ["--repo=elsewhere", "status", "--all", "--json"],
    ],
    ids=" ".join,
)
def test_the_project_folder_option(
    args: list[str],
    build_tree: Build,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    build_tree(PROJECT, tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path)
    by_click = invoke(args)

    code = quick.run(args)

    assert (capsys.readouterr().out, code) == (by_click.stdout, by_click.exit_code)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["next", "--help"],
        ["next"],  # no ID: click says so
        ["next", "1", "2"],
        ["next", "1", "--all"],  # an option next does not have
        ["status", "1", "--no-cache"],  # a global option after the command
        ["--debug", "status", "1"],
        ["-C"],
        ["graph", "1", "--format", "dot"],
        ["task", "done", "1", "2"],
        ["execute-tasks", "1", "--json"],
        ["status", "--", "1"],
    ],
    ids=lambda a: " ".join(a) or "(nothing)",
)
def test_other_forms_go_to_click(args: list[str]) -> None:
    assert quick.parse(args) is None


def test_errors_go_to_click(
    build_tree: Build, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(build_tree(PROJECT))
    assert quick.run(["next", "no-such-item"]) is None
    assert quick.run(["status", "1", "--all"]) is None  # a usage error
    assert capsys.readouterr().out == ""  # nothing printed: click will say it


def test_a_terminal_goes_to_click(build_tree: Build, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(build_tree(PROJECT))
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert quick.run(["status", "1"]) is None  # colours are click's


_COUNT_COLLECTIONS = """
import gc, sys
from the_loop.cli import quick
runs = []
gc.callbacks.append(lambda phase, info: runs.append(1) if phase == "start" else None)
code = quick.run(sys.argv[1:])
print(len(runs), file=sys.stderr)
"""


def test_the_collector_waits_while_a_report_is_made(build_tree: Build) -> None:
    """Loading the modules and reading the files leave no garbage worth a collection."""
    proc = subprocess.run(
        [sys.executable, "-c", _COUNT_COLLECTIONS, "--no-cache", "check", "1"],
        cwd=build_tree(PROJECT),
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.endswith("work item(s)\n")
    # Once the collector is on again, one young pass may follow (before: about thirty).
    assert int(proc.stderr.strip().splitlines()[-1]) <= 1
