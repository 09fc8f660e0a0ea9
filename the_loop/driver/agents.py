"""What one agent run looks like, whichever agent it is.

An *agent* turns "start a session", "resume it" and "compact it" into command
lines (:class:`Invocation`) and reads what a finished run printed
(:class:`AgentReply`). The three kinds live in ``claude``, ``codex`` and
``command``; ``agent_choice`` picks one from the ``agent:`` config and
``--agent``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from the_loop.telemetry import Harness


class AgentKind(str, Enum):
    """The agents the driver knows how to run."""

    CLAUDE = "claude"
    CODEX = "codex"
    COMMAND = "command"


class Start(str, Enum):
    """How a run begins: a fresh session, the same one resumed, or it compacted first."""

    NEW = "new"
    RESUME = "resume"
    COMPACT = "compact"


@dataclass(frozen=True)
class Invocation:
    """One agent process to start: its argv, what goes to stdin, and its extra environment."""

    argv: tuple[str, ...]
    stdin: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()  # variables the run must not inherit
    purpose: str = "turn"  # turn | compact

    def shown(self) -> str:
        """The command line as a shell would read it (stdin is not shown)."""
        return shlex.join(self.argv)


@dataclass(frozen=True)
class AgentReply:
    """What a finished run said about itself.

    ``session`` is the session the run belonged to (None when it never got
    one); ``error`` is None for a clean run; ``tokens`` is the context in use as
    the run's own output reported it (None when it does not say).
    """

    session: str | None
    message: str
    error: str | None
    tokens: int | None = None
    windows: Mapping[str, int] = field(default_factory=dict)
    denied: tuple[str, ...] = ()  # tools the agent asked for and was not allowed
    limit: str | None = None  # the harness stopped itself at a limit loop passed (a budget)
    # False when running again cannot help: the API refused the request itself (a 4xx
    # other than a timeout or a rate limit), so a retry would only wait and fail alike.
    retryable: bool = True


def retryable_status(status: object) -> bool:
    """Whether an API error status is worth a retry: 5xx, 408, 429 (and unknown)."""
    if not isinstance(status, int) or isinstance(status, bool):
        return True
    return not (400 <= status < 500) or status in (408, 409, 429)


class Agent(Protocol):
    """What the driver needs from each kind of agent."""

    kind: AgentKind
    harness: Harness | None  # whose transcript telemetry can read; None: none
    compaction_marker: tuple[str, str] | None  # (key, value) of a transcript compaction line

    def new_session_id(self) -> str | None:
        """An id for a new session chosen up front, or None when the agent picks it."""

    def turn(self, start: Start, session: str | None, prompt: str) -> Invocation:
        """The run that gives ``prompt`` to a new or resumed session."""

    def compaction(self, session: str, focus: str) -> Invocation | None:
        """A run that compacts ``session`` on its own, or None when the turn carries it."""

    def reply(self, stdout: str, returncode: int | None, session: str | None) -> AgentReply:
        """Read a finished run's output (``session``: the id the run was started with)."""

    def live_tokens(self, line: str) -> int | None:
        """Tokens in use, if this line of live output tells them."""


def one_line(text: str, limit: int = 400) -> str:
    """``text`` on one line, at most ``limit`` characters (for log entries and events)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
