"""What a harness hook receives on stdin, as a value.

Claude Code and Codex send the same snake_case JSON (harness-telemetry.md §3.1,
§3.4): ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and the
event's own fields (``source``, ``trigger``, ``stop_hook_active``, ``reason``).
Only what loop uses is kept; unknown fields are ignored, so a newer harness
adding fields changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import LoopError
from the_loop.telemetry.reading import Harness

if TYPE_CHECKING:
    from typing import Any

# The events loop answers, in the order a session meets them.
EVENTS = ("SessionStart", "PostToolUse", "PreCompact", "PostCompact", "Stop", "SessionEnd")
# Claude Code also starts subagents: SubagentStart records a hand-off (hooks/handoff.py).
CLAUDE_EVENTS = (*EVENTS, "SubagentStart")
HARNESSES = tuple(h.value for h in Harness)


class HookInputError(LoopError):
    """The hook's stdin or arguments are not what a harness sends."""


@dataclass(frozen=True)
class HookInput:
    """One hook call: the event loop was installed for and what the harness said."""

    event: str
    harness: Harness
    session_id: str | None = None
    transcript_path: Path | None = None
    cwd: Path | None = None
    source: str | None = None  # SessionStart: startup | resume | clear | compact
    trigger: str | None = None  # PreCompact, PostCompact: manual | auto
    stop_hook_active: bool = False  # Stop: already continuing because of a Stop hook
    reason: str | None = None  # SessionEnd
    tool_name: str | None = None
    model: str | None = None
    permission_mode: str | None = None  # Claude Code: default, acceptEdits, bypassPermissions…
    agent_id: str | None = None  # SubagentStart and calls from inside a subagent
    agent_type: str | None = None


# Longest value kept per field: a session id is a UUID, a path a few hundred
# characters; a field past its bound is treated as absent, never stored whole
# (a 50 MB session_id once went into the session records as it was).
ID_LIMIT = 200
PATH_LIMIT = 4096
_LIMITS = {"session_id": ID_LIMIT, "transcript_path": PATH_LIMIT, "cwd": PATH_LIMIT}
_WORD_LIMIT = 200


def bounded_text(value: object, limit: int = ID_LIMIT) -> str | None:
    """``value`` when it is non-empty text within ``limit`` characters, else None."""
    if not isinstance(value, str) or not value or len(value) > limit:
        return None
    return value


def _text(data: dict[str, Any], key: str) -> str | None:
    return bounded_text(data.get(key), _LIMITS.get(key, _WORD_LIMIT))


def parse_input(text: str, *, event: str, harness: str) -> HookInput:
    """Validate the command line and the stdin JSON; ``HookInputError`` when unusable."""
    if event not in CLAUDE_EVENTS:
        raise HookInputError(
            f"loop does not answer the {event!r} hook (it answers {CLAUDE_EVENTS})"
        )
    if harness not in HARNESSES:
        raise HookInputError(f"--harness must be one of {HARNESSES}, got {harness!r}")
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise HookInputError(f"the hook input is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise HookInputError("the hook input is not a JSON object")
    said = _text(data, "hook_event_name")
    if said is not None and said != event:
        raise HookInputError(f"installed for {event}, but the harness sent {said}")
    transcript = _text(data, "transcript_path")
    cwd = _text(data, "cwd")
    return HookInput(
        event=event,
        harness=Harness(harness),
        session_id=_text(data, "session_id"),
        transcript_path=Path(transcript) if transcript else None,
        cwd=Path(cwd) if cwd else None,
        source=_text(data, "source"),
        trigger=_text(data, "trigger"),
        stop_hook_active=data.get("stop_hook_active") is True,
        reason=_text(data, "reason"),
        tool_name=_text(data, "tool_name"),
        model=_text(data, "model"),
        permission_mode=_text(data, "permission_mode"),
        agent_id=_text(data, "agent_id"),
        agent_type=_text(data, "agent_type"),
    )
