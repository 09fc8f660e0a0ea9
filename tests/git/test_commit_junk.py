"""Untracked junk stays out of a ``stage: all`` checkpoint commit, named in a warning.

Editor swap files, logs, build and cache folders and files over
``max_file_bytes`` are what a working session leaves lying around; a checkpoint
records the work, not them. Only *untracked* junk is left out: what git already
tracks, or what the user staged, is the user's decision and is committed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import git

from the_loop.git.commit import commit_checkpoint

MESSAGE = "chore(issue-42): checkpoint task 3\n"


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


def committed(repo: Path) -> list[str]:
    """The paths the HEAD commit changed, sorted."""
    out = git(repo, "show", "--name-only", "--format=", "HEAD").stdout
    return sorted(out.split())


def untracked(repo: Path) -> list[str]:
    out = git(repo, "status", "--porcelain", "--untracked-files=all").stdout
    return sorted(line[3:] for line in out.splitlines() if line.startswith("?? "))


JUNK = (
    ".notes.md.swp",
    "src/app.py~",
    "#draft.md#",
    "run.log",
    "scratch.tmp",
    "src/__pycache__/app.cpython-312.pyc",
    "web/node_modules/left-pad/index.js",
    ".pytest_cache/v/cache/lastfailed",
    "build/lib/app.py",
    "dist/app-1.0.tar.gz",
    "target/debug/app",
)


def test_stage_all_leaves_untracked_junk_out_and_names_it(git_repo: Path) -> None:
    write(git_repo / "src" / "app.py", "print('work')\n")
    write(git_repo / "README.md", "# sample project, edited\n")
    for path in JUNK:
        write(git_repo / path, "junk\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE, stage="all")

    assert outcome.status == "committed"
    assert committed(git_repo) == ["README.md", "src/app.py"]
    assert sorted(outcome.left_out) == sorted(JUNK)
    assert untracked(git_repo) == sorted(JUNK)  # left where they were, untouched
    assert len(outcome.warnings) == 1
    warning = outcome.warnings[0]
    assert warning.startswith("left out of the commit as junk (untracked): ")
    assert warning.endswith(
        f"and {len(JUNK) - 8} more; commit them with git yourself if they belong to the work"
    )


@pytest.mark.parametrize("size, taken", [(64, True), (65, False)])
def test_an_untracked_file_over_max_file_bytes_is_junk(
    git_repo: Path, size: int, taken: bool
) -> None:
    write(git_repo / "data.bin", b"\0" * size)
    write(git_repo / "app.py", "x = 1\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE, stage="all", max_file_bytes=64)

    assert committed(git_repo) == (["app.py", "data.bin"] if taken else ["app.py"])
    assert outcome.left_out == (() if taken else ("data.bin",))
    assert bool(outcome.warnings) is not taken


def test_junk_git_already_tracks_or_the_user_staged_is_committed(git_repo: Path) -> None:
    write(git_repo / "build" / "keep.txt", "v1\n")
    git(git_repo, "add", "-f", "build/keep.txt")
    git(git_repo, "commit", "-q", "-m", "track a file under build/")
    write(git_repo / "build" / "keep.txt", "v2\n")  # tracked: a change like any other
    write(git_repo / "fixture.log", "the user wants this one\n")
    git(git_repo, "add", "fixture.log")  # staged: git commits it whatever loop does
    write(git_repo / "other.log", "noise\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE, stage="all")

    assert outcome.status == "committed"
    assert committed(git_repo) == ["build/keep.txt", "fixture.log"]
    assert outcome.left_out == ("other.log",)


def test_nothing_but_junk_is_nothing_to_commit(git_repo: Path) -> None:
    before = git(git_repo, "rev-parse", "HEAD").stdout
    write(git_repo / ".main.py.swp", "junk\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE, stage="all")

    assert (outcome.status, outcome.sha) == ("nothing-to-commit", None)
    assert outcome.left_out == (".main.py.swp",)
    assert git(git_repo, "rev-parse", "HEAD").stdout == before
