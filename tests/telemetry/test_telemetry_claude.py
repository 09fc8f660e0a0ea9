"""Claude Code transcripts: the count, its staleness after compaction, and the window."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_lines import (
    SESSION,
    claude_assistant,
    claude_user,
    compact_boundary,
    compact_summary,
    tool_result,
    write_lines,
)

from the_loop.telemetry import (
    ReadingState,
    WindowSource,
    read_claude_transcript,
    result_context_windows,
)

SUM = 2 + 5139 + 9631  # the default usage of claude_assistant()


def transcript(tmp_path: Path, *lines: str, final_newline: bool = True) -> Path:
    return write_lines(tmp_path / f"{SESSION}.jsonl", lines, final_newline=final_newline)


def test_in_use_is_the_three_input_fields_of_the_newest_reply(tmp_path: Path) -> None:
    path = transcript(
        tmp_path,
        claude_user(),
        claude_assistant(msg_id="msg_old", input_tokens=1, cache_read=100),
        claude_user("again"),
        claude_assistant(msg_id="msg_new", output=999),
    )
    reading = read_claude_transcript(path)
    assert reading.state is ReadingState.KNOWN
    assert reading.tokens_in_use == SUM  # output tokens are not part of it
    assert reading.session_id == SESSION
    assert reading.model == "claude-opus-5-5"
    assert reading.source.line == 4
    assert dict(reading.breakdown) == {
        "input_tokens": 2,
        "cache_creation_input_tokens": 5139,
        "cache_read_input_tokens": 9631,
    }


def test_one_reply_written_as_several_blocks_counts_once(tmp_path: Path) -> None:
    blocks = [claude_assistant(msg_id="msg_7", block=i) for i in range(3)]
    path = transcript(tmp_path, claude_user(), *blocks)
    reading = read_claude_transcript(path)
    assert reading.tokens_in_use == SUM
    assert reading.source.line == 4  # the last line of the reply wins


def test_sidechain_replies_are_not_the_main_window(tmp_path: Path) -> None:
    path = transcript(
        tmp_path,
        claude_assistant(msg_id="msg_main", input_tokens=10, cache_creation=0, cache_read=0),
        claude_assistant(msg_id="msg_side", input_tokens=90_000, sidechain=True),
    )
    assert read_claude_transcript(path).tokens_in_use == 10


def test_synthetic_replies_are_not_usage(tmp_path: Path) -> None:
    path = transcript(
        tmp_path,
        claude_assistant(msg_id="msg_real", input_tokens=7, cache_creation=0, cache_read=0),
        claude_assistant(msg_id="msg_err", model="<synthetic>", input_tokens=0),
    )
    assert read_claude_transcript(path).tokens_in_use == 7


def test_a_compaction_after_the_last_reply_makes_the_count_stale(tmp_path: Path) -> None:
    path = transcript(
        tmp_path,
        claude_assistant(),
        compact_boundary(pre_tokens=155025),
        compact_summary(),
    )
    reading = read_claude_transcript(path)
    assert reading.state is ReadingState.JUST_COMPACTED
    assert reading.tokens_in_use is None
    assert reading.percent is None
    assert reading.pre_tokens == 155025
    assert reading.source.line == 2
    assert "compacted" in (reading.reason or "")


def test_a_reply_after_the_compaction_is_fresh_again(tmp_path: Path) -> None:
    path = transcript(
        tmp_path,
        claude_assistant(msg_id="msg_1", input_tokens=150_000),
        compact_boundary(),
        compact_summary(),
        claude_assistant(msg_id="msg_2", input_tokens=3, cache_creation=2000, cache_read=0),
    )
    reading = read_claude_transcript(path)
    assert reading.state is ReadingState.KNOWN
    assert reading.tokens_in_use == 2003


def test_the_harnesss_estimate_after_compacting_is_kept_apart(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_assistant(), compact_boundary(6028, post_tokens=2589))
    reading = read_claude_transcript(path)
    assert reading.tokens_in_use is None
    assert (reading.pre_tokens, reading.post_tokens) == (6028, 2589)
    assert reading.to_json()["postTokens"] == 2589


def test_a_boundary_without_pre_tokens_says_so(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_assistant(), compact_boundary(pre_tokens=None))
    reading = read_claude_transcript(path)
    assert reading.state is ReadingState.JUST_COMPACTED
    assert reading.pre_tokens is None


def test_a_torn_last_line_falls_back_to_the_complete_one(tmp_path: Path) -> None:
    newest = claude_assistant(msg_id="msg_2", input_tokens=50_000)
    path = transcript(
        tmp_path,
        claude_assistant(msg_id="msg_1", input_tokens=1, cache_creation=0, cache_read=0),
        newest[: newest.index('"usage"') + 20],  # torn inside the usage object
        final_newline=False,
    )
    reading = read_claude_transcript(path)
    assert reading.tokens_in_use == 1
    assert reading.skipped_lines == 1


def test_garbage_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    path = transcript(
        tmp_path,
        claude_assistant(input_tokens=4, cache_creation=0, cache_read=0),
        'not json but mentions "usage"',
        '["usage"]',
        '{"usage": ' + "[" * 100_000,
    )
    path.write_bytes(path.read_bytes() + b'\xff\xfe"usage"\n')
    reading = read_claude_transcript(path)
    assert reading.tokens_in_use == 4
    assert reading.skipped_lines == 4


def test_an_empty_transcript_is_unknown_not_zero(tmp_path: Path) -> None:
    path = transcript(tmp_path)
    reading = read_claude_transcript(path)
    assert reading.state is ReadingState.UNKNOWN
    assert reading.tokens_in_use is None
    assert reading.reason == "the transcript is empty"
    assert reading.to_json()["tokensInUse"] is None


def test_no_reply_yet_is_unknown(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_user(), claude_user("more"), tool_result(2000))
    reading = read_claude_transcript(path)
    assert reading.state is ReadingState.UNKNOWN
    assert reading.reason == "no assistant usage record in the transcript yet"
    assert reading.session_id == SESSION  # from the file name


def test_a_reply_without_input_tokens_is_not_usage(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_assistant(input_tokens=None))
    assert read_claude_transcript(path).state is ReadingState.UNKNOWN


def test_null_cache_fields_are_zero_cache_not_unknown(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_assistant(input_tokens=12, cache_creation=None))
    assert read_claude_transcript(path).tokens_in_use == 12 + 9631


def test_the_window_comes_from_the_model_id(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_assistant(model="claude-sonnet-4-5-20250929"))
    reading = read_claude_transcript(path)
    assert (reading.window, reading.window_source) == (200_000, WindowSource.MODEL)
    assert reading.percent == pytest.approx(SUM * 100 / 200_000)
    assert reading.window_words() == "window from the model id claude-sonnet-4-5-20250929"


def test_a_requested_1m_model_has_a_million_token_window(tmp_path: Path) -> None:
    line = claude_assistant(model="claude-sonnet-4-5", requested="claude-sonnet-4-5[1m]")
    reading = read_claude_transcript(transcript(tmp_path, line))
    assert (reading.window, reading.window_source) == (1_000_000, WindowSource.MODEL)


def test_the_headless_result_wins_over_the_model_id(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_assistant(model="claude-opus-5-5"))
    reading = read_claude_transcript(
        path, result_windows={"claude-opus-5-5": 500_000}, configured_window=300_000
    )
    assert (reading.window, reading.window_source) == (500_000, WindowSource.RESULT)


def test_config_is_the_last_resort_for_an_unknown_model(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_assistant(model="fake-model-x"))
    reading = read_claude_transcript(path, configured_window=300_000)
    assert (reading.window, reading.window_source) == (300_000, WindowSource.CONFIG)


def test_an_unknown_model_without_config_leaves_the_window_unknown(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_assistant(model="fake-model-x"))
    reading = read_claude_transcript(path)
    assert reading.tokens_in_use == SUM
    assert reading.window is None and reading.window_source is None
    assert reading.percent is None
    assert "model 'fake-model-x' is not in loop's window table" in reading.notes


def test_a_result_for_another_model_is_not_used(tmp_path: Path) -> None:
    path = transcript(tmp_path, claude_assistant(model="fake-model-x"))
    windows = {"claude-opus-5-5": 1_000_000, "claude-haiku-5-5": 1_000_000}
    assert read_claude_transcript(path, result_windows=windows).window is None


def test_result_context_windows_reads_model_usage() -> None:
    result = {
        "type": "result",
        "modelUsage": {
            "claude-opus-5-5": {"contextWindow": 1_000_000, "maxOutputTokens": 128_000},
            "broken": {"contextWindow": "big"},
            "none": "x",
        },
    }
    assert result_context_windows(result) == {"claude-opus-5-5": 1_000_000}
    assert result_context_windows({"type": "result"}) == {}


def test_json_keys_are_camel_case(tmp_path: Path) -> None:
    data = read_claude_transcript(transcript(tmp_path, claude_assistant())).to_json()
    assert data["state"] == "known"
    assert data["windowSource"] == "model"
    assert data["percent"] == round(SUM * 100 / 1_000_000, 2)
    assert all("_" not in key for key in data)
    assert data["source"] == {"path": str(tmp_path / f"{SESSION}.jsonl"), "offset": 0, "line": 1}
