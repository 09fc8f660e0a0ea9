"""Pick the agent to run: ``--agent`` or ``agent.kind``, and the program that starts it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from the_loop.config.settings import AgentSettings
from the_loop.driver.agents import Agent, AgentKind
from the_loop.driver.claude import ClaudeAgent
from the_loop.driver.codex import CodexAgent
from the_loop.driver.command import CommandAgent
from the_loop.errors import UsageError

DEFAULT_EXECUTABLES = {AgentKind.CLAUDE: "claude", AgentKind.CODEX: "codex"}


def choose_kind(settings: AgentSettings, requested: str | None) -> AgentKind:
    """``--agent`` when given, else ``agent.kind``."""
    return AgentKind(requested or settings.kind)


def executable(settings: AgentSettings, kind: AgentKind, env: Mapping[str, str]) -> tuple[str, ...]:
    """The argv prefix that starts ``kind``: ``agent.command`` when it is meant for this kind.

    ``agent.command`` belongs to ``agent.kind``: asking for another kind with
    ``--agent`` uses that kind's default executable. Raises ``UsageError``
    when the program cannot be found.
    """
    configured = settings.command if settings.kind == kind.value else ()
    if kind is AgentKind.COMMAND and not configured:
        raise UsageError(
            "--agent command needs the program to run in agent.command",
            hint='set agent.kind: command and agent.command: ["my-agent", "--headless"] in '
            ".the-loop/config.yaml",
        )
    argv = configured or (DEFAULT_EXECUTABLES[kind],)
    program = argv[0]
    found = (
        program
        if os.sep in program and os.access(program, os.X_OK)
        else shutil.which(program, path=env.get("PATH"))
    )
    if not found:
        raise UsageError(
            f"cannot find the {kind.value} program {program!r}",
            hint="install it, put it on PATH, or name it in agent.command "
            f"(with agent.kind: {kind.value})",
        )
    return tuple(argv)


def make_agent(settings: AgentSettings, kind: AgentKind, env: Mapping[str, str]) -> Agent:
    """The agent of ``kind``, configured from ``settings``."""
    argv = executable(settings, kind, env)
    if kind is AgentKind.CLAUDE:
        return ClaudeAgent(argv, settings.claude)
    if kind is AgentKind.CODEX:
        return CodexAgent(argv, settings.codex)
    return CommandAgent(argv)
