"""Fixtures for the hook tests: a real project in implementation, and the agent CLIs."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness.fixtures import claude_cli, codex_cli, fake_anthropic, fake_openai
from helpers.project import ok, project_copy

__all__ = ["claude_cli", "codex_cli", "fake_anthropic", "fake_openai"]


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Item issue-7 approved and in implementation, a clean git tree, no open reset."""
    return project_copy(tmp_path_factory, tmp_path / "project")


@pytest.fixture
def in_task(project: Path) -> Path:
    """Task 1 handed out by ``execute-tasks`` (in progress), not owned by any session."""
    ok(project, "execute-tasks", "7")
    return project
