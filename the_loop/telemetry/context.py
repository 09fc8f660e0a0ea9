"""One entry point: locate a session's transcript and read how full its window is."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from the_loop.telemetry.claude_transcript import read_claude_transcript
from the_loop.telemetry.codex_rollout import read_codex_rollout
from the_loop.telemetry.locate import Located, TranscriptNotFoundError, locate_transcript
from the_loop.telemetry.reading import ContextReading, Harness
from the_loop.telemetry.tail import DEFAULT_BUDGET


def read_context(
    *,
    transcript: Path | None = None,
    session_id: str | None = None,
    harness: Harness | None = None,
    cwd: Path,
    env: Mapping[str, str],
    result_windows: Mapping[str, int] | None = None,
    configured_window: int | None = None,
    budget: int = DEFAULT_BUDGET,
) -> ContextReading:
    """The context reading for a transcript path or a session id (exactly one).

    ``harness`` is detected when None. ``result_windows`` (Claude: model →
    ``contextWindow`` from a headless result) and ``configured_window`` feed the
    window choice. Raises ``UsageError`` for bad arguments and
    ``TranscriptNotFoundError`` when the transcript cannot be found or opened.
    """
    located = locate_transcript(
        transcript=transcript, session_id=session_id, harness=harness, cwd=cwd, env=env
    )
    return read_located(
        located,
        result_windows=result_windows,
        configured_window=configured_window,
        budget=budget,
    )


def read_located(
    located: Located,
    *,
    result_windows: Mapping[str, int] | None = None,
    configured_window: int | None = None,
    budget: int = DEFAULT_BUDGET,
) -> ContextReading:
    """Read an already located transcript with its harness's rules."""
    try:
        if located.harness is Harness.CODEX:
            reading = read_codex_rollout(
                located.path, configured_window=configured_window, budget=budget
            )
        else:
            reading = read_claude_transcript(
                located.path,
                result_windows=result_windows,
                configured_window=configured_window,
                budget=budget,
            )
    except OSError as exc:
        raise TranscriptNotFoundError(
            f"cannot read the transcript {located.path}: {exc.strerror or exc}",
            hint="check the file's permissions, or pass another --transcript",
        ) from exc
    if located.harness_assumed:
        note = "nothing in the file says which harness wrote it; read as Claude Code"
        reading = dataclasses.replace(reading, notes=(*reading.notes, note))
    return reading
