"""The fake model servers on their own, over real HTTP on 127.0.0.1 (no agent CLI needed).

These pin the rule order and the wire shapes the real CLIs rely on, so a change to a fake
fails here, fast, before it confuses an agent test.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.fake_anthropic import COMPACTION_MARKER as CLAUDE_COMPACTION
from harness.fake_anthropic import FakeAnthropic
from harness.fake_openai import COMPACTION_MARKER as CODEX_COMPACTION
from harness.fake_openai import FakeOpenAI
from harness.replies import (
    AnthropicUsage,
    HttpError,
    OpenAIUsage,
    Rule,
    Summary,
    Text,
    ToolCall,
    body_contains,
    is_compaction,
    prompt_contains,
    prompt_too_long_once,
    run_command,
)

HARNESS = Path(__file__).resolve().parent


def post(url: str, body: dict[str, Any]) -> tuple[int, str]:
    """POST JSON; the status and the body text, for errors too."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def sse(text: str) -> list[dict[str, Any]]:
    """The ``data:`` payloads of an event stream."""
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def messages_body(*messages: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    return {"model": "claude-test", "stream": stream, "messages": list(messages)}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


TOOL_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


def claude_text(events: list[dict[str, Any]]) -> str:
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    return "".join(d.get("text", "") for d in deltas)


@pytest.fixture
def anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(reply="default reply") as fake:
        yield fake


@pytest.fixture
def openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(reply="default reply") as fake:
        yield fake


def ask(fake: FakeAnthropic, *blocks: dict[str, Any]) -> str:
    status, body = post(f"{fake.base_url}/v1/messages?beta=true", messages_body(user(*blocks)))
    assert status == 200, body
    return claude_text(sse(body))


# --- rules ---------------------------------------------------------------------------------


def test_queued_replies_come_in_order_then_the_default(anthropic: FakeAnthropic) -> None:
    anthropic.enqueue(Text("one"), Text("two"))

    answers = [ask(anthropic, text(f"prompt {n}")) for n in range(3)]

    assert answers == ["one", "two", "default reply"]
    assert [r.prompt for r in anthropic.requests] == ["prompt 0", "prompt 1", "prompt 2"]


def test_compaction_is_answered_before_rules_and_tool_results(anthropic: FakeAnthropic) -> None:
    anthropic.settings.summary_reply = Summary("the gist")
    anthropic.enqueue(Text("queued"))

    summary = ask(anthropic, TOOL_RESULT, text(f"Your task is to {CLAUDE_COMPACTION}."))
    after = ask(anthropic, text("next"))

    assert "<summary>\nthe gist\n</summary>" in summary
    assert after == "queued"  # the compaction did not use up the queue
    first = anthropic.requests[0]
    assert first.is_compaction and first.is_tool_result


def test_a_compaction_rule_can_override_the_summary(anthropic: FakeAnthropic) -> None:
    anthropic.add(Rule(when=is_compaction, reply=Text("custom"), compaction=True))

    assert ask(anthropic, text(CLAUDE_COMPACTION)) == "custom"


def test_run_command_calls_bash_then_the_tool_result_gets_after_tool(
    anthropic: FakeAnthropic,
) -> None:
    anthropic.add(run_command("RUN:"))
    anthropic.settings.after_tool_reply = Text("done")

    status, body = post(
        f"{anthropic.base_url}/v1/messages",
        messages_body(user(text("<system-reminder>x</system-reminder>"), text("go\nRUN: ls -l"))),
    )
    after = ask(anthropic, TOOL_RESULT)

    events = sse(body)
    (call,) = [
        e["content_block"]
        for e in events
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use"
    ]
    arguments = "".join(
        e["delta"]["partial_json"]
        for e in events
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"
    )
    assert (status, call["name"], json.loads(arguments)["command"]) == (200, "Bash", "ls -l")
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    assert after == "done"
    assert anthropic.requests[0].prompt == "go\nRUN: ls -l"  # system reminders are skipped


def test_usage_comes_from_the_reply_or_the_server(anthropic: FakeAnthropic) -> None:
    anthropic.settings.usage = AnthropicUsage(input=1, cache_creation=2, cache_read=3, output=4)
    anthropic.enqueue(Text("x", usage=AnthropicUsage(input=10, cache_creation=20, output=40)))
    readings = []
    for _ in range(2):
        _, body = post(f"{anthropic.base_url}/v1/messages", messages_body(user(text("hi"))))
        events = sse(body)
        start = events[0]["message"]["usage"]
        readings.append(
            (
                start["input_tokens"],
                start["cache_creation_input_tokens"],
                start["cache_read_input_tokens"],
                events[-2]["usage"]["output_tokens"],
            )
        )

    assert readings == [(10, 20, AnthropicUsage.cache_read, 40), (1, 2, 3, 4)]


def test_errors_and_a_single_prompt_too_long(anthropic: FakeAnthropic) -> None:
    anthropic.add(prompt_too_long_once(prompt_contains("big")))
    anthropic.add(Rule(when=prompt_contains("fail"), reply=HttpError(529, "busy")))
    url = f"{anthropic.base_url}/v1/messages"

    too_long = post(url, messages_body(user(text("big"))))
    again = post(url, messages_body(user(text("big"))))
    busy = post(url, messages_body(user(text("fail"))))

    assert too_long[0] == 400 and "prompt is too long" in too_long[1]
    assert again[0] == 200
    assert busy[0] == 529
    assert json.loads(busy[1])["error"] == {"type": "overloaded_error", "message": "busy"}


def test_whole_body_search_finds_system_messages(anthropic: FakeAnthropic) -> None:
    note = 'Loop note: "task 3"\nis next.'
    anthropic.add(Rule(when=body_contains(note), reply=Text("saw it")))
    body = messages_body(user(text("hi")), {"role": "system", "content": [text(note)]})

    status, answer = post(f"{anthropic.base_url}/v1/messages", body)

    assert status == 200 and claude_text(sse(answer)) == "saw it"
    assert anthropic.requests_containing(note) == anthropic.requests
    assert anthropic.requests[0].prompt == "hi"


def test_non_streaming_request_gets_one_message(anthropic: FakeAnthropic) -> None:
    anthropic.enqueue(ToolCall("true", preface="ok"))

    status, body = post(
        f"{anthropic.base_url}/v1/messages", messages_body(user(text("x")), stream=False)
    )

    message = json.loads(body)
    assert status == 200
    assert [b["type"] for b in message["content"]] == ["text", "tool_use"]
    assert message["stop_reason"] == "tool_use"


def test_a_broken_rule_is_recorded_and_answered_500(anthropic: FakeAnthropic) -> None:
    anthropic.enqueue(Text("x", usage=OpenAIUsage()))  # wrong protocol's usage

    status, _ = post(f"{anthropic.base_url}/v1/messages", messages_body(user(text("x"))))

    assert status == 500
    assert anthropic.errors == ["FakeServerError: FakeAnthropic needs AnthropicUsage usage"]


def test_side_requests_are_answered_and_listed(anthropic: FakeAnthropic) -> None:
    status, body = post(f"{anthropic.base_url}/v1/messages/count_tokens", messages_body())

    assert (status, json.loads(body)) == (200, {"input_tokens": AnthropicUsage.input})
    assert anthropic.other_requests == [("POST", "/v1/messages/count_tokens")]
    assert anthropic.requests == []


# --- OpenAI --------------------------------------------------------------------------------


def responses_body(*items: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-test", "stream": True, "input": list(items), "tools": []}


def message(role: str, value: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": value}]}


def test_openai_tool_call_then_output_then_usage(openai: FakeOpenAI) -> None:
    openai.add(run_command("RUN:"))
    openai.settings.after_tool_reply = Text("done")
    openai.settings.usage = OpenAIUsage(input=900, cached=400, output=12, reasoning=5)
    url = f"{openai.base_url}/responses"
    prompt = [message("developer", "rules"), message("user", "RUN: echo hi")]

    _, first = post(url, responses_body(*prompt))
    call = [e["item"] for e in sse(first) if e["type"] == "response.output_item.done"][-1]
    output = {"type": "function_call_output", "call_id": call["call_id"], "output": "hi"}
    _, second = post(url, responses_body(*prompt, call, output))

    assert (call["name"], json.loads(call["arguments"])) == ("exec_command", {"cmd": "echo hi"})
    done = sse(second)[-1]
    assert done["type"] == "response.completed"
    assert done["response"]["output"][0]["content"][0]["text"] == "done"
    assert done["response"]["usage"] == {
        "input_tokens": 900,
        "input_tokens_details": {"cached_tokens": 400},
        "output_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 5},
        "total_tokens": 912,
    }
    numbers = [e["sequence_number"] for e in sse(second)]
    assert numbers == list(range(len(numbers)))
    assert [r.is_tool_result for r in openai.requests] == [False, True]


def test_openai_compaction_and_context_exceeded(openai: FakeOpenAI) -> None:
    openai.settings.summary_reply = Summary("the gist")
    openai.add(prompt_too_long_once(prompt_contains("huge")))
    openai.enqueue(Text("queued"))
    url = f"{openai.base_url}/responses"
    checkpoint = message("user", f"You are performing a {CODEX_COMPACTION}.")

    _, summary = post(url, responses_body(message("user", "earlier"), checkpoint))
    too_long = post(url, responses_body(message("user", "huge")))
    _, queued = post(url, responses_body(message("user", "huge")))

    def answer(body: str) -> str:
        return str(sse(body)[-1]["response"]["output"][0]["content"][0]["text"])

    assert answer(summary) == "the gist"
    assert too_long[0] == 400
    assert json.loads(too_long[1])["error"]["code"] == "context_length_exceeded"
    assert answer(queued) == "queued"
    assert [r.is_compaction for r in openai.requests] == [True, False, False]


# --- as a program ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "path", "body"),
    [
        (
            [str(HARNESS / "fake_anthropic.py")],
            "/v1/messages",
            messages_body(user(text("RUN: true")), stream=False),
        ),
        (
            ["-m", "harness.fake_openai"],
            "/v1/responses",
            {**responses_body(message("user", "RUN: true")), "stream": False},
        ),
    ],
    ids=["script", "module"],
)
def test_runs_as_a_program_and_logs_requests(
    argv: list[str], path: str, body: dict[str, Any]
) -> None:
    command = [sys.executable, *argv, "--port", "0", "--run-marker", "RUN:"]
    with subprocess.Popen(
        command, cwd=HARNESS.parent, stdout=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            banner = process.stdout.readline()
            assert banner.startswith("listening on http://127.0.0.1:")
            status, _ = post(banner.split()[-1] + path, body)
            logged = json.loads(process.stdout.readline())
        finally:
            process.send_signal(signal.SIGINT)
            try:
                code = process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()  # else the `with` block would wait for it for ever
                raise

    assert status == 200
    assert (logged["reply"], logged["prompt"], code) == ("ToolCall", "RUN: true", 0)
