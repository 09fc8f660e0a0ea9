"""What HEAD points at: the branch and the commit, read by GitPython from the refs.

A checkpoint reads HEAD before and after its commit; GitPython reads the ref
files (a linked worktree's own HEAD, the shared loose refs, ``packed-refs``)
without starting git. Refs in git's reftable format are beyond GitPython's
reader: there git answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from the_loop.git.commands import run_git
from the_loop.git.opening import GitDirs


@dataclass(frozen=True)
class Head:
    """What HEAD points at: a branch (``None`` when detached) and a commit (``None`` if unborn)."""

    branch: str | None
    sha: str | None


def read_head(dirs: GitDirs) -> Head:
    """HEAD of the working tree ``dirs`` describes: its branch and commit."""
    if dirs.reftable:
        return _asked_of_git(dirs)
    # GitPython's classes only: the repository is open, so git is imported already
    from git import SymbolicReference

    repo = dirs.repo
    try:
        ref = repo.head.reference  # TypeError: HEAD is detached
    except TypeError:
        branch = None
    else:
        # a HEAD pointing outside refs/heads/ (rare) is on no branch, as git shows it
        branch = (
            ref.path.removeprefix("refs/heads/") if ref.path.startswith("refs/heads/") else None
        )
    try:
        sha: str | None = SymbolicReference.dereference_recursive(repo, "HEAD")
    except ValueError:  # the branch has no commit yet (or its ref is unreadable)
        sha = None
    return Head(branch, sha)


def _asked_of_git(dirs: GitDirs) -> Head:
    symbolic = run_git(dirs.top, ["symbolic-ref", "-q", "HEAD"], ok=(0, 1)).out.strip()
    verified = run_git(dirs.top, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], ok=(0, 1))
    branch = symbolic.removeprefix("refs/heads/") if symbolic.startswith("refs/heads/") else None
    return Head(branch, verified.out.strip() or None)
