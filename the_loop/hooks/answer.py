"""What a hook answers, and how each harness wants it written.

Both harnesses read the same JSON on stdout (checked with Claude Code 2.1.328
and Codex 0.169.0): ``hookSpecificOutput.additionalContext`` adds text to the
model's next request (SessionStart, PostToolUse), and ``{"decision": "block",
"reason": …}`` feeds the reason back and keeps the agent going (PostToolUse
after the tool ran, Stop). Exit code 2 is never used: for some events it means
"block", and an answer loop did not mean must never block.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from the_loop.telemetry.reading import Harness

CONTEXT_LIMIT = 10_000  # characters; the harness moves longer text to a file
_CUT = "\n… (cut at the hook's 10,000-character limit)\n"


@dataclass(frozen=True)
class HookAnswer:
    """Context to add, a reason to block with, or nothing."""

    context: str | None = None
    block: str | None = None

    @property
    def empty(self) -> bool:
        return self.context is None and self.block is None


NOTHING = HookAnswer()


def bounded(text: str, limit: int = CONTEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying so when cut."""
    if len(text) <= limit:
        return text
    return text[: limit - len(_CUT)].rstrip() + _CUT


def render(answer: HookAnswer, *, event: str, harness: Harness) -> str:
    """The stdout for ``answer`` (empty when there is nothing to say)."""
    if answer.empty:
        return ""
    out: dict[str, object] = {}
    if answer.block is not None:
        out["decision"] = "block"
        out["reason"] = bounded(answer.block)
    if answer.context is not None:
        # Same shape for both harnesses (Codex reads Claude Code's format).
        out["hookSpecificOutput"] = {
            "hookEventName": event,
            "additionalContext": bounded(answer.context),
        }
    return json.dumps(out, ensure_ascii=False) + "\n"
