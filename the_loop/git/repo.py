"""Git queries a checkpoint and its recovery need: status, identity, commits, trailers.

Each query is one git process (``the_loop.git.runner``), or none where the
answer is a file in the git dir (``the_loop.git.refs``: HEAD, the branch).
The commit itself is in ``the_loop.git.commit``. Outside a repository every
query answers without starting git.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import GitError, Where
from the_loop.git.operations import Operation, operation_in_progress
from the_loop.git.refs import find_repo_root, git_dirs, read_head
from the_loop.git.runner import run_git

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost)
if TYPE_CHECKING:
    from typing import Literal

__all__ = ["find_repo_root"]  # re-exported: callers ask "is this a repository?" here

IDENTITY_HINT = (
    'tell git who you are: `git config --global user.name "Your Name"` and '
    '`git config --global user.email "you@example.com"` '
    "(or set GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL)"
)
_IDENT = re.compile(r"^(?P<name>.*) <(?P<email>[^<>]*)> \d+ [+-]\d{4}$")
_TRAILER = re.compile(r"^(?P<key>[A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(?P<value>.*)$")


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
    # a status reader must not take index.lock from a command the user runs
    args = ["status", "--porcelain=v2", "-z", "--untracked-files=normal"]
    out = run_git(top, args, global_options=["--no-optional-locks"]).out
    head = read_head(dirs)
    return RepoStatus(
        is_repo=True,
        has_commits=head.sha is not None,
        branch=head.branch,
        detached=head.branch is None,
        operation=operation_in_progress(dirs.git_dir),
        dirty=any(not record.startswith("# ") for record in out.split("\0") if record),
        head=head.sha,
    )


def identity(root: Path) -> tuple[str, str]:
    """The ``(name, email)`` git would record as the author of a commit made in ``root``.

    Resolved by git itself (``git var``), so ``GIT_AUTHOR_*`` variables, the
    repository's and the global config all count. Guessing from the user and
    host name is switched off: a checkpoint recorded as ``root@container`` is
    worse than a clear error. The committer is checked too; a commit needs both.
    """
    folder = Path(root)
    if not folder.is_dir():
        raise GitError("cannot ask git who you are: no such folder", where=Where(folder))
    top = find_repo_root(folder) or folder
    author = _ident(top, "author")
    _ident(top, "committer")
    return author


def _ident(top: Path, role: Literal["author", "committer"]) -> tuple[str, str]:
    """``(name, email)`` for ``role`` as ``git var`` resolves it, without guessing."""
    ran = run_git(
        top, ["var", f"GIT_{role.upper()}_IDENT"], ok=None, config={"user.useConfigOnly": "true"}
    )
    match = _IDENT.match(ran.out.strip()) if ran.status == 0 else None
    if match is None:
        raise GitError(
            f"git does not know who you are, so it cannot record a commit {role}",
            where=Where(top),
            details=tuple(line for line in ran.detail_lines() if line.startswith("fatal:")),
            hint=IDENTITY_HINT,
        )
    return match["name"], match["email"]


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


def commit_message(root: Path, sha: str) -> str:
    """The full message of commit ``sha``, exactly as stored (re-encoded to UTF-8)."""
    top = find_repo_root(root)
    if top is None:
        raise GitError(
            "not a git repository (nor any parent folder)",
            where=Where(Path(root)),
            hint="run `git init` there, or point loop at the project with --repo",
        )
    # %B is the raw message; git adds one newline after the format
    args = ["log", "-1", "--no-show-signature", "--format=%B", f"{sha}^{{commit}}", "--"]
    out = run_git(
        top,
        args,
        failure=f"no commit {sha!r} in this repository",
        hint="check the sha (`git log --oneline` lists recent commits)",
    ).out
    return out[:-1] if out.endswith("\n") else out


def trailers(root: Path, sha: str) -> dict[str, str]:
    """The trailers of commit ``sha`` (:func:`parse_trailers`); a repeated key's last value wins."""
    return dict(parse_trailers(commit_message(root, sha)))


def parse_trailers(message: str) -> list[tuple[str, str]]:
    """The ``(key, value)`` trailers ending a commit message, in order.

    The trailer block is the last paragraph, never the subject's, and each of
    its lines must be a ``Key: value`` trailer, an indented continuation
    (folded into the value before it), a ``#`` comment or git's
    ``(cherry picked from commit …)`` note; else there are no trailers. That is
    git's rule without its allowance for prose beside well-known trailers,
    which loop's own messages never need.
    """
    lines = message.strip().splitlines()
    blanks = [i for i, line in enumerate(lines) if not line.strip()]
    if not blanks:
        return []  # a single paragraph is the subject
    pairs: list[tuple[str, str]] = []
    for line in lines[blanks[-1] + 1 :]:
        if line[:1] in (" ", "\t") and pairs:
            key, value = pairs[-1]
            pairs[-1] = (key, f"{value} {line.strip()}")
        elif match := _TRAILER.match(line):
            pairs.append((match["key"], match["value"].strip()))
        elif not line.startswith(("#", "(cherry picked from commit ")):
            return []
    return pairs


def find_checkpoint_commit(
    root: Path, trailer: str, value: str, *, max_count: int = 50
) -> str | None:
    """The newest of the last ``max_count`` commits on HEAD with the trailer ``trailer: value``.

    The key matches case-insensitively, as git's trailer keys do; the value
    exactly, so ``ck-1`` does not find ``ck-10``. ``None`` when there is no
    such commit, no commit at all or no repository: the commit of an
    interrupted checkpoint has not happened yet.
    """
    top = find_repo_root(root)
    if top is None or max_count < 1 or head_sha(top) is None:
        return None
    args = ["log", "-z", f"-n{max_count}", "--no-show-signature", "--format=%H%n%B", "HEAD"]
    out = run_git(top, [*args, "--"]).out
    key, value = trailer.lower(), value.strip()
    for entry in filter(None, out.split("\0")):
        sha, _, message = entry.partition("\n")
        if any((k.lower(), v) == (key, value) for k, v in parse_trailers(message)):
            return sha
    return None


def repo_relative(top: Path, root: Path, path: Path) -> str:
    """``path`` (absolute, or relative to ``root``) as a repository-relative POSIX path."""
    absolute = Path(os.path.abspath(root.resolve() / path))
    # as given, then with its folder's symlinks resolved (/tmp → /private/tmp);
    # never the last part: a symlink in the repository is committed as a link
    for candidate in (absolute, absolute.parent.resolve() / absolute.name):
        if candidate.is_relative_to(top):
            return candidate.relative_to(top).as_posix()
    raise GitError(
        "path is outside the repository, so a checkpoint cannot commit it",
        where=Where(path),
        hint=f"pass paths inside {top}",
    )
