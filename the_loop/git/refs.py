"""Where a repository keeps its files, and what HEAD points at: read from disk, no git.

A checkpoint needs HEAD before and after its commit, the branch, the index
file and the markers of an operation in progress. All of that is a few small
files in the git dir, so reading them costs microseconds where a ``git
rev-parse`` costs a process. The reader follows git's own layout: a ``.git``
folder or a ``.git`` file pointing at a linked worktree's git dir, the
``commondir`` that worktree shares refs through, loose refs, then
``packed-refs``. Whatever it cannot read with certainty (the reftable ref
backend, ``GIT_DIR`` and friends in the environment) it hands to git itself,
through :func:`the_loop.git.runner.run_git`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import GitError, Where
from the_loop.git.runner import run_git

# Environment variables that move git's files somewhere this reader would not
# look; with any of them set, git answers instead.
_RELOCATING_ENV = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE")
_MAX_SYMREF_DEPTH = 5  # git's own limit is 5 levels of ref: indirection


def find_repo_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds a ``.git``, else ``None``.

    ``.git`` may be a folder or a file (linked worktrees and submodules point
    to their git dir with a ``.git`` file). Pure path work.
    """
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        # os.path.exists, unlike Path.exists, answers "no" for an unreadable folder
        if os.path.exists(folder / ".git"):
            return folder
    return None


@dataclass(frozen=True)
class GitDirs:
    """The folders of one working tree: its own git dir and the common one.

    In a plain clone both are ``.git``; in a linked worktree ``git_dir`` is
    ``.git/worktrees/<name>`` (HEAD, index, operation markers) and
    ``common_dir`` the main ``.git`` (refs, objects, config).
    """

    top: Path
    git_dir: Path
    common_dir: Path
    readable: bool  # False: leave ref questions to git (reftable, relocated dirs)

    @property
    def index(self) -> Path:
        """The index file of this working tree."""
        return self.git_dir / "index"


def git_dirs(top: Path) -> GitDirs:
    """The git dirs of the working tree at ``top`` (which holds ``.git``)."""
    dot_git = top / ".git"
    if any(os.environ.get(name) for name in _RELOCATING_ENV):
        return _asked_of_git(top)
    if dot_git.is_file():
        try:
            text = dot_git.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return _asked_of_git(top)
        if not text.startswith("gitdir:"):
            return _asked_of_git(top)
        git_dir = (top / text.removeprefix("gitdir:").strip()).resolve()
    else:
        git_dir = dot_git
    common_dir = git_dir
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        common_dir = (git_dir / common).resolve()
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError):
        return _asked_of_git(top)
    if not (git_dir / "HEAD").is_file():
        raise GitError(
            "found .git here, but git cannot open it as a repository",
            where=Where(top),
            details=(f"{git_dir / 'HEAD'} is missing",),
            hint="run `git status` there; a broken .git needs repairing or removing",
        )
    readable = not (common_dir / "reftable").exists()
    return GitDirs(top, git_dir, common_dir, readable)


def _asked_of_git(top: Path) -> GitDirs:
    out = run_git(top, ["rev-parse", "--absolute-git-dir", "--git-common-dir"]).out.splitlines()
    git_dir = Path(out[0])
    common = Path(out[1]) if len(out) > 1 else git_dir
    return GitDirs(top, git_dir, common if common.is_absolute() else top / common, False)


@dataclass(frozen=True)
class Head:
    """What HEAD points at: a branch (``None`` when detached) and a commit (``None`` if unborn)."""

    branch: str | None
    sha: str | None


def read_head(dirs: GitDirs) -> Head:
    """HEAD's branch and commit, from the files; git answers when they cannot be read."""
    if dirs.readable:
        head = _read_head_files(dirs)
        if head is not None:
            return head
    branch_ran = run_git(dirs.top, ["symbolic-ref", "--quiet", "HEAD"], ok=(0, 1))
    sha_ran = run_git(dirs.top, ["rev-parse", "--verify", "--quiet", "HEAD"], ok=(0, 1))
    branch = branch_ran.out.strip().removeprefix("refs/heads/") if branch_ran.status == 0 else None
    return Head(branch, sha_ran.out.strip() if sha_ran.status == 0 else None)


def _read_head_files(dirs: GitDirs) -> Head | None:
    """HEAD from loose and packed refs; ``None`` when something is not as git writes it."""
    try:
        text = (dirs.git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("ref:"):
        return Head(None, text) if _is_sha(text) else None
    ref = text.removeprefix("ref:").strip()
    branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
    for _ in range(_MAX_SYMREF_DEPTH):
        value = _read_ref(dirs, ref)
        if value is None:
            return Head(branch, None)  # an unborn branch: no commit yet
        if not value.startswith("ref:"):
            return Head(branch, value) if _is_sha(value) else None
        ref = value.removeprefix("ref:").strip()
    return None


def _read_ref(dirs: GitDirs, ref: str) -> str | None:
    """A ref's value (a sha or ``ref: …``) from its loose file, else ``packed-refs``."""
    # per-worktree refs (HEAD-like, refs/bisect, refs/worktree) live in git_dir
    base = dirs.git_dir if ref.startswith(("refs/bisect/", "refs/worktree/")) else dirs.common_dir
    try:
        return (base / ref).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        pass
    try:
        packed = (dirs.common_dir / "packed-refs").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    for line in packed.splitlines():
        if line[:1] in ("#", "^"):
            continue
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
