"""Acceptance: one work item from `loop new` to all tasks done, through every phase.

Covers approvals, refusals when work runs ahead of a lock, a stale upstream
edit caught, the phase mirror at each step, and a checkpoint with a `clear`
directive at the boundary into implementation.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import DESIGN, REQUIREMENTS, front_matter, git, tasks_md

ITEM = "issue-5"


def _phase(repo: Path) -> object:
    return front_matter(repo / "docs/specs" / ITEM / "execution-log.md")["phase"]


def _status(loop, repo: Path) -> dict:
    result = loop("status", ITEM, "--json", cwd=repo)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _commits(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").stdout.splitlines()


def test_walk_from_new_to_all_tasks_done(loop, git_repo: Path, monkeypatch) -> None:
    monkeypatch.setenv("LOOP_NOW", "2026-11-30T12:00Z")
    repo = git_repo
    assert loop("init", "--defaults", cwd=repo).exit_code == 0

    # A draft item, then its ticket id.
    created = loop("new", "Retry budget for the poller", cwd=repo)
    assert created.exit_code == 0, created.output
    draft = "draft-retry-budget-for-the-poller"
    assert (repo / "docs/specs" / draft / "requirements.md").is_file()
    promoted = loop("promote", draft, "--id", "5", cwd=repo)
    assert promoted.exit_code == 0, promoted.output
    item_dir = repo / "docs/specs" / ITEM
    assert front_matter(item_dir / "requirements.md")["workItem"] == ITEM
    assert front_matter(item_dir / "execution-log.md")["workItem"] == ITEM
    assert _phase(repo) == "requirements-definition"

    # Requirements are drafted; nothing downstream may run ahead of the lock.
    (item_dir / "requirements.md").write_text(REQUIREMENTS.format(item=ITEM, title="retries"))
    ahead = loop("approve", "5", "design", "--by", "@ann", cwd=repo)
    assert ahead.exit_code == 1
    assert "design.md does not exist yet" in ahead.stderr
    ahead = loop("approve", "5", "design", cwd=repo)  # --by from git's user.name: refused alike
    assert ahead.exit_code == 1
    assert "design.md does not exist yet" in ahead.stderr
    refused = loop("execute-tasks", "5", cwd=repo)
    assert refused.exit_code == 1
    assert "tasks.md is missing" in refused.stderr
    work = loop("work-on", "5", cwd=repo)
    assert work.exit_code == 0
    assert "finish requirements.md (draft), then ask for review" in work.stdout
    assert not (item_dir / "design.md").exists()

    # Approve requirements: work-on writes design.md and crosses into design.
    assert loop("approve", "5", "requirements", "--by", "@ann", cwd=repo).exit_code == 0
    work = loop("work-on", "5", cwd=repo)
    assert work.exit_code == 0, work.output
    assert "wrote docs/specs/issue-5/design.md from its template" in work.stdout
    assert "reset: clear" in work.stdout
    assert _phase(repo) == "design"
    assert front_matter(item_dir / "design.md")["status"] == "draft"
    assert _commits(repo)[0] == "chore(issue-5): checkpoint phase design"
    assert loop("reset", "confirm", "5", "--session", "s-design", cwd=repo).exit_code == 0

    # Design approved: tasks.md is rendered, the phase moves to tasks-breakdown.
    (item_dir / "design.md").write_text(DESIGN.format(item=ITEM, title="retries"))
    refused = loop("approve", "5", "tasks", "--by", "@ann", cwd=repo)
    assert refused.exit_code == 1
    assert "tasks.md does not exist yet" in refused.stderr
    assert loop("approve", "5", "design", "--by", "@bo", cwd=repo).exit_code == 0
    assert loop("work-on", "5", cwd=repo).exit_code == 0
    assert _phase(repo) == "tasks-breakdown"
    assert loop("reset", "confirm", "5", "--session", "s-tasks", cwd=repo).exit_code == 0

    # A stale upstream edit: requirements change after design was approved.
    req = item_dir / "requirements.md"
    req.write_text(req.read_text().replace("up to the budget", "up to the configured budget"))
    status = _status(loop, repo)
    assert status["artifacts"]["requirements.md"]["stale"] is True
    assert status["artifacts"]["design.md"]["stale"] is True
    assert status["next"]["kind"] == "reapprove"
    (item_dir / "tasks.md").write_text(
        tasks_md(
            ITEM,
            [
                (1, "Config key", [], "R2.1"),
                (2, "Retry ledger", [1], "R1"),
                (3, "Give-up log line", [2], "R1.2"),
            ],
        )
    )
    refused = loop("approve", "5", "tasks", "--by", "@cy", cwd=repo)
    assert refused.exit_code == 1
    assert "cannot approve tasks.md while requirements.md is stale" in refused.stderr
    check = loop("check", "5", cwd=repo)
    assert check.exit_code == 1
    assert "requirements.md is approved but stale" in check.stdout
    # Re-approving requirements is not enough: design was approved against the old text.
    assert loop("approve", "5", "requirements", "--by", "@ann", cwd=repo).exit_code == 0
    status = _status(loop, repo)
    assert status["artifacts"]["requirements.md"]["stale"] is False
    assert status["artifacts"]["design.md"]["staleBecause"] == [
        "requirements.md changed since design.md was approved"
    ]
    assert loop("approve", "5", "design", "--by", "@bo", cwd=repo).exit_code == 0
    assert loop("approve", "5", "tasks", "--by", "@cy", cwd=repo).exit_code == 0

    # Into implementation: a checkpoint and a clear directive.
    entries_before = (item_dir / "execution-log.md").read_text().count("\n### ")
    work = loop("work-on", "5", "--json", cwd=repo)
    assert work.exit_code == 0, work.output
    data = json.loads(work.stdout)
    assert data["reset"]["reset"] == "clear"
    assert data["reset"]["checkpoint"]["commit"] == git(repo, "rev-parse", "HEAD").stdout.strip()
    assert data["brief"] is None  # the brief waits for the fresh session
    assert _phase(repo) == "implementation"
    log = (item_dir / "execution-log.md").read_text()
    assert log.count("\n### ") == entries_before + 1
    assert "- **Context:** clear (about to): phase boundary tasks-breakdown → implementation" in log
    assert "| implementation | 2026-11-30 | @cy (2026-11-30) |  |" in log
    assert loop("reset", "confirm", "5", "--session", "s-impl", cwd=repo).exit_code == 0

    # Walk the DAG; the mirror stays on implementation until the last task's checkpoint.
    for task_id in ("1", "2", "3"):
        step = loop("execute-tasks", "5", cwd=repo)
        assert step.exit_code == 0, step.output
        assert step.stdout.startswith(f"# issue-5 task {task_id}:")
        done = loop(
            "task",
            "done",
            "5",
            task_id,
            "--did",
            f"task {task_id} built",
            "--next",
            f"hand out the task after {task_id}: `loop execute-tasks 5`",
            cwd=repo,
        )
        assert done.exit_code == 0, done.output
        # the last task's checkpoint also enters needs-review: one (clear) reset
        assert ("reset: clear" if task_id == "3" else "reset: compact") in done.stdout
        assert _phase(repo) == ("needs-review" if task_id == "3" else "implementation")
        assert loop("reset", "confirm", "5", "--session", "s-impl", cwd=repo).exit_code == 0

    # All done: the last checkpoint crossed into needs-review; the next call briefs it.
    final = loop("execute-tasks", "5", cwd=repo)
    assert final.exit_code == 0, final.output
    assert _phase(repo) == "needs-review"
    status = _status(loop, repo)
    assert status["phase"] == {
        "implied": "needs-review",
        "recorded": "needs-review",
        "reason": "all 3 tasks done",
        "relation": "same",
    }
    assert status["tasks"]["done"] == 3
    check = loop("check", "5", cwd=repo)
    assert check.exit_code == 0, check.output
    transitions = [
        line.split("|")[1].strip()
        for line in (item_dir / "execution-log.md").read_text().splitlines()
        if line.startswith("| ") and "20" in line
    ]
    assert transitions == [
        "requirements-definition",
        "design",
        "tasks-breakdown",
        "implementation",
        "needs-review",
    ]


def test_work_on_dry_run_changes_nothing(loop, git_repo: Path) -> None:
    repo = git_repo
    assert loop("init", "--defaults", cwd=repo).exit_code == 0
    assert loop("new", "Dry run", "--id", "5", cwd=repo).exit_code == 0
    item_dir = repo / "docs/specs" / ITEM
    (item_dir / "requirements.md").write_text(REQUIREMENTS.format(item=ITEM, title="x"))
    assert loop("approve", "5", "requirements", "--by", "@ann", cwd=repo).exit_code == 0
    before = {p: p.read_bytes() for p in item_dir.iterdir()}
    head = git(repo, "rev-parse", "HEAD").stdout
    result = loop("work-on", "5", "--dry-run", cwd=repo)
    assert result.exit_code == 0, result.output
    assert "would write docs/specs/issue-5/design.md" in result.stdout
    assert "dry run: would checkpoint into design; then reset: clear" in result.stdout
    assert {p: p.read_bytes() for p in item_dir.iterdir()} == before
    assert git(repo, "rev-parse", "HEAD").stdout == head


@pytest.mark.parametrize("relation", ["ahead"])
def test_sync_repairs_a_disagreeing_mirror_explicitly(loop, git_repo: Path, relation: str) -> None:
    repo = git_repo
    assert loop("init", "--defaults", cwd=repo).exit_code == 0
    assert loop("new", "Mirror", "--id", "5", cwd=repo).exit_code == 0
    log = repo / "docs/specs" / ITEM / "execution-log.md"
    log.write_text(log.read_text().replace("phase: requirements-definition", "phase: needs-review"))
    status = loop("status", ITEM, cwd=repo)
    assert "(log says needs-review)" in status.stdout
    # work-on alone never silently rewrites the mirror
    assert loop("work-on", "5", cwd=repo).exit_code == 0
    assert _phase(repo) == "needs-review"
    synced = loop("work-on", "5", "--sync", cwd=repo)
    assert synced.exit_code == 0, synced.output
    assert "repaired the phase mirror: needs-review → requirements-definition" in synced.stdout
    assert _phase(repo) == "requirements-definition"
    assert "phase mirror repaired: needs-review → requirements-definition" in log.read_text()


def test_a_failed_crossing_leaves_nothing_behind(loop, git_repo: Path) -> None:
    """A pre-commit hook refusing the crossing's commit undoes the whole step."""
    repo = git_repo
    assert loop("init", "--defaults", cwd=repo).exit_code == 0
    assert loop("new", "Hooked", "--id", "5", cwd=repo).exit_code == 0
    item_dir = repo / "docs/specs" / ITEM
    (item_dir / "requirements.md").write_text(REQUIREMENTS.format(item=ITEM, title="x"))
    assert loop("approve", "5", "requirements", "--by", "@ann", cwd=repo).exit_code == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint failed: trailing whitespace'\nexit 1\n")
    hook.chmod(0o755)
    before = {p.name: p.read_bytes() for p in item_dir.iterdir()}

    result = loop("work-on", "5", cwd=repo)

    assert result.exit_code == 1
    assert result.stderr.startswith("error: git commit failed")
    assert "lint failed: trailing whitespace" in result.stderr
    assert {p.name: p.read_bytes() for p in item_dir.iterdir()} == before  # no design.md
    assert not (repo / ".the-loop" / "state" / "checkpoint.json").exists()
    hook.unlink()
    assert loop("work-on", "5", cwd=repo).exit_code == 0
    assert _phase(repo) == "design"
