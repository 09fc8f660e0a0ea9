"""The hooks in the real Codex CLI (0.169.0), headless, against the fake OpenAI API.

``loop install codex`` writes ``.codex/hooks.json`` in the project. Codex runs a
project's hooks only when the project is trusted (``--trust``) and its hooks
are trusted (``--dangerously-bypass-hook-trust`` headless; ``/hooks`` for a
person); ``--enable hooks`` keeps them on whatever the default.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness.agents import CODEX_HOOK_FLAGS, CodexCli, read_jsonl, thread_id
from harness.fake_openai import FakeOpenAI
from harness.replies import OpenAIUsage, Rule, Text, run_command
from helpers.hooks import (
    LOOP_BIN,
    history,
    install_hooks,
    run_the_checkpoint_command,
    session_record,
    state,
)
from helpers.project import commits, git, reset_records

pytestmark = pytest.mark.agents

FLAGS = (*CODEX_HOOK_FLAGS, "--trust", "--sandbox", "workspace-write")


@pytest.fixture
def installed(in_task: Path) -> Path:
    return install_hooks(in_task, "codex")


def test_a_thread_receives_the_resume_brief(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, installed: Path
) -> None:
    run = codex_cli.exec("say hi", *FLAGS, cwd=installed).ok()

    (request,) = fake_openai.requests
    developer = [item for item in request.body["input"] if item.get("role") == "developer"]
    assert "# Resume issue-7: retries" in str(developer)
    record = session_record(installed, thread_id(run))
    assert (record["harness"], record["item"]) == ("codex", "issue-7")
    assert not (state(installed) / "hooks" / "errors.log").exists()


def test_over_the_hard_threshold_a_tool_call_is_blocked_until_the_checkpoint(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, installed: Path
) -> None:
    # 240,000 of gpt-5.5's 258,400: 93 %, past fullClearPercent (90). Codex would compact
    # by itself near its window, so its own limit is raised out of the way.
    fake_openai.settings.usage = OpenAIUsage(input=240_000, cached=230_000, output=30)
    fake_openai.add(
        run_command("RUN:"),
        Rule(
            when=lambda r: r.is_tool_result and r.contains("stops until an interim checkpoint"),
            reply=run_the_checkpoint_command,
            times=1,
        ),
    )
    fake_openai.settings.after_tool_reply = Text("Stopping here for the compaction.")
    before = len(commits(installed))

    run = codex_cli.exec(
        "RUN: echo 'RETRIES = 3' > config.py",
        *FLAGS,
        "-c",
        "model_auto_compact_token_limit=100000000",
        # the workspace-write sandbox keeps .git read-only: a checkpoint run by the agent
        # could not commit without this (docs/hooks.md)
        "-c",
        f'sandbox_workspace_write.writable_roots=["{installed}/.git"]',
        cwd=installed,
    ).ok()

    assert not any(r.is_compaction for r in fake_openai.requests)
    blocked = fake_openai.requests[1]
    assert blocked.is_tool_result
    assert blocked.contains(
        f"`{LOOP_BIN} checkpoint issue-7 --mid-task --task 1 "
        "--did '<what is done so far>' --next '<the concrete next step>'`"
    )
    assert len(commits(installed)) == before + 1
    assert "Loop-Reset: compact" in commits(installed)[0].splitlines()
    (record,) = reset_records(installed)
    assert (record["session"], record["mode"]) == (thread_id(run), "compact")


def test_compaction_takes_the_interim_checkpoint_and_completes_the_reset(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, installed: Path
) -> None:
    fake_openai.add(run_command("RUN:"))
    first = codex_cli.exec("RUN: echo 'RETRIES = 3' > config.py", *FLAGS, cwd=installed).ok()
    thread = thread_id(first)
    assert git(installed, "status", "--porcelain").strip() == "?? config.py"
    before = len(commits(installed))

    # Codex has no /compact in exec; a tiny auto-compact limit compacts before the turn
    codex_cli.resume(
        thread, "continue", *FLAGS, "-c", "model_auto_compact_token_limit=1", cwd=installed
    ).ok()

    assert len(commits(installed)) == before + 1
    assert commits(installed)[0].startswith("chore(issue-7): checkpoint interim, task 1\n")
    assert reset_records(installed) == []
    done = history(installed)[-1]
    assert (done["mode"], done["state"]) == ("compact", "completed")
    assert done["session"] == done["confirmed_session"] == thread
    assert done["note"] == "verified by the harness: PostCompact (trigger auto) (same session)"
    lines = read_jsonl(codex_cli.rollout(thread))
    assert [line["type"] for line in lines].count("compacted") == 1


def test_stop_is_held_back_while_the_threads_task_has_unsaved_work(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, installed: Path
) -> None:
    fake_openai.add(run_command("RUN:"))
    fake_openai.settings.after_tool_reply = Text("Done for now.")
    start = f"{LOOP_BIN} task start 7 3 && echo 'log.warning(...)' > poller.py"

    codex_cli.exec(f"RUN: {start}", *FLAGS, cwd=installed).ok()

    blocked = [r for r in fake_openai.requests if r.contains("task 3 of issue-7 (give-up")]
    assert len(blocked) == 2  # CODEX_THREAD_ID named the session that started task 3
