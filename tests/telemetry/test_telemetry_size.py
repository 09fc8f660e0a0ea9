"""A 200 MB transcript costs the same as a small one: the bytes read are bounded.

The files are mostly a sparse hole (cheap to make, 200 MB to any reader that
walked into it) followed by real padding lines; the readers' own byte counters
say how much they read. No test here measures time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_lines import (
    SESSION,
    THREAD,
    claude_assistant,
    claude_user,
    codex_token_count,
    tool_result,
)

from the_loop.telemetry import ReadingState, read_claude_transcript, read_codex_rollout
from the_loop.telemetry.tail import BLOCK_SIZE, DEFAULT_BUDGET

BIG = 200 * 1024 * 1024


def padding(total: int) -> bytes:
    """Lines a busy session writes between replies: prompts and tool results (~1 KiB each)."""
    lines = []
    size = 0
    while size < total:
        line = (tool_result(1000) if len(lines) % 2 else claude_user("continue")) + "\n"
        lines.append(line)
        size += len(line)
    return "".join(lines).encode()


def big_file(path: Path, head: bytes, tail: bytes) -> Path:
    """``head``, then a hole up to 200 MB, then ``tail``."""
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(BIG - len(tail))
        handle.seek(BIG - len(tail))
        handle.write(tail)
    assert path.stat().st_size == BIG
    return path


def test_a_reply_near_the_end_of_200_mb_is_read_from_the_end_only(tmp_path: Path) -> None:
    pad = padding(1024 * 1024)
    reply = (claude_assistant(input_tokens=100_000) + "\n").encode()
    path = big_file(tmp_path / f"{SESSION}.jsonl", b"", b"\n" + reply + pad)
    reading = read_claude_transcript(path)
    assert reading.state is ReadingState.KNOWN
    assert reading.tokens_in_use == 100_000 + 5139 + 9631
    assert reading.source.offset == BIG - len(pad) - len(reply)
    assert reading.source.line is None  # counting lines would mean reading 200 MB
    assert reading.bytes_read <= len(pad) + len(reply) + BLOCK_SIZE


def test_a_reply_far_back_is_given_up_on_at_the_budget(tmp_path: Path) -> None:
    head = (claude_assistant() + "\n").encode()
    path = big_file(tmp_path / f"{SESSION}.jsonl", head, b"\n" + padding(512 * 1024))
    reading = read_claude_transcript(path)
    assert reading.state is ReadingState.UNKNOWN
    assert reading.tokens_in_use is None
    assert reading.bytes_read == DEFAULT_BUDGET
    assert reading.reason == "no assistant usage record in the last 8 MiB of the transcript"


def test_a_smaller_budget_is_honoured(tmp_path: Path) -> None:
    head = (claude_assistant() + "\n").encode()
    path = big_file(tmp_path / "t.jsonl", head, b"\n" + padding(64 * 1024))
    reading = read_claude_transcript(path, budget=100_000)
    assert reading.bytes_read == 100_000


def test_a_200_mb_rollout_is_read_from_the_end_only(tmp_path: Path) -> None:
    tail = (codex_token_count(total=123_456) + "\n").encode() + padding(256 * 1024)
    path = big_file(tmp_path / f"rollout-2026-11-02T10-00-00-{THREAD}.jsonl", b"", b"\n" + tail)
    reading = read_codex_rollout(path)
    assert reading.tokens_in_use == 123_456
    # The model id is looked for a little further back, within a fixed allowance.
    from the_loop.telemetry.codex_rollout import MODEL_LOOKBACK

    assert reading.bytes_read <= len(tail) + MODEL_LOOKBACK + 2 * BLOCK_SIZE


@pytest.mark.parametrize("reader", [read_claude_transcript, read_codex_rollout])
def test_a_hole_of_200_mb_with_no_lines_costs_the_budget(tmp_path: Path, reader: object) -> None:
    path = big_file(tmp_path / "hole.jsonl", b"", b"")
    reading = reader(path)  # type: ignore[operator]
    assert reading.state is ReadingState.UNKNOWN
    assert reading.bytes_read == DEFAULT_BUDGET
