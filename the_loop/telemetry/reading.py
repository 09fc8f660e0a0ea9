"""A context-window reading: tokens in use, the window, and where both came from.

A reading is either *known* (a token count from the harness's own usage
record), *unknown* (no usable record), or *just compacted* (the newest record
predates a compaction, so its count is stale; the size before compaction is
kept as ``pre_tokens``, and the harness's own estimate of the size after it,
when it writes one, as ``post_tokens``). Unknown is explicit: ``tokens_in_use``
is None, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path


class Harness(str, Enum):
    """The agent CLI that wrote the transcript."""

    CLAUDE = "claude"
    CODEX = "codex"


class ReadingState(str, Enum):
    KNOWN = "known"
    UNKNOWN = "unknown"
    JUST_COMPACTED = "just-compacted"


class WindowSource(str, Enum):
    """Where the window size came from, most authoritative first."""

    RESULT = "result"  # Claude headless result: modelUsage.<model>.contextWindow
    ROLLOUT = "rollout"  # Codex token_count: info.model_context_window
    MODEL = "model"  # the model id: a "[1m]" suffix or the table in windows.py
    CONFIG = "config"  # a size the caller configured


_WINDOW_WORDS = {
    WindowSource.RESULT: "the headless result",
    WindowSource.ROLLOUT: "the rollout",
    WindowSource.MODEL: "the model id",
    WindowSource.CONFIG: "config",
}


@dataclass(frozen=True)
class Source:
    """The transcript line a reading rests on (``line`` None when costly to count)."""

    path: Path
    offset: int | None = None
    line: int | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.offset is not None:
            return f"{self.path} @ byte {self.offset}"
        return str(self.path)


@dataclass(frozen=True)
class ContextReading:
    """How full one session's context window is, as its transcript tells it."""

    harness: Harness
    session_id: str | None
    state: ReadingState
    tokens_in_use: int | None
    window: int | None
    window_source: WindowSource | None
    model: str | None
    source: Source
    pre_tokens: int | None = None  # just compacted: the size before compaction
    # just compacted: the harness's own estimate of the size after it (not a measured count)
    post_tokens: int | None = None
    reason: str | None = None  # why the count is unknown or stale
    notes: tuple[str, ...] = ()  # gaps and caveats worth showing
    bytes_read: int = 0
    skipped_lines: int = 0  # candidate lines that were garbled or not JSON
    breakdown: tuple[tuple[str, int], ...] = ()  # the usage fields the count was summed from

    def __post_init__(self) -> None:
        known = self.state is ReadingState.KNOWN
        if known != (self.tokens_in_use is not None):
            raise ValueError("a known reading has a token count, and only a known one")
        if self.tokens_in_use is not None and self.tokens_in_use < 0:
            raise ValueError(f"tokens in use cannot be negative: {self.tokens_in_use}")
        if self.window is not None and self.window <= 0:
            raise ValueError(f"a window must be positive: {self.window}")
        if (self.window is None) != (self.window_source is None):
            raise ValueError("a window and its source come together")
        if not known and self.reason is None:
            raise ValueError("an unknown reading says why")

    @property
    def percent(self) -> float | None:
        """Percent of the window in use; None when either number is unknown."""
        if self.tokens_in_use is None or self.window is None:
            return None
        return self.tokens_in_use * 100 / self.window

    def window_words(self) -> str:
        """``window from the model id claude-…`` — where the window size came from."""
        if self.window_source is None:
            return "window unknown"
        text = f"window from {_WINDOW_WORDS[self.window_source]}"
        if self.window_source is WindowSource.MODEL and self.model:
            text += f" {self.model}"
        return text

    def to_json(self) -> dict[str, object]:
        """The reading with camelCase keys; unknown values are null, never 0."""
        percent = self.percent
        return {
            "harness": self.harness.value,
            "sessionId": self.session_id,
            "state": self.state.value,
            "tokensInUse": self.tokens_in_use,
            "window": self.window,
            "windowSource": self.window_source.value if self.window_source else None,
            "percent": round(percent, 2) if percent is not None else None,
            "preTokens": self.pre_tokens,
            "postTokens": self.post_tokens,
            "model": self.model,
            "reason": self.reason,
            "notes": list(self.notes),
            "source": {
                "path": str(self.source.path),
                "offset": self.source.offset,
                "line": self.source.line,
            },
            # The harness's own usage field names are data here, not keys.
            "breakdown": [{"field": name, "tokens": n} for name, n in self.breakdown],
            "bytesRead": self.bytes_read,
            "skippedLines": self.skipped_lines,
        }
