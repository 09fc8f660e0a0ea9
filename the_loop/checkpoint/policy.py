"""The context policy: which reset follows a boundary, and the pressure verdict.

Boundaries map to resets through ``contextManagement`` (``enabled: false``
means loop asks for no reset at all). Mid-task the only reset is compaction,
and only when the window is under pressure or its pressure is unknown (the
safe side). The pressure verdict has two arms,
tokens in use and percent of the window; the stricter wins, and a missing
token count is reported as a gap, never read as zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from the_loop.config.settings import ContextPolicy, Pressure
from the_loop.errors import UsageError


class Reset(str, Enum):
    """What happens to the agent's context after a checkpoint."""

    CLEAR = "clear"
    COMPACT = "compact"
    NONE = "none"


class Boundary(str, Enum):
    PHASE = "phase"
    TASK = "task"
    MID_TASK = "mid-task"


class Verdict(str, Enum):
    """How full the window is, in rising order."""

    NO_OP = "no_op"
    SELECTIVE_DROP = "selective_drop"
    FULL_CLEAR = "full_clear"

    @property
    def rank(self) -> int:
        return _RANKS[self]


_RANKS = {Verdict.NO_OP: 0, Verdict.SELECTIVE_DROP: 1, Verdict.FULL_CLEAR: 2}


@dataclass(frozen=True)
class Decision:
    """A reset and the reason for it, in words a log entry can carry."""

    reset: Reset
    reason: str


def context_line(decision: Decision) -> str:
    """The ``Context:`` line of a log entry: the reset about to happen, and why.

    The entry is written before the reset (that is the checkpoint), so it says
    what is about to happen, ``clear (about to): <why>``, never that it did. A
    reset that then does not happen is corrected by a later entry: ``loop reset
    abort`` appends one, and so does the next checkpoint that supersedes it.
    """
    if decision.reset is Reset.NONE:
        return f"none: {decision.reason}"
    return f"{decision.reset.value} (about to): {decision.reason}"


_STRENGTH = {Reset.NONE: 0, Reset.COMPACT: 1, Reset.CLEAR: 2}


def one_reset(task: Decision, phase: Decision) -> Decision:
    """The single reset for a task boundary that is also a phase boundary: the stronger.

    The last task's checkpoint enters the next phase too; two resets in a row
    (a compact for the task, then a clear for the phase) would be one too many.
    """
    chosen = phase if _STRENGTH[phase.reset] >= _STRENGTH[task.reset] else task
    return Decision(chosen.reset, f"{task.reason}; {phase.reason}: one reset for both")


def boundary_reset(
    policy: ContextPolicy, boundary: Boundary, *, what: str, verdict: Verdict | None = None
) -> Decision:
    """The reset that follows ``boundary`` (``what`` names it for the reason)."""
    if not policy.enabled:
        return Decision(
            Reset.NONE,
            f"{what}; contextManagement.enabled is false, so the harness manages its own window",
        )
    if boundary is Boundary.MID_TASK:
        return _mid_task(policy, what, verdict)
    key = "phaseBoundary" if boundary is Boundary.PHASE else "taskBoundary"
    value = policy.phase_boundary if boundary is Boundary.PHASE else policy.task_boundary
    reset = Reset.NONE if value == "off" else Reset(value)
    return Decision(reset, f"{what} (contextManagement.{key}: {value})")


def _mid_task(policy: ContextPolicy, what: str, verdict: Verdict | None) -> Decision:
    if verdict is None:
        # A missing reading is a gap, never evidence of a roomy window: the safe side.
        if policy.mid_task == "off":
            return Decision(
                Reset.NONE, f"{what}; no pressure reading, and contextManagement.midTask is off"
            )
        return Decision(
            Reset.COMPACT,
            f"{what}; no pressure reading (a gap, not a low reading), so compaction to be "
            "safe (contextManagement.midTask: compact; never clear mid-task)",
        )
    if verdict is Verdict.NO_OP:
        return Decision(Reset.NONE, f"{what}; pressure verdict no_op")
    if policy.mid_task == "off":
        return Decision(
            Reset.NONE,
            f"{what}; pressure verdict {verdict.value}, but contextManagement.midTask is off",
        )
    # Never a clear inside an unfinished task, whatever the verdict.
    return Decision(
        Reset.COMPACT,
        f"{what}; pressure verdict {verdict.value} "
        "(contextManagement.midTask: compact; never clear mid-task)",
    )


@dataclass(frozen=True)
class PressureReading:
    """Both arms of the verdict, the result, and what was missing."""

    verdict: Verdict | None
    token_arm: Verdict | None
    percent_arm: Verdict | None
    tokens: int | None
    percent: int | None
    gaps: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        def value(v: Verdict | None) -> str | None:
            return v.value if v else None

        return {
            "verdict": value(self.verdict),
            "tokenArm": value(self.token_arm),
            "percentArm": value(self.percent_arm),
            "tokens": self.tokens,
            "percent": self.percent,
            "gaps": list(self.gaps),
        }


_NO_TOKENS = "no token count: the tokens arm could not be applied (a gap, not zero)"
_NO_WINDOW = "no window size or percent: the percent arm could not be applied"


def pressure_verdict(
    pressure: Pressure,
    *,
    tokens: int | None = None,
    window: int | None = None,
    percent: float | None = None,
) -> PressureReading:
    """Evaluate both arms; the stricter wins. Invalid readings raise ``UsageError``."""
    if tokens is not None and tokens < 0:
        raise UsageError(f"--tokens must not be negative, got {tokens}")
    used = _percent(tokens, window, percent)
    token_arm = _token_arm(pressure, tokens) if tokens is not None else None
    percent_arm = _percent_arm(pressure, used) if used is not None else None
    gaps = []
    if tokens is None:
        gaps.append(_NO_TOKENS)
    if used is None:
        gaps.append(_NO_WINDOW)
    arms = [a for a in (token_arm, percent_arm) if a is not None]
    verdict = max(arms, key=lambda v: v.rank) if arms else None
    return PressureReading(verdict, token_arm, percent_arm, tokens, used, tuple(gaps))


def stricter_reading(given: PressureReading, found: PressureReading) -> PressureReading:
    """Two readings of one window (numbers given by hand, the transcript's): the stricter.

    A percent typed by hand must never silence the token arm, so each arm takes
    the stricter of the readings that have it, and a gap stays only when neither
    reading could fill that arm.
    """

    def worse(a: Verdict | None, b: Verdict | None) -> Verdict | None:
        present = [v for v in (a, b) if v is not None]
        return max(present, key=lambda v: v.rank) if present else None

    def larger(a: int | None, b: int | None) -> int | None:
        present = [n for n in (a, b) if n is not None]
        return max(present) if present else None

    token_arm = worse(given.token_arm, found.token_arm)
    percent_arm = worse(given.percent_arm, found.percent_arm)
    gaps = [g for g in (*given.gaps, *found.gaps) if not _filled(g, token_arm, percent_arm)]
    return PressureReading(
        worse(token_arm, percent_arm),
        token_arm,
        percent_arm,
        larger(given.tokens, found.tokens),
        larger(given.percent, found.percent),
        tuple(dict.fromkeys(gaps)),
    )


def _filled(gap: str, token_arm: Verdict | None, percent_arm: Verdict | None) -> bool:
    """Whether ``gap`` names an arm the merged reading has after all."""
    if gap == _NO_TOKENS:
        return token_arm is not None
    if gap == _NO_WINDOW:
        return percent_arm is not None
    return False


def _percent(tokens: int | None, window: int | None, percent: float | None) -> int | None:
    if percent is not None:
        if window is not None:
            raise UsageError("give either --window (with --tokens) or --percent, not both")
        if math.isnan(percent) or percent < 0 or percent > 100:
            raise UsageError(f"--percent must be between 0 and 100, got {percent:g}")
        return math.ceil(percent)  # 74.01 % is already 75 %: round toward caution
    if window is None:
        return None
    if window <= 0:
        raise UsageError(f"--window must be a positive number of tokens, got {window}")
    if tokens is None:
        raise UsageError("--window needs --tokens to compute the percent used")
    if tokens > window:
        raise UsageError(f"--tokens ({tokens}) exceeds --window ({window})")
    return -(-tokens * 100 // window)  # integer ceiling, exact for large counts


def _token_arm(pressure: Pressure, tokens: int) -> Verdict:
    if tokens >= pressure.hard_tokens:
        return Verdict.FULL_CLEAR
    if tokens >= pressure.soft_tokens:
        return Verdict.SELECTIVE_DROP
    return Verdict.NO_OP


def _percent_arm(pressure: Pressure, used: int) -> Verdict:
    if used >= pressure.full_clear_percent:
        return Verdict.FULL_CLEAR
    if used >= pressure.selective_percent:
        return Verdict.SELECTIVE_DROP
    return Verdict.NO_OP
