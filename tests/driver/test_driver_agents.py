"""The three agents' command lines and how their output is read; the process runner.

The stdout samples have the shape the pinned CLIs print (Claude Code 2.1.328
``--output-format stream-json --verbose``, Codex 0.169.0 ``exec --json``), cut to the
fields the driver reads; the end-to-end tests run the real programs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from the_loop.config.settings import AgentSettings, ClaudeAgentSettings, CodexAgentSettings
from the_loop.driver.agent_choice import choose_kind, executable, make_agent
from the_loop.driver.agents import AgentKind, Invocation, Start
from the_loop.driver.claude import ClaudeAgent
from the_loop.driver.codex import CodexAgent
from the_loop.driver.command import CommandAgent
from the_loop.driver.events import AgentFinished, RunSummary
from the_loop.driver.process import run_process
from the_loop.driver.transcripts import compacted_since, size_of
from the_loop.errors import UsageError

CLAUDE = ClaudeAgentSettings(allowed_tools=("Bash", "Read"), model=None, args=())
CODEX = CodexAgentSettings(sandbox="workspace-write", model=None, args=())


def settings(kind: str = "claude", command: tuple[str, ...] = ()) -> AgentSettings:
    return AgentSettings(
        kind=kind,
        command=command,
        timeout_seconds=60,
        max_attempts=3,
        backoff_seconds=0,
        claude=CLAUDE,
        codex=CODEX,
    )


def lines(*objects: object) -> str:
    return "".join(json.dumps(o) + "\n" for o in objects)


# ---------------------------------------------------------------- Claude Code


def test_claude_new_session_gets_its_id_and_the_prompt_on_stdin() -> None:
    agent = ClaudeAgent(("claude",), CLAUDE)

    run = agent.turn(Start.NEW, "S1", "# task 1")

    assert run.argv == (
        "claude", "-p", "--session-id", "S1",
        "--output-format", "stream-json", "--verbose",
        "--allowedTools", "Bash,Read",
    )  # fmt: skip
    assert run.stdin == "# task 1"
    assert agent.turn(Start.RESUME, "S1", "x").argv[2:4] == ("--resume", "S1")


def test_claude_compaction_is_a_slash_command_run_on_the_session() -> None:
    agent = ClaudeAgent(("claude",), ClaudeAgentSettings((), "sonnet", ("--debug",)))

    run = agent.compaction("S1", "Keep task 2.")

    assert run is not None
    assert run.argv[:5] == ("claude", "-p", "/compact Keep task 2.", "--resume", "S1")
    assert run.purpose == "compact"
    turn = agent.turn(Start.NEW, "S2", "x").argv
    assert turn[-3:] == ("--model", "sonnet", "--debug")  # no tools configured: no --allowedTools


def test_claude_reply_reads_the_result_and_the_main_chain_usage() -> None:
    usage = {"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 3}
    sidechain = {"input_tokens": 99999, "cache_read_input_tokens": 0}
    stdout = lines(
        {"type": "system", "subtype": "init", "session_id": "S1"},
        {"type": "assistant", "message": {"usage": usage}, "parent_tool_use_id": None},
        {"type": "assistant", "message": {"usage": sidechain}, "parent_tool_use_id": "toolu_1"},
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "All done.",
            "session_id": "S1",
            "modelUsage": {"claude-opus-5-5": {"contextWindow": 1000000}},
        },
    )

    reply = ClaudeAgent(("claude",), CLAUDE).reply(stdout, 0, "S1")

    assert (reply.session, reply.message, reply.error, reply.tokens) == (
        "S1",
        "All done.",
        None,
        123,
    )
    assert reply.windows == {"claude-opus-5-5": 1000000}


def test_claude_reply_names_an_api_error() -> None:
    stdout = lines(
        {"type": "system", "subtype": "init", "session_id": "S1"},
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "terminal_reason": "api_error",
            "api_error_status": 500,
            "result": "API Error: 500 fake server error",
            "session_id": "S1",
        },
    )

    reply = ClaudeAgent(("claude",), CLAUDE).reply(stdout, 1, "S1")

    # Claude Code marks the result "success"; an error is not called that (issue 21).
    assert reply.error == "error, api_error, API status 500: API Error: 500 fake server error"
    assert reply.retryable


@pytest.mark.parametrize(("status", "retryable"), [(400, False), (401, False), (429, True)])
def test_claude_reply_of_a_4xx_is_not_worth_a_retry(status: int, retryable: bool) -> None:
    stdout = lines(
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "terminal_reason": "api_error",
            "api_error_status": status,
            "result": f"API Error: {status} refused",
            "session_id": "S1",
        },
    )

    reply = ClaudeAgent(("claude",), CLAUDE).reply(stdout, 1, "S1")

    assert reply.retryable is retryable


def test_claude_reply_lists_the_tools_it_was_refused_once_each() -> None:
    denial = {"tool_name": "Write", "tool_use_id": "toolu_1", "tool_input": {}}
    stdout = lines(
        {"type": "result", "is_error": False, "result": "I could not write the file.",
         "session_id": "S1", "permission_denials": [denial, denial]},
    )  # fmt: skip

    reply = ClaudeAgent(("claude",), CLAUDE).reply(stdout, 0, "S1")

    assert (reply.error, reply.denied) == (None, ("Write",))


def test_claude_reply_without_a_result_has_no_session_unless_it_started() -> None:
    agent = ClaudeAgent(("claude",), CLAUDE)

    assert agent.reply("", 1, "S1").session is None
    assert agent.reply("", 1, "S1").error == "exited 1 without a result"
    started = lines({"type": "system", "subtype": "init", "session_id": "S1"})
    assert agent.reply(started, None, "S1").session == "S1"


def test_claude_live_tokens_come_from_assistant_lines() -> None:
    agent = ClaudeAgent(("claude",), CLAUDE)
    line = json.dumps({"type": "assistant", "message": {"usage": {"input_tokens": 7}}})

    assert agent.live_tokens(line) == 7
    assert agent.live_tokens(json.dumps({"type": "user"})) is None


# ---------------------------------------------------------------- Codex


def test_codex_new_and_resumed_threads_read_the_prompt_from_stdin() -> None:
    agent = CodexAgent(("codex",), CODEX)

    new = agent.turn(Start.NEW, None, "# task 1")
    resumed = agent.turn(Start.RESUME, "T1", "go on")

    assert new.argv == ("codex", "exec", "--json", "--sandbox", "workspace-write", "-")
    assert resumed.argv[-3:] == ("resume", "T1", "-")
    assert (new.stdin, resumed.stdin) == ("# task 1", "go on")


def test_codex_compaction_is_a_short_turn_with_the_limit_at_one() -> None:
    run = CodexAgent(("codex",), CODEX).compaction("T1", "Keep task 2.")

    assert run is not None
    assert run.argv[-5:] == ("-c", "model_auto_compact_token_limit=1", "resume", "T1", "-")
    assert "Keep task 2." in run.stdin and "ready" in run.stdin


def test_codex_reply_reads_the_thread_the_last_message_and_a_failed_turn() -> None:
    agent = CodexAgent(("codex",), CODEX)
    ok = lines(
        {"type": "thread.started", "thread_id": "T1"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Running it."}},
        {"type": "item.completed", "item": {"type": "error", "message": "a warning"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Done."}},
        {"type": "turn.completed", "usage": {"input_tokens": 3000}},
    )
    failed = lines(
        {"type": "thread.started", "thread_id": "T1"},
        {"type": "turn.failed", "error": {"message": "stream error: 500"}},
    )

    reply = agent.reply(ok, 0, None)
    assert (reply.session, reply.message, reply.error) == ("T1", "Done.", None)
    assert agent.reply(failed, 1, None).error == "stream error: 500"


# ---------------------------------------------------------------- a command


def test_a_command_gets_the_prompt_and_how_its_session_starts() -> None:
    agent = CommandAgent(("my-agent", "--headless"))

    run = agent.turn(Start.COMPACT, "S1", "the brief")

    assert run.argv == ("my-agent", "--headless")
    assert (run.stdin, dict(run.env)) == ("the brief", {"LOOP_SESSION_START": "compact"})
    assert agent.compaction("S1", "focus") is None
    reply = agent.reply("working\n\nfinished task 3\n", 0, "S1")
    assert (reply.session, reply.message, reply.error) == ("S1", "finished task 3", None)
    assert agent.reply("", 2, "S1").error == "exited 2"


# ---------------------------------------------------------------- choosing


def test_agent_command_replaces_the_program_only_for_its_own_kind(tmp_path: Path) -> None:
    program = tmp_path / "my-claude"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    env = {"PATH": str(tmp_path)}

    assert executable(settings("claude", (str(program), "--x")), AgentKind.CLAUDE, env) == (
        str(program),
        "--x",
    )
    with pytest.raises(UsageError, match="cannot find the codex program 'codex'"):
        executable(settings("claude", (str(program),)), AgentKind.CODEX, env)
    assert choose_kind(settings("codex"), None) is AgentKind.CODEX
    assert choose_kind(settings("codex"), "claude") is AgentKind.CLAUDE


def test_kind_command_needs_a_command_line() -> None:
    with pytest.raises(UsageError, match="needs the program to run in agent.command"):
        make_agent(settings("claude"), AgentKind.COMMAND, {"PATH": os.defpath})


# ---------------------------------------------------------------- processes and records


def test_run_process_feeds_stdin_and_hands_over_each_line(tmp_path: Path) -> None:
    seen: list[str] = []
    script = "import sys\nfor line in sys.stdin: print(line.strip().upper(), flush=True)\n"
    run = Invocation((sys.executable, "-c", script), stdin="one\ntwo\n")

    done = run_process(run, cwd=tmp_path, env=dict(os.environ), timeout=30, on_line=seen.append)

    assert done.ok and done.stdout == "ONE\nTWO\n"
    assert seen == ["ONE", "TWO"]  # each line as it came, without its newline


def test_run_process_reports_a_missing_program(tmp_path: Path) -> None:
    done = run_process(Invocation(("/nonexistent/agent",)), cwd=tmp_path, env={}, timeout=5)

    assert (done.returncode, done.ok) == (127, False)


def test_a_compaction_counts_only_when_written_after_the_offset(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(json.dumps({"type": "system", "subtype": "compact_boundary"}) + "\n")
    offset = size_of(transcript)
    marker = ("subtype", "compact_boundary")

    assert not compacted_since(transcript, offset, marker)
    with transcript.open("a") as handle:
        handle.write(json.dumps({"type": "user", "message": "compact_boundary"}) + "\n")
    assert not compacted_since(transcript, offset, marker)  # the word alone is not the line
    with transcript.open("a") as handle:
        handle.write(json.dumps({"type": "system", "subtype": "compact_boundary"}) + "\n")
    assert compacted_since(transcript, offset, marker)


def test_events_serialise_with_camel_case_keys_and_exit_codes() -> None:
    event = AgentFinished("3", 1, "S1", 0, 1.5, 6500, 1000000, "done", "passed")
    summary = RunSummary(
        "issue-7", "claude", "interrupted", "Ctrl-C", ("1",), ("S1",), {}, 0, 1, None, 2.0, None
    )

    assert event.to_json() == {
        "event": "agent-finished",
        "task": "3",
        "run": 1,
        "session": "S1",
        "exitCode": 0,
        "seconds": 1.5,
        "tokens": 6500,
        "window": 1000000,
        "outcome": "done",
        "detail": "passed",
        "lane": None,  # a serial run's; --parallel sets it
    }
    assert summary.exit_code == 130
    assert summary.to_json()["tasksDone"] == ("1",)
