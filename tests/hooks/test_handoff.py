"""Hand-off where the harness cannot clear itself (issue 21, item 1), with the real Claude Code.

A session with loop's hooks installed and ``taskBoundary: clear`` finishes task 1
(``loop task done`` through its Bash tool). It cannot ``/clear`` itself, so loop's
PostToolUse reply tells it to hand the next task to a fresh subagent with loop's
brief as the whole prompt. The fake model follows: it calls the Agent tool with the
brief found between the markers. The subagent's first request carries the brief, and
the SubagentStart hook completes the clear's reset record with the subagent's id,
exactly once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness.agents import ClaudeCli
from harness.fake_anthropic import FakeAnthropic
from harness.replies import ModelRequest, Reply, Rule, SubagentCall, Text, run_command
from helpers.hooks import LOOP_BIN, history, install_hooks

from the_loop.hooks.handoff import BRIEF_END, BRIEF_START

pytestmark = pytest.mark.agents

DONE = (
    f"RUN: {LOOP_BIN} task done 7 1 --did 'the config key' --tests 'true: passed' "
    "--next 'implement task 2: the retry ledger'"
)


SENT: list[str] = []


def hand_off(request: ModelRequest) -> Reply:
    """What a model does with loop's hand-off: the Agent tool, the brief as the prompt."""
    text = next(t for t in request.strings() if BRIEF_START in t)
    brief = text.split(BRIEF_START + "\n", 1)[1].split("\n" + BRIEF_END, 1)[0]
    SENT.append(brief)
    return SubagentCall(prompt=brief)


@pytest.fixture
def clearing(in_task: Path) -> Path:
    config = in_task / ".the-loop/config.yaml"
    config.write_text(config.read_text() + "contextManagement:\n  taskBoundary: clear\n")
    return install_hooks(in_task, "claude")


def test_a_finished_task_hands_the_next_one_to_a_subagent_with_the_brief(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, clearing: Path
) -> None:
    fake_anthropic.add(
        run_command("RUN:"),
        Rule(when=lambda r: r.is_tool_result and r.contains(BRIEF_START), reply=hand_off, times=1),
        Rule(
            when=lambda r: r.prompt.startswith("# issue-7 task 2"),
            reply=Text("Task 2 is underway."),
        ),
    )
    fake_anthropic.settings.after_tool_reply = Text("Handed over.")

    out = claude_cli.prompt(DONE, "--allowedTools", "Bash,Agent,Task", cwd=clearing).ok().json()

    # The subagent's first request is the brief, whole.
    firsts = [r for r in fake_anthropic.requests if r.prompt.startswith("# issue-7 task 2")]
    assert firsts, [r.prompt[:60] for r in fake_anthropic.requests]
    assert firsts[0].prompt == SENT[-1]  # the brief the hook handed over, unchanged
    assert "loop task done issue-7 2 --did" in firsts[0].prompt
    assert len([m for m in firsts[0].body["messages"] if m["role"] == "user"]) == 1  # fresh
    # The hand-off said what to do without asking a person first.
    offered = next(r for r in fake_anthropic.requests if r.contains(BRIEF_START))
    assert offered.contains("Hand the next unit to a fresh subagent")
    # The clear's record: completed with the subagent's session, once.
    closed = [
        h for h in history(clearing) if h["mode"] == "clear" and h["session"] == out["session_id"]
    ]
    assert len(closed) == 1, json.dumps(history(clearing), indent=1)
    (record,) = closed
    assert record["state"] == "completed"
    assert record["confirmed_session"].startswith(f"{out['session_id']}/agent-")
    assert "handed off to subagent" in record["note"]
