"""The checkpoint commit: ``commit_checkpoint`` on real repositories, one behaviour each.

Every test drives the real git in a temporary repository; the index is checked
byte for byte where the promise is "nothing changed".
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import git

from the_loop.errors import GitError
from the_loop.git.commit import CommitOutcome, commit_checkpoint
from the_loop.git.repo import commit_message, repo_status

MESSAGE = (
    "chore(issue-42): checkpoint task 3\n"
    "\n"
    "Did: parser and its tests.\n"
    "# a line git's default cleanup would drop\n"
    "\n"
    "Loop-Item: issue-42\n"
    "Loop-Task: 3\n"
    "Loop-Phase: implementation\n"
    "Loop-Checkpoint: ck-0007\n"
)


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def commit_count(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD").stdout)


def committed_files(repo: Path) -> list[str]:
    """``STATUS\tpath`` lines of the HEAD commit."""
    out = git(repo, "show", "--name-status", "--format=", "HEAD").stdout
    return sorted(out.splitlines())


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@dataclass(frozen=True)
class RepoState:
    """Everything a refused or failed checkpoint must leave exactly as it was."""

    index: bytes | None
    staged: str
    staged_diff: str
    status: str
    worktree_diff: str
    head: str
    files: dict[str, str]

    @classmethod
    def of(cls, repo: Path) -> RepoState:
        # the index first: `git status` may refresh it
        index_file = repo / ".git" / "index"
        index = index_file.read_bytes() if index_file.exists() else None
        files = {
            p.relative_to(repo).as_posix(): p.read_text()
            for p in sorted(repo.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(repo).parts
        }
        return cls(
            index=index,
            staged=git(repo, "diff", "--cached", "--name-only").stdout,
            staged_diff=git(repo, "diff", "--cached").stdout,
            status=git(repo, "status", "--porcelain").stdout,
            worktree_diff=git(repo, "diff").stdout,
            head=git(repo, "rev-parse", "HEAD").stdout.strip(),
            files=files,
        )


def user_work_in_progress(repo: Path) -> None:
    """A realistic half-staged tree: staged, partly staged, unstaged and untracked work."""
    write(repo / "notes.md", "v1\n")
    git(repo, "add", "notes.md")
    git(repo, "commit", "-q", "-m", "add notes")
    write(repo / "staged.md", "the user staged this\n")
    write(repo / "notes.md", "v2 staged\n")
    git(repo, "add", "staged.md", "notes.md")
    write(repo / "notes.md", "v3 in the working tree\n")
    write(repo / "README.md", "# sample project, edited\n")
    write(repo / "untracked.md", "brand new\n")


# --------------------------------------------------------------------------- outcomes


def test_not_a_repository_is_an_outcome_not_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()

    outcome = commit_checkpoint(folder, message=MESSAGE)

    assert outcome == CommitOutcome(
        status="not-a-repo", sha=None, branch=None, detached=False, warnings=()
    )


def test_first_commit_of_a_repository_without_commits(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo / "spec.md", "# spec\n")

    outcome = commit_checkpoint(repo, message=MESSAGE)

    assert outcome == CommitOutcome(
        status="committed",
        sha=head(repo),
        branch="main",
        detached=False,
        files=("spec.md",),
        warnings=(),
    )
    assert commit_count(repo) == 1
    assert committed_files(repo) == ["A\tspec.md"]


def test_message_with_trailers_and_hash_lines_survives_byte_for_byte(git_repo: Path) -> None:
    write(git_repo / "a.md", "a\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE)

    assert outcome.sha is not None
    assert commit_message(git_repo, outcome.sha) == MESSAGE
    raw = git(git_repo, "cat-file", "commit", outcome.sha).stdout
    assert raw.endswith("\n\n" + MESSAGE)


def test_message_gets_a_final_newline(git_repo: Path) -> None:
    write(git_repo / "a.md", "a\n")

    outcome = commit_checkpoint(git_repo, message="chore: checkpoint\n\nLoop-Task: 1")

    assert outcome.sha is not None
    assert commit_message(git_repo, outcome.sha) == "chore: checkpoint\n\nLoop-Task: 1\n"


def test_nothing_to_commit_makes_no_empty_commit(git_repo: Path) -> None:
    write(git_repo / ".gitignore", "*.log\n")
    git(git_repo, "add", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "ignore logs")
    write(git_repo / "debug.log", "ignored noise\n")
    before = head(git_repo)

    outcome = commit_checkpoint(git_repo, message=MESSAGE)

    assert outcome == CommitOutcome(
        status="nothing-to-commit", sha=None, branch="main", detached=False, warnings=()
    )
    assert head(git_repo) == before
    assert commit_count(git_repo) == 2


def test_detached_head_commits_and_warns_how_to_keep_it(git_repo: Path) -> None:
    git(git_repo, "switch", "-q", "--detach", "HEAD")
    write(git_repo / "a.md", "a\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE)

    assert outcome.status == "committed"
    assert outcome.sha == head(git_repo)
    assert (outcome.branch, outcome.detached) == (None, True)
    assert outcome.warnings == (
        f"HEAD is detached: checkpoint commit {outcome.sha[:12]} is on no branch; "
        "keep it with `git switch -c <name>` before checking out anything else",
    )
    assert git(git_repo, "for-each-ref", "--contains", outcome.sha, "refs/heads").stdout == ""


def test_hooks_that_pass_are_run(git_repo: Path, tmp_path: Path) -> None:
    trace = tmp_path / "hook-ran"
    hook = write(git_repo / ".git" / "hooks" / "pre-commit", f"#!/bin/sh\necho ran > '{trace}'\n")
    hook.chmod(0o755)
    write(git_repo / "a.md", "a\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE)

    assert outcome.status == "committed"
    assert trace.read_text() == "ran\n"


def test_bisect_in_progress_commits_with_a_warning(git_repo: Path) -> None:
    git(git_repo, "bisect", "start")
    write(git_repo / "a.md", "a\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE)

    assert outcome.status == "committed"
    assert outcome.warnings == (
        "a bisect is in progress: the checkpoint commit sits on the commit under test "
        "and is not part of the bisect; keep it on a branch before `git bisect reset`",
    )


def test_commits_in_a_linked_worktree_on_its_branch(git_repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(git_repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    start_merge(git_repo)  # the main worktree's merge is not the linked worktree's business
    write(worktree / "a.md", "a\n")

    outcome = commit_checkpoint(worktree, message=MESSAGE)

    assert (outcome.status, outcome.branch) == ("committed", "feature")
    assert outcome.sha == git(git_repo, "rev-parse", "feature").stdout.strip()
    assert committed_files(worktree) == ["A\ta.md"]
    assert repo_status(git_repo).operation == "merge"
    assert repo_status(worktree).operation is None


# --------------------------------------------------------------------------- staging


def test_stage_all_takes_tracked_untracked_and_deletions_but_not_ignored(git_repo: Path) -> None:
    write(git_repo / ".gitignore", "*.log\n")
    write(git_repo / "old.md", "old\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "setup")
    write(git_repo / "README.md", "# changed\n")
    write(git_repo / "src" / "new.md", "new\n")
    (git_repo / "old.md").unlink()
    write(git_repo / "debug.log", "noise\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE, stage="all")

    assert outcome.status == "committed"
    assert committed_files(git_repo) == ["A\tsrc/new.md", "D\told.md", "M\tREADME.md"]
    assert git(git_repo, "status", "--porcelain", "--ignored").stdout == "!! debug.log\n"


@pytest.mark.parametrize("count", [3, 1200], ids=["named paths", "past the limit: add -A"])
def test_stage_all_commits_every_change_however_many(git_repo: Path, count: int) -> None:
    write(git_repo / "old.md", "old\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "setup")
    (git_repo / "old.md").unlink()
    for k in range(count - 1):
        write(git_repo / "batch" / f"f{k:04}.md", f"{k}\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE, stage="all")

    assert outcome.status == "committed"
    assert len(committed_files(git_repo)) == count
    assert "D\told.md" in committed_files(git_repo)
    assert git(git_repo, "status", "--porcelain").stdout == ""


@pytest.mark.parametrize("stage", ["all", "tracked", "paths"])
@pytest.mark.parametrize("alone", [True, False], ids=["alone", "beside an edit"])
def test_a_deletion_already_staged_is_committed(git_repo: Path, stage: str, alone: bool) -> None:
    """`git rm` (or a landed lane branch) leaves a path in neither index nor tree: a change."""
    write(git_repo / "old.md", "old\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "setup")
    git(git_repo, "rm", "-q", "old.md")
    if not alone:
        write(git_repo / "README.md", "# changed\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE, stage=stage, paths=[Path("README.md")])

    assert outcome.status == "committed"
    expected = ["D\told.md"] if alone else ["D\told.md", "M\tREADME.md"]
    assert committed_files(git_repo) == expected
    assert git(git_repo, "status", "--porcelain").stdout == ""


def test_stage_tracked_takes_tracked_changes_plus_the_given_paths(git_repo: Path) -> None:
    write(git_repo / "README.md", "# changed\n")
    write(git_repo / "spec" / "tasks.md", "- [x] 1\n")
    write(git_repo / "scratch.md", "not mine to commit\n")

    outcome = commit_checkpoint(
        git_repo, message=MESSAGE, stage="tracked", paths=[Path("spec/tasks.md")]
    )

    assert outcome.status == "committed"
    assert committed_files(git_repo) == ["A\tspec/tasks.md", "M\tREADME.md"]
    assert git(git_repo, "status", "--porcelain").stdout == "?? scratch.md\n"


def test_stage_paths_takes_only_the_given_paths(git_repo: Path) -> None:
    write(git_repo / "README.md", "# changed\n")
    write(git_repo / "spec" / "log.md", "entry\n")
    write(git_repo / "scratch.md", "not mine\n")

    outcome = commit_checkpoint(
        git_repo, message=MESSAGE, stage="paths", paths=[git_repo / "spec" / "log.md"]
    )

    assert outcome.status == "committed"
    assert committed_files(git_repo) == ["A\tspec/log.md"]
    assert git(git_repo, "status", "--porcelain").stdout == " M README.md\n?? scratch.md\n"


def test_paths_are_relative_to_root_and_literal(git_repo: Path) -> None:
    write(git_repo / "spec" / "a*.md", "the star is part of the name\n")
    write(git_repo / "spec" / "ab.md", "a glob would take me too\n")

    outcome = commit_checkpoint(
        git_repo / "spec", message=MESSAGE, stage="paths", paths=[Path("a*.md")]
    )

    assert outcome.status == "committed"
    assert committed_files(git_repo) == ["A\tspec/a*.md"]


def test_an_ignored_path_is_left_out_with_a_warning(git_repo: Path) -> None:
    write(git_repo / ".gitignore", "*.log\n")
    write(git_repo / "run.log", "noise\n")

    outcome = commit_checkpoint(
        git_repo, message=MESSAGE, stage="paths", paths=[Path(".gitignore"), Path("run.log")]
    )

    assert outcome.status == "committed"
    assert committed_files(git_repo) == ["A\t.gitignore"]
    assert outcome.warnings == (
        "run.log was not committed: git ignores it (.gitignore or .git/info/exclude)",
    )


def test_a_path_outside_the_repository_is_refused_before_staging(
    git_repo: Path, tmp_path: Path
) -> None:
    write(git_repo / "README.md", "# changed\n")
    outside = write(tmp_path / "elsewhere.md", "x\n")
    before = RepoState.of(git_repo)

    with pytest.raises(GitError, match="path is outside the repository"):
        commit_checkpoint(git_repo, message=MESSAGE, stage="tracked", paths=[outside])

    assert RepoState.of(git_repo) == before


def test_a_named_path_that_does_not_exist_is_reported_not_claimed(git_repo: Path) -> None:
    user_work_in_progress(git_repo)

    outcome = commit_checkpoint(
        git_repo, message=MESSAGE, stage="tracked", paths=[Path("missing.md")]
    )

    assert outcome.status == "committed"
    assert "missing.md" not in outcome.files
    assert "missing.md was not committed: it does not exist" in outcome.warnings
    assert "untracked.md" in outcome.left_out  # stage: tracked names what it left out


def test_another_git_holding_the_index_lock_is_reported_and_left_alone(git_repo: Path) -> None:
    lock = git_repo / ".git" / "index.lock"
    lock.write_text("")
    write(git_repo / "wip.md", "work in progress\n")
    index_before = (git_repo / ".git" / "index").read_bytes()

    with pytest.raises(GitError, match="`git add -A[^`]*` failed") as caught:
        commit_checkpoint(git_repo, message=MESSAGE)

    assert any("index.lock': File exists" in line for line in caught.value.details)
    assert lock.read_text() == ""  # not ours to remove
    assert (git_repo / ".git" / "index").read_bytes() == index_before


def test_bad_arguments_are_programming_errors(git_repo: Path) -> None:
    with pytest.raises(ValueError, match="stage must be one of all, tracked, paths"):
        commit_checkpoint(git_repo, message=MESSAGE, stage="everything")
    with pytest.raises(ValueError, match="non-empty message without NUL characters"):
        commit_checkpoint(git_repo, message=" \n")


# --------------------------------------------------------------------------- refusals


def diverge(repo: Path) -> None:
    """``main`` and ``other`` change the same line, so any combination conflicts."""
    git(repo, "switch", "-q", "-c", "other")
    write(repo / "README.md", "other side\n")
    git(repo, "commit", "-q", "-am", "other side")
    git(repo, "switch", "-q", "main")
    write(repo / "README.md", "main side\n")
    git(repo, "commit", "-q", "-am", "main side")


def start_merge(repo: Path) -> None:
    diverge(repo)
    git(repo, "merge", "other", check=False)


def start_rebase(repo: Path) -> None:
    diverge(repo)
    git(repo, "rebase", "other", check=False)


def start_rebase_apply(repo: Path) -> None:
    diverge(repo)
    git(repo, "rebase", "--apply", "other", check=False)


def start_cherry_pick(repo: Path) -> None:
    diverge(repo)
    git(repo, "cherry-pick", "other", check=False)


def start_revert(repo: Path) -> None:
    write(repo / "README.md", "one\n")
    git(repo, "commit", "-q", "-am", "one")
    write(repo / "README.md", "two\n")
    git(repo, "commit", "-q", "-am", "two")
    git(repo, "revert", "--no-edit", "HEAD~1", check=False)


def start_am(repo: Path) -> None:
    diverge(repo)
    patch = write(
        repo / ".git" / "other.patch", git(repo, "format-patch", "-1", "--stdout", "other").stdout
    )
    git(repo, "am", str(patch), check=False)


# id: (set-up, its marker in .git, how the error names it, how to finish, how to abort)
# fmt: off
REFUSALS = {
    "merge": (start_merge, "MERGE_HEAD", "a merge", "git commit", "git merge --abort"),
    "rebase": (start_rebase, "rebase-merge", "a rebase",
               "git rebase --continue", "git rebase --abort"),
    "rebase-apply": (start_rebase_apply, "rebase-apply", "a rebase",
                     "git rebase --continue", "git rebase --abort"),
    "cherry-pick": (start_cherry_pick, "CHERRY_PICK_HEAD", "a cherry-pick",
                    "git cherry-pick --continue", "git cherry-pick --abort"),
    "revert": (start_revert, "REVERT_HEAD", "a revert",
               "git revert --continue", "git revert --abort"),
    "am": (start_am, "rebase-apply/applying", "an am", "git am --continue", "git am --abort"),
}
# fmt: on


@pytest.mark.parametrize(
    ("start", "marker", "named", "finish", "abort"), REFUSALS.values(), ids=REFUSALS.keys()
)
def test_an_operation_in_progress_is_refused_before_touching_the_index(
    git_repo: Path, start: Callable[[Path], None], marker: str, named: str, finish: str, abort: str
) -> None:
    start(git_repo)
    assert (git_repo / ".git" / marker).exists()
    write(git_repo / "wip.md", "work in progress\n")
    before = RepoState.of(git_repo)

    with pytest.raises(GitError) as caught:
        commit_checkpoint(git_repo, message=MESSAGE)

    assert caught.value.message == (
        f"cannot commit the checkpoint: {named} is in progress (nothing was staged or committed)"
    )
    assert caught.value.hint == (
        f"finish it (`{finish}`) or abort it (`{abort}`), then checkpoint again"
    )
    assert repo_status(git_repo).operation == named.split(" ")[1]
    assert RepoState.of(git_repo) == before


def test_missing_identity_is_refused_before_staging(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = write(tmp_path / "empty-gitconfig", "")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    write(git_repo / "wip.md", "work in progress\n")
    before = RepoState.of(git_repo)

    with pytest.raises(GitError) as caught:
        commit_checkpoint(git_repo, message=MESSAGE)

    assert (
        caught.value.message == "git does not know who you are, so it cannot record a commit author"
    )
    assert caught.value.hint is not None
    assert 'git config --global user.name "Your Name"' in caught.value.hint
    assert RepoState.of(git_repo) == before


def test_identity_from_the_environment_is_used(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(write(tmp_path / "empty-gitconfig", "")))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Agent Smith")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "agent@example.invalid")
    write(git_repo / "a.md", "a\n")

    outcome = commit_checkpoint(git_repo, message=MESSAGE)

    assert outcome.status == "committed"
    who = git(git_repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>").stdout.strip()
    assert who == "Agent Smith <agent@example.invalid> / Agent Smith <agent@example.invalid>"


# --------------------------------------------------------------------------- failures


def install_hook(repo: Path, name: str, body: str) -> None:
    hook = write(repo / ".git" / "hooks" / name, f"#!/bin/sh\n{body}\n")
    hook.chmod(0o755)


def fail_pre_commit(repo: Path) -> str:
    install_hook(repo, "pre-commit", 'echo "lint: notes.md has trailing whitespace"\nexit 1')
    return "lint: notes.md has trailing whitespace"


def fail_commit_msg(repo: Path) -> str:
    install_hook(repo, "commit-msg", 'echo "commit-msg: no ticket id in $1" >&2\nexit 1')
    return "commit-msg: no ticket id in .git/COMMIT_EDITMSG"


def fail_signing(repo: Path) -> str:
    gpg = write(repo.parent / "fake-gpg", "#!/bin/sh\necho 'gpg: no secret key' >&2\nexit 2\n")
    gpg.chmod(0o755)
    git(repo, "config", "commit.gpgsign", "true")
    git(repo, "config", "gpg.program", str(gpg))
    return "error: gpg failed to sign the data"


@pytest.mark.parametrize("refuse", [fail_pre_commit, fail_commit_msg, fail_signing])
def test_a_refused_commit_leaves_the_index_exactly_as_it_was(
    git_repo: Path, refuse: Callable[[Path], str]
) -> None:
    user_work_in_progress(git_repo)
    expected_output = refuse(git_repo)
    before = RepoState.of(git_repo)
    assert before.staged == "notes.md\nstaged.md\n"

    with pytest.raises(GitError) as caught:
        commit_checkpoint(git_repo, message=MESSAGE, stage="all")

    error = caught.value
    assert re.fullmatch(
        r"git commit failed, so nothing was committed and the index is as it was "
        r"before the checkpoint \(exit \d+\)",
        error.message,
    )
    assert expected_output in error.details
    assert error.hint is not None and "hook or commit signing" in error.hint
    after = RepoState.of(git_repo)
    assert after == before
    assert after.index == before.index  # byte for byte, not merely the same names


def test_a_refused_first_commit_leaves_no_index_behind(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    install_hook(repo, "pre-commit", "exit 1")
    write(repo / "spec.md", "# spec\n")
    assert not (repo / ".git" / "index").exists()

    with pytest.raises(GitError, match="git commit failed"):
        commit_checkpoint(repo, message=MESSAGE)

    assert not (repo / ".git" / "index").exists()
    assert git(repo, "status", "--porcelain").stdout == "?? spec.md\n"
    assert not (repo / ".git" / "index.lock").exists()


def test_a_broken_git_folder_is_a_git_error(tmp_path: Path) -> None:
    repo = tmp_path / "broken"
    (repo / ".git").mkdir(parents=True)

    with pytest.raises(GitError, match="git cannot open it as a repository") as caught:
        commit_checkpoint(repo, message=MESSAGE)

    assert any("HEAD is missing" in line for line in caught.value.details)
    assert os.listdir(repo / ".git") == []
