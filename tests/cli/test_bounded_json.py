"""The JSON answers an agent reads stay small however large the plan: lists are capped.

``next`` and ``status`` cap every list that grows with the task graph at 20
items beside a count of them all, say so (``truncated``, ``more``), and print
everything with ``--full``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

from helpers import Result

Loop = Callable[..., Result]
Build = Callable[[Mapping[str, str]], Path]

HEAD = """\
---
type: tasks
workItem: issue-7
status: draft
---

# Tasks: a wide plan

"""


def plan(build_tree: Build, tasks: str) -> Path:
    return build_tree(
        {
            ".the-loop/config.yaml": 'version: "0.1.0"\n',
            "docs/specs/issue-7/tasks.md": HEAD + tasks,
        }
    )


def fan_out(n: int) -> str:
    """Task 1 open; 2..n all wait for it."""
    lines = ["- [ ] 1. Root\n  - _Depends on:_ none\n"]
    lines += [f"- [ ] {i}. Leaf {i}\n  - _Depends on:_ 1\n" for i in range(2, n + 1)]
    return "".join(lines)


def fan_in(n: int) -> str:
    """Tasks 1..n-1 done; task n waits for all of them (and is ready)."""
    lines = [f"- [x] {i}. Part {i}\n  - _Depends on:_ none\n" for i in range(1, n)]
    deps = ", ".join(str(i) for i in range(1, n))
    lines.append(f"- [ ] {n}. Join\n  - _Depends on:_ {deps}\n")
    return "".join(lines)


def independent(n: int) -> str:
    """n open tasks with no dependencies: every one is ready."""
    return "".join(f"- [ ] {i}. Task {i}\n  - _Depends on:_ none\n" for i in range(1, n + 1))


def test_next_caps_what_blocks_whom(loop: Loop, build_tree: Build) -> None:
    root = plan(build_tree, fan_out(300))

    data = json.loads(loop("next", "7", "--json", cwd=root).stdout)

    assert data["next"]["id"] == "1"
    assert len(data["blockedBy"]) == 20
    assert data["blockedBy"]["2"] == ["1"]
    assert data["blockedByCount"] == 299
    assert data["truncated"] is True
    assert data["more"] == "loop next issue-7 --json --full"

    full = json.loads(loop("next", "7", "--json", "--full", cwd=root).stdout)
    assert len(full["blockedBy"]) == full["blockedByCount"] == 299
    assert full["truncated"] is False and "more" not in full


def test_next_caps_the_dependencies_of_the_next_task(loop: Loop, build_tree: Build) -> None:
    root = plan(build_tree, fan_in(60))

    data = json.loads(loop("next", "7", "--json", cwd=root).stdout)

    assert data["next"]["id"] == "60"
    assert data["next"]["dependsOn"] == [str(i) for i in range(1, 21)]
    assert data["next"]["dependsOnCount"] == 59
    assert data["truncated"] is True
    full = json.loads(loop("next", "7", "--json", "--full", cwd=root).stdout)
    assert len(full["next"]["dependsOn"]) == 59


def test_next_all_ready_caps_the_ready_tasks(loop: Loop, build_tree: Build) -> None:
    root = plan(build_tree, independent(50))

    data = json.loads(loop("next", "7", "--all-ready", "--json", cwd=root).stdout)

    assert [t["id"] for t in data["ready"]] == [str(i) for i in range(1, 21)]
    assert data["readyCount"] == 50
    assert data["message"] == "50 ready task(s) (0/50 done)"
    assert data["more"] == "loop next issue-7 --all-ready --json --full"
    full = json.loads(loop("next", "7", "--all-ready", "--json", "--full", cwd=root).stdout)
    assert len(full["ready"]) == 50
    # Text is for people: it shows everything it was asked for.
    text = loop("next", "7", "--all-ready", cwd=root).stdout
    assert sum(line.startswith("task ") for line in text.splitlines()) == 50


def test_status_caps_the_ready_list(loop: Loop, build_tree: Build) -> None:
    root = plan(build_tree, independent(50))

    data = json.loads(loop("status", "7", "--json", cwd=root).stdout)

    assert data["tasks"]["ready"] == [str(i) for i in range(1, 21)]
    assert (data["tasks"]["readyCount"], data["tasks"]["total"]) == (50, 50)
    assert data["tasks"]["more"] == "loop status issue-7 --json --full"
    full = json.loads(loop("status", "7", "--json", "--full", cwd=root).stdout)
    assert len(full["tasks"]["ready"]) == 50 and "more" not in full["tasks"]


def test_next_json_stays_small_on_a_large_plan(loop: Loop, build_tree: Build) -> None:
    root = plan(build_tree, fan_out(5000))

    small = loop("next", "7", "--json", cwd=root).stdout
    full = loop("next", "7", "--json", "--full", cwd=root).stdout

    assert len(small.encode()) < 8 * 1024
    assert len(full.encode()) > 20 * len(small.encode())
