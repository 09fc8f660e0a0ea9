"""How many tokens a session has used so far, from the harness's own records.

Both harnesses keep a running total per session, and that total is what the
ledger reads; a run's share is the total after it minus the total before it
(``store.Cursors`` keeps the last total attributed per session).

* **Claude Code** writes the session's ``modelUsage`` (per model: input,
  output, cache-read and cache-creation tokens, compaction passes included) into
  every headless ``result`` line and into the transcript's ``cost-state`` lines.
  The per-message ``usage`` of ``assistant`` lines is not used: it repeats per
  content block, and a ``/compact`` pass writes none into the main transcript.
* **Codex** writes ``total_token_usage`` into each ``token_count`` event of the
  rollout (``exec --json``'s ``turn.completed`` repeats the same total, without
  the model); the model is the newest ``turn_context``'s.
* A **command** agent reports its own runs, if it wants them counted, by
  appending JSON lines ``{"model", "input", "output", "cacheRead",
  "cacheWrite"}`` to the file named by ``$LOOP_USAGE_FILE``. Each line is one
  run's share (not a running total). A run that writes nothing has no tokens
  (``RunRecord.tokens_known`` false), which is not the same as zero.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.ledger.tokens import Tokens
from the_loop.telemetry.jsonl import count, field, parse_object, text
from the_loop.telemetry.tail import TailReader

if TYPE_CHECKING:
    from typing import Any

_BUDGET = 8 * 1024 * 1024  # bytes of a transcript's tail read for its newest total
UNKNOWN_MODEL = "unknown"


def _number(value: Any) -> int:
    found = count(value)
    return found if found is not None else 0


def claude_model_usage(model_usage: Any) -> dict[str, Tokens] | None:
    """Claude Code's ``modelUsage`` object as counts per model (None when absent)."""
    if not isinstance(model_usage, Mapping):
        return None
    usage = {}
    for model, counts in model_usage.items():
        if not isinstance(counts, Mapping):
            continue
        usage[str(model)] = Tokens(
            input=_number(counts.get("inputTokens")),
            output=_number(counts.get("outputTokens")),
            cache_read=_number(counts.get("cacheReadInputTokens")),
            cache_write=_number(counts.get("cacheCreationInputTokens")),
        )
    return usage


def claude_result_total(stdout: str) -> dict[str, Tokens] | None:
    """The session total in the newest ``result`` line a ``claude -p`` run printed."""
    for line in reversed(stdout.splitlines()):
        if '"result"' not in line or '"modelUsage"' not in line:
            continue
        obj = parse_object(line.strip().encode())
        if obj is not None and obj.get("type") == "result":
            return claude_model_usage(obj.get("modelUsage"))
    return None


def claude_transcript_total(path: Path | None) -> dict[str, Tokens] | None:
    """The session total in the transcript's newest ``cost-state`` line (None: none yet)."""
    obj = _newest(path, b'"cost-state"', lambda o: o.get("type") == "cost-state")
    return claude_model_usage(obj.get("modelUsage")) if obj is not None else None


def codex_usage(total: Any, model: str | None) -> dict[str, Tokens] | None:
    """A Codex ``total_token_usage`` (OpenAI convention) as disjoint counts for ``model``."""
    if not isinstance(total, Mapping):
        return None
    prompt = _number(total.get("input_tokens"))
    cached = _number(total.get("cached_input_tokens"))
    written = _number(total.get("cache_write_input_tokens"))
    tokens = Tokens(
        input=max(0, prompt - cached - written),
        output=_number(total.get("output_tokens")),
        cache_read=cached,
        cache_write=written,
    )
    return {model or UNKNOWN_MODEL: tokens}


def codex_rollout_total(path: Path | None) -> dict[str, Tokens] | None:
    """The thread total in the rollout's newest ``token_count`` event (None: none yet)."""
    event = _newest(
        path,
        b'"total_token_usage"',
        lambda o: (
            field(o, "payload", "type") == "token_count"
            and isinstance(field(o, "payload", "info", "total_token_usage"), Mapping)
        ),
    )
    if event is None:
        return None
    context = _newest(path, b'"turn_context"', lambda o: o.get("type") == "turn_context")
    model = text(field(context, "payload", "model")) if context is not None else None
    return codex_usage(field(event, "payload", "info", "total_token_usage"), model)


def codex_stdout_total(stdout: str, model: str | None) -> dict[str, Tokens] | None:
    """The thread total in the newest ``turn.completed`` event of ``codex exec --json``."""
    for line in reversed(stdout.splitlines()):
        if '"turn.completed"' not in line:
            continue
        obj = parse_object(line.strip().encode())
        if obj is not None and obj.get("type") == "turn.completed":
            return codex_usage(obj.get("usage"), model)
    return None


def command_reported(path: Path) -> dict[str, Tokens] | None:
    """What a command agent appended to ``$LOOP_USAGE_FILE``, summed per model.

    None when it wrote nothing (its tokens are unknown); malformed lines are skipped.
    """
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    usage: dict[str, Tokens] = {}
    seen = False
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        seen = True
        model = text(obj.get("model")) or UNKNOWN_MODEL
        tokens = Tokens(
            input=_number(obj.get("input")),
            output=_number(obj.get("output")),
            cache_read=_number(obj.get("cacheRead")),
            cache_write=_number(obj.get("cacheWrite")),
        )
        usage[model] = usage.get(model, Tokens()) + tokens
    return usage if seen else None


def _newest(path: Path | None, needle: bytes, wanted: Any) -> Mapping[str, Any] | None:
    """The newest line of ``path`` holding ``needle`` whose object ``wanted`` accepts."""
    if path is None:
        return None
    try:
        for line in TailReader(path, budget=_BUDGET).lines():
            if needle not in line.data:
                continue
            obj = parse_object(line.data)
            if obj is not None and wanted(obj):
                return obj
    except OSError:
        return None
    return None
