"""Claude Code, headless: ``claude -p`` with stream-json output.

* A new session gets its id from loop (``--session-id``), so the id is known
  before the first token; a resumed one is named with ``--resume``.
* The prompt goes to stdin; the tools a headless run may use are passed with
  ``--allowedTools`` (project settings' permissions are not applied in ``-p``
  mode, and a run as root may not skip permissions).
* Compaction is its own run, ``claude -p "/compact <focus>" --resume ID``; it
  writes a ``compact_boundary`` line into the session's transcript.
* ``--output-format stream-json --verbose`` prints one JSON object per line:
  ``system/init`` (with the session id), ``assistant`` messages (with usage,
  for live progress) and a final ``result`` (the reply, ``is_error``, usage and
  ``modelUsage`` with each model's window).
* A budget (``driver.budget``) is passed as Claude Code's own limits,
  ``--max-turns`` and ``--max-budget-usd``, on each task turn (``limits``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from the_loop.config.settings import ClaudeAgentSettings
from the_loop.driver.agents import (
    AgentKind,
    AgentReply,
    Invocation,
    Start,
    one_line,
    retryable_status,
)
from the_loop.driver.overlay import Overlay
from the_loop.telemetry import Harness, result_context_windows

_STREAM = ("--output-format", "stream-json", "--verbose")
_IN_USE = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_LIMITS = ("error_max_turns", "error_max_budget_usd")  # result subtypes of --max-turns/-budget


class ClaudeAgent:
    """Claude Code run with ``claude -p``."""

    kind = AgentKind.CLAUDE
    harness: Harness | None = Harness.CLAUDE
    compaction_marker: tuple[str, str] | None = ("subtype", "compact_boundary")

    def __init__(self, executable: tuple[str, ...], settings: ClaudeAgentSettings) -> None:
        self._exe = executable
        self._settings = settings
        self.limits: tuple[str, ...] = ()  # the budget's flags for the next turns
        self.overlay: Overlay | None = None  # set by the driver: loop's hooks and thresholds

    def _overlay_options(self) -> list[str]:
        if self.overlay is None or self.overlay.settings is None:
            return []
        return ["--settings", str(self.overlay.settings)]

    def _overlay_env(self) -> dict[str, str]:
        return dict(self.overlay.env) if self.overlay is not None else {}

    def new_session_id(self) -> str | None:
        """Claude Code accepts a session id chosen by the caller (a UUID)."""
        return str(uuid.uuid4())

    def _options(self) -> list[str]:
        options = list(_STREAM)
        if self._settings.model:
            options += ["--model", self._settings.model]
        options += list(self._settings.args)
        options += list(self.limits)
        if self._settings.allowed_tools:
            # Last, because the option takes a list: nothing after it may be read as a tool.
            options += ["--allowedTools", ",".join(self._settings.allowed_tools)]
        return options

    def turn(self, start: Start, session: str | None, prompt: str) -> Invocation:
        """``claude -p … --session-id ID`` for a new session, ``--resume ID`` otherwise."""
        if session is None:
            raise ValueError("a Claude Code run needs a session id")
        flag = "--session-id" if start is Start.NEW else "--resume"
        argv = (*self._exe, "-p", flag, session, *self._overlay_options(), *self._options())
        return Invocation(argv, stdin=prompt, env=self._overlay_env())

    def compaction(self, session: str, focus: str) -> Invocation | None:
        """``claude -p "/compact <focus>" --resume ID``: a run of its own."""
        argv = (
            *self._exe,
            "-p",
            f"/compact {focus}",
            "--resume",
            session,
            *self._overlay_options(),
            *_STREAM,
        )
        return Invocation(argv, purpose="compact", env=self._overlay_env())

    def reply(self, stdout: str, returncode: int | None, session: str | None) -> AgentReply:
        """The ``result`` line, the session id, and the newest main-chain usage."""
        found_session = None
        result: Mapping[str, Any] | None = None
        tokens = None
        for obj in _objects(stdout):
            found_session = _text(obj.get("session_id")) or found_session
            if obj.get("type") == "result":
                result = obj
            counted = _in_use(obj)
            if counted is not None:
                tokens = counted
        if result is None:
            missing = f"exited {returncode} without a result" if returncode else "no result line"
            return AgentReply(found_session, "", missing, tokens)
        message = _text(result.get("result")) or ""
        error: str | None = None
        status = result.get("api_error_status")
        if result.get("is_error") or returncode:
            kind = _text(result.get("subtype")) or "error"
            if kind == "success":
                kind = "error"  # Claude Code marks an API error's result "success"
            reason = _text(result.get("terminal_reason"))
            parts = [kind] + ([reason] if reason and reason != "completed" else [])
            if status:
                parts.append(f"API status {status}")
            error = f"{', '.join(parts)}: {one_line(message, 300)}"
        return AgentReply(
            session=found_session or session,
            message=message,
            error=error,
            tokens=tokens,
            windows=result_context_windows(result),
            denied=_denied(result),
            limit=_limit(result),
            retryable=error is None or retryable_status(status),
        )

    def live_tokens(self, line: str) -> int | None:
        """Tokens in use after an ``assistant`` line of the main conversation."""
        if '"assistant"' not in line:
            return None
        obj = _parse(line)
        return _in_use(obj) if obj is not None else None


def _objects(stdout: str) -> Iterator[Mapping[str, Any]]:
    for line in stdout.splitlines():
        obj = _parse(line)
        if obj is not None:
            yield obj


def _parse(line: str) -> Mapping[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _in_use(obj: Mapping[str, Any]) -> int | None:
    """input + cache creation + cache read of a main-chain assistant message."""
    if obj.get("type") != "assistant" or obj.get("parent_tool_use_id"):
        return None
    message = obj.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(usage, dict):
        return None
    values = [usage.get(key) for key in _IN_USE]
    if not any(isinstance(v, int) for v in values):
        return None
    return sum(v for v in values if isinstance(v, int) and v >= 0)


def _limit(result: Mapping[str, Any]) -> str | None:
    """Why Claude Code stopped at a limit loop passed (``--max-turns``, ``--max-budget-usd``)."""
    kind = result.get("subtype")
    if kind not in _LIMITS:
        return None
    errors = result.get("errors")
    said = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], str) else kind
    return f"Claude Code stopped itself at the limit loop passed from agent.budget: {said}"


def _denied(result: Mapping[str, Any]) -> tuple[str, ...]:
    """Tool names from ``permission_denials`` (a headless run cannot ask), each once."""
    denials = result.get("permission_denials")
    if not isinstance(denials, list):
        return ()
    names = [d.get("tool_name") for d in denials if isinstance(d, dict)]
    return tuple(dict.fromkeys(n for n in names if isinstance(n, str) and n))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
