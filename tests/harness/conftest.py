"""Fixtures for the agent harness tests (defined in ``harness.fixtures``)."""

from harness.fixtures import claude_cli, codex_cli, fake_anthropic, fake_openai

__all__ = ["claude_cli", "codex_cli", "fake_anthropic", "fake_openai"]
