"""Stop: not while a task this session started has unsaved work (at most twice)."""

from __future__ import annotations

from pathlib import Path

from helpers.hooks import LOOP, OTHER, SESSION, hook, session_record
from helpers.project import ok


def stop(root: Path, harness: str = "claude", active: bool = False) -> str | None:
    ran = hook(root, "Stop", harness=harness, stop_hook_active=active)
    assert (ran.exit_code, ran.stderr) == (0, "")
    return ran.block


def test_unsaved_work_on_the_sessions_task_blocks_stop_twice(project: Path) -> None:
    ok(project, "execute-tasks", "7", "--session", SESSION)  # task 1, owned by this session
    (project / "config.py").write_text("RETRIES = 3\n")

    first = stop(project)
    second = stop(project, active=True)
    third = stop(project, active=True)

    did, nxt = "--did '<what is done so far>'", "--next '<the concrete next step>'"
    assert first == (
        "loop: task 1 of issue-7 (config key) is in progress, and the working tree has changes "
        "that are neither committed nor checkpointed. "
        f"`{LOOP} checkpoint issue-7 --mid-task --task 1 {did} {nxt}` saves them as an interim "
        f"checkpoint; if the task is finished, `{LOOP} task done issue-7 1 {did} {nxt}` does. "
        "(Stopping is held back 1 more time(s) in this session at most.)"
    )
    assert second is not None and second.endswith(
        "held back 0 more time(s) in this session at most.)"
    )
    assert third is None  # bounded: the session may stop now
    assert session_record(project)["stop_blocks"] == 2


def test_a_checkpoint_lets_the_session_stop(project: Path) -> None:
    ok(project, "task", "start", "7", "1", "--session", SESSION)
    (project / "config.py").write_text("RETRIES = 3\n")
    assert stop(project) is not None

    ok(
        project,
        "checkpoint",
        "7",
        "--mid-task",
        "--percent",
        "10",
        "--did",
        "the key",
        "--next",
        "finish the config key: the schema default",
        "--session",
        SESSION,
    )

    assert stop(project) is None


def test_another_sessions_task_does_not_hold_this_one(project: Path) -> None:
    ok(project, "task", "start", "7", "1", "--session", OTHER)
    (project / "config.py").write_text("RETRIES = 3\n")

    assert stop(project, harness="codex") is None


def test_a_finished_task_does_not_hold_the_session(project: Path) -> None:
    ok(project, "task", "start", "7", "1", "--session", SESSION)
    ok(
        project,
        "task",
        "done",
        "7",
        "1",
        "--did",
        "the key",
        "--next",
        "implement task 2: the retry ledger in ledger.py",
        "--session",
        SESSION,
    )
    (project / "notes.txt").write_text("later\n")

    assert stop(project) is None


def test_session_end_marks_the_session_ended_and_a_resume_revives_it(project: Path) -> None:
    hook(project, "SessionStart", source="startup")
    hook(project, "SessionEnd", reason="other")
    assert session_record(project)["ended"] is not None
    assert session_record(project)["end_reason"] == "other"

    hook(project, "SessionStart", source="resume")

    assert session_record(project)["ended"] is None
