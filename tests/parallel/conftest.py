"""The agent fixtures (``harness.fixtures``) for the driver tests that run the real CLIs."""

from harness.fixtures import claude_cli, codex_cli, fake_anthropic, fake_openai

__all__ = ["claude_cli", "codex_cli", "fake_anthropic", "fake_openai"]
