"""Tokens in use from a Claude Code session transcript (harness-telemetry.md §3.3).

Walking back from the end of ``<session-id>.jsonl``:

* a ``system``/``compact_boundary`` line met before any usable usage means the
  count is stale: the reading is *just compacted*, with ``compactMetadata``'s
  ``preTokens`` and (Claude Code 2.1.328 writes it) its estimate ``postTokens``;
* otherwise the newest ``assistant`` line that is not a sidechain, not
  ``<synthetic>`` and carries ``message.usage`` gives the count. One API reply
  is written as one line per content block, all with the same ``message.id``
  and usage; the newest line wins, so no reply is counted twice;
* in use = ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``
  (disjoint on Anthropic; the statusline's ``used_percentage`` numerator).
  Output tokens are not part of it.

The window comes from the headless result's ``contextWindow``, else the model
id, else configuration — in that order — and the reading says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.telemetry.jsonl import count, field, parse_object, text
from the_loop.telemetry.reading import (
    ContextReading,
    Harness,
    ReadingState,
    Source,
    WindowSource,
)
from the_loop.telemetry.tail import DEFAULT_BUDGET, TailLine, TailReader, size_words
from the_loop.telemetry.window_choice import choose_window
from the_loop.telemetry.windows import ONE_MILLION_SUFFIX

if TYPE_CHECKING:
    from typing import Any

# Only lines holding one of these are parsed: tool results can be megabytes of JSON.
_CANDIDATES = (b'"usage"', b"compact_boundary")
_USAGE_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@dataclass(frozen=True)
class _Found:
    line: TailLine
    obj: Mapping[str, Any]
    usage: tuple[tuple[str, int], ...] | None  # None: a compact boundary


def read_claude_transcript(
    path: Path,
    *,
    result_windows: Mapping[str, int] | None = None,
    configured_window: int | None = None,
    budget: int = DEFAULT_BUDGET,
) -> ContextReading:
    """The context reading of the session whose transcript is ``path``.

    ``result_windows`` maps model → ``contextWindow`` from a headless
    ``claude -p --output-format json`` result (see ``result_context_windows``);
    the transcript's model picks its entry, or the only entry is used.
    ``configured_window`` is the last resort. Raises ``OSError`` if ``path``
    cannot be read; garbled lines are skipped and counted.
    """
    reader = TailReader(path, budget=budget)
    found, skipped = _newest_record(reader)
    if found is None:
        window, source, _ = choose_window(  # no count: a window gap is no news
            [
                (WindowSource.RESULT, _result_window(result_windows, None)),
                (WindowSource.CONFIG, configured_window),
            ],
            model=None,
        )
        return ContextReading(
            harness=Harness.CLAUDE,
            session_id=path.stem or None,
            state=ReadingState.UNKNOWN,
            tokens_in_use=None,
            window=window,
            window_source=source,
            model=None,
            source=Source(path),
            reason=_why_nothing(reader),
            bytes_read=reader.bytes_read,
            skipped_lines=skipped,
        )
    where = Source(path, found.line.offset, reader.line_number(found.line.offset))
    session = text(found.obj.get("sessionId")) or path.stem or None
    if found.usage is None:
        window, source, _ = choose_window(  # no count: a window gap is no news
            [
                (WindowSource.RESULT, _result_window(result_windows, None)),
                (WindowSource.CONFIG, configured_window),
            ],
            model=None,
        )
        return ContextReading(
            harness=Harness.CLAUDE,
            session_id=session,
            state=ReadingState.JUST_COMPACTED,
            tokens_in_use=None,
            window=window,
            window_source=source,
            model=None,
            source=where,
            pre_tokens=count(field(found.obj, "compactMetadata", "preTokens")),
            post_tokens=count(field(found.obj, "compactMetadata", "postTokens")),
            reason="compacted since the last usage record; the next reply gives a fresh count",
            bytes_read=reader.bytes_read,
            skipped_lines=skipped,
        )
    model = text(field(found.obj, "message", "model"))
    window, source, notes = choose_window(
        [
            (WindowSource.RESULT, _result_window(result_windows, model)),
            (WindowSource.MODEL, None),
            (WindowSource.CONFIG, configured_window),
        ],
        model=_window_model(found.obj, model),
    )
    return ContextReading(
        harness=Harness.CLAUDE,
        session_id=session,
        state=ReadingState.KNOWN,
        tokens_in_use=sum(n for _, n in found.usage),
        window=window,
        window_source=source,
        model=model,
        source=where,
        notes=notes,
        bytes_read=reader.bytes_read,
        skipped_lines=skipped,
        breakdown=found.usage,
    )


def result_context_windows(result: Mapping[str, Any]) -> dict[str, int]:
    """Model → ``contextWindow`` from a headless ``--output-format json`` result.

    The result's ``modelUsage`` has one entry per model the run used, e.g.
    ``{"claude-opus-5-5": {"contextWindow": 1000000, "maxOutputTokens": 128000, …}}``.
    Entries without a usable window are left out.
    """
    usage = result.get("modelUsage")
    if not isinstance(usage, Mapping):
        return {}
    windows = {}
    for model, entry in usage.items():
        size = count(field(entry, "contextWindow"))
        if isinstance(model, str) and size:
            windows[model] = size
    return windows


def _result_window(windows: Mapping[str, int] | None, model: str | None) -> int | None:
    if not windows:
        return None
    if model is not None and model in windows:
        return windows[model]
    if len(windows) == 1:
        return next(iter(windows.values()))
    return None  # several models and none is this transcript's: no honest pick


def _newest_record(reader: TailReader) -> tuple[_Found | None, int]:
    skipped = 0
    for line in reader.lines():
        if not any(key in line.data for key in _CANDIDATES):
            continue
        obj = parse_object(line.data)
        if obj is None:
            skipped += 1
            continue
        if obj.get("type") == "system" and obj.get("subtype") == "compact_boundary":
            return _Found(line, obj, None), skipped
        usage = _main_chain_usage(obj)
        if usage is not None:
            return _Found(line, obj, usage), skipped
    return None, skipped


def _main_chain_usage(obj: Mapping[str, Any]) -> tuple[tuple[str, int], ...] | None:
    """The three input counts of a main-chain assistant reply, else None."""
    if obj.get("type") != "assistant" or obj.get("isSidechain") is True:
        return None
    message = obj.get("message")
    if not isinstance(message, Mapping) or message.get("model") == "<synthetic>":
        return None
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return None
    base = count(usage.get("input_tokens"))
    if base is None:
        return None
    # The API sends null (or nothing) for a cache it did not use: that part is truly 0.
    return tuple((name, count(usage.get(name)) or 0) for name in _USAGE_FIELDS)


def _window_model(obj: Mapping[str, Any], model: str | None) -> str | None:
    """The id that decides the window: the requested ``…[1m]`` id wins over the sent one.

    Claude Code sends ``claude-sonnet-4-5[1m]`` as ``claude-sonnet-4-5`` plus a
    beta header, so only ``requestedModel`` keeps the suffix.
    """
    requested = text(obj.get("requestedModel"))
    if requested and requested.lower().endswith(ONE_MILLION_SUFFIX):
        return requested
    return model


def _why_nothing(reader: TailReader) -> str:
    if reader.size == 0:
        return "the transcript is empty"
    if reader.budget_exhausted:
        read = size_words(reader.bytes_read)
        return f"no assistant usage record in the last {read} of the transcript"
    return "no assistant usage record in the transcript yet"
