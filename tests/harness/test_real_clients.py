"""Smoke tests: the real Claude Code and Codex CLIs, headless, against the fake model APIs.

They prove the harness end to end: replies reach the CLI, scripted tool calls run for real,
sessions resume, compaction writes its records, and hook context reaches the next request.
Each test runs one to three CLI processes of under a second each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents import (
    CODEX_HOOK_FLAGS,
    FAKE_ANTHROPIC_KEY,
    FAKE_OPENAI_KEY,
    ClaudeCli,
    CodexCli,
    completed_items,
    hooks_config,
    read_jsonl,
    thread_id,
    write_hook_script,
)
from harness.fake_anthropic import FakeAnthropic
from harness.fake_openai import FakeOpenAI
from harness.replies import (
    AnthropicUsage,
    HttpError,
    OpenAIUsage,
    PromptTooLong,
    Summary,
    Text,
    prompt_contains,
    prompt_too_long_once,
    run_command,
)

pytestmark = pytest.mark.agents

HOOK_CONTEXT = "Loop resume note 7f3a: task 3 of issue-42 is next."


def session_start_hooks(tmp_path: Path) -> tuple[dict[str, object], Path]:
    """Hooks config whose SessionStart adds :data:`HOOK_CONTEXT`; every event is logged."""
    log = tmp_path / "hooks.jsonl"
    context = {"hookEventName": "SessionStart", "additionalContext": HOOK_CONTEXT}
    start = write_hook_script(tmp_path / "session-start-hook", log, {"hookSpecificOutput": context})
    other = write_hook_script(tmp_path / "log-hook", log)
    events = ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
    return hooks_config({"SessionStart": start, **dict.fromkeys(events, other)}), log


# --- Claude Code ---------------------------------------------------------------------------


def test_claude_prompt_returns_the_fakes_reply_and_usage(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, git_repo: Path
) -> None:
    fake_anthropic.settings.usage = AnthropicUsage(
        input=11, cache_creation=222, cache_read=3333, output=44
    )
    fake_anthropic.enqueue(Text("Hi from the script."))

    out = claude_cli.prompt("say hi", cwd=git_repo).ok().json()

    assert out["result"] == "Hi from the script."
    assert out["is_error"] is False
    usage = out["usage"]
    assert (
        usage["input_tokens"],
        usage["cache_creation_input_tokens"],
        usage["cache_read_input_tokens"],
        usage["output_tokens"],
    ) == (11, 222, 3333, 44)
    (request,) = fake_anthropic.requests
    assert request.prompt == "say hi"
    assert request.headers["x-api-key"] == FAKE_ANTHROPIC_KEY
    assert request.headers["x-claude-code-session-id"] == out["session_id"]
    assert fake_anthropic.other_requests == []  # nonessential traffic is off
    assert claude_cli.transcript(out["session_id"]).is_file()


def test_claude_runs_a_scripted_bash_call(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, git_repo: Path
) -> None:
    fake_anthropic.add(run_command("RUN:"))
    fake_anthropic.settings.after_tool_reply = Text("done")

    out = (
        claude_cli.prompt(
            "Make the file.\nRUN: echo hello > out.txt", "--allowedTools", "Bash", cwd=git_repo
        )
        .ok()
        .json()
    )

    assert (git_repo / "out.txt").read_text() == "hello\n"
    assert out["result"] == "done"
    assert out["num_turns"] == 2
    first, second = fake_anthropic.requests
    assert not first.is_tool_result and second.is_tool_result
    lines = read_jsonl(claude_cli.transcript(out["session_id"]))
    results = [line["toolUseResult"] for line in lines if "toolUseResult" in line]
    assert len(results) == 1 and results[0]["interrupted"] is False


def test_claude_resume_keeps_the_session(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, git_repo: Path
) -> None:
    first = claude_cli.prompt("remember the word heliotrope", cwd=git_repo).ok().json()
    second = claude_cli.prompt("continue", "--resume", first["session_id"], cwd=git_repo).ok()

    assert second.json()["session_id"] == first["session_id"]
    earlier, later = fake_anthropic.requests
    assert later.prompt == "continue"
    assert later.contains("remember the word heliotrope")  # the history is sent again
    prompts = [
        line["message"]["content"]
        for line in read_jsonl(claude_cli.transcript(first["session_id"]))
        if line.get("type") == "user" and isinstance(line["message"]["content"], str)
    ]
    assert prompts == ["remember the word heliotrope", "continue"]


def test_claude_compact_writes_a_compact_boundary(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, git_repo: Path
) -> None:
    fake_anthropic.settings.summary_reply = Summary("The user greeted; nothing is pending.")
    session = claude_cli.prompt("say hi", cwd=git_repo).ok().json()["session_id"]

    out = claude_cli.prompt("/compact", "--resume", session, cwd=git_repo).ok().json()

    assert out["session_id"] == session
    compactions = [request for request in fake_anthropic.requests if request.is_compaction]
    assert len(compactions) == 1
    lines = read_jsonl(claude_cli.transcript(session))
    boundaries = [line for line in lines if line.get("subtype") == "compact_boundary"]
    assert len(boundaries) == 1
    assert boundaries[0]["compactMetadata"]["trigger"] == "manual"
    summaries = [line for line in lines if line.get("isCompactSummary")]
    assert "The user greeted; nothing is pending." in json.dumps(summaries)


def test_claude_session_start_hook_context_reaches_the_model(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, git_repo: Path, tmp_path: Path
) -> None:
    hooks, log = session_start_hooks(tmp_path)
    settings = git_repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(hooks))

    out = claude_cli.prompt("say hi", cwd=git_repo).ok().json()

    (request,) = fake_anthropic.requests
    assert request.contains(HOOK_CONTEXT)
    assert HOOK_CONTEXT not in request.prompt
    system_messages = [m for m in request.body["messages"] if m["role"] == "system"]
    assert HOOK_CONTEXT in json.dumps(system_messages)
    events = [(e["hook_event_name"], e["session_id"]) for e in read_jsonl(log)]
    assert ("SessionStart", out["session_id"]) in events
    assert ("Stop", out["session_id"]) in events


def test_claude_compact_right_after_a_tool_call_gets_a_summary(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, git_repo: Path
) -> None:
    # With --max-turns 1 the turn stops on the tool call, so the summary prompt travels in
    # the same user message as the tool result: the fake must see a compaction first.
    fake_anthropic.add(run_command("RUN:"))
    first = claude_cli.prompt(
        "RUN: echo hi > a.txt", "--allowedTools", "Bash", "--max-turns", "1", cwd=git_repo
    )
    assert first.returncode == 1 and first.json()["subtype"] == "error_max_turns"

    claude_cli.prompt("/compact", "--resume", first.json()["session_id"], cwd=git_repo).ok()

    last = fake_anthropic.exchanges[-1]
    assert last.request.is_tool_result and last.request.is_compaction
    assert isinstance(last.reply, Summary)


def test_claude_prompt_too_long_compacts_and_retries(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, git_repo: Path
) -> None:
    session = claude_cli.prompt("work on task 3", cwd=git_repo).ok().json()["session_id"]
    fake_anthropic.add(prompt_too_long_once(prompt_contains("finish task 3")))

    out = claude_cli.prompt("finish task 3", "--resume", session, cwd=git_repo).ok().json()

    assert out["is_error"] is False
    replies = [type(exchange.reply) for exchange in fake_anthropic.exchanges]
    assert replies == [Text, PromptTooLong, Summary, Text]
    lines = read_jsonl(claude_cli.transcript(session))
    (boundary,) = [line for line in lines if line.get("subtype") == "compact_boundary"]
    assert boundary["compactMetadata"]["trigger"] == "auto"


def test_claude_reports_an_http_error_without_retrying(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, git_repo: Path
) -> None:
    fake_anthropic.enqueue(HttpError(500, "scripted outage"))

    run = claude_cli.prompt("say hi", cwd=git_repo)

    assert run.returncode == 1
    out = run.json()
    assert (out["is_error"], out["api_error_status"]) == (True, 500)
    assert "scripted outage" in out["result"]
    assert len(fake_anthropic.requests) == 1  # CLAUDE_CODE_MAX_RETRIES=0


# --- Codex ---------------------------------------------------------------------------------


def test_codex_exec_returns_the_fakes_reply_and_usage(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, git_repo: Path
) -> None:
    fake_openai.settings.usage = OpenAIUsage(input=5000, cached=3000, output=70, reasoning=20)
    fake_openai.enqueue(Text("Hi from the script."))

    run = codex_cli.exec("say hi", cwd=git_repo).ok()

    assert [item["text"] for item in completed_items(run, "agent_message")] == [
        "Hi from the script."
    ]
    (done,) = [e for e in run.events() if e["type"] == "turn.completed"]
    usage = {key: done["usage"][key] for key in ("input_tokens", "cached_input_tokens")}
    assert usage == {"input_tokens": 5000, "cached_input_tokens": 3000}
    assert done["usage"]["output_tokens"] == 70
    (request,) = fake_openai.requests
    assert request.prompt == "say hi"
    assert request.headers["authorization"] == f"Bearer {FAKE_OPENAI_KEY}"
    assert request.body["prompt_cache_key"] == thread_id(run)
    assert codex_cli.rollout(thread_id(run)).is_file()


def test_codex_runs_a_scripted_exec_command(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, git_repo: Path
) -> None:
    fake_openai.add(run_command("RUN:"))
    fake_openai.settings.after_tool_reply = Text("done")

    run = codex_cli.exec(
        "Make the file.\nRUN: echo hello > out.txt", "--sandbox", "workspace-write", cwd=git_repo
    ).ok()

    assert (git_repo / "out.txt").read_text() == "hello\n"
    commands = completed_items(run, "command_execution")
    assert len(commands) == 1 and commands[0]["exit_code"] == 0
    first, second = fake_openai.requests
    assert not first.is_tool_result and second.is_tool_result


def test_codex_resume_keeps_the_thread(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, git_repo: Path
) -> None:
    thread = thread_id(codex_cli.exec("remember the word heliotrope", cwd=git_repo).ok())
    rollout = codex_cli.rollout(thread)
    before = len(read_jsonl(rollout))

    again = codex_cli.resume(thread, "continue", cwd=git_repo).ok()

    assert thread_id(again) == thread
    assert codex_cli.rollout(thread) == rollout
    assert len(read_jsonl(rollout)) > before
    earlier, later = fake_openai.requests
    assert later.prompt == "continue"
    assert later.contains("remember the word heliotrope")


def test_codex_session_start_hook_context_reaches_the_model(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, git_repo: Path, tmp_path: Path
) -> None:
    hooks, log = session_start_hooks(tmp_path)
    codex_cli.write_hooks(hooks)

    run = codex_cli.exec("say hi", *CODEX_HOOK_FLAGS, cwd=git_repo).ok()

    (request,) = fake_openai.requests
    developer = [item for item in request.body["input"] if item.get("role") == "developer"]
    assert HOOK_CONTEXT in json.dumps(developer)  # Codex sends it as a developer message
    events = [(e["hook_event_name"], e["session_id"]) for e in read_jsonl(log)]
    assert ("SessionStart", thread_id(run)) in events
    assert ("Stop", thread_id(run)) in events


def test_codex_compacts_before_a_resumed_turn(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, git_repo: Path
) -> None:
    fake_openai.settings.summary_reply = Summary("The user greeted; nothing is pending.")
    thread = thread_id(codex_cli.exec("say hi", cwd=git_repo).ok())

    codex_cli.resume(
        thread, "continue", "-c", "model_auto_compact_token_limit=1", cwd=git_repo
    ).ok()

    kinds = [(r.is_compaction, r.prompt) for r in fake_openai.requests]
    assert kinds[0] == (False, "say hi")
    assert [is_compaction for is_compaction, _ in kinds[1:]] == [True, False]
    assert kinds[-1][1] == "continue"
    lines = read_jsonl(codex_cli.rollout(thread))
    compacted = [line for line in lines if line["type"] == "compacted"]
    assert len(compacted) == 1
    assert "The user greeted; nothing is pending." in compacted[0]["payload"]["message"]


def test_codex_reports_an_http_error_as_a_failed_turn(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, git_repo: Path
) -> None:
    fake_openai.enqueue(HttpError(500, "scripted outage"))

    run = codex_cli.exec("say hi", cwd=git_repo)

    assert run.returncode == 1
    assert [e["type"] for e in run.events()][-1] == "turn.failed"
    assert len(fake_openai.requests) == 1  # request_max_retries = 0


def test_codex_fails_the_turn_when_the_context_window_is_exceeded(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, git_repo: Path
) -> None:
    # Unlike Claude Code, Codex 0.169.0 does not compact on a context_length_exceeded 400.
    fake_openai.enqueue(PromptTooLong())

    run = codex_cli.exec("say hi", cwd=git_repo)

    assert run.returncode == 1
    (failed,) = [e for e in run.events() if e["type"] == "turn.failed"]
    assert "context window" in failed["error"]["message"]
    assert [r.is_compaction for r in fake_openai.requests] == [False]
