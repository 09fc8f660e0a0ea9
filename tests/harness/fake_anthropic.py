"""A fake Anthropic Messages API for driving the real Claude Code CLI in tests.

It answers ``POST /v1/messages`` (streamed or not) with the reply the rules choose (see
``replies``), answers ``count_tokens`` and health checks, and records every request.

In a test::

    with FakeAnthropic(reply="Hello.", after_tool="done") as fake:
        fake.add(run_command("RUN:"))       # "RUN: <cmd>" in the prompt -> a Bash tool call
        fake.enqueue(HttpError(500))        # the next request fails once
        env = {"ANTHROPIC_BASE_URL": fake.base_url, ...}

From a shell (``Ctrl-C`` stops it)::

    python tests/harness/fake_anthropic.py --port 8765 --run-marker RUN: --log requests.jsonl

What Claude Code 2.1.328 needs is described in ``/work/shared/reference/real-clients.md`` §1:
the prompt is the last text block of the last ``user`` message (``role: "system"`` messages may
follow it), the summary request contains "create a detailed summary of the conversation so
far", and usage is the ``message_start`` usage with ``output_tokens`` from ``message_delta``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the ``harness`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.fake_server import (
    FakeModelServer,
    Settings,
    SseWriter,
    chunks,
    command_line,
    fake_id,
    serve_command_line,
)
from harness.replies import (
    AnthropicUsage,
    HttpError,
    ModelRequest,
    PromptTooLong,
    Reply,
    SubagentCall,
    Summary,
    Text,
    ToolCall,
)

COMPACTION_MARKER = "create a detailed summary of the conversation so far"
PROMPT_TOO_LONG = "prompt is too long: 250000 tokens > 200000 maximum"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class FakeAnthropic(FakeModelServer):
    """The fake Anthropic API; ``base_url`` goes into ``ANTHROPIC_BASE_URL``."""

    usage_type = AnthropicUsage

    def __init__(
        self,
        reply: str = "Hello from the fake Anthropic server.",
        after_tool: str = "Tool finished.",
        usage: AnthropicUsage | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        settings = Settings(
            usage=usage or AnthropicUsage(),
            default_reply=Text(reply),
            after_tool_reply=Text(after_tool),
        )
        super().__init__(settings, host=host, port=port)

    @property
    def base_url(self) -> str:
        """The value for ``ANTHROPIC_BASE_URL`` (the CLI appends ``/v1/messages``)."""
        return self.origin

    # -- protocol

    def is_model_call(self, method: str, path: str) -> bool:
        """``POST /v1/messages`` (any query string); ``count_tokens`` is not a model call."""
        route = path.split("?", 1)[0]
        return method == "POST" and route == "/v1/messages"

    def parse(self, index: int, path: str, headers: Mapping[str, str], raw: str) -> ModelRequest:
        """Read the prompt, tool-result and compaction facts from a Messages request."""
        body = json.loads(raw)
        blocks = _last_user_blocks(body.get("messages", []))
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        prompts = [t for t in texts if not t.lstrip().startswith("<system-reminder>")]
        return ModelRequest(
            index=index,
            path=path,
            headers=headers,
            body=body,
            raw=raw,
            prompt=prompts[-1] if prompts else "",
            is_tool_result=any(b.get("type") == "tool_result" for b in blocks),
            is_compaction=any(COMPACTION_MARKER in t for t in texts),
        )

    def answer(self, out: SseWriter, request: ModelRequest, reply: Reply, usage: Any) -> None:
        """Write the reply as a Messages stream, or as one JSON message if not streaming."""
        if isinstance(reply, HttpError):
            out.json(reply.status, _error(reply.status, reply.message))
            return
        if isinstance(reply, PromptTooLong):
            out.json(400, _error(400, PROMPT_TOO_LONG))
            return
        content, stop_reason = _content(request.index, reply, _tool_names(request.body))
        model = str(request.body.get("model", "claude-fake"))
        message_id = fake_id("msg", request.index)
        if not request.body.get("stream"):
            out.json(200, _message(message_id, model, content, stop_reason, usage))
            return
        _stream(out, message_id, model, content, stop_reason, usage)

    def answer_other(self, out: SseWriter, method: str, path: str) -> None:
        """``count_tokens`` gets a plausible count; health checks get ``200 {}``."""
        if path.split("?", 1)[0] == "/v1/messages/count_tokens":
            out.json(200, {"input_tokens": self.settings.usage.input})
        elif method == "POST":
            out.json(404, _error(404, f"no route {path}"))
        else:
            out.json(200, {})


def _last_user_blocks(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """The content blocks of the last ``user`` message (system messages may come after it)."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return [{"type": "text", "text": content}]
            return [b for b in content or [] if isinstance(b, dict)]
    return []


def _tool_names(body: Mapping[str, Any]) -> set[str]:
    tools = body.get("tools")
    return (
        {str(t.get("name")) for t in tools if isinstance(t, dict)}
        if isinstance(tools, list)
        else set()
    )


def _content(
    index: int, reply: Reply, tools: Collection[str] = ()
) -> tuple[list[dict[str, Any]], str]:
    """The content blocks and stop reason of a successful reply."""
    if isinstance(reply, SubagentCall):
        name = "Agent" if "Agent" in tools or "Task" not in tools else "Task"
        call = {
            "type": "tool_use",
            "id": fake_id("toolu", index),
            "name": name,
            "input": {
                "description": reply.description,
                "prompt": reply.prompt,
                "subagent_type": reply.subagent_type,
            },
        }
        return [call], "tool_use"
    if isinstance(reply, Text):
        return [{"type": "text", "text": reply.text}], "end_turn"
    if isinstance(reply, Summary):
        analysis = "<analysis>\nSummarising as asked.\n</analysis>"
        text = f"{analysis}\n<summary>\n{reply.summary}\n</summary>"
        return [{"type": "text", "text": text}], "end_turn"
    if isinstance(reply, ToolCall):
        call = {
            "type": "tool_use",
            "id": fake_id("toolu", index),
            "name": "Bash",
            "input": {"command": reply.command, "description": "Run the scripted command"},
        }
        preface = [{"type": "text", "text": reply.preface}] if reply.preface else []
        return [*preface, call], "tool_use"
    raise TypeError(f"not a content reply: {reply!r}")


def _error(status: int, message: str) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def _message(
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str,
    usage: AnthropicUsage,
) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage.as_api(),
    }


def _stream(
    out: SseWriter,
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str,
    usage: AnthropicUsage,
) -> None:
    start = _message(message_id, model, [], "", usage)
    start["stop_reason"] = None
    start["usage"] = {**usage.as_api(), "output_tokens": 1}  # the real API starts at 1
    out.event("message_start", {"type": "message_start", "message": start})
    out.event("ping", {"type": "ping"})
    for index, block in enumerate(content):
        _stream_block(out, index, block)
    out.event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": usage.output},
        },
    )
    out.event("message_stop", {"type": "message_stop"})


def _stream_block(out: SseWriter, index: int, block: dict[str, Any]) -> None:
    if block["type"] == "text":
        opening: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in chunks(block["text"])]
    else:
        opening = {**block, "input": {}}
        arguments = json.dumps(block["input"])
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in chunks(arguments)]
    start = {"type": "content_block_start", "index": index, "content_block": opening}
    out.event("content_block_start", start)
    for delta in deltas:
        out.event(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
    out.event("content_block_stop", {"type": "content_block_stop", "index": index})


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until interrupted, printing the base URL and logging each request as JSON."""
    parser = command_line(
        "A fake Anthropic Messages API.", port=8765, reply="Hello from the fake Anthropic server."
    )
    parser.add_argument("--input-tokens", type=int, default=AnthropicUsage.input)
    parser.add_argument("--cache-creation", type=int, default=AnthropicUsage.cache_creation)
    parser.add_argument("--cache-read", type=int, default=AnthropicUsage.cache_read)
    parser.add_argument("--output-tokens", type=int, default=AnthropicUsage.output)
    args = parser.parse_args(argv)
    usage = AnthropicUsage(
        args.input_tokens, args.cache_creation, args.cache_read, args.output_tokens
    )
    return serve_command_line(
        FakeAnthropic(args.reply, args.after_tool, usage, port=args.port), args
    )


if __name__ == "__main__":
    sys.exit(main())
