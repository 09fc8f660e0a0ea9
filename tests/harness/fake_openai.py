"""A fake OpenAI Responses API for driving the real Codex CLI in tests.

It answers ``POST /v1/responses`` (streamed or not) with the reply the rules choose (see
``replies``) and records every request. Codex reaches it through a custom model provider
in ``$CODEX_HOME/config.toml`` whose ``base_url`` is :attr:`FakeOpenAI.base_url`.

In a test::

    with FakeOpenAI(reply="Hello.", after_tool="done") as fake:
        fake.add(run_command("RUN:"))       # "RUN: <cmd>" in the prompt -> exec_command call
        fake.settings.usage = OpenAIUsage(input=9000, cached=4000, output=50)

From a shell (``Ctrl-C`` stops it)::

    python tests/harness/fake_openai.py --port 8775 --run-marker RUN:

What Codex 0.169.0 needs is described in ``/work/shared/reference/real-clients.md`` §2: the
request ``input`` is a list of items (messages, ``function_call``, ``function_call_output``);
a tool result comes back as a final ``function_call_output`` item; the compaction request's
last user text contains "CONTEXT CHECKPOINT COMPACTION".
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
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
    HttpError,
    ModelRequest,
    OpenAIUsage,
    PromptTooLong,
    Reply,
    Summary,
    Text,
    ToolCall,
)

COMPACTION_MARKER = "CONTEXT CHECKPOINT COMPACTION"
CONTEXT_EXCEEDED = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)
_TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")


class FakeOpenAI(FakeModelServer):
    """The fake Responses API; ``base_url`` goes into the Codex provider's ``base_url``."""

    usage_type = OpenAIUsage

    def __init__(
        self,
        reply: str = "Hello from the fake OpenAI server.",
        after_tool: str = "Tool finished.",
        usage: OpenAIUsage | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        settings = Settings(
            usage=usage or OpenAIUsage(),
            default_reply=Text(reply),
            after_tool_reply=Text(after_tool),
        )
        super().__init__(settings, host=host, port=port)

    @property
    def base_url(self) -> str:
        """The provider ``base_url`` (Codex appends ``/responses``)."""
        return f"{self.origin}/v1"

    # -- protocol

    def is_model_call(self, method: str, path: str) -> bool:
        """``POST /v1/responses``."""
        return method == "POST" and path.split("?", 1)[0] == "/v1/responses"

    def parse(self, index: int, path: str, headers: Mapping[str, str], raw: str) -> ModelRequest:
        """Read the prompt, tool-result and compaction facts from a Responses request."""
        body = json.loads(raw)
        items = [item for item in body.get("input", []) if isinstance(item, dict)]
        last = _last_turn_item(items)
        user_text = _text_of(last) if last is not None and _is_user_message(last) else ""
        return ModelRequest(
            index=index,
            path=path,
            headers=headers,
            body=body,
            raw=raw,
            prompt=user_text,
            is_tool_result=last is not None and last.get("type") in _TOOL_OUTPUTS,
            is_compaction=COMPACTION_MARKER in user_text,
        )

    def answer(self, out: SseWriter, request: ModelRequest, reply: Reply, usage: Any) -> None:
        """Write the reply as a Responses event stream, or as one JSON response."""
        if isinstance(reply, HttpError):
            out.json(reply.status, _error(reply.status, reply.message, None))
            return
        if isinstance(reply, PromptTooLong):
            out.json(400, _error(400, CONTEXT_EXCEEDED, "context_length_exceeded"))
            return
        items = _output_items(request, reply)
        response = {
            "id": fake_id("resp", request.index),
            "object": "response",
            "created_at": int(time.time()),
            "model": str(request.body.get("model", "gpt-fake")),
            "status": "completed",
            "output": items,
            "usage": usage.as_api(),
        }
        if not request.body.get("stream"):
            out.json(200, response)
            return
        _stream(out, response, items)


def _is_user_message(item: Mapping[str, Any]) -> bool:
    return item.get("type", "message") == "message" and item.get("role") == "user"


def _last_turn_item(items: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest user message or tool output: what the model is being asked to answer."""
    for item in reversed(items):
        if _is_user_message(item) or item.get("type") in _TOOL_OUTPUTS:
            return item
    return None


def _text_of(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") for p in content or [] if isinstance(p, dict)]
    return "\n".join(part for part in parts if part)


def _shell_call(request: ModelRequest, command: str) -> tuple[str, dict[str, Any]]:
    """The tool name and arguments for ``command``, in the shell tool this request offers."""
    offered = {tool.get("name") for tool in request.body.get("tools", []) if isinstance(tool, dict)}
    if "exec_command" in offered or not offered & {"shell_command", "shell"}:
        return "exec_command", {"cmd": command}
    if "shell_command" in offered:
        return "shell_command", {"command": command}
    return "shell", {"command": ["bash", "-lc", command]}


def _output_items(request: ModelRequest, reply: Reply) -> list[dict[str, Any]]:
    index = request.index
    if isinstance(reply, (Text, Summary)):
        text = reply.text if isinstance(reply, Text) else reply.summary
        return [_message_item(fake_id("msg", index), text)]
    if isinstance(reply, ToolCall):
        name, arguments = _shell_call(request, reply.command)
        call = {
            "type": "function_call",
            "id": fake_id("fc", index),
            "call_id": fake_id("call", index),
            "name": name,
            "arguments": json.dumps(arguments),
            "status": "completed",
        }
        preface = [_message_item(fake_id("msg", index), reply.preface)] if reply.preface else []
        return [*preface, call]
    raise TypeError(f"not a content reply: {reply!r}")


def _message_item(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _error(status: int, message: str, code: str | None) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"type": kind, "message": message, "code": code, "param": None}}


class _Events:
    """Numbers the events of one stream (``sequence_number``) and writes them."""

    def __init__(self, out: SseWriter) -> None:
        self._out = out
        self._sequence = 0

    def send(self, kind: str, **fields: Any) -> None:
        self._out.event(kind, {"type": kind, "sequence_number": self._sequence, **fields})
        self._sequence += 1


def _stream(out: SseWriter, response: dict[str, Any], items: list[dict[str, Any]]) -> None:
    events = _Events(out)
    opening = {**response, "status": "in_progress", "output": []}
    del opening["usage"]
    events.send("response.created", response=opening)
    events.send("response.in_progress", response=opening)
    for position, item in enumerate(items):
        if item["type"] == "message":
            _stream_message(events, position, item)
        else:
            _stream_call(events, position, item)
    events.send("response.completed", response=response)


def _stream_message(events: _Events, position: int, item: dict[str, Any]) -> None:
    text = item["content"][0]["text"]
    where = {"output_index": position, "item_id": item["id"], "content_index": 0}
    events.send(
        "response.output_item.added",
        output_index=position,
        item={**item, "status": "in_progress", "content": []},
    )
    events.send(
        "response.content_part.added",
        **where,
        part={"type": "output_text", "text": "", "annotations": []},
    )
    for piece in chunks(text):
        events.send("response.output_text.delta", **where, delta=piece)
    events.send("response.output_text.done", **where, text=text)
    events.send("response.content_part.done", **where, part=item["content"][0])
    events.send("response.output_item.done", output_index=position, item=item)


def _stream_call(events: _Events, position: int, item: dict[str, Any]) -> None:
    where = {"output_index": position, "item_id": item["id"]}
    events.send(
        "response.output_item.added",
        output_index=position,
        item={**item, "status": "in_progress", "arguments": ""},
    )
    for piece in chunks(item["arguments"]):
        events.send("response.function_call_arguments.delta", **where, delta=piece)
    events.send("response.function_call_arguments.done", **where, arguments=item["arguments"])
    events.send("response.output_item.done", output_index=position, item=item)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until interrupted, printing the origin and logging each request as JSON."""
    parser = command_line(
        "A fake OpenAI Responses API.", port=8775, reply="Hello from the fake OpenAI server."
    )
    parser.add_argument("--input-tokens", type=int, default=OpenAIUsage.input)
    parser.add_argument("--cached-tokens", type=int, default=OpenAIUsage.cached)
    parser.add_argument("--output-tokens", type=int, default=OpenAIUsage.output)
    parser.add_argument("--reasoning-tokens", type=int, default=OpenAIUsage.reasoning)
    args = parser.parse_args(argv)
    usage = OpenAIUsage(
        args.input_tokens, args.cached_tokens, args.output_tokens, args.reasoning_tokens
    )
    return serve_command_line(FakeOpenAI(args.reply, args.after_tool, usage, port=args.port), args)


if __name__ == "__main__":
    sys.exit(main())
