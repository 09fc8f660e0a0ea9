"""Codex rollouts: the newest token_count, its window, and compaction."""

from __future__ import annotations

from pathlib import Path

from transcript_lines import (
    THREAD,
    codex_compacted,
    codex_meta,
    codex_post_compaction_estimate,
    codex_task_started,
    codex_token_count,
    codex_turn_context,
    write_lines,
)

from the_loop.telemetry import ReadingState, WindowSource, read_codex_rollout


def rollout(tmp_path: Path, *lines: str, final_newline: bool = True) -> Path:
    name = f"rollout-2026-11-02T10-00-00-{THREAD}.jsonl"
    return write_lines(tmp_path / name, lines, final_newline=final_newline)


def test_in_use_is_the_last_requests_total_and_the_window_is_the_rollouts(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        codex_meta(),
        codex_task_started(),
        codex_turn_context("gpt-5.5"),
        codex_token_count(input_tokens=1000, output=10, total=1010),
        codex_token_count(input_tokens=36522, output=606, total=37128, window=258400),
    )
    reading = read_codex_rollout(path)
    assert reading.state is ReadingState.KNOWN
    assert reading.tokens_in_use == 37128
    assert (reading.window, reading.window_source) == (258400, WindowSource.ROLLOUT)
    assert reading.session_id == THREAD
    assert reading.model == "gpt-5.5"
    assert reading.source.line == 5
    assert dict(reading.breakdown)["cached_input_tokens"] == 2432


def test_rate_limit_pings_without_info_are_passed_over(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        codex_token_count(total=5000),
        codex_token_count(info=False),
    )
    assert read_codex_rollout(path).tokens_in_use == 5000


def test_without_total_tokens_input_plus_output_is_used(tmp_path: Path) -> None:
    path = rollout(tmp_path, codex_token_count(input_tokens=100, output=5, total=None))
    assert read_codex_rollout(path).tokens_in_use == 105


def test_a_compaction_after_the_count_makes_it_stale(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        codex_turn_context(),
        codex_token_count(total=240_000),
        codex_compacted(),
    )
    reading = read_codex_rollout(path)
    assert reading.state is ReadingState.JUST_COMPACTED
    assert reading.tokens_in_use is None
    assert reading.pre_tokens == 240_000
    assert reading.source.line == 3


def test_codexs_own_estimate_after_compacting_is_no_measurement(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        codex_token_count(total=9300),
        codex_compacted(),
        codex_turn_context(),
        codex_post_compaction_estimate(6884),
    )
    reading = read_codex_rollout(path)
    assert reading.state is ReadingState.JUST_COMPACTED
    assert reading.tokens_in_use is None
    assert (reading.pre_tokens, reading.post_tokens) == (9300, 6884)
    assert reading.source.line == 4
    assert reading.model == "gpt-5.5"


def test_a_count_after_the_compaction_is_fresh(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        codex_token_count(total=240_000),
        codex_compacted(),
        codex_token_count(total=9_000),
    )
    reading = read_codex_rollout(path)
    assert reading.state is ReadingState.KNOWN
    assert reading.tokens_in_use == 9_000


def test_the_window_falls_back_to_task_started_then_the_model(tmp_path: Path) -> None:
    with_task = rollout(
        tmp_path, codex_task_started(window=400_000), codex_token_count(window=None)
    )
    reading = read_codex_rollout(with_task)
    assert (reading.window, reading.window_source) == (400_000, WindowSource.ROLLOUT)
    other = tmp_path / "b"
    by_model = rollout(other, codex_turn_context("gpt-5.5"), codex_token_count(window=None))
    reading = read_codex_rollout(by_model)
    assert (reading.window, reading.window_source) == (258_400, WindowSource.MODEL)


def test_garbage_and_a_torn_line_are_skipped(tmp_path: Path) -> None:
    torn = codex_token_count(total=99_999)
    path = rollout(
        tmp_path,
        codex_token_count(total=1234),
        "token_count but not json",
        torn[: len(torn) - 30],
        final_newline=False,
    )
    reading = read_codex_rollout(path)
    assert reading.tokens_in_use == 1234
    assert reading.skipped_lines == 2


def test_no_count_yet_is_unknown(tmp_path: Path) -> None:
    reading = read_codex_rollout(rollout(tmp_path, codex_meta(), codex_turn_context()))
    assert reading.state is ReadingState.UNKNOWN
    assert reading.reason == "no token_count in the rollout yet"
    assert reading.tokens_in_use is None


def test_an_empty_rollout_is_unknown(tmp_path: Path) -> None:
    reading = read_codex_rollout(rollout(tmp_path))
    assert reading.reason == "the rollout is empty"
    assert reading.to_json()["tokensInUse"] is None
