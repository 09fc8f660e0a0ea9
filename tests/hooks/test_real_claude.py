"""The hooks in the real Claude Code CLI (2.1.328), headless, against the fake Anthropic API.

Each test runs ``loop install claude`` in a real project in implementation and then
``claude -p`` there: the hooks run as the installed ``<venv>/bin/loop hook …``
commands, exactly as they would for a person.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness.agents import ClaudeCli, read_jsonl
from harness.fake_anthropic import FakeAnthropic
from harness.replies import AnthropicUsage, Rule, Text, run_command
from helpers.hooks import (
    LOOP_BIN,
    history,
    install_hooks,
    run_the_checkpoint_command,
    session_record,
    state,
)
from helpers.project import commits, git, ok, reset_records

pytestmark = pytest.mark.agents

BASH = ("--allowedTools", "Bash")
OVER_HARD = AnthropicUsage(input=290_000, cache_creation=300, cache_read=5_000, output=40)


@pytest.fixture
def installed(in_task: Path) -> Path:
    """The project with loop's hooks in .claude/settings.json (task 1 in progress)."""
    return install_hooks(in_task, "claude")


def test_a_session_receives_the_resume_brief(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, installed: Path
) -> None:
    out = claude_cli.prompt("say hi", cwd=installed).ok().json()

    (request,) = fake_anthropic.requests
    assert request.contains("# Resume issue-7: retries")
    assert request.contains("Task 1 (config key) is in progress.")
    system = [m for m in request.body["messages"] if m["role"] == "system"]
    assert "loop: this session is on work item issue-7" in str(system)
    record = session_record(installed, out["session_id"])
    assert (record["harness"], record["item"]) == ("claude", "issue-7")
    assert record["ended"] is not None  # -p ends with SessionEnd
    assert not (state(installed) / "hooks" / "errors.log").exists()


def test_over_the_hard_threshold_a_tool_call_is_blocked_until_the_checkpoint(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, installed: Path
) -> None:
    fake_anthropic.settings.usage = OVER_HARD  # 295,300 tokens in use: past hardTokens 280,000
    fake_anthropic.add(
        run_command("RUN:"),
        Rule(
            when=lambda r: r.is_tool_result and r.contains("stops until an interim checkpoint"),
            reply=run_the_checkpoint_command,
            times=1,
        ),
    )
    fake_anthropic.settings.after_tool_reply = Text("Stopping here for the compaction.")
    before = len(commits(installed))

    out = claude_cli.prompt("RUN: echo 'RETRIES = 3' > config.py", *BASH, cwd=installed).ok().json()

    first_result = fake_anthropic.requests[1]
    assert first_result.is_tool_result
    assert first_result.contains(
        f"`{LOOP_BIN} checkpoint issue-7 --mid-task --task 1 "
        "--did '<what is done so far>' --next '<the concrete next step>'`"
    )
    assert first_result.contains("at or past the hard threshold")
    # the agent ran it: an interim checkpoint with its WIP, tagged with the session
    assert len(commits(installed)) == before + 1
    assert "Loop-Reset: compact" in commits(installed)[0].splitlines()
    assert git(installed, "status", "--porcelain") == ""
    (record,) = reset_records(installed)
    assert (record["session"], record["mode"]) == (out["session_id"], "compact")
    # and the next tool result says the compaction is what is due
    assert fake_anthropic.requests[2].contains(
        f"Checkpoint {record['checkpoint']} of issue-7 is taken; what is due now is the compaction"
    )


def test_compact_takes_the_interim_checkpoint_and_completes_the_reset(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, installed: Path
) -> None:
    fake_anthropic.add(run_command("RUN:"))
    first = claude_cli.prompt("RUN: echo 'RETRIES = 3' > config.py", *BASH, cwd=installed)
    session = first.ok().json()["session_id"]
    assert git(installed, "status", "--porcelain").strip() == "?? config.py"
    before = len(commits(installed))

    claude_cli.prompt("/compact", "--resume", session, cwd=installed).ok()

    assert len(commits(installed)) == before + 1  # the WIP commit, before the compaction
    message = commits(installed)[0]
    assert message.startswith("chore(issue-7): checkpoint interim, task 1\n")
    assert "config.py" in git(installed, "show", "--name-only", "--format=", "HEAD")
    assert reset_records(installed) == []
    done = history(installed)[-1]
    assert (done["mode"], done["state"]) == ("compact", "completed")
    assert done["session"] == done["confirmed_session"] == session
    assert done["note"].startswith("verified by the harness: SessionStart (compact)")
    boundary = [
        line
        for line in read_jsonl(claude_cli.transcript(session))
        if line.get("subtype") == "compact_boundary"
    ]
    assert len(boundary) == 1  # the compaction did happen, after the commit


def test_stop_is_held_back_while_the_sessions_task_has_unsaved_work(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, installed: Path
) -> None:
    fake_anthropic.add(run_command("RUN:"))
    fake_anthropic.settings.after_tool_reply = Text("Done for now.")
    # the agent takes task 3 itself (CLAUDE_CODE_SESSION_ID names its session to loop)
    start = f"{LOOP_BIN} task start 7 3 && echo 'log.warning(...)' > poller.py"

    claude_cli.prompt(f"RUN: {start}", *BASH, cwd=installed).ok()

    feedback = [r for r in fake_anthropic.requests if r.contains("Stop hook feedback")]
    assert len(feedback) == 2  # blocked twice, then allowed to stop
    assert feedback[0].contains("task 3 of issue-7 (give-up log line) is in progress")
    assert feedback[0].contains(f"`{LOOP_BIN} checkpoint issue-7 --mid-task --task 3 ")


def test_a_fresh_session_completes_a_clear(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, installed: Path
) -> None:
    config = installed / ".the-loop/config.yaml"
    config.write_text(config.read_text() + "contextManagement:\n  taskBoundary: clear\n")
    ok(
        installed,
        "task",
        "done",
        "7",
        "1",
        "--did",
        "the key",
        "--next",
        "implement task 2: the retry ledger in ledger.py",
        "--session",
        "old-session",
    )
    (record,) = reset_records(installed)

    out = claude_cli.prompt("continue", cwd=installed).ok().json()

    assert reset_records(installed) == []
    done = history(installed)[-1]
    assert (done["checkpoint"], done["state"]) == (record["checkpoint"], "completed")
    assert done["confirmed_session"] == out["session_id"]
    (request,) = fake_anthropic.requests
    assert request.contains(f"The clear after checkpoint {record['checkpoint']} of issue-7")


def test_hooks_in_the_local_settings_fire_too(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, in_task: Path
) -> None:
    ok(in_task, "install", "claude", "--local", "--loop-command", str(LOOP_BIN))

    claude_cli.prompt("say hi", cwd=in_task).ok()

    (request,) = fake_anthropic.requests
    assert request.contains("# Resume issue-7: retries")
