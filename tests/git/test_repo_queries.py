"""Git queries: finding the repository, its status, identity, commits and trailers.

Real repositories in temp folders throughout; ``test_gitrepo_commit.py`` covers
the checkpoint commit itself (and the operation-in-progress states).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import REPO_ROOT, git

from the_loop.errors import GitError
from the_loop.git.repo import (
    RepoStatus,
    commit_message,
    find_checkpoint_commit,
    find_repo_root,
    head_sha,
    identity,
    is_ignored,
    parse_trailers,
    repo_status,
    trailers,
)


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def commit(repo: Path, message: str) -> str:
    """An empty commit with ``message`` taken verbatim; its sha."""
    git(repo, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message)
    return head(repo)


@pytest.fixture
def fresh_repo(tmp_path: Path) -> Path:
    """A repository without any commit yet."""
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


@pytest.fixture
def plain_folder(tmp_path: Path) -> Path:
    """A folder in no repository."""
    folder = tmp_path / "plain" / "sub"
    folder.mkdir(parents=True)
    assert find_repo_root(folder) is None, "the temp folder is inside a repository"
    return folder


# --------------------------------------------------------------------------- no repository


def test_answers_without_a_repository_never_start_git(plain_folder: Path, tmp_path: Path) -> None:
    """Outside a repository every query answers from the file system alone."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "git-was-run"
    fake = bin_dir / "git"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake.chmod(0o755)
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from the_loop.git import repo as gitrepo
        from the_loop.git.commit import commit_checkpoint
        folder = Path({str(plain_folder)!r})
        assert gitrepo.find_repo_root(folder) is None
        assert gitrepo.repo_status(folder).is_repo is False
        assert commit_checkpoint(folder, message="m").status == "not-a-repo"
        assert gitrepo.head_sha(folder) is None
        assert gitrepo.operation(folder) is None
        assert gitrepo.is_ignored(folder, Path("x")) is False
        assert gitrepo.find_checkpoint_commit(folder, "Loop-Checkpoint", "x") is None
        """
    )
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    assert not marker.exists()


# --------------------------------------------------------------------------- find_repo_root


def test_find_repo_root_walks_up_from_a_subfolder(git_repo: Path) -> None:
    nested = git_repo / "a" / "b"
    nested.mkdir(parents=True)

    assert find_repo_root(nested) == git_repo.resolve()
    assert find_repo_root(git_repo) == git_repo.resolve()


def test_find_repo_root_accepts_a_git_file(git_repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(git_repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    assert (worktree / ".git").is_file()

    assert find_repo_root(worktree / "README.md") == worktree.resolve()


def test_find_repo_root_outside_any_repository(plain_folder: Path) -> None:
    assert find_repo_root(plain_folder) is None


# --------------------------------------------------------------------------- repo_status


def test_status_of_a_clean_repository(git_repo: Path) -> None:
    assert repo_status(git_repo) == RepoStatus(
        is_repo=True,
        has_commits=True,
        branch="main",
        detached=False,
        operation=None,
        dirty=False,
        head=head(git_repo),
    )


def test_status_outside_a_repository(plain_folder: Path) -> None:
    assert repo_status(plain_folder) == RepoStatus(
        is_repo=False,
        has_commits=False,
        branch=None,
        detached=False,
        operation=None,
        dirty=False,
        head=None,
    )


def test_status_before_the_first_commit(fresh_repo: Path) -> None:
    status = repo_status(fresh_repo)

    assert (status.has_commits, status.head, status.branch, status.detached) == (
        False,
        None,
        "main",
        False,
    )
    assert status.dirty is False


def test_status_when_detached(git_repo: Path) -> None:
    git(git_repo, "switch", "-q", "--detach", "HEAD")

    status = repo_status(git_repo)

    assert (status.branch, status.detached, status.head) == (None, True, head(git_repo))


@pytest.mark.parametrize(
    "change",
    ["untracked", "unstaged", "staged", "deleted"],
)
def test_status_dirty_for_every_kind_of_change(git_repo: Path, change: str) -> None:
    readme = git_repo / "README.md"
    if change == "untracked":
        (git_repo / "new.md").write_text("new\n")
    elif change == "unstaged":
        readme.write_text("changed\n")
    elif change == "staged":
        readme.write_text("changed\n")
        git(git_repo, "add", "README.md")
    else:
        readme.unlink()

    assert repo_status(git_repo).dirty is True


def test_status_ignored_files_are_not_dirt(git_repo: Path) -> None:
    (git_repo / ".git" / "info" / "exclude").write_text("*.log\n")
    (git_repo / "run.log").write_text("noise\n")

    assert repo_status(git_repo).dirty is False


def test_status_reports_a_bisect(git_repo: Path) -> None:
    git(git_repo, "bisect", "start")

    assert repo_status(git_repo).operation == "bisect"


# --------------------------------------------------------------------------- identity


def test_identity_from_the_global_config(git_repo: Path) -> None:
    assert identity(git_repo) == ("Loop Tester", "tester@example.invalid")


def test_identity_repository_config_wins_over_global(git_repo: Path) -> None:
    git(git_repo, "config", "user.name", "Repo Person")
    git(git_repo, "config", "user.email", "repo@example.invalid")

    assert identity(git_repo) == ("Repo Person", "repo@example.invalid")


def test_identity_environment_wins_over_config(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Env Person")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "env@example.invalid")

    assert identity(git_repo) == ("Env Person", "env@example.invalid")


def test_identity_missing_says_how_to_set_it(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.delenv("EMAIL", raising=False)

    with pytest.raises(GitError) as caught:
        identity(git_repo)

    error = caught.value
    assert error.message == "git does not know who you are, so it cannot record a commit author"
    assert error.details and all(line.startswith("fatal:") for line in error.details)
    assert error.hint == (
        'tell git who you are: `git config --global user.name "Your Name"` and '
        '`git config --global user.email "you@example.com"` '
        "(or set GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL)"
    )


def test_identity_needs_the_committer_too(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Env Person")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "env@example.invalid")

    with pytest.raises(GitError, match="cannot record a commit committer"):
        identity(git_repo)


def test_identity_works_outside_a_repository(plain_folder: Path) -> None:
    assert identity(plain_folder) == ("Loop Tester", "tester@example.invalid")


# --------------------------------------------------------------------------- head, ignore


def test_head_sha(git_repo: Path, fresh_repo: Path, plain_folder: Path) -> None:
    assert head_sha(git_repo) == head(git_repo)
    assert head_sha(fresh_repo) is None
    assert head_sha(plain_folder) is None


def test_is_ignored(git_repo: Path) -> None:
    (git_repo / ".gitignore").write_text("*.log\nbuild/\n")
    (git_repo / "kept.log").write_text("tracked despite the pattern\n")
    git(git_repo, "add", "-f", "kept.log")

    assert is_ignored(git_repo, Path("run.log")) is True
    assert is_ignored(git_repo, git_repo / "build" / "out.bin") is True
    assert is_ignored(git_repo, Path("kept.log")) is False
    assert is_ignored(git_repo, Path("README.md")) is False
    assert is_ignored(git_repo / "build", Path("x.o")) is True  # relative to root


# --------------------------------------------------------------------------- messages, trailers

MULTI_TRAILER = (
    "chore(issue-42): checkpoint task 3\n"
    "\n"
    "Did: the parser. Loop-Checkpoint: not-this-one (prose, not a trailer)\n"
    "\n"
    "Loop-Item: issue-42\n"
    "Loop-Task: 3\n"
    "Loop-Phase: implementation\n"
    "Loop-Reset: clear\n"
    "Loop-Checkpoint: ck-0007\n"
)


def test_commit_message_is_exact(git_repo: Path) -> None:
    sha = commit(git_repo, MULTI_TRAILER)

    assert commit_message(git_repo, sha) == MULTI_TRAILER
    assert commit_message(git_repo, "HEAD") == MULTI_TRAILER


def test_commit_message_of_an_unknown_commit(git_repo: Path) -> None:
    with pytest.raises(GitError, match="no commit 'f00d' in this repository") as caught:
        commit_message(git_repo, "f00d")
    assert caught.value.hint == "check the sha (`git log --oneline` lists recent commits)"


def test_commit_message_outside_a_repository(plain_folder: Path) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        commit_message(plain_folder, "HEAD")


def test_trailers_of_a_multi_trailer_message(git_repo: Path) -> None:
    sha = commit(git_repo, MULTI_TRAILER)

    assert trailers(git_repo, sha) == {
        "Loop-Item": "issue-42",
        "Loop-Task": "3",
        "Loop-Phase": "implementation",
        "Loop-Reset": "clear",
        "Loop-Checkpoint": "ck-0007",
    }
    assert list(trailers(git_repo, sha)) == [
        "Loop-Item",
        "Loop-Task",
        "Loop-Phase",
        "Loop-Reset",
        "Loop-Checkpoint",
    ]


def test_trailers_repeated_key_last_wins(git_repo: Path) -> None:
    sha = commit(git_repo, "subject\n\nCo-authored-by: A <a@x>\nCo-authored-by: B <b@x>\n")

    assert trailers(git_repo, sha) == {"Co-authored-by": "B <b@x>"}


PARSE_CASES = {
    "multi": MULTI_TRAILER,
    "folded": "subject\n\nLoop-Item: issue-42\nLoop-Note: a long\n  folded value\nLoop-Task: 3\n",
    "subject-only": "Loop-Task: 3\n",
    "prose-last": "subject\n\nLoop-Task: 3\n\nThanks for reading.\n",
    "mixed-block": "subject\n\nLoop-Task: 3\nthis line is prose\n",
    "spaces": "subject\n\nLoop-Task :  3  \nSigned-off-by: Loop Tester <t@x>\n",
    "cherry-picked": "subject\n\nLoop-Task: 3\n(cherry picked from commit abc123)\n",
    "trailing-blank-lines": "subject\n\nLoop-Task: 3\n\n\n",
}


@pytest.mark.parametrize("message", PARSE_CASES.values(), ids=PARSE_CASES.keys())
def test_parse_trailers_agrees_with_git(message: str, tmp_path: Path) -> None:
    parsed = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        input=message,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    by_git = [tuple(line.split(": ", 1)) for line in parsed.splitlines()]

    assert parse_trailers(message) == by_git


def test_parse_trailers_examples() -> None:
    assert parse_trailers(PARSE_CASES["folded"]) == [
        ("Loop-Item", "issue-42"),
        ("Loop-Note", "a long folded value"),
        ("Loop-Task", "3"),
    ]
    assert parse_trailers(PARSE_CASES["subject-only"]) == []
    assert parse_trailers(PARSE_CASES["prose-last"]) == []


# --------------------------------------------------------------------------- find_checkpoint_commit


def test_find_checkpoint_commit_matches_the_value_exactly(git_repo: Path) -> None:
    one = commit(git_repo, "checkpoint 1\n\nLoop-Checkpoint: ck-1\n")
    ten = commit(git_repo, "checkpoint 10\n\nLoop-Checkpoint: ck-10\n")
    commit(git_repo, "unrelated work\n")

    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "ck-1") == one
    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "ck-10") == ten
    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "ck-") is None
    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "ck-2") is None
    assert find_checkpoint_commit(git_repo, "Loop-Item", "ck-1") is None


def test_find_checkpoint_commit_returns_the_newest(git_repo: Path) -> None:
    commit(git_repo, "first try\n\nLoop-Checkpoint: ck-5\n")
    newest = commit(git_repo, "second try\n\nLoop-Checkpoint: ck-5\n")

    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "ck-5") == newest


def test_find_checkpoint_commit_key_is_case_insensitive(git_repo: Path) -> None:
    sha = commit(git_repo, "checkpoint\n\nLoop-Item: x\nloop-checkpoint: ck-9\n")

    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "ck-9") == sha


def test_find_checkpoint_commit_ignores_prose(git_repo: Path) -> None:
    commit(git_repo, MULTI_TRAILER)

    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "not-this-one") is None
    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "ck-0007") == head(git_repo)


def test_find_checkpoint_commit_looks_back_max_count_commits(git_repo: Path) -> None:
    sha = commit(git_repo, "checkpoint\n\nLoop-Checkpoint: ck-1\n")
    for n in range(3):
        commit(git_repo, f"later work {n}\n")

    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "ck-1", max_count=3) is None
    assert find_checkpoint_commit(git_repo, "Loop-Checkpoint", "ck-1", max_count=4) == sha


def test_find_checkpoint_commit_without_commits(fresh_repo: Path, plain_folder: Path) -> None:
    assert find_checkpoint_commit(fresh_repo, "Loop-Checkpoint", "ck-1") is None
    assert find_checkpoint_commit(plain_folder, "Loop-Checkpoint", "ck-1") is None
