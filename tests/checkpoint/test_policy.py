"""Unit tests for ``the_loop.checkpoint.policy``: the pressure verdict's edges and boundary resets.

Thresholds and policies are built directly (no config file), so every number in
these tests is the number under test.
"""

from __future__ import annotations

import math

import pytest

from the_loop.checkpoint.policy import (
    Boundary,
    Decision,
    Reset,
    Verdict,
    boundary_reset,
    context_line,
    pressure_verdict,
)
from the_loop.config.settings import ContextPolicy, Pressure
from the_loop.errors import UsageError

DEFAULT = Pressure(
    soft_tokens=200_000, hard_tokens=280_000, selective_percent=75, full_clear_percent=90
)
NO_TOKENS_GAP = "no token count: the tokens arm could not be applied (a gap, not zero)"
NO_PERCENT_GAP = "no window size or percent: the percent arm could not be applied"


def policy(
    *,
    enabled: bool = True,
    phase: str = "clear",
    task: str = "compact",
    mid_task: str = "compact",
    pressure: Pressure = DEFAULT,
) -> ContextPolicy:
    return ContextPolicy(
        enabled=enabled,
        phase_boundary=phase,
        task_boundary=task,
        mid_task=mid_task,
        pressure=pressure,
    )


# --- the tokens arm ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (0, Verdict.NO_OP),
        (199_999, Verdict.NO_OP),
        (200_000, Verdict.SELECTIVE_DROP),
        (279_999, Verdict.SELECTIVE_DROP),
        (280_000, Verdict.FULL_CLEAR),
        (10**12, Verdict.FULL_CLEAR),
    ],
)
def test_token_arm_edges(tokens: int, expected: Verdict) -> None:
    reading = pressure_verdict(DEFAULT, tokens=tokens)
    assert reading.token_arm is expected
    assert reading.verdict is expected
    assert reading.percent_arm is None
    assert reading.tokens == tokens
    assert reading.percent is None
    # tokens without a window: the percent arm is the gap, not the tokens arm
    assert reading.gaps == (NO_PERCENT_GAP,)


def test_negative_tokens_are_rejected() -> None:
    with pytest.raises(UsageError, match=r"--tokens must not be negative, got -1"):
        pressure_verdict(DEFAULT, tokens=-1)


# --- the percent arm ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("percent", "used", "expected"),
    [
        (0, 0, Verdict.NO_OP),
        (74, 74, Verdict.NO_OP),
        (75, 75, Verdict.SELECTIVE_DROP),
        (89, 89, Verdict.SELECTIVE_DROP),
        (90, 90, Verdict.FULL_CLEAR),
        (100, 100, Verdict.FULL_CLEAR),
        # a fractional percent rounds up, toward caution
        (74.01, 75, Verdict.SELECTIVE_DROP),
        (74.0, 74, Verdict.NO_OP),
        (89.01, 90, Verdict.FULL_CLEAR),
        (89.999, 90, Verdict.FULL_CLEAR),
        (0.001, 1, Verdict.NO_OP),
    ],
)
def test_percent_arm_edges(percent: float, used: int, expected: Verdict) -> None:
    reading = pressure_verdict(DEFAULT, percent=percent)
    assert reading.percent == used
    assert isinstance(reading.percent, int)
    assert reading.percent_arm is expected
    assert reading.verdict is expected
    assert reading.token_arm is None


@pytest.mark.parametrize("percent", [-0.01, -1, 100.01, 101, math.inf, -math.inf, math.nan])
def test_percent_out_of_range_is_rejected(percent: float) -> None:
    with pytest.raises(UsageError, match=r"--percent must be between 0 and 100"):
        pressure_verdict(DEFAULT, percent=percent)


def test_percent_rejection_message_names_the_value() -> None:
    with pytest.raises(UsageError) as caught:
        pressure_verdict(DEFAULT, percent=120)
    assert caught.value.message == "--percent must be between 0 and 100, got 120"


# --- tokens and a window --------------------------------------------------------------


@pytest.mark.parametrize(
    ("tokens", "window", "used", "expected"),
    [
        (148_000, 200_000, 74, Verdict.NO_OP),
        (148_001, 200_000, 75, Verdict.SELECTIVE_DROP),  # 74.0005 % rounds up to 75
        (150_000, 200_000, 75, Verdict.SELECTIVE_DROP),  # exact: no rounding
        (178_000, 200_000, 89, Verdict.SELECTIVE_DROP),
        (178_001, 200_000, 90, Verdict.FULL_CLEAR),  # 89.0005 % rounds up to 90
        (0, 200_000, 0, Verdict.NO_OP),
        (1, 200_000, 1, Verdict.NO_OP),
        (150_000, 150_000, 100, Verdict.FULL_CLEAR),
    ],
)
def test_window_computes_the_percent_rounding_up(
    tokens: int, window: int, used: int, expected: Verdict
) -> None:
    # every token count here is below softTokens: the verdict is the percent arm's
    reading = pressure_verdict(DEFAULT, tokens=tokens, window=window)
    assert reading.token_arm is Verdict.NO_OP
    assert reading.percent == used
    assert reading.percent_arm is expected
    assert reading.verdict is expected
    assert reading.gaps == ()


def test_window_ceiling_is_exact_for_huge_integers() -> None:
    # (10**30 + 1) * 100 / 10**32 is 1.00…01: a float division says 1, the ceiling is 2
    window = 10**32
    tokens = 10**30 + 1
    assert math.ceil(tokens * 100 / window) == 1  # what a float would get wrong
    reading = pressure_verdict(DEFAULT, tokens=tokens, window=window)
    assert reading.percent == 2
    exact = pressure_verdict(DEFAULT, tokens=10**30, window=window)
    assert exact.percent == 1


def test_window_ceiling_just_below_a_threshold_with_huge_integers() -> None:
    window = 4 * 10**40
    tokens = 3 * 10**40 - 1  # 74.99999…% → 75
    reading = pressure_verdict(DEFAULT, tokens=tokens, window=window)
    assert reading.percent == 75
    assert reading.percent_arm is Verdict.SELECTIVE_DROP


def test_tokens_over_the_window_are_rejected() -> None:
    with pytest.raises(UsageError) as caught:
        pressure_verdict(DEFAULT, tokens=200_001, window=200_000)
    assert caught.value.message == "--tokens (200001) exceeds --window (200000)"


def test_window_without_tokens_is_rejected() -> None:
    with pytest.raises(UsageError) as caught:
        pressure_verdict(DEFAULT, window=200_000)
    assert caught.value.message == "--window needs --tokens to compute the percent used"


def test_percent_and_window_together_are_rejected() -> None:
    with pytest.raises(UsageError) as caught:
        pressure_verdict(DEFAULT, tokens=1000, window=200_000, percent=50)
    assert caught.value.message == "give either --window (with --tokens) or --percent, not both"


@pytest.mark.parametrize("window", [0, -1])
def test_window_must_be_positive(window: int) -> None:
    with pytest.raises(UsageError, match=r"--window must be a positive number of tokens"):
        pressure_verdict(DEFAULT, tokens=0, window=window)


# --- both arms: the stricter wins ---------------------------------------------------------


def test_tokens_arm_wins_on_a_large_window() -> None:
    reading = pressure_verdict(DEFAULT, tokens=300_000, window=1_000_000)
    assert reading.percent == 30
    assert reading.percent_arm is Verdict.NO_OP
    assert reading.token_arm is Verdict.FULL_CLEAR
    assert reading.verdict is Verdict.FULL_CLEAR


def test_percent_arm_wins_on_a_small_window() -> None:
    reading = pressure_verdict(DEFAULT, tokens=160_000, window=200_000)
    assert reading.percent == 80
    assert reading.token_arm is Verdict.NO_OP
    assert reading.percent_arm is Verdict.SELECTIVE_DROP
    assert reading.verdict is Verdict.SELECTIVE_DROP


def test_tokens_and_percent_without_window_use_both_arms() -> None:
    reading = pressure_verdict(DEFAULT, tokens=210_000, percent=95)
    assert reading.token_arm is Verdict.SELECTIVE_DROP
    assert reading.percent_arm is Verdict.FULL_CLEAR
    assert reading.verdict is Verdict.FULL_CLEAR
    assert reading.gaps == ()


def test_missing_token_count_is_a_gap_and_the_percent_arm_still_applies() -> None:
    reading = pressure_verdict(DEFAULT, percent=92)
    assert reading.tokens is None
    assert reading.token_arm is None  # never read as zero (which would be no_op)
    assert reading.percent_arm is Verdict.FULL_CLEAR
    assert reading.verdict is Verdict.FULL_CLEAR
    assert reading.gaps == (NO_TOKENS_GAP,)


def test_no_readings_at_all_give_no_verdict_and_two_gaps() -> None:
    reading = pressure_verdict(DEFAULT)
    assert reading.verdict is None
    assert reading.token_arm is None
    assert reading.percent_arm is None
    assert reading.gaps == (NO_TOKENS_GAP, NO_PERCENT_GAP)
    assert reading.to_json() == {
        "verdict": None,
        "tokenArm": None,
        "percentArm": None,
        "tokens": None,
        "percent": None,
        "gaps": [NO_TOKENS_GAP, NO_PERCENT_GAP],
    }


def test_reading_to_json() -> None:
    reading = pressure_verdict(DEFAULT, tokens=160_000, window=200_000)
    assert reading.to_json() == {
        "verdict": "selective_drop",
        "tokenArm": "no_op",
        "percentArm": "selective_drop",
        "tokens": 160_000,
        "percent": 80,
        "gaps": [],
    }


@pytest.mark.parametrize(
    ("tokens", "percent", "expected"),
    [
        (999, None, Verdict.NO_OP),
        (1_000, None, Verdict.SELECTIVE_DROP),
        (1_999, None, Verdict.SELECTIVE_DROP),
        (2_000, None, Verdict.FULL_CLEAR),
        (None, 49, Verdict.NO_OP),
        (None, 49.5, Verdict.SELECTIVE_DROP),
        (None, 59, Verdict.SELECTIVE_DROP),
        (None, 60, Verdict.FULL_CLEAR),
        (500, 61, Verdict.FULL_CLEAR),
        (2_500, 10, Verdict.FULL_CLEAR),
    ],
)
def test_custom_thresholds(tokens: int | None, percent: float | None, expected: Verdict) -> None:
    custom = Pressure(
        soft_tokens=1_000, hard_tokens=2_000, selective_percent=50, full_clear_percent=60
    )
    assert pressure_verdict(custom, tokens=tokens, percent=percent).verdict is expected


# --- boundary resets ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reset"),
    [("clear", Reset.CLEAR), ("compact", Reset.COMPACT), ("off", Reset.NONE)],
)
def test_phase_boundary_maps_config_to_reset(value: str, reset: Reset) -> None:
    decision = boundary_reset(policy(phase=value), Boundary.PHASE, what="entered design")
    assert decision == Decision(reset, f"entered design (contextManagement.phaseBoundary: {value})")


@pytest.mark.parametrize(
    ("value", "reset"),
    [("clear", Reset.CLEAR), ("compact", Reset.COMPACT), ("off", Reset.NONE)],
)
def test_task_boundary_maps_config_to_reset(value: str, reset: Reset) -> None:
    decision = boundary_reset(policy(task=value), Boundary.TASK, what="task 3 done")
    assert decision == Decision(reset, f"task 3 done (contextManagement.taskBoundary: {value})")


def test_phase_and_task_boundaries_read_their_own_keys() -> None:
    mixed = policy(phase="off", task="clear")
    assert boundary_reset(mixed, Boundary.PHASE, what="p").reset is Reset.NONE
    assert boundary_reset(mixed, Boundary.TASK, what="t").reset is Reset.CLEAR


@pytest.mark.parametrize(
    ("boundary", "verdict"),
    [
        (Boundary.PHASE, None),
        (Boundary.TASK, None),
        (Boundary.MID_TASK, Verdict.FULL_CLEAR),
        (Boundary.MID_TASK, Verdict.SELECTIVE_DROP),
        (Boundary.MID_TASK, None),
    ],
)
def test_disabled_policy_means_no_reset_at_any_boundary(
    boundary: Boundary, verdict: Verdict | None
) -> None:
    disabled = policy(enabled=False, phase="clear", task="clear", mid_task="compact")
    decision = boundary_reset(disabled, boundary, what="x", verdict=verdict)
    assert decision == Decision(
        Reset.NONE,
        "x; contextManagement.enabled is false, so the harness manages its own window",
    )


@pytest.mark.parametrize("verdict", [Verdict.SELECTIVE_DROP, Verdict.FULL_CLEAR])
@pytest.mark.parametrize("phase_and_task", ["clear", "compact", "off"])
def test_mid_task_pressure_means_compact_never_clear(verdict: Verdict, phase_and_task: str) -> None:
    # even with clear everywhere else and a full_clear verdict
    p = policy(phase=phase_and_task, task=phase_and_task, mid_task="compact")
    decision = boundary_reset(p, Boundary.MID_TASK, what="interim", verdict=verdict)
    assert decision.reset is Reset.COMPACT
    assert decision.reason == (
        f"interim; pressure verdict {verdict.value} "
        "(contextManagement.midTask: compact; never clear mid-task)"
    )


def test_mid_task_no_op_means_no_reset() -> None:
    decision = boundary_reset(policy(), Boundary.MID_TASK, what="interim", verdict=Verdict.NO_OP)
    assert decision == Decision(Reset.NONE, "interim; pressure verdict no_op")


@pytest.mark.parametrize("verdict", [Verdict.SELECTIVE_DROP, Verdict.FULL_CLEAR])
def test_mid_task_off_means_no_reset(verdict: Verdict) -> None:
    decision = boundary_reset(
        policy(mid_task="off"), Boundary.MID_TASK, what="interim", verdict=verdict
    )
    assert decision == Decision(
        Reset.NONE,
        f"interim; pressure verdict {verdict.value}, but contextManagement.midTask is off",
    )


def test_mid_task_without_a_reading_takes_the_safe_side() -> None:
    # a missing reading is a gap, not a roomy window: compaction, never a clear
    decision = boundary_reset(policy(mid_task="compact"), Boundary.MID_TASK, what="interim")
    assert decision == Decision(
        Reset.COMPACT,
        "interim; no pressure reading (a gap, not a low reading), so compaction to be safe "
        "(contextManagement.midTask: compact; never clear mid-task)",
    )


def test_mid_task_without_a_reading_and_mid_task_off_means_no_reset() -> None:
    decision = boundary_reset(policy(mid_task="off"), Boundary.MID_TASK, what="interim")
    assert decision == Decision(
        Reset.NONE, "interim; no pressure reading, and contextManagement.midTask is off"
    )


def test_mid_task_verdict_straight_from_a_reading() -> None:
    reading = pressure_verdict(DEFAULT, tokens=300_000, window=1_000_000)
    decision = boundary_reset(policy(), Boundary.MID_TASK, what="interim", verdict=reading.verdict)
    assert reading.verdict is Verdict.FULL_CLEAR
    assert decision.reset is Reset.COMPACT


@pytest.mark.parametrize(
    ("reset", "line"),
    [
        (Reset.CLEAR, "clear (about to): task 3 done"),
        (Reset.COMPACT, "compact (about to): task 3 done"),
        (Reset.NONE, "none: task 3 done"),
    ],
)
def test_context_line(reset: Reset, line: str) -> None:
    assert context_line(Decision(reset, "task 3 done")) == line


def test_context_line_from_a_boundary_decision() -> None:
    decision = boundary_reset(policy(task="clear"), Boundary.TASK, what="task 3 done")
    assert context_line(decision) == (
        "clear (about to): task 3 done (contextManagement.taskBoundary: clear)"
    )


def test_enum_values_are_the_json_words() -> None:
    assert [r.value for r in Reset] == ["clear", "compact", "none"]
    assert [v.value for v in Verdict] == ["no_op", "selective_drop", "full_clear"]
    assert [v.rank for v in Verdict] == [0, 1, 2]
