"""Builders for hand-written transcript and rollout lines, in the shapes the real CLIs write.

Shapes follow real-clients.md (Claude Code 2.1.328, Codex 0.169.0); only the
keys the readers look at, plus a few neighbours so a reader cannot cheat by
matching the whole line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SESSION = "649092c6-0d5e-4b7a-9a57-2f1f3c2d1e0a"
THREAD = "01a22c15-7e4b-7c3d-8f00-0123456789ab"


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def claude_user(text: str = "say hi") -> str:
    return dumps(
        {
            "type": "user",
            "sessionId": SESSION,
            "isSidechain": False,
            "uuid": "u-1",
            "message": {"role": "user", "content": text},
        }
    )


def claude_assistant(
    *,
    msg_id: str = "msg_1",
    input_tokens: int | None = 2,
    cache_creation: int | None = 5139,
    cache_read: int | None = 9631,
    output: int = 14,
    model: str = "claude-opus-5-5",
    requested: str | None = None,
    sidechain: bool = False,
    block: int = 0,
    session: str = SESSION,
) -> str:
    usage: dict[str, Any] = {"output_tokens": output, "service_tier": "standard"}
    if input_tokens is not None:
        usage["input_tokens"] = input_tokens
    usage["cache_creation_input_tokens"] = cache_creation
    usage["cache_read_input_tokens"] = cache_read
    return dumps(
        {
            "type": "assistant",
            "apiBlockIndex": block,
            "isSidechain": sidechain,
            "sessionId": session,
            "requestId": "req_1",
            "requestedModel": requested or model,
            "uuid": f"a-{msg_id}-{block}",
            "message": {
                "id": msg_id,
                "model": model,
                "role": "assistant",
                "content": [{"type": "text", "text": "Hello"}],
                "usage": usage,
            },
        }
    )


def compact_boundary(
    pre_tokens: int | None = 155025, trigger: str = "manual", post_tokens: int | None = None
) -> str:
    meta: dict[str, Any] = {"trigger": trigger}
    if pre_tokens is not None:
        meta["preTokens"] = pre_tokens
    if post_tokens is not None:
        meta["postTokens"] = post_tokens
    return dumps(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "sessionId": SESSION,
            "parentUuid": None,
            "compactMetadata": meta,
        }
    )


def compact_summary() -> str:
    return dumps(
        {
            "type": "user",
            "sessionId": SESSION,
            "isCompactSummary": True,
            "message": {
                "role": "user",
                "content": "This session is being continued from a previous conversation…",
            },
        }
    )


def tool_result(size: int) -> str:
    """A user line carrying a big tool result (mentions "usage" to defeat naive filters)."""
    body = ("x" * 70 + " usage\n") * (size // 77 + 1)
    return dumps(
        {
            "type": "user",
            "sessionId": SESSION,
            "message": {"role": "user", "content": [{"type": "tool_result", "content": body}]},
        }
    )


def codex_meta(thread: str = THREAD) -> str:
    return dumps({"type": "session_meta", "payload": {"id": thread, "cwd": "/tmp/repo"}})


def codex_turn_context(model: str = "gpt-5.5") -> str:
    return dumps({"type": "turn_context", "payload": {"cwd": "/tmp/repo", "model": model}})


def codex_task_started(window: int | None = 258400) -> str:
    return dumps(
        {"type": "event_msg", "payload": {"type": "task_started", "model_context_window": window}}
    )


def codex_token_count(
    *,
    input_tokens: int = 36522,
    cached: int = 2432,
    output: int = 606,
    total: int | None = 37128,
    window: int | None = 258400,
    info: bool = True,
) -> str:
    last: dict[str, Any] = {
        "input_tokens": input_tokens,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "reasoning_output_tokens": 0,
    }
    if total is not None:
        last["total_tokens"] = total
    payload: dict[str, Any] = {"type": "token_count", "rate_limits": {"primary": None}}
    payload["info"] = (
        {
            "total_token_usage": {**last, "input_tokens": input_tokens * 3},
            "last_token_usage": last,
            "model_context_window": window,
        }
        if info
        else None
    )
    return dumps({"type": "event_msg", "payload": payload})


def codex_post_compaction_estimate(total: int = 6884) -> str:
    """The token_count Codex 0.169.0 writes right after compacting: no request, a total."""
    zero = {
        "input_tokens": 0,
        "cached_input_tokens": 0,
        "cache_write_input_tokens": 0,
        "output_tokens": 0,
        "reasoning_output_tokens": 0,
    }
    info = {
        "total_token_usage": {**zero, "input_tokens": 18100, "total_tokens": 18320},
        "last_token_usage": {**zero, "total_tokens": total},
        "last_usage_includes_reasoning": True,
        "model_context_window": 258400,
    }
    return dumps({"type": "event_msg", "payload": {"type": "token_count", "info": info}})


def codex_compacted() -> str:
    return dumps(
        {"type": "compacted", "payload": {"message": "Another language model started to solve"}}
    )


def write_lines(path: Path, lines: Iterable[str], *, final_newline: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines)
    path.write_text(text + ("\n" if final_newline and text else ""), encoding="utf-8")
    return path
