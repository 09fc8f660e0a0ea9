"""Tokens in use from a Codex rollout file (harness-telemetry.md §3.4).

Walking back from the end of ``rollout-<ts>-<thread-id>.jsonl``, the newest
``event_msg`` whose payload is a ``token_count`` with a non-null ``info`` gives:

* in use = ``info.last_token_usage.total_tokens`` (input + output of the last
  request; ``input_tokens`` already includes the cached part). This is the
  number Codex's own UI and Datarim use; the breakdown keeps the parts;
* the window = ``info.model_context_window``.

``info`` is null on rate-limit-only pings; those are passed over. A
``compacted`` line newer than every usable ``token_count`` makes the reading
*just compacted*; the count before it, when within reach, is ``pre_tokens``.

While a tool call is running (a hook reads the rollout then), the response that
asked for it has a ``token_usage_record`` (its ``usage``, the same numbers its
``token_count`` will carry) but no ``token_count`` yet: Codex 0.169.0 writes
that after the tool's output. A record newer than every ``token_count`` is
therefore the count, and the older ``token_count`` gives only the window.

Right after compacting, Codex 0.169.0 writes a ``token_count`` whose
``last_token_usage`` has zero input and zero output but a ``total_tokens``
(its estimate of the compacted history; seen in a real rollout). No request
was made, so that is no measurement: it is treated like the ``compacted`` line
and kept as ``post_tokens``. The model comes from the newest ``turn_context``;
the thread id from the file name, else a ``token_usage_record`` or the
``session_meta`` line.
"""

from __future__ import annotations

import re
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

if TYPE_CHECKING:
    from typing import Any

_CANDIDATES = (
    b"token_count",
    b'"compacted"',
    b"turn_context",
    b"task_started",
    b"token_usage_record",
    b"session_meta",
)
# After the count is found, read at most this much further back for the model id.
MODEL_LOOKBACK = 1024 * 1024
_THREAD_ID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$", re.I)
_USAGE_PARTS = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
)


@dataclass
class _Scan:
    """What the walk back has found so far (mutable while walking)."""

    count_line: TailLine | None = None
    usage: Mapping[str, Any] | None = None
    rollout_window: int | None = None
    compacted_line: TailLine | None = None
    pre_tokens: int | None = None
    post_tokens: int | None = None
    model: str | None = None
    thread: str | None = None  # from token_usage_record or session_meta, if the name lacks it
    task_window: int | None = None  # task_started's model_context_window, a fallback
    found_at: int = 0  # bytes_read when the deciding line was found
    skipped: int = 0


def read_codex_rollout(
    path: Path, *, configured_window: int | None = None, budget: int = DEFAULT_BUDGET
) -> ContextReading:
    """The context reading of the thread whose rollout is ``path``.

    Raises ``OSError`` if ``path`` cannot be read; garbled lines are skipped
    and counted.
    """
    reader = TailReader(path, budget=budget)
    session = _thread_id(path)
    scan = _walk(reader, need_thread=session is None)
    session = session or scan.thread
    known = scan.usage is not None and scan.compacted_line is None
    window, source, notes = choose_window(
        [
            (WindowSource.ROLLOUT, scan.rollout_window if known else None),
            (WindowSource.ROLLOUT, scan.task_window),
            (WindowSource.MODEL, None),
            (WindowSource.CONFIG, configured_window),
        ],
        model=scan.model,
    )
    deciding = scan.compacted_line or scan.count_line
    where = (
        Source(path, deciding.offset, reader.line_number(deciding.offset))
        if deciding
        else Source(path)
    )
    if known and scan.usage is not None:
        parts = tuple((k, n) for k in _USAGE_PARTS if (n := count(scan.usage.get(k))) is not None)
        return ContextReading(
            harness=Harness.CODEX,
            session_id=session,
            state=ReadingState.KNOWN,
            tokens_in_use=_in_use(scan.usage),
            window=window,
            window_source=source,
            model=scan.model,
            source=where,
            notes=notes,
            bytes_read=reader.bytes_read,
            skipped_lines=scan.skipped,
            breakdown=parts,
        )
    compacted = scan.compacted_line is not None
    return ContextReading(
        harness=Harness.CODEX,
        session_id=session,
        state=ReadingState.JUST_COMPACTED if compacted else ReadingState.UNKNOWN,
        tokens_in_use=None,
        window=window,
        window_source=source,
        model=scan.model,
        source=where,
        pre_tokens=scan.pre_tokens,
        post_tokens=scan.post_tokens,
        reason=(
            "compacted since the last token count; the next turn gives a fresh count"
            if compacted
            else _why_nothing(reader)
        ),
        bytes_read=reader.bytes_read,
        skipped_lines=scan.skipped,
    )


def _walk(reader: TailReader, *, need_thread: bool) -> _Scan:
    scan = _Scan()
    for line in reader.lines():
        if scan.found_at and scan.model and (scan.thread or not need_thread):
            break
        if not any(key in line.data for key in _CANDIDATES):
            continue
        obj = parse_object(line.data)
        if obj is None:
            scan.skipped += 1
            continue
        had_count = bool(scan.found_at)
        _take(scan, obj, line, reader.bytes_read)
        if scan.found_at and not had_count:
            reader.stop_after(MODEL_LOOKBACK)  # the model id is worth only a short look
    return scan


def _take(scan: _Scan, obj: Mapping[str, Any], line: TailLine, bytes_read: int) -> None:
    """Fold one parsed line into the scan, newest lines first."""
    kind = obj.get("type")
    payload = obj.get("payload")
    if not isinstance(payload, Mapping):
        return
    if kind == "event_msg":
        _take_event(scan, payload, line, bytes_read)
    elif kind == "turn_context" and scan.model is None:
        scan.model = text(payload.get("model"))
    elif kind == "token_usage_record":
        scan.thread = scan.thread or text(payload.get("thread_id"))
        usage = payload.get("usage")
        fresh = not scan.found_at and scan.usage is None and scan.compacted_line is None
        if fresh and isinstance(usage, Mapping) and _in_use(usage) is not None:
            scan.usage = usage  # newer than any token_count: see the module docstring
            scan.count_line = line
    elif kind == "session_meta" and scan.thread is None:
        scan.thread = text(payload.get("id"))
    elif kind == "compacted" and scan.compacted_line is None and scan.usage is None:
        if not scan.found_at:
            scan.compacted_line = line


def _take_event(scan: _Scan, payload: Mapping[str, Any], line: TailLine, bytes_read: int) -> None:
    if payload.get("type") == "task_started" and scan.task_window is None:
        scan.task_window = count(payload.get("model_context_window"))
        return
    if payload.get("type") != "token_count" or scan.found_at:
        return
    usage = field(payload, "info", "last_token_usage")
    if not isinstance(usage, Mapping) or _in_use(usage) is None:
        return  # a rate-limit-only ping (info null) or a count we cannot read
    if scan.usage is not None:  # a newer token_usage_record holds the count: the window only
        scan.rollout_window = count(field(payload, "info", "model_context_window"))
        scan.found_at = bytes_read
        return
    if _is_post_compaction_estimate(usage):
        if scan.compacted_line is None:
            scan.compacted_line = line
            scan.post_tokens = _in_use(usage)
        return
    if scan.compacted_line is not None:
        scan.pre_tokens = _in_use(usage)
    else:
        scan.count_line = line
        scan.usage = usage
        scan.rollout_window = count(field(payload, "info", "model_context_window"))
    scan.found_at = bytes_read


def _is_post_compaction_estimate(usage: Mapping[str, Any]) -> bool:
    """A count no request produced: nothing in, nothing out, yet a total."""
    return (
        count(usage.get("input_tokens")) == 0
        and count(usage.get("output_tokens")) == 0
        and bool(count(usage.get("total_tokens")))
    )


def _in_use(usage: Mapping[str, Any]) -> int | None:
    total = count(usage.get("total_tokens"))
    if total is not None:
        return total
    given, output = count(usage.get("input_tokens")), count(usage.get("output_tokens"))
    return given + output if given is not None and output is not None else None


def _thread_id(path: Path) -> str | None:
    match = _THREAD_ID.search(path.stem)
    return match.group(1) if match else None


def _why_nothing(reader: TailReader) -> str:
    if reader.size == 0:
        return "the rollout is empty"
    if reader.budget_exhausted:
        return f"no token_count in the last {size_words(reader.bytes_read)} of the rollout"
    return "no token_count in the rollout yet"
