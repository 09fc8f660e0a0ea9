"""PreCompact saves the work before a compaction; PostCompact records the compaction.

Claude Code's order for /compact is SessionStart(resume), PreCompact,
SessionStart(compact), PostCompact; Codex's is PreCompact, PostCompact,
SessionStart(resume), SessionStart(compact) (tests/fixtures/harness). Either
way the WIP commit comes first and the reset record ends completed, once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.hooks import OTHER, SESSION, history, hook, session_record
from helpers.project import commits, entries_for, git, ok, reset_records, task_states

from the_loop.tasks import TaskState

ORDERS = {
    "claude": [
        ("SessionStart", "resume"),
        ("PreCompact", None),
        ("SessionStart", "compact"),
        ("PostCompact", None),
    ],
    "codex": [
        ("PreCompact", None),
        ("PostCompact", None),
        ("SessionStart", "resume"),
        ("SessionStart", "compact"),
    ],
}


def fire(root: Path, harness: str, event: str, source: str | None) -> None:
    fields = (
        {"source": source} if source else {"trigger": "manual" if harness == "claude" else "auto"}
    )
    ran = hook(root, event, harness=harness, **fields)
    assert (ran.exit_code, ran.stderr) == (0, ""), ran.stderr


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_compaction_with_unsaved_work_is_checkpointed_first_and_completed(
    in_task: Path, harness: str
) -> None:
    (in_task / "config.py").write_text("RETRIES = 3\n")  # uncommitted work on task 1
    before = len(commits(in_task))

    for event, source in ORDERS[harness]:
        fire(in_task, harness, event, source)

    assert len(commits(in_task)) == before + 1
    message = commits(in_task)[0]
    assert message.startswith("chore(issue-7): checkpoint interim, task 1\n")
    assert "Loop-Reset: compact" in message.splitlines()
    assert git(in_task, "status", "--porcelain") == ""  # the WIP is in that commit
    assert "config.py" in git(in_task, "show", "--name-only", "--format=", "HEAD")
    assert task_states(in_task)["1"] is TaskState.IN_PROGRESS  # interim: not ticked
    (entry,) = entries_for(in_task, "interim checkpoint during task 1")
    trigger = "manual" if harness == "claude" else "auto"
    assert entry.fields["did"] == (
        "work in progress on task 1 (config key), saved before the harness compacted the "
        f"context (PreCompact hook, trigger {trigger})"
    )
    assert entry.next == "continue task 1 (config key) from this interim checkpoint"
    assert (entry.context or "").startswith(
        "compact (about to): mid-task in task 1; the harness is compacting now "
        f"(PreCompact, trigger {trigger})"
    )
    assert reset_records(in_task) == []
    done = history(in_task)[-1]
    assert (done["mode"], done["state"], done["session"]) == ("compact", "completed", SESSION)
    assert done["confirmed_session"] == SESSION
    first_to_complete = "SessionStart (compact)" if harness == "claude" else "PostCompact"
    assert done["note"].startswith(f"verified by the harness: {first_to_complete}")
    assert session_record(in_task)["compactions"] == 1


def test_a_clean_tree_needs_no_checkpoint(in_task: Path) -> None:
    git(in_task, "add", "-A")
    git(in_task, "commit", "-q", "-m", "task 1 handed out")
    before = len(commits(in_task))

    fire(in_task, "claude", "PreCompact", None)

    assert len(commits(in_task)) == before
    assert reset_records(in_task) == []


def test_no_task_in_progress_needs_no_checkpoint(project: Path) -> None:
    (project / "notes.txt").write_text("scratch\n")
    before = len(commits(project))

    fire(project, "claude", "PreCompact", None)

    assert len(commits(project)) == before


def test_post_compact_completes_a_compaction_the_agent_was_told_to_do(in_task: Path) -> None:
    ok(
        in_task,
        "task",
        "done",
        "7",
        "1",
        "--did",
        "the config key",
        "--next",
        "implement task 2: the retry ledger in ledger.py",
        "--session",
        SESSION,
    )
    (record,) = reset_records(in_task)

    fire(in_task, "codex", "PostCompact", None)

    assert reset_records(in_task) == []
    done = history(in_task)[-1]
    assert (done["checkpoint"], done["state"]) == (record["checkpoint"], "completed")
    assert done["note"] == "verified by the harness: PostCompact (trigger auto) (same session)"


def test_another_sessions_compaction_completes_nothing(in_task: Path) -> None:
    ok(
        in_task,
        "task",
        "done",
        "7",
        "1",
        "--did",
        "the config key",
        "--next",
        "implement task 2: the retry ledger in ledger.py",
        "--session",
        OTHER,
    )

    fire(in_task, "claude", "PostCompact", None)

    assert [r["state"] for r in reset_records(in_task)] == ["dispatched"]


def test_a_compaction_owed_before_new_work_is_completed_not_skipped(in_task: Path) -> None:
    # the agent checkpointed at the hard threshold, worked on, then the harness compacts
    ok(
        in_task,
        "checkpoint",
        "7",
        "--mid-task",
        "--percent",
        "95",
        "--did",
        "half the key",
        "--next",
        "finish the config key: the schema default",
        "--session",
        SESSION,
    )
    (owed,) = reset_records(in_task)
    (in_task / "config.py").write_text("RETRIES = 3\n")

    for event, source in ORDERS["claude"]:
        fire(in_task, "claude", event, source)

    states = {h["checkpoint"]: h["state"] for h in history(in_task)}
    assert states[owed["checkpoint"]] == "completed"
    assert list(states.values()).count("skipped") == 0
    assert reset_records(in_task) == []
