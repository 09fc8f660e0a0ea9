"""Answers kept in the parse cache (``check``, ``next --json``, ``graph --json``) are reused
while the files they were made from are unchanged, and only then."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from helpers import Result

Loop = Callable[..., Result]
Build = Callable[[Mapping[str, str]], Path]

ITEM = "docs/specs/issue-4"
FILES = {
    ".the-loop/config.yaml": 'version: "0.1.0"\n',
    f"{ITEM}/requirements.md": (
        "---\ntype: requirements\nworkItem: issue-4\nstatus: draft\n---\n\n# Requirements: x\n\n"
        "### R1 — one\n\n1. WHEN a THEN b SHALL c.\n\n### R2 — two\n\n1. WHEN d THEN e SHALL f.\n"
    ),
    f"{ITEM}/tasks.md": (
        "---\ntype: tasks\nworkItem: issue-4\nstatus: draft\n---\n\n# Tasks\n\n"
        "- [ ] 1. One\n  - _Depends on:_ none\n  - _Requirements:_ R1.1\n"
        "- [ ] 2. Two\n  - _Depends on:_ 1\n  - _Requirements:_ R2.1\n"
    ),
    f"{ITEM}/execution-log.md": (
        "---\ntype: execution-log\nworkItem: issue-4\nphase: requirements-definition\n---\n\n"
        "# Execution Log\n\n## Progress entries\n"
    ),
}


def check(loop: Loop, root: Path, *extra: str) -> dict[str, object]:
    result = loop(*extra, "check", "4", "--json", cwd=root)
    data: dict[str, object] = json.loads(result.stdout)
    return data


def codes(data: dict[str, object]) -> list[str]:
    return [f["code"] for f in data["findings"]]  # type: ignore[attr-defined,index]


def check_entries(root: Path) -> list[Path]:
    return sorted((root / ".the-loop/state/cache").glob("check-*"))


def test_findings_from_the_cache_equal_fresh_ones(loop: Loop, build_tree: Build) -> None:
    root = build_tree(FILES)
    fresh = check(loop, root, "--no-cache")
    filled = check(loop, root)
    assert len(check_entries(root)) == 1
    warm = check(loop, root)

    assert fresh == filled == warm
    assert warm["evaluated"] == 5  # three files and two tasks


def test_an_edit_to_any_file_of_the_item_is_seen(loop: Loop, build_tree: Build) -> None:
    root = build_tree(FILES)
    assert "trace.uncovered" not in codes(check(loop, root))

    # tasks.md stops citing R2: R2 becomes uncovered (same size, same mtime).
    tasks = root / ITEM / "tasks.md"
    before = os.stat(tasks)
    tasks.write_text(FILES[f"{ITEM}/tasks.md"].replace("R2.1", "R1.1"))
    os.utime(tasks, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "trace.uncovered" in codes(check(loop, root))

    # The log's phase changes: a phase finding follows.
    log = root / ITEM / "execution-log.md"
    log.write_text(FILES[f"{ITEM}/execution-log.md"].replace("requirements-definition", "design"))
    assert any(code.startswith("phase.") for code in codes(check(loop, root)))

    # A new artifact appears.
    (root / ITEM / "design.md").write_text("---\ntype: design\nstatus: draft\n---\n\n# Design\n")
    assert check(loop, root)["evaluated"] == 6


def test_a_long_log_is_always_checked_afresh(loop: Loop, build_tree: Build) -> None:
    root = build_tree(FILES)
    log = root / ITEM / "execution-log.md"
    log.write_text(log.read_text() + "\nsome history\n" * 6000)  # > 64 KB: read in part

    first = check(loop, root)
    assert check_entries(root) == []
    assert check(loop, root) == first


def next_json(loop: Loop, root: Path, *extra: str) -> dict[str, object]:
    data: dict[str, object] = json.loads(loop(*extra, "next", "4", "--json", cwd=root).stdout)
    return data


def test_next_from_the_cache_follows_the_requirements(loop: Loop, build_tree: Build) -> None:
    root = build_tree(FILES)
    fresh = next_json(loop, root, "--no-cache")
    assert next_json(loop, root) == fresh
    assert next_json(loop, root) == fresh
    assert fresh["next"]["requirements"][0]["text"] == "WHEN a THEN b SHALL c."  # type: ignore[index]

    requirements = root / ITEM / "requirements.md"
    before = os.stat(requirements)
    requirements.write_text(FILES[f"{ITEM}/requirements.md"].replace("b SHALL c", "x SHALL y"))
    os.utime(requirements, ns=(before.st_atime_ns, before.st_mtime_ns))

    text = next_json(loop, root)["next"]["requirements"][0]["text"]  # type: ignore[index]
    assert text == "WHEN a THEN x SHALL y."


def test_graph_from_the_cache_follows_tasks_md(loop: Loop, build_tree: Build) -> None:
    root = build_tree(FILES)
    fresh = json.loads(loop("--no-cache", "graph", "4", "--json", cwd=root).stdout)
    assert json.loads(loop("graph", "4", "--json", cwd=root).stdout) == fresh
    assert json.loads(loop("graph", "4", "--json", cwd=root).stdout) == fresh
    assert fresh["ready"] == ["1"]

    tasks = root / ITEM / "tasks.md"
    tasks.write_text(FILES[f"{ITEM}/tasks.md"].replace("- [ ] 1.", "- [x] 1."))

    assert json.loads(loop("graph", "4", "--json", cwd=root).stdout)["ready"] == ["2"]
