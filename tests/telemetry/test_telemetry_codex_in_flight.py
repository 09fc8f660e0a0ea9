"""A Codex rollout read while a tool call runs: the response's own usage record counts.

Codex 0.169.0 writes a response's ``token_usage_record`` before running the tool
it asked for, and the matching ``token_count`` only after the tool's output; a
hook (PostToolUse) reads the rollout in between. Cut points below are lines of
the real recordings in tests/fixtures/harness (see its README for the numbers).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import REPO_ROOT

from the_loop.telemetry import ReadingState, read_codex_rollout

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "harness"
THREAD = "01a22e55-8b50-7bf3-9aa8-0937eb4dba31"


def cut(tmp_path: Path, name: str, after: str, nth: int = 1) -> Path:
    """The fixture up to and including the ``nth`` line of type ``after``."""
    kept, seen = [], 0
    for line in (FIXTURES / name).read_text().splitlines(keepends=True):
        kept.append(line)
        data = json.loads(line)
        kind = data["type"] if data["type"] != "event_msg" else data["payload"]["type"]
        if kind == after:
            seen += 1
            if seen == nth:
                break
    path = tmp_path / f"rollout-2026-11-30T21-21-27-{THREAD}.jsonl"
    path.write_text("".join(kept))
    return path


def test_the_first_tool_call_is_read_from_its_usage_record(tmp_path: Path) -> None:
    reading = read_codex_rollout(cut(tmp_path, "codex-tool-use.jsonl", "token_usage_record"))

    assert reading.state is ReadingState.KNOWN
    assert (reading.tokens_in_use, reading.window) == (12_150, 258_400)  # resp_fake_0000


def test_a_later_record_is_newer_than_the_last_token_count(tmp_path: Path) -> None:
    path = cut(tmp_path, "codex-tool-use.jsonl", "token_usage_record", nth=2)
    reading = read_codex_rollout(path)
    assert (reading.tokens_in_use, reading.window) == (12_440, 258_400)  # resp_fake_0001


@pytest.mark.parametrize("nth", [1, 2])
def test_the_token_count_after_it_says_the_same(tmp_path: Path, nth: int) -> None:
    record = read_codex_rollout(cut(tmp_path, "codex-tool-use.jsonl", "token_usage_record", nth))
    path = cut(tmp_path, "codex-tool-use.jsonl", "token_count", nth)
    assert read_codex_rollout(path).tokens_in_use == record.tokens_in_use


def test_a_compaction_newer_than_the_record_still_reads_as_just_compacted(tmp_path: Path) -> None:
    reading = read_codex_rollout(cut(tmp_path, "codex-compact.jsonl", "compacted"))
    assert reading.state is ReadingState.JUST_COMPACTED
    assert reading.tokens_in_use is None
