"""The git side of parallel lanes, on real repositories: worktrees, squash, rebase, landing."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.project import git, init_git

from the_loop.errors import GitError
from the_loop.git import worktrees as wt


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    init_git(root)
    (root / "shared.txt").write_text("one\ntwo\nthree\n")
    (root / "tasks.md").write_text("- [ ] 1. a\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def _lane(root: Path, task: str) -> tuple[Path, str]:
    path = root.parent / "lanes" / task
    base = wt.head_of(root)
    wt.add_worktree(root, path, wt.task_branch("issue-1", task), base)
    return path, base


def test_a_worktree_per_task_on_its_branch_listed_and_removed(repo: Path) -> None:
    path, base = _lane(repo, "1")
    assert wt.head_of(path) == base
    listed = wt.list_worktrees(repo)
    assert [(w.path, w.branch) for w in listed] == [(path.resolve(), "loop/issue-1/1")]
    assert wt.task_branches(repo, "issue-1") == {"loop/issue-1/1": base}
    wt.remove_worktree(repo, path)
    assert not path.exists() and wt.list_worktrees(repo) == []
    wt.delete_branch(repo, "loop/issue-1/1")
    assert wt.task_branches(repo) == {}


def test_an_existing_branch_is_reused_with_its_commits(repo: Path) -> None:
    path, base = _lane(repo, "1")
    (path / "a.txt").write_text("work\n")
    sha, _ = wt.squash_work(path, base, "wip", loop_owned=())
    wt.remove_worktree(repo, path)
    again = wt.add_worktree(repo, path, "loop/issue-1/1", wt.head_of(repo))
    assert again == sha and (path / "a.txt").read_text() == "work\n"


def test_a_reused_branch_from_an_older_base_folds_onto_its_own_fork(repo: Path) -> None:
    # A killed run left task 1's worktree at the old base; task 3 landed meanwhile, and
    # the rerun's attempt names the new head as its base. Folding onto the new head with
    # the old files would record task 3's work as undone in task 1's commit.
    path, old_base = _lane(repo, "1")
    (path / "one.txt").write_text("task 1\n")
    (repo / "three.txt").write_text("task 3\n")
    (repo / "shared.txt").write_text("one\ntwo +task 3\nthree\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "task 3 landed")
    new_base = wt.head_of(repo)

    sha, _ = wt.squash_work(path, new_base, "task 1 work", loop_owned=("tasks.md",))

    assert sha is not None
    assert git(path, "rev-parse", f"{sha}^").strip() == old_base
    assert git(path, "diff", "--name-status", f"{sha}^", sha).split() == ["A", "one.txt"]
    rebased = wt.rebase_onto(path, new_base)
    assert rebased.ok and rebased.head is not None
    assert git(path, "diff", "--name-status", new_base, rebased.head).split() == ["A", "one.txt"]


def test_squash_folds_agent_commits_and_drops_loop_owned_edits(repo: Path) -> None:
    path, base = _lane(repo, "1")
    (path / "a.txt").write_text("a\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "agent's own commit")
    (path / "b.txt").write_text("b\n")
    (path / "tasks.md").write_text("- [x] 1. a\n")
    (path / "log.md").write_text("an agent's log entry\n")
    sha, dropped = wt.squash_work(path, base, "task 1", loop_owned=("tasks.md", "log.md"))
    assert sha is not None and dropped == ("tasks.md", "log.md")
    assert git(path, "rev-list", "--count", f"{base}..HEAD").strip() == "1"
    files = git(path, "diff", "--name-only", base, "HEAD").split()
    assert files == ["a.txt", "b.txt"]
    assert (path / "tasks.md").read_text() == "- [ ] 1. a\n" and not (path / "log.md").exists()


def test_nothing_to_commit_is_none(repo: Path) -> None:
    path, base = _lane(repo, "1")
    assert wt.squash_work(path, base, "x", loop_owned=()) == (None, ())


def test_rebase_onto_a_moved_head_then_land_the_tree(repo: Path) -> None:
    one, base = _lane(repo, "1")
    two, _ = _lane(repo, "2")
    (one / "one.txt").write_text("1\n")
    first, _ = wt.squash_work(one, base, "task 1", loop_owned=())
    (two / "two.txt").write_text("2\n")
    wt.squash_work(two, base, "task 2", loop_owned=())
    assert first is not None
    wt.land(repo, first)
    git(repo, "commit", "-q", "-m", "checkpoint 1")
    rebased = wt.rebase_onto(two, wt.head_of(repo))
    assert rebased.ok and rebased.head is not None
    assert wt.is_ancestor(repo, wt.head_of(repo), rebased.head)
    wt.land(repo, rebased.head)
    assert wt.landed_paths(repo) == ("two.txt",)
    assert wt.index_tree(repo) == wt.tree_of(repo, rebased.head)
    wt.unland(repo, rebased.head)
    assert wt.landed_paths(repo) == () and not (repo / "two.txt").exists()


def test_a_same_line_edit_conflicts_and_the_rebase_is_aborted(repo: Path) -> None:
    one, base = _lane(repo, "1")
    two, _ = _lane(repo, "2")
    (one / "shared.txt").write_text("one\nTWO by 1\nthree\n")
    first, _ = wt.squash_work(one, base, "task 1", loop_owned=())
    (two / "shared.txt").write_text("one\nTWO by 2\nthree\n")
    second, _ = wt.squash_work(two, base, "task 2", loop_owned=())
    assert first is not None
    wt.land(repo, first)
    git(repo, "commit", "-q", "-m", "checkpoint 1")
    rebased = wt.rebase_onto(two, wt.head_of(repo))
    assert not rebased.ok and rebased.conflicts == ("shared.txt",)
    assert "CONFLICT" in rebased.detail
    assert wt.head_of(two) == second  # the branch is as it was: nothing resolved by guessing
    assert not (Path(git(two, "rev-parse", "--git-dir").strip()) / "rebase-merge").exists()


def test_worktreeinclude_copies_ignored_files(repo: Path) -> None:
    (repo / ".gitignore").write_text(".env\n")
    (repo / ".env").write_text("SECRET=1\n")
    (repo / ".worktreeinclude").write_text(".env\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "include")
    path, _ = _lane(repo, "1")
    assert wt.copy_included(repo, path) == (".env",)
    assert (path / ".env").read_text() == "SECRET=1\n"


def test_prune_forgets_a_worktree_whose_folder_is_gone(repo: Path) -> None:
    path, _ = _lane(repo, "1")
    import shutil

    shutil.rmtree(path)
    assert wt.list_worktrees(repo)[0].prunable
    wt.prune_worktrees(repo)
    assert wt.list_worktrees(repo) == []


def test_outside_a_repository_is_a_git_error(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="need a git repository"):
        wt.head_of(tmp_path)
