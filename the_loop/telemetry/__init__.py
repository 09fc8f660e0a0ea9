"""Token telemetry: how full an agent session's context window is, from its own transcript.

Readers never load a whole transcript (they reach hundreds of megabytes): they
walk back from the end within a byte budget. A reading that cannot be made is
explicit (``tokens_in_use`` None, with a reason), never a zero. Turning a
reading into a pressure verdict is the policy's job, not this package's.
"""

from the_loop.telemetry.claude_transcript import read_claude_transcript, result_context_windows
from the_loop.telemetry.codex_rollout import read_codex_rollout
from the_loop.telemetry.context import read_context, read_located
from the_loop.telemetry.locate import Located, TranscriptNotFoundError, locate_transcript
from the_loop.telemetry.reading import (
    ContextReading,
    Harness,
    ReadingState,
    Source,
    WindowSource,
)
from the_loop.telemetry.windows import window_for_model

__all__ = [
    "ContextReading",
    "Harness",
    "Located",
    "ReadingState",
    "Source",
    "TranscriptNotFoundError",
    "WindowSource",
    "locate_transcript",
    "read_claude_transcript",
    "read_codex_rollout",
    "read_context",
    "read_located",
    "result_context_windows",
    "window_for_model",
]
