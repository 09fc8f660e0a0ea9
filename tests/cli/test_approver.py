"""``loop approve`` and ``loop finish`` without ``--by``: git's user.name of the project (issue 21).

A new user has told git who they are; loop asks git (through the git layer, in
a real repository) rather than refusing. When git does not know either, the
error says both ways out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import git
from helpers.project import LOG, NEXT, ok, project_copy, run

REQUIREMENTS = Path("docs/specs/issue-7/requirements.md")


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = project_copy(tmp_path_factory, tmp_path / "p")
    git(root, "config", "user.name", "Ann Example")  # the project's own, not the global one
    git(root, "config", "user.email", "ann@example.invalid")
    return root


def _unapprove_requirements(root: Path) -> None:
    """Edit requirements.md, so it is stale and may be approved again."""
    path = root / REQUIREMENTS
    path.write_text(path.read_text() + "\n3. The system SHALL say so.\n")


def test_approve_without_by_records_gits_user_name(project: Path) -> None:
    _unapprove_requirements(project)

    done = run(project, "approve", "7", "requirements", "--json")

    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["by"] == "Ann Example"
    assert "Ann Example" in (project / REQUIREMENTS).read_text()


def test_by_still_wins(project: Path) -> None:
    _unapprove_requirements(project)
    done = run(project, "approve", "7", "requirements", "--by", "@bo", "--json")
    assert json.loads(done.stdout)["by"] == "@bo"


def test_finish_without_by_records_gits_user_name(project: Path) -> None:
    for task in ("1", "3", "2"):
        ok(project, "task", "done", "7", task, "--did", "it", "--next", NEXT)

    done = run(project, "finish", "7")

    assert done.exit_code == 0, done.output
    assert "review approved by Ann Example" in (project / LOG).read_text()


def test_no_by_and_no_git_identity_is_a_clear_error(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(project, "config", "--unset", "user.name")
    git(project, "config", "--unset", "user.email")
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    _unapprove_requirements(project)
    before = (project / REQUIREMENTS).read_text()

    refused = run(project, "approve", "7", "requirements")

    assert refused.exit_code == 2
    assert refused.stderr.startswith(
        "error: who approves? --by was not given, and git does not know who you are here\n"
        "hint: pass --by @you, or tell git who you are: `git config --global user.name"
    ), refused.stderr
    assert "Traceback" not in refused.stderr
    assert (project / REQUIREMENTS).read_text() == before
