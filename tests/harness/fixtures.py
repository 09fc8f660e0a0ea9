"""Pytest fixtures for agent tests: the fake APIs and the real CLIs wired to them.

``tests/harness/conftest.py`` exposes them to this folder; another test folder can use them by
importing the same names into its own ``conftest.py``::

    from harness.fixtures import claude_cli, codex_cli, fake_anthropic, fake_openai  # noqa: F401

``claude_cli`` and ``codex_cli`` skip the test when the binary is missing (run
``tools/install-agents``). A test using them should carry ``pytest.mark.agents``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.agents import (
    CLAUDE_BIN,
    CODEX_BIN,
    INSTALL_HINT,
    ClaudeCli,
    CodexCli,
    make_claude,
    make_codex,
)
from harness.fake_anthropic import FakeAnthropic
from harness.fake_openai import FakeOpenAI
from harness.fake_server import FakeModelServer


def _no_faults(fake: FakeModelServer) -> None:
    # A rule that raised or a usage of the wrong type was answered with a 500; the CLI may
    # have coped, so fail here to keep such faults from passing unnoticed.
    assert not fake.errors, f"the fake server failed: {fake.errors}"


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A running fake Anthropic API with default replies and usage; script it in the test."""
    with FakeAnthropic() as fake:
        yield fake
    _no_faults(fake)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake OpenAI Responses API with default replies and usage."""
    with FakeOpenAI() as fake:
        yield fake
    _no_faults(fake)


@pytest.fixture
def claude_cli(fake_anthropic: FakeAnthropic, tmp_path: Path) -> ClaudeCli:
    """The real ``claude``, isolated in ``tmp_path/claude-home``, talking to ``fake_anthropic``."""
    if CLAUDE_BIN is None:
        pytest.skip(f"claude CLI not installed: {INSTALL_HINT}")
    return make_claude(CLAUDE_BIN, tmp_path / "claude-home", fake_anthropic.base_url)


@pytest.fixture
def codex_cli(fake_openai: FakeOpenAI, tmp_path: Path) -> CodexCli:
    """The real ``codex``, isolated in ``tmp_path/codex-home``, talking to ``fake_openai``."""
    if CODEX_BIN is None:
        pytest.skip(f"codex CLI not installed: {INSTALL_HINT}")
    return make_codex(CODEX_BIN, tmp_path / "codex-home", fake_openai.base_url)
