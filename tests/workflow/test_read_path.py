"""What a read-only command loads: with the caches warm, none of the heavy machinery.

Start-up is most of what an agent's ``loop next`` costs, so these tests pin the
modules a warm read must not import (ruamel, jsonschema, Jinja, the task parser,
git, the checkpoint transaction), in a fresh interpreter each time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from helpers import REPO_ROOT

from the_loop.checkpoint import transaction
from the_loop.config import state_folder

Build = Callable[[Mapping[str, str]], Path]

PROJECT = {
    ".the-loop/config.yaml": 'version: "0.1.0"\ncontextManagement:\n  taskBoundary: compact\n',
    "docs/specs/issue-9/requirements.md": (
        "---\ntype: requirements\nworkItem: issue-9\nstatus: approved\n"
        'approvedBy: ["@ann"]\noverrides: {}\n---\n\n# Requirements: x\n\n'
        "### R1 — one\n\n1. WHEN a THEN b SHALL c.\n"
    ),
    "docs/specs/issue-9/tasks.md": (
        "---\ntype: tasks\nworkItem: issue-9\nstatus: draft  # a comment\n---\n\n# Tasks\n\n"
        "- [x] 1. One\n  - _Depends on:_ none\n  - _Requirements:_ R1.1\n"
        "- [ ] 2. Two\n  - _Depends on:_ 1\n  - _Requirements:_ R1.1\n  - _Test:_ `pytest -q`\n"
    ),
}

HEAVY = (
    "click",  # these reports take the quick path (the_loop.cli.quick)
    "ruamel",
    "jsonschema",
    "jinja2",
    "the_loop.tasks.reader",
    "the_loop.tasks.assembly",
    "the_loop.git",
    "the_loop.checkpoint.transaction",
    "tempfile",
)

_PROBE = """
import json, sys
from the_loop.cli import main
args, heavy = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["loop", *args]
try:
    main()
except SystemExit:
    pass
found = {m for m in sys.modules for h in heavy if m == h or m.startswith(h + ".")}
print(json.dumps(sorted(found)), file=sys.stderr)
"""


def heavy_imports(root: Path, *args: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """Run ``loop args…`` in a fresh interpreter in ``root``; which of ``heavy`` it imported."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(args)), json.dumps(heavy)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    loaded: list[str] = json.loads(proc.stderr.strip().splitlines()[-1])
    return loaded


# Cached answers (next, graph, check, status's task summary) need not even the graph's or
# the requirements' classes.
ANSWERS = ("the_loop.dag.analysis", "the_loop.spec.requirements", "the_loop.tasks.values")


@pytest.mark.parametrize(
    ("args", "also"),
    [
        (("next", "9", "--json"), ANSWERS),
        (("graph", "9", "--json"), ANSWERS),
        (("check", "9"), ANSWERS),
        (("check", "--all", "--json"), ANSWERS),
        (("status", "9"), ANSWERS),
        (("status", "9", "--json"), ANSWERS),
    ],
)
def test_a_warm_read_imports_none_of_the_heavy_machinery(
    build_tree: Build, args: tuple[str, ...], also: tuple[str, ...]
) -> None:
    root = build_tree(PROJECT)
    first = heavy_imports(root, *args, heavy=HEAVY + also)  # fills the caches
    assert "the_loop.tasks.reader" in first

    assert heavy_imports(root, *args, heavy=HEAVY + also) == []


def test_the_version_needs_nothing_but_the_package(build_tree: Build) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _PROBE,
            json.dumps(["--version"]),
            json.dumps(["click", "the_loop.cli.app"]),
        ],
        cwd=build_tree(PROJECT),
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.startswith("loop, version ")
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


def test_reports_know_where_the_journal_lives() -> None:
    """Reports test for the journal's file before importing the transaction module."""
    assert state_folder.JOURNAL == transaction.JOURNAL


# What only some files need: a flowchart's reader, ruamel for YAML not read before,
# subprocess for a test that runs (or git, for a tick the log records), the reset records
# of a project that has any.
RARE = ("the_loop.tasks.mermaid", "ruamel", "subprocess", "the_loop.checkpoint.resets")
# And what no read needs at run time: typing costs every cold start about 2 ms, so the
# modules on the read path import it only for the type checker (``TYPE_CHECKING = False``).
UNUSED = ("typing",)


@pytest.mark.parametrize(
    "args", [("next", "9", "--json"), ("check", "9"), ("status", "9"), ("graph", "9", "--json")]
)
def test_a_cold_read_loads_only_what_the_files_use(
    build_tree: Build, args: tuple[str, ...]
) -> None:
    root = build_tree(PROJECT)
    heavy_imports(root, *args)  # what ruamel read (config, front matter) is kept by content
    shutil.rmtree(root / ".the-loop" / "state")  # every answer is computed afresh

    assert heavy_imports(root, *args, heavy=RARE + UNUSED) == []
