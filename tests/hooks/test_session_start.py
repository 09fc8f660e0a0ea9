"""SessionStart: the resume brief as context, and the resets a new start proves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.hooks import OTHER, SESSION, history, hook, session_record, state
from helpers.project import ok, reset_records, run

from the_loop.checkpoint.resets import record_digest
from the_loop.hooks.answer import CONTEXT_LIMIT

DONE = ("--did", "the config key", "--next", "implement task 2: the retry ledger in ledger.py")


def test_the_resume_brief_of_the_item_in_progress_is_the_context(in_task: Path) -> None:
    ran = hook(in_task, "SessionStart", source="startup")

    assert ran.exit_code == 0, ran.stderr
    text = ran.context
    assert text is not None and len(text) <= CONTEXT_LIMIT
    first, brief = text.split("\n\n", 1)
    assert first == (
        "loop: this session is on work item issue-7 (the most recently touched work item in "
        "progress). Task 1 (config key) is in progress. The session id "
        f"{SESSION} is recorded; loop commands run in this session use it."
    )
    assert brief == run(in_task, "resume", "7").stdout  # the same brief `loop resume` prints
    record = session_record(in_task)
    assert (record["harness"], record["item"], record["ended"]) == ("claude", "issue-7", None)


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_every_source_gets_the_brief(in_task: Path, source: str) -> None:
    ran = hook(in_task, "SessionStart", harness="codex", source=source)
    assert ran.context is not None and "# Resume issue-7: retries" in ran.context


def test_no_item_in_progress_means_no_context(project: Path, tmp_path: Path) -> None:
    ok(project, "execute-tasks", "7")
    log = project / "docs/specs/issue-7/execution-log.md"
    log.write_text(log.read_text().replace("phase: implementation", "phase: complete", 1))

    ran = hook(project, "SessionStart", source="startup")

    assert (ran.exit_code, ran.stdout) == (0, "")


def _task_done(root: Path, session: str, *extra: str) -> None:
    ok(root, "task", "done", "7", "1", *DONE, "--session", session, *extra)


def configured(project: Path, text: str) -> Path:
    config = project / ".the-loop/config.yaml"
    config.write_text(config.read_text() + text)
    return project


def test_a_clear_with_a_new_session_completes_the_clear(in_task: Path) -> None:
    configured(in_task, "contextManagement:\n  taskBoundary: clear\n")
    _task_done(in_task, OTHER)
    (open_record,) = reset_records(in_task)
    assert (open_record["mode"], open_record["state"]) == ("clear", "dispatched")

    ran = hook(in_task, "SessionStart", source="clear")

    assert reset_records(in_task) == []
    done = history(in_task)[-1]
    assert done["checkpoint"] == open_record["checkpoint"]
    assert (done["state"], done["confirmed_session"]) == ("completed", SESSION)
    assert done["note"] == "verified by the harness: SessionStart (clear) (new session)"
    assert ran.context is not None
    assert (
        f"The clear after checkpoint {open_record['checkpoint']} of issue-7 is recorded as done "
        "(a new session)." in ran.context.split("\n\n")[0]
    )


def test_a_clear_is_not_completed_by_the_session_that_took_it(in_task: Path) -> None:
    configured(in_task, "contextManagement:\n  taskBoundary: clear\n")
    _task_done(in_task, SESSION)

    hook(in_task, "SessionStart", source="clear")  # same id: no clear happened

    assert [r["state"] for r in reset_records(in_task)] == ["dispatched"]


def test_a_fresh_process_counts_as_the_clear(in_task: Path) -> None:
    configured(in_task, "contextManagement:\n  taskBoundary: clear\n")
    _task_done(in_task, OTHER)

    hook(in_task, "SessionStart", harness="codex", source="startup")

    assert reset_records(in_task) == []
    assert history(in_task)[-1]["state"] == "completed"


def test_a_compaction_in_the_same_session_completes_the_compaction(in_task: Path) -> None:
    _task_done(in_task, SESSION)  # taskBoundary compact by default

    hook(in_task, "SessionStart", source="compact", session=OTHER)  # another session's: no
    assert [r["state"] for r in reset_records(in_task)] == ["dispatched"]

    hook(in_task, "SessionStart", source="compact")

    assert reset_records(in_task) == []
    done = history(in_task)[-1]
    assert done["state"] == "completed"
    assert done["note"] == "verified by the harness: SessionStart (compact) (same session)"
    # nothing left for `loop reset confirm`, and the brief no longer lists it
    assert "Unconfirmed reset" not in run(in_task, "resume", "7").stdout


def test_after_a_clear_the_new_session_carries_on_the_old_ones_task(in_task: Path) -> None:
    configured(in_task, "contextManagement:\n  phaseBoundary: clear\n")
    ok(in_task, "task", "start", "7", "3", "--session", OTHER)  # OTHER owns task 3
    ok(
        in_task,
        "checkpoint",
        "7",
        "--mid-task",
        "--task",
        "3",
        "--percent",
        "95",
        "--did",
        "half of it",
        "--next",
        "finish the give-up log line in poller.py",
        "--session",
        OTHER,
    )
    # a mid-task reset is a compaction; make this one a clear by hand to test inheritance
    record_file = next((state(in_task) / "resets").glob("*.json"))
    data = json.loads(record_file.read_text())
    edited = {**data, "mode": "clear"}
    record_file.write_text(json.dumps({**edited, "digest": record_digest(edited)}))

    ran = hook(in_task, "SessionStart", source="clear")

    assert session_record(in_task)["tasks"] == ["issue-7#3"]
    assert ran.context is not None and "Task 3 (give-up log line) is in progress." in ran.context


def test_claude_gets_the_session_id_in_its_env_file(in_task: Path, tmp_path: Path) -> None:
    env_file = tmp_path / "session-env" / "sessionstart-hook-0.sh"
    env_file.parent.mkdir()

    hook(in_task, "SessionStart", source="startup", env={"CLAUDE_ENV_FILE": str(env_file)})
    hook(in_task, "SessionStart", source="resume", env={"CLAUDE_ENV_FILE": str(env_file)})

    assert env_file.read_text() == f"export LOOP_SESSION_ID={SESSION}\n"
