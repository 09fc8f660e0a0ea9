"""Which checkpoint commits are on HEAD's history: walked newest first, found by trailer id."""

from __future__ import annotations

from pathlib import Path

import pytest
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


def test_the_walk_stops_once_every_wanted_id_is_found(git_repo: Path) -> None:
    _commit(git_repo, "old\n\nLoop-Checkpoint: ck-old\n")
    newer = _commit(git_repo, "newer\n\nLoop-Checkpoint: ck-new\n")
    _commit(git_repo, "newest, no checkpoint")

    assert checkpoint_commits(git_repo, wanted={"ck-new"}) == {"ck-new": newer}
    assert set(checkpoint_commits(git_repo, wanted={"ck-new", "ck-gone"}) or {}) == {
        "ck-new",
        "ck-old",
    }  # one id is missing: the whole history is read


def test_history_ignores_grep_and_log_config(git_repo: Path) -> None:
    """The user's pattern syntax and log settings are not loop's: the answer stays the same."""
    sha = _commit(git_repo, "work\n\nLoop-Checkpoint: ck-1\n")
    for key, value in (
        ("grep.patternType", "perl"),
        ("log.showSignature", "true"),
        ("i18n.logOutputEncoding", "ISO-8859-1"),
        ("format.pretty", "oneline"),
    ):
        git(git_repo, "config", key, value)

    assert checkpoint_commits(git_repo) == {"ck-1": sha}


def test_replace_refs_are_not_followed(git_repo: Path) -> None:
    """A replace ref shows another commit in the user's `git log`; loop reads what was committed."""
    sha = _commit(git_repo, "work\n\nLoop-Checkpoint: ck-1\n")
    git(git_repo, "commit", "-q", "--allow-empty", "-m", "stand-in without the trailer")
    stand_in = git(git_repo, "rev-parse", "HEAD").stdout.strip()
    git(git_repo, "reset", "-q", "--hard", sha)
    git(git_repo, "replace", sha, stand_in)
    assert "Loop-Checkpoint" not in git(git_repo, "log", "-1", "--format=%B").stdout

    assert checkpoint_commits(git_repo) == {"ck-1": sha}


def _log_commit(repo: Path, log: Path, line: str, message: str) -> str:
    with log.open("a") as handle:
        handle.write(line + "\n")
    git(repo, "add", str(log))
    return _commit(repo, message)


def test_a_logs_questions_read_only_the_commits_that_changed_it(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A long-lived repository has tens of thousands of commits; status asks about one
    # item's log, so only the commits that changed that log may be read.
    log = git_repo / "docs" / "specs" / "issue-7" / "execution-log.md"
    log.parent.mkdir(parents=True)
    first = _log_commit(git_repo, log, "entry 1", "checkpoint 1\n\nLoop-Checkpoint: ck-1\n")
    for n in range(30):
        _commit(git_repo, f"unrelated work {n}")
    second = _log_commit(git_repo, log, "entry 2", "checkpoint 2\n\nLoop-Checkpoint: ck-2\n")
    _log_commit(git_repo, log, "entry 2, edited", "a hand edit of the log, no checkpoint")
    for n in range(30):
        _commit(git_repo, f"more unrelated work {n}")
    import git as gitpython

    from the_loop.git import history

    read: list[str] = []
    real = gitpython.Commit

    def counting(repo: object, binsha: bytes, *args: object, **kwargs: object) -> object:
        read.append(binsha.hex())
        return real(repo, binsha, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitpython, "Commit", counting)
    monkeypatch.setattr(history, "_PAGES", (1, 2))  # small pages: the paging is walked too

    found = checkpoint_commits(git_repo, wanted={"ck-1", "ck-2"}, log=log)
    version = history.checkpoint_version(git_repo, log)

    assert found == {"ck-1": first, "ck-2": second}
    assert version == (second, "entry 1\nentry 2\n")
    assert len(read) == 3 + 2  # the three commits of the log, then the newest two again
