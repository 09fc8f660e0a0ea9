"""The pressure reading of a running session, read from its own transcript.

A mid-task checkpoint given no numbers finds them here: the session's
transcript (the path the hooks recorded, else found by session id under the
harness's folders) is tail-read by ``the_loop.telemetry``. When no count can be
had, the reason is kept as a gap for the verdict to name; it is never a zero.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from the_loop.checkpoint import seen_sessions
from the_loop.checkpoint.policy import PressureReading
from the_loop.errors import LoopError
from the_loop.telemetry import Harness, read_context
from the_loop.telemetry.reading import ContextReading


@dataclass(frozen=True)
class SessionPressure:
    """Numbers for the pressure verdict, or why there are none."""

    tokens: int | None = None
    window: int | None = None
    percent: float | None = None
    source: str | None = None  # the transcript the numbers came from
    gap: str | None = None  # why there is no token count

    def annotate(self, reading: PressureReading) -> PressureReading:
        """``reading`` with this lookup's gap, if any, among its gaps."""
        return replace(reading, gaps=(*reading.gaps, self.gap)) if self.gap else reading


def numbers(reading: ContextReading) -> SessionPressure:
    """The verdict's inputs from a transcript reading (an overflow reads as a full window)."""
    source = str(reading.source.path)
    tokens, window = reading.tokens_in_use, reading.window
    if tokens is None:
        return SessionPressure(source=source, gap=f"no token count in {source}: {reading.reason}")
    if window is not None and tokens > window:
        # More than the window: a real overflow or a wrong window; either way it is full.
        return SessionPressure(tokens=tokens, percent=100.0, source=source)
    return SessionPressure(tokens=tokens, window=window, source=source)


def session_pressure(
    root: Path, session: str | None, env: Mapping[str, str] | None = None
) -> SessionPressure:
    """How full ``session``'s window is, from its transcript; a gap when unknown."""
    if not session:
        return SessionPressure(gap="no session id, so no transcript to read a reading from")
    env = os.environ if env is None else env
    record = seen_sessions.load(root, session)
    transcript = Path(record.transcript) if record and record.transcript else None
    harness = None
    if record is not None and record.harness in ("claude", "codex"):
        harness = Harness(record.harness)
    cwd = Path(record.cwd) if record and record.cwd else root
    try:
        reading = read_context(
            transcript=transcript,
            session_id=None if transcript else session,
            harness=harness,
            cwd=cwd,
            env=env,
        )
    except LoopError as exc:
        return SessionPressure(gap=f"no reading for session {session}: {exc.message}")
    return numbers(reading)
