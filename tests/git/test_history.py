"""Which checkpoint commits are on HEAD's history: one git log, found by trailer id."""

from __future__ import annotations

from pathlib import Path

from helpers import git

from the_loop.git.history import checkpoint_commits


def _commit(repo: Path, message: str) -> str:
    git(repo, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def test_checkpoints_on_head_by_id(git_repo: Path) -> None:
    first = _commit(git_repo, "chore: checkpoint task 1\n\nLoop-Task: 1\nLoop-Checkpoint: ck-1\n")
    _commit(git_repo, "unrelated work\n\nmentions Loop-Checkpoint: in prose only")
    squash = _commit(
        git_repo,
        "squashed\n\n* task 2\n\nLoop-Checkpoint: ck-2\n\n* task 3\n\nLoop-Checkpoint: ck-3\n\nEnd",
    )

    found = checkpoint_commits(git_repo)

    assert found == {"ck-1": first, "ck-2": squash, "ck-3": squash}


def test_a_checkpoint_reset_away_is_not_found(git_repo: Path) -> None:
    _commit(git_repo, "chore: checkpoint\n\nLoop-Checkpoint: ck-9\n")
    git(git_repo, "reset", "-q", "--hard", "HEAD~1")

    assert checkpoint_commits(git_repo) == {}


def test_no_repository_and_no_commit(tmp_path: Path) -> None:
    assert checkpoint_commits(tmp_path) is None
    git(tmp_path, "init", "-q")
    assert checkpoint_commits(tmp_path) == {}
