"""What a command loads that a user pays for: the reports never start GitPython.

An agent asks ``loop next``, ``status`` and ``graph`` on every step; on an item
with no checkpoint yet they have nothing to ask git, so GitPython (its top
module is ``git``) must not be imported by them. ``task done`` commits through
the git layer and renders its log entry and commit message from templates, so
it loads GitPython and Jinja. Each command runs in a fresh interpreter, in a real
git repository; the test reads ``sys.modules`` afterwards (what was imported, not
how long it took).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import GIT_IDENTITY, REPO_ROOT, git, write_tree
from helpers.project import ITEM, NEXT, project_copy

PROJECT = {
    ".the-loop/config.yaml": 'version: "0.1.0"\n',
    "docs/specs/issue-9/requirements.md": (
        "---\ntype: requirements\nworkItem: issue-9\nstatus: approved\n"
        'approvedBy: ["@ann"]\noverrides: {}\n---\n\n# Requirements: x\n\n'
        "### R1 — one\n\n1. WHEN a THEN b SHALL c.\n"
    ),
    "docs/specs/issue-9/tasks.md": (
        "---\ntype: tasks\nworkItem: issue-9\nstatus: draft\n---\n\n# Tasks\n\n"
        "- [ ] 1. One\n  - _Depends on:_ none\n  - _Requirements:_ R1.1\n"
        "- [ ] 2. Two\n  - _Depends on:_ 1\n  - _Requirements:_ R1.1\n  - _Test:_ `pytest -q`\n"
    ),
}

_PROBE = """
import json, sys
from the_loop.__main__ import main
sys.argv = ["loop", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def loaded(root: Path, *args: str) -> set[str]:
    """Run ``loop args…`` in a fresh interpreter in ``root``; the top-level modules it imported."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(args))],
        cwd=root,
        env={**os.environ, **GIT_IDENTITY, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    found = json.loads(proc.stderr.strip().splitlines()[-1])
    assert found["code"] in (0, None), proc.stderr
    return {name.split(".")[0] for name in found["modules"]}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding one item with tasks and no checkpoint yet."""
    write_tree(tmp_path, PROJECT)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.name=a", "-c", "user.email=a@b.invalid", "commit", "-qm", "specs")
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ("next", "9"),
        ("next", "9", "--json"),
        ("status", "9"),
        ("status", "9", "--json"),
        ("graph", "9"),
        ("graph", "9", "--json"),
    ],
    ids=" ".join,
)
@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_reports_on_an_item_without_checkpoints_do_not_load_gitpython(
    repo: Path, args: tuple[str, ...], cache: str
) -> None:
    if cache == "warm":
        loaded(repo, *args)  # fills the parse cache
    modules = loaded(repo, *args) if cache == "warm" else loaded(repo, "--no-cache", *args)
    assert "the_loop" in modules  # the probe did see loop's imports
    assert "git" not in modules


@pytest.mark.parametrize("args", [("status", "9"), ("check", "9")], ids=" ".join)
def test_a_ticked_task_whose_log_names_no_checkpoint_loads_no_gitpython(
    repo: Path, args: tuple[str, ...]
) -> None:
    # Ticked by hand, logged by hand: no entry names a checkpoint commit, so nothing
    # is looked up in git, the cache key included.
    tasks = repo / "docs/specs/issue-9/tasks.md"
    tasks.write_text(tasks.read_text().replace("- [ ] 1. One", "- [x] 1. One"))
    (repo / "docs/specs/issue-9/execution-log.md").write_text(
        "---\ntype: execution-log\nworkItem: issue-9\nphase: implementation\n---\n\n"
        "# Execution Log: x\n\n## Progress entries\n\n### 2026-11-30T12:00Z — task 1 done\n\n"
        "- **Next:** implement task 2: Two\n"
    )
    loaded(repo, *args)  # fills the caches
    modules = loaded(repo, *args)
    assert "the_loop" in modules
    assert "git" not in modules


def test_the_version_needs_nothing_but_the_package(repo: Path) -> None:
    modules = loaded(repo, "--version")
    assert "click" not in modules


_PENDING = pytest.mark.xfail(
    strict=True,
    reason="true once the change named in `arrives_with` is merged: then drop this marker",
)


@pytest.mark.parametrize(
    ("module", "arrives_with"),
    [
        ("git", "the git layer's port to GitPython (the_loop/git/)"),
        ("jinja2", "the log entry and commit message rendered by Jinja (io/templating.py)"),
    ],
)
def test_task_done_loads_what_a_checkpoint_uses(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, module: str, arrives_with: str
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "p")
    (root / "src.txt").write_text("the work of task 1\n")
    modules = loaded(root, "task", "done", ITEM, "1", "--did", "the key", "--next", NEXT)
    assert module in modules, arrives_with


def test_reports_know_where_the_journal_lives() -> None:
    """Reports test for the journal's file before importing the transaction module."""
    from the_loop.checkpoint import transaction
    from the_loop.config import state_folder

    assert state_folder.JOURNAL == transaction.JOURNAL
