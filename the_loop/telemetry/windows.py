"""Context-window sizes of the models we have seen, and the "[1m]" suffix rule.

Only sizes someone observed are listed, each with where it was observed. A
model not listed has no window here (None): the caller reports the gap rather
than guessing 200k, because a guessed denominator is how a 1M-window session
reads as 5x fuller than it is, or a 200k one as 5x emptier.

Sources:

* ``real-clients.md`` (shared reference): Claude Code 2.1.328 driven headless
  against a fake API; the sizes are the ``modelUsage.<model>.contextWindow``
  that the CLI itself reported in its ``--output-format json`` result.
* The same note for Codex 0.169.0: ``model_context_window`` in the rollout's
  ``task_started`` and ``token_count`` events for ``gpt-5.5``.
* ``harness-telemetry.md`` §3.3: "a ``[1m]`` model-id suffix means 1,000,000".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownWindow:
    """One model's window and where that number comes from."""

    tokens: int
    source: str


_CLAUDE_2_1_328 = "Claude Code 2.1.328 headless result modelUsage.contextWindow (real-clients.md)"
_CODEX_0_169_0 = "Codex 0.169.0 rollout model_context_window (real-clients.md)"

WINDOWS: dict[str, KnownWindow] = {
    "claude-opus-5-5": KnownWindow(1_000_000, _CLAUDE_2_1_328),
    "claude-sonnet-5-5": KnownWindow(1_000_000, _CLAUDE_2_1_328),
    "claude-haiku-5-5": KnownWindow(1_000_000, _CLAUDE_2_1_328),
    "claude-sonnet-4-5-20250929": KnownWindow(200_000, _CLAUDE_2_1_328),
    "gpt-5.5": KnownWindow(258_400, _CODEX_0_169_0),
}

ONE_MILLION_SUFFIX = "[1m]"


def window_for_model(model: str | None) -> int | None:
    """The window of ``model``: 1,000,000 for a ``[1m]`` id, the table's size, else None."""
    if not model:
        return None
    if model.lower().endswith(ONE_MILLION_SUFFIX):
        return 1_000_000
    known = WINDOWS.get(model)
    return known.tokens if known else None
