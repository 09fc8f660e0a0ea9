"""Any program as the agent (``agent.kind: command``).

The program gets the prompt on stdin and, in its environment:

* ``LOOP_ITEM``, ``LOOP_TASK``: the work item and the task;
* ``LOOP_SESSION_ID``: a session id loop keeps for it. A clear gives a new id;
  a compaction, or a plain resume, keeps it;
* ``LOOP_SESSION_START``: ``new``, ``resume`` or ``compact``, which tells the
  program what to do with whatever context it keeps (loop cannot look inside
  it, so a compaction is requested, never verified).

Its exit code says whether the run worked; the last non-empty line it prints
is its final message.
"""

from __future__ import annotations

import uuid

from the_loop.driver.agents import AgentKind, AgentReply, Invocation, Start, one_line
from the_loop.telemetry import Harness


class CommandAgent:
    """A program given the prompt on stdin."""

    kind = AgentKind.COMMAND
    harness: Harness | None = None
    compaction_marker: tuple[str, str] | None = None

    def __init__(self, executable: tuple[str, ...]) -> None:
        self._exe = executable

    def new_session_id(self) -> str | None:
        """loop names the program's sessions itself."""
        return str(uuid.uuid4())

    def turn(self, start: Start, session: str | None, prompt: str) -> Invocation:
        """The program with the prompt on stdin and ``LOOP_SESSION_START=<start>``."""
        return Invocation(self._exe, stdin=prompt, env={"LOOP_SESSION_START": start.value})

    def compaction(self, session: str, focus: str) -> Invocation | None:
        """None: the turn itself carries the request (``LOOP_SESSION_START=compact``)."""
        return None

    def reply(self, stdout: str, returncode: int | None, session: str | None) -> AgentReply:
        """The last line printed; a non-zero exit is an error."""
        lines = [line for line in stdout.splitlines() if line.strip()]
        message = one_line(lines[-1]) if lines else ""
        error = f"exited {returncode}" if returncode else None
        return AgentReply(session, message, error)

    def live_tokens(self, line: str) -> int | None:
        """A program's output says nothing loop can read about its context."""
        return None
