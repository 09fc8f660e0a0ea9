"""Acceptance: a 6-task DAG driven through `loop execute-tasks` and `loop task done`.

Run once per `contextManagement.taskBoundary` value: six ticks, one log entry
per checkpoint (each with Next: and Context:), one commit per checkpoint with
the Loop-* trailers, and the right reset directive at every boundary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import DESIGN, REQUIREMENTS, SIX_TASKS, git, tasks_md, write_config

from the_loop.log.execution_log import read_log
from the_loop.tasks import TaskState, read_tasks

ITEM = "issue-9"
EXPECTED_RESET = {"clear": "clear", "compact": "compact", "off": "none"}


def approved_item(loop, repo: Path, tasks: str) -> Path:
    """An item whose requirements, design and tasks are approved (not yet executing)."""
    item = repo / "docs/specs" / ITEM
    item.mkdir(parents=True)
    (item / "requirements.md").write_text(REQUIREMENTS.format(item=ITEM, title="retries"))
    (item / "design.md").write_text(DESIGN.format(item=ITEM, title="retries"))
    (item / "tasks.md").write_text(tasks)
    for artifact in ("requirements", "design", "tasks"):
        result = loop("approve", "9", artifact, "--by", "@lead", cwd=repo)
        assert result.exit_code == 0, result.output
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "spec for issue-9")
    return item


def trailers(repo: Path, rev: str) -> dict[str, str]:
    body = git(repo, "log", "-1", "--format=%B", rev).stdout
    return dict(re.findall(r"^(Loop-[A-Za-z]+): (.+)$", body, re.MULTILINE))


@pytest.mark.parametrize("boundary", ["clear", "compact", "off"])
def test_six_task_dag_under_each_task_boundary(loop, git_repo: Path, boundary: str) -> None:
    repo = git_repo
    write_config(repo, f"contextManagement:\n  taskBoundary: {boundary}\n")
    item = approved_item(loop, repo, tasks_md(ITEM, SIX_TASKS))
    base = git(repo, "rev-parse", "HEAD").stdout.strip()

    # Entering implementation is a phase boundary: checkpoint, then clear.
    first = loop("execute-tasks", "9", "--json", "--session", "s0", cwd=repo)
    assert first.exit_code == 0, first.output
    step = json.loads(first.stdout)
    assert step["step"] == "crossed"
    assert step["reset"]["reset"] == "clear"
    assert step["brief"] is None
    session = "s1"
    assert loop("reset", "confirm", "9", "--session", session, cwd=repo).exit_code == 0

    handed_out = []
    for count in range(1, 7):
        step = json.loads(
            loop("execute-tasks", "9", "--json", "--session", session, cwd=repo).stdout
        )
        assert step["step"] == "task"
        task_id = step["action"]["task"]
        handed_out.append(task_id)
        assert f"loop task done {ITEM} {task_id}" in step["brief"]
        done = loop(
            "task",
            "done",
            "9",
            task_id,
            "--did",
            f"implemented task {task_id}",
            "--tests",
            "pytest -q: passed",
            "--next",
            f"hand out the task after {task_id} with loop execute-tasks",
            "--session",
            session,
            "--json",
            cwd=repo,
        )
        assert done.exit_code == 0, done.output
        directive = json.loads(done.stdout)
        # The last task's checkpoint also enters needs-review: one reset for both
        # boundaries, the stronger one (phaseBoundary: clear).
        last = count == 6
        reset = "clear" if last else EXPECTED_RESET[boundary]
        reason = f"task {task_id} done (contextManagement.taskBoundary: {boundary})"
        if last:
            reason += (
                "; phase boundary implementation → needs-review "
                "(contextManagement.phaseBoundary: clear): one reset for both"
            )
        assert directive["reset"] == reset
        assert directive["reason"] == reason
        assert directive["checkpoint"]["commit"] == git(repo, "rev-parse", "HEAD").stdout.strip()
        assert trailers(repo, "HEAD") == {
            "Loop-Item": ITEM,
            "Loop-Task": task_id,
            "Loop-Phase": "needs-review" if last else "implementation",
            "Loop-Reset": reset,
            "Loop-Checkpoint": directive["checkpoint"]["id"],
        }
        if last:
            session = "s-review"  # a clear starts a fresh session
            confirm = loop("reset", "confirm", "9", "--session", session, cwd=repo)
            assert confirm.exit_code == 0, confirm.output
            continue
        if boundary == "clear":
            session = f"s-after-{task_id}"  # a clear starts a fresh session
        if boundary != "off":
            confirm = loop("reset", "confirm", "9", "--session", session, cwd=repo)
            assert confirm.exit_code == 0, confirm.output

    # Dependency order was respected: 1 first, 4 after 2 and 3, 5 and 6 last.
    assert handed_out[0] == "1"
    assert handed_out.index("4") > max(handed_out.index("2"), handed_out.index("3"))
    assert set(handed_out[-2:]) == {"5", "6"}

    # Six ticks, nothing else in tasks.md changed but the checkbox characters.
    tasks = read_tasks(item / "tasks.md").tasks
    assert [t.state for t in tasks] == [TaskState.DONE] * 6
    assert (item / "tasks.md").read_text().replace("[x]", "[ ]").split("---\n", 2)[2] == tasks_md(
        ITEM, SIX_TASKS
    ).split("---\n", 2)[2]

    # One entry per checkpoint (the crossing + six tasks), each with Next: and Context:.
    entries = read_log(item / "execution-log.md").entries
    assert len(entries) == 7
    for entry in entries:
        assert entry.next and entry.context
    assert entries[0].context.startswith("clear (about to): phase boundary")
    word = {"clear": "clear (about to):", "compact": "compact (about to):", "off": "none:"}
    for entry in entries[1:-1]:
        assert entry.context.startswith(f"{word[boundary]} task ")
    assert entries[-1].context.startswith("clear (about to): task ")
    assert entries[-1].summary.endswith("; entered needs-review")

    # One commit per checkpoint, every one carrying the trailers.
    shas = git(repo, "rev-list", f"{base}..HEAD").stdout.split()
    assert len(shas) == 7
    assert all("Loop-Checkpoint" in trailers(repo, sha) for sha in shas)
    assert git(repo, "status", "--porcelain").stdout == ""

    # Every task done: the last checkpoint moved the item to needs-review already, so
    # the next call only hands out the review brief, with no second reset.
    final = json.loads(loop("execute-tasks", "9", "--json", cwd=repo).stdout)
    assert final["step"] == "complete"
    assert final["reset"] is None
    assert "phase: needs-review" in (item / "execution-log.md").read_text()
    assert loop("doctor", cwd=repo).exit_code == 0  # every reset was confirmed


def test_execute_tasks_refuses_an_unlocked_task_list(loop, git_repo: Path) -> None:
    repo = git_repo
    write_config(repo)
    item = repo / "docs/specs" / ITEM
    item.mkdir(parents=True)
    (item / "requirements.md").write_text(REQUIREMENTS.format(item=ITEM, title="x"))
    (item / "design.md").write_text(DESIGN.format(item=ITEM, title="x"))
    (item / "tasks.md").write_text(tasks_md(ITEM, SIX_TASKS))
    for artifact in ("requirements", "design"):
        assert loop("approve", "9", artifact, "--by", "@lead", cwd=repo).exit_code == 0
    result = loop("execute-tasks", "9", cwd=repo)
    assert result.exit_code == 1
    assert "tasks.md is draft: tasks are executed only against a locked task list" in result.stderr
    assert "loop approve issue-9 tasks --by @you" in result.stderr
