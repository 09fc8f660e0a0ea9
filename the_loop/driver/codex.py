"""Codex, headless: ``codex exec --json`` and ``codex exec resume``.

* A new session is ``codex exec --json --sandbox S -``; Codex picks the thread
  id and prints it first (``thread.started``). A resumed one is
  ``codex exec --json --sandbox S resume ID -``. The prompt goes to stdin
  (``-``), so nothing in it is read as an option.
* Compaction: ``codex exec`` has no ``/compact``. Resuming with
  ``-c model_auto_compact_token_limit=1`` makes Codex compact before the turn
  (it writes a ``compacted`` line into the rollout). The limit stays in force
  for the whole turn, though, and Codex 0.169.0 compacts again before every
  further model call of that turn (after each tool call). So the compaction is a
  short turn of its own, which only asks for a one-word answer; the task's
  turn then runs with Codex's own limits.
* ``--json`` prints events: ``thread.started``, ``item.completed`` (the
  ``agent_message`` items are the reply), ``turn.completed`` or ``turn.failed``.
  Token counts there add up every request of the turn, so how full the window
  is comes from the rollout instead (``the_loop.telemetry``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from the_loop.config.settings import CodexAgentSettings
from the_loop.driver.agents import AgentKind, AgentReply, Invocation, Start, one_line
from the_loop.telemetry import Harness

_COMPACT_NOW = ("-c", "model_auto_compact_token_limit=1")


class CodexAgent:
    """The Codex CLI run with ``codex exec``."""

    kind = AgentKind.CODEX
    harness: Harness | None = Harness.CODEX
    compaction_marker: tuple[str, str] | None = ("type", "compacted")

    def __init__(self, executable: tuple[str, ...], settings: CodexAgentSettings) -> None:
        self._exe = executable
        self._settings = settings

    def new_session_id(self) -> str | None:
        """Codex chooses the thread id; it is read from ``thread.started``."""
        return None

    def _options(self) -> list[str]:
        options = ["--json", "--sandbox", self._settings.sandbox]
        if self._settings.model:
            options += ["--model", self._settings.model]
        return options + list(self._settings.args)

    def turn(self, start: Start, session: str | None, prompt: str) -> Invocation:
        """``codex exec … -`` for a new thread, ``codex exec … resume ID -`` otherwise."""
        if start is Start.NEW or session is None:
            return Invocation((*self._exe, "exec", *self._options(), "-"), stdin=prompt)
        argv = (*self._exe, "exec", *self._options(), "resume", session, "-")
        return Invocation(argv, stdin=prompt)

    def compaction(self, session: str, focus: str) -> Invocation | None:
        """A short resumed turn with the compaction limit at 1: Codex compacts first."""
        prompt = (
            f"loop compacted this session before the next step. {focus}\n"
            "Answer with the one word: ready. Run no tools."
        )
        argv = (*self._exe, "exec", *self._options(), *_COMPACT_NOW, "resume", session, "-")
        return Invocation(argv, stdin=prompt, purpose="compact")

    def reply(self, stdout: str, returncode: int | None, session: str | None) -> AgentReply:
        """The thread id, the last agent message, and a failed turn's error."""
        thread = None
        messages: list[str] = []
        failure = None
        for event in _events(stdout):
            kind = event.get("type")
            if kind == "thread.started":
                thread = _text(event.get("thread_id")) or thread
            elif kind == "item.completed":
                item = event.get("item")
                if isinstance(item, dict) and item.get("type") == "agent_message":
                    messages.append(_text(item.get("text")) or "")
            elif kind in ("turn.failed", "error"):
                failure = _error_text(event) or failure or "the turn failed"
        error = failure
        if error is None and returncode:
            error = f"exited {returncode}"
        message = messages[-1] if messages else ""
        return AgentReply(thread or session, message, error and one_line(error, 300))

    def live_tokens(self, line: str) -> int | None:
        """Codex's events carry no reading of the window; the rollout does."""
        return None


def _events(stdout: str) -> Iterator[Mapping[str, Any]]:
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


def _error_text(event: Mapping[str, Any]) -> str | None:
    error = event.get("error")
    if isinstance(error, dict):
        return _text(error.get("message"))
    return _text(event.get("message"))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
