"""Find the repository a folder belongs to, and open it with GitPython.

:func:`find_repo_root` answers "is this in a repository, and where is its top?"
from the paths alone, so a command that only asks never loads GitPython.
:func:`open_repo` is the one way into ``git.Repo``: one per working tree, kept
for the process (a command asks HEAD before and after its commit, the history
and the git dirs of the same repository). :func:`git_dirs` names the folders a
checkpoint works with. GitPython follows git's layout: a ``.git`` folder, a
``.git`` file pointing at a linked worktree's (or submodule's) git dir, the
``commondir`` a worktree shares refs through, ``GIT_DIR``/``GIT_WORK_TREE``.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import GitError, Where

if TYPE_CHECKING:
    import git

# Variables git reads to find its files; a repository opened under other values
# is another repository.
_LOCATING_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE")
_KEPT_REPOS = 4  # open repositories kept per process (each may hold a `git cat-file`)
_OPEN: OrderedDict[tuple[object, ...], git.Repo] = OrderedDict()


def find_repo_root(start: Path) -> Path | None:
    """The top of the working tree at or above ``start``, else ``None``.

    The nearest folder holding a ``.git`` (a folder, or a file pointing at the
    git dir). With ``GIT_DIR`` set, git looks nowhere else: the top is then
    ``GIT_WORK_TREE`` (or the repository's ``core.worktree``, else the current
    folder, as git has it).
    """
    if os.environ.get("GIT_DIR"):
        work_tree = os.environ.get("GIT_WORK_TREE")
        if work_tree:
            return Path(work_tree).resolve()
        return _top(open_repo(Path.cwd()))
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        # os.path.exists, unlike Path.exists, answers "no" for an unreadable folder
        if os.path.exists(folder / ".git"):
            return folder
    return None


def open_repo(root: Path) -> git.Repo:
    """The ``git.Repo`` of the working tree ``root`` is in, opened once per process.

    Raises :class:`GitError` outside a repository, or when git's files there
    cannot be read as one.
    """
    # GitPython costs start-up time (and runs `git version` on import): only here
    import git

    top = Path(root).resolve() if os.environ.get("GIT_DIR") else find_repo_root(Path(root))
    if top is None:
        raise GitError(
            "not a git repository (nor any parent folder)",
            where=Where(Path(root)),
            hint="run `git init` there, or point loop at the project with --repo",
        )
    key = (top, _identity(top / ".git"), *(os.environ.get(name) for name in _LOCATING_ENV))
    repo = _OPEN.get(key)
    if repo is not None:
        _OPEN.move_to_end(key)
        return repo
    try:
        # with GIT_DIR set, git.Repo(None) finds the repository as git does; a path
        # given to git.Repo would be searched instead
        repo = git.Repo(None if os.environ.get("GIT_DIR") else top)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, OSError, ValueError) as e:
        head = top / ".git" / "HEAD"
        missing = (top / ".git").is_dir() and not head.exists()
        raise GitError(
            "found .git here, but git cannot open it as a repository",
            where=Where(top),
            details=(f"{head} is missing" if missing else f"{type(e).__name__}: {e}",),
            hint="run `git status` there; a broken .git needs repairing or removing",
        ) from e
    # loop reads history as it was committed: never through replace refs
    repo.git.update_environment(GIT_NO_REPLACE_OBJECTS="1")
    _OPEN[key] = repo
    while len(_OPEN) > _KEPT_REPOS:
        _, old = _OPEN.popitem(last=False)
        old.close()  # stops its persistent `git cat-file` processes
    return repo


def _identity(dot_git: Path) -> tuple[int, int] | None:
    """What tells this ``.git`` from one put in its place (a new folder, a rewritten file)."""
    try:
        stat = os.stat(dot_git)
        if not os.path.isdir(dot_git):
            return (stat.st_ino, stat.st_mtime_ns)
        # A folder's inode is soon reused when it is deleted and made again; the
        # config file's change time is new in every copy, and git leaves it alone
        # in everything loop does.
        return (stat.st_ino, os.stat(dot_git / "config").st_ctime_ns)
    except OSError:
        return None


def _top(repo: git.Repo) -> Path:
    """The top of ``repo``'s working tree, with git's rule for a bare ``GIT_DIR``."""
    if os.environ.get("GIT_WORK_TREE"):
        return Path(os.environ["GIT_WORK_TREE"]).resolve()
    if os.environ.get("GIT_DIR") and not repo.config_reader("repository").has_option(
        "core", "worktree"
    ):
        return Path.cwd().resolve()
    if repo.working_tree_dir is None:
        raise GitError(
            "this is a bare repository: it has no working tree to checkpoint",
            where=Where(Path(repo.git_dir)),
            hint="run loop in a clone or a worktree (`git worktree add`)",
        )
    return Path(repo.working_tree_dir).resolve()


@dataclass(frozen=True)
class GitDirs:
    """The folders of one working tree, and the repository they belong to.

    In a plain clone ``git_dir`` and ``common_dir`` are both ``.git``; in a
    linked worktree ``git_dir`` is ``.git/worktrees/<name>`` (HEAD, index,
    operation markers) and ``common_dir`` the main ``.git`` (refs, objects,
    config). ``reftable``: the refs are in git's reftable format, which
    GitPython cannot read, so git answers ref questions itself.
    """

    top: Path
    git_dir: Path
    common_dir: Path
    index: Path
    reftable: bool
    repo: git.Repo = field(compare=False, repr=False)


def git_dirs(root: Path) -> GitDirs:
    """The git dirs of the working tree ``root`` is in (raises :class:`GitError` outside one)."""
    repo = open_repo(root)
    git_dir = Path(repo.git_dir).resolve()
    common_dir = Path(repo.common_dir).resolve()
    top = _top(repo)
    index = Path(os.environ.get("GIT_INDEX_FILE") or git_dir / "index")
    return GitDirs(
        top=top,
        git_dir=git_dir,
        common_dir=common_dir,
        index=index if index.is_absolute() else top / index,  # git runs in top
        reftable=(common_dir / "reftable").is_dir(),
        repo=repo,
    )


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
