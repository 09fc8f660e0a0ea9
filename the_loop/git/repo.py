"""Git queries a checkpoint and its recovery need: status, HEAD, operation, ignores.

HEAD, the branch and the git dirs come from GitPython (``the_loop.git.opening``,
``the_loop.git.head``); what only git can answer (``status``, ``check-ignore``)
is one git process (``the_loop.git.commands``). The commit itself is in
``the_loop.git.commit``, identity in ``the_loop.git.identity``, history in
``the_loop.git.history`` (all re-exported here: callers ask this module).
Outside a repository every query answers without starting git or loading
GitPython.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from the_loop.git.commands import run_git
from the_loop.git.head import read_head
from the_loop.git.history import commit_message, find_checkpoint_commit, parse_trailers, trailers
from the_loop.git.identity import IDENTITY_HINT, identity
from the_loop.git.opening import find_repo_root, git_dirs, repo_relative
from the_loop.git.operations import Operation, operation_in_progress

__all__ = [  # re-exported: callers ask "is this a repository?", "who is the user?" here
    "IDENTITY_HINT",
    "commit_message",
    "find_checkpoint_commit",
    "find_repo_root",
    "identity",
    "parse_trailers",
    "repo_relative",
    "trailers",
]


@dataclass(frozen=True)
class RepoStatus:
    """Where a repository stands, as far as a checkpoint cares.

    ``branch`` is ``None`` when HEAD is detached (or there is no repository);
    ``head`` is ``None`` until the first commit. ``dirty`` counts staged,
    unstaged and untracked (not ignored) changes.
    """

    is_repo: bool
    has_commits: bool = False
    branch: str | None = None
    detached: bool = False
    operation: Operation | None = None
    dirty: bool = False
    head: str | None = None


def repo_status(root: Path) -> RepoStatus:
    """Branch, HEAD, operation in progress and dirtiness of the repository at ``root``.

    Outside a repository this answers ``is_repo=False`` without starting git.
    """
    top = find_repo_root(root)
    if top is None:
        return RepoStatus(is_repo=False)
    dirs = git_dirs(top)
    changes: list[str] = []
    # a status reader must not take index.lock from a command the user runs
    args = ["status", "--porcelain=v2", "-z", "--untracked-files=normal"]
    run_git(dirs.top, args, global_options=["--no-optional-locks"], on_record=changes.append)
    head = read_head(dirs)
    return RepoStatus(
        is_repo=True,
        has_commits=head.sha is not None,
        branch=head.branch,
        detached=head.branch is None,
        operation=operation_in_progress(dirs.git_dir),
        dirty=any(record and not record.startswith("# ") for record in changes),
        head=head.sha,
    )


def operation(root: Path) -> Operation | None:
    """The git operation in progress (merge, rebase, …) at ``root``, read from its markers."""
    top = find_repo_root(root)
    return None if top is None else operation_in_progress(git_dirs(top).git_dir)


def head_sha(root: Path) -> str | None:
    """The full sha of HEAD, or ``None`` before the first commit or outside a repository."""
    top = find_repo_root(root)
    return None if top is None else read_head(git_dirs(top)).sha


def is_ignored(root: Path, path: Path) -> bool:
    """Whether git ignores ``path`` (relative to ``root``, or absolute).

    A tracked file is never ignored, whatever ``.gitignore`` says: git keeps
    committing its changes. Outside a repository nothing is ignored.
    """
    top = find_repo_root(root)
    if top is None:
        return False
    spec = repo_relative(top, Path(root), Path(path))
    # -z needs --stdin, and only -z output never quotes unusual names
    ran = run_git(top, ["check-ignore", "-z", "--stdin"], ok=(0, 1), stdin=f"{spec}\0".encode())
    return spec in ran.out.split("\0")
