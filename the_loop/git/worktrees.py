"""Task worktrees for parallel lanes: add, remove, list, prune; branches; rebase; landing.

Each lane of ``execute-tasks --parallel N`` works in a linked worktree of the
project on its own branch ``loop/<item>/<task>``. This module is the git side
of that, through GitPython, with git processes (``repo.git.<cmd>``) where git
must act on a working tree:

* ``add_worktree`` / ``remove_worktree`` / ``list_worktrees`` / ``prune_worktrees``;
* ``branch_head`` / ``delete_branch`` / ``task_branches``;
* ``squash_work``: the lane's work as one commit on its base, with the paths only
  loop may write (``tasks.md``, the log) put back as the base has them;
* ``rebase_onto``: rebase a task branch onto the integration head; a conflict
  aborts the rebase and names the paths, never resolves anything;
* ``land``: move the integration checkout's index and files from its HEAD to a
  rebased task commit (a two-tree ``read-tree -m -u``: git's fast-forward of the
  tree), so the checkpoint that follows commits the task's files with its tick;
  ``unland`` puts them back when the checkpoint could not be made.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import GitError, Where

if TYPE_CHECKING:
    from git import Repo

BRANCH_PREFIX = "loop/"
# No prompts, no editor; and no automatic gc: lanes run git side by side in one
# repository, and an auto gc packing refs under one of them would race the others.
_QUIET_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "gc.auto",
    "GIT_CONFIG_VALUE_0": "0",
}


@dataclass(frozen=True)
class Worktree:
    """One linked worktree as ``git worktree list`` sees it."""

    path: Path
    head: str | None
    branch: str | None  # short name, None when detached
    prunable: bool = False


@dataclass(frozen=True)
class Rebased:
    """What a rebase did: ``head`` on success, else the conflicting paths and git's words."""

    ok: bool
    head: str | None
    conflicts: tuple[str, ...] = ()
    detail: str = ""


def _open(root: Path) -> Repo:
    """The repository at ``root`` (a main checkout or a linked worktree)."""
    # GitPython is imported here, not at the top: a command that never makes a lane
    # should not pay for importing it.
    import git

    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise GitError(
            "parallel lanes need a git repository", where=Where(root), hint="`git init`"
        ) from exc


def _run(repo: Repo, command: str, *args: str, what: str) -> str:
    """``git command args…`` in ``repo``; a failure is a ``GitError`` saying ``what`` failed."""
    import git  # the error class (see _open)

    try:
        return str(getattr(repo.git, command.replace("-", "_"))(*args, env=_QUIET_ENV))
    except git.GitCommandError as exc:
        raise GitError(
            f"{what} failed",
            where=Where(Path(repo.working_dir or ".")),
            details=tuple(line for line in str(exc.stderr).splitlines() if line.strip())[-20:],
            hint="see git's message above",
        ) from exc


def task_branch(item: str, task: str) -> str:
    """The branch a task's lane works on."""
    return f"{BRANCH_PREFIX}{item}/{task}"


def head_of(path: Path) -> str:
    """The commit checked out at ``path``."""
    return _open(path).head.commit.hexsha


def current_branch(root: Path) -> str | None:
    """The branch checked out at ``root``; None when HEAD is detached."""
    repo = _open(root)
    return None if repo.head.is_detached else repo.active_branch.name


def branch_head(root: Path, branch: str) -> str | None:
    """The commit ``branch`` points at, or None when there is no such branch."""
    repo = _open(root)
    ref = repo.heads[branch] if branch in [h.name for h in repo.heads] else None
    return ref.commit.hexsha if ref is not None else None


def task_branches(root: Path, item: str | None = None) -> dict[str, str]:
    """Every lane branch (of ``item``, or all): name -> commit."""
    prefix = BRANCH_PREFIX + (f"{item}/" if item else "")
    return {h.name: h.commit.hexsha for h in _open(root).heads if h.name.startswith(prefix)}


def delete_branch(root: Path, branch: str) -> None:
    """Delete ``branch`` (a lane's, merged or abandoned); nothing when it is gone."""
    repo = _open(root)
    if branch in [h.name for h in repo.heads]:
        _run(repo, "branch", "-D", branch, what=f"deleting branch {branch}")


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    """Whether commit ``older`` is ``newer`` or one of its ancestors."""
    repo = _open(root)
    return bool(repo.is_ancestor(repo.commit(older), repo.commit(newer)))


def add_worktree(root: Path, path: Path, branch: str, base: str) -> str:
    """A worktree at ``path`` on ``branch``: reused when the branch exists, else made at ``base``.

    Returns the commit checked out.
    """
    repo = _open(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    if branch in [h.name for h in repo.heads]:
        _run(repo, "worktree", "add", "--quiet", str(path), branch, what=f"worktree for {branch}")
    else:
        _run(
            repo,
            "worktree",
            "add",
            "--quiet",
            "-b",
            branch,
            str(path),
            base,
            what=f"worktree for {branch}",
        )
    return head_of(path)


def remove_worktree(root: Path, path: Path) -> None:
    """Remove the worktree at ``path`` (its files and git's record); nothing when gone."""
    repo = _open(root)
    known = {w.path for w in list_worktrees(root)}
    if path.resolve() in known:
        _run(
            repo, "worktree", "remove", "--force", "--force", str(path), what="removing a worktree"
        )
    elif path.exists():
        import shutil

        shutil.rmtree(path, ignore_errors=True)


def list_worktrees(root: Path) -> list[Worktree]:
    """The linked worktrees of the repository at ``root`` (the main checkout left out)."""
    out = _run(_open(root), "worktree", "list", "--porcelain", what="listing worktrees")
    found: list[Worktree] = []
    for block in out.strip().split("\n\n")[1:]:  # the first block is the main checkout
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            fields[key] = value
        if "worktree" not in fields:
            continue
        branch = fields.get("branch", "")
        found.append(
            Worktree(
                path=Path(fields["worktree"]).resolve(),
                head=fields.get("HEAD"),
                branch=branch.removeprefix("refs/heads/") or None,
                prunable="prunable" in fields,
            )
        )
    return found


def prune_worktrees(root: Path) -> None:
    """Forget worktrees whose folders are gone."""
    _run(_open(root), "worktree", "prune", what="pruning worktrees")


def changed_paths(path: Path, base: str) -> tuple[str, ...]:
    """Paths that differ between ``base`` and the files at ``path`` (untracked included)."""
    repo = _open(path)
    out = _run(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", what="status")
    changed = {record[3:] for record in out.split("\0") if len(record) > 3 and record[2] == " "}
    diff = _run(repo, "diff", "--name-only", "-z", base, "HEAD", what="diff")
    changed.update(p for p in diff.split("\0") if p)
    return tuple(sorted(changed))


_SETUP_FILES = "loop-setup-files"  # in the worktree's own git dir: what parallel.setup made


def record_setup_files(path: Path) -> tuple[str, ...]:
    """Remember the untracked files at ``path`` now (right after ``parallel.setup``).

    They are the worktree's environment, not the task's work: ``squash_work`` leaves
    them out of the lane's commit. Kept in the worktree's git dir, so a rerun that
    reuses the worktree still knows them.
    """
    repo = _open(path)
    out = _run(repo, "ls-files", "-z", "--others", "--exclude-standard", what="listing files")
    made = tuple(p for p in out.split("\0") if p)
    (Path(repo.git_dir) / _SETUP_FILES).write_text("".join(f"{p}\0" for p in made))
    return made


def _setup_files(repo: Repo) -> list[str]:
    try:
        text = (Path(repo.git_dir) / _SETUP_FILES).read_text()
    except FileNotFoundError:
        return []
    return [p for p in text.split("\0") if p]


def squash_work(
    path: Path, base: str, message: str, *, loop_owned: tuple[str, ...]
) -> tuple[str | None, tuple[str, ...]]:
    """The work at ``path`` as one commit on its fork from ``base``; (commit or None, dropped).

    Commits the agent made itself are folded in. The commit's parent is where the
    branch left ``base``'s history (their merge base): ``base`` itself for a new
    worktree, an older commit for a branch a killed run left behind. Folding that
    older tree onto ``base`` would record every change landed since as undone.
    ``loop_owned`` paths (repository relative) are put back as the fork has them:
    only loop writes ``tasks.md`` and the execution log, on the integration branch.
    Files ``parallel.setup`` made (``record_setup_files``) stay out. None when
    nothing is left to commit.
    """
    repo = _open(path)
    base = _run(repo, "merge-base", "HEAD", base, what="finding the lane's fork").strip()
    _run(repo, "reset", "--quiet", "--soft", base, what="folding the lane's commits")
    _run(repo, "add", "-A", what="staging the lane's work")
    environment = _setup_files(repo)
    if environment:
        _run(
            repo, "reset", "--quiet", "--", *environment, what="leaving out parallel.setup's files"
        )
    staged = _run(repo, "diff", "--cached", "--name-only", "-z", what="diff").split("\0")
    dropped = tuple(p for p in loop_owned if p in staged)
    for owned in dropped:
        in_base = _run(repo, "ls-tree", "--name-only", base, "--", owned, what="ls-tree").strip()
        if in_base:
            _run(repo, "checkout", base, "--", owned, what=f"restoring {owned}")
        else:
            _run(repo, "rm", "--quiet", "--cached", "--", owned, what=f"dropping {owned}")
            (path / owned).unlink(missing_ok=True)
    if not _run(repo, "diff", "--cached", "--name-only", what="diff").strip():
        return None, dropped
    # A lane commit is plumbing folded into the task's checkpoint commit, where the
    # user's hooks do run; running them here too would run them twice per task.
    _run(repo, "commit", "--quiet", "--no-verify", "-m", message, what="the lane's commit")
    return repo.head.commit.hexsha, dropped


def rebase_onto(path: Path, onto: str) -> Rebased:
    """Rebase the branch checked out at ``path`` onto ``onto``; a conflict is aborted."""
    import git  # the error class (see _open)

    repo = _open(path)
    try:
        repo.git.rebase("--quiet", onto, env=_QUIET_ENV)
    except git.GitCommandError as exc:
        unmerged = repo.git.diff("--name-only", "--diff-filter=U", env=_QUIET_ENV)
        conflicts = tuple(p for p in str(unmerged).splitlines() if p)
        detail = "\n".join(
            line for line in f"{exc.stdout}\n{exc.stderr}".splitlines() if line.strip()
        )
        if (Path(repo.git_dir) / "rebase-merge").exists() or (
            Path(repo.git_dir) / "rebase-apply"
        ).exists():
            _run(repo, "rebase", "--abort", what="aborting the rebase")
        return Rebased(False, None, conflicts, detail[-2000:])
    return Rebased(True, repo.head.commit.hexsha)


def settle(path: Path) -> bool:
    """Abort a rebase a killed run left in progress in the worktree at ``path``; True if one was."""
    repo = _open(path)
    git_dir = Path(repo.git_dir)
    if (git_dir / "rebase-merge").exists() or (git_dir / "rebase-apply").exists():
        _run(repo, "rebase", "--abort", what="aborting a rebase left in progress")
        return True
    return False


def land(root: Path, commit: str) -> None:
    """Move the checkout at ``root`` from its HEAD to ``commit``'s tree (index and files).

    ``commit`` descends from HEAD (a rebased task branch), so this is the tree of a
    fast-forward; HEAD itself moves with the checkpoint commit that follows.
    """
    repo = _open(root)
    _run(repo, "read-tree", "-m", "-u", "HEAD", commit, what="landing a task branch")


def unland(root: Path, commit: str) -> None:
    """Undo ``land``: the index and files back from ``commit``'s tree to HEAD's."""
    repo = _open(root)
    _run(repo, "read-tree", "-m", "-u", commit, "HEAD", what="undoing a landing")


def landed_paths(root: Path) -> tuple[str, ...]:
    """Paths staged in the checkout at ``root`` against its HEAD (a landing not yet committed)."""
    out = _run(_open(root), "diff", "--cached", "--name-only", "-z", what="diff")
    return tuple(p for p in out.split("\0") if p)


def diff_since(path: Path, base: str) -> str:
    """The branch at ``path``'s own change since it left ``base`` (``base...HEAD``)."""
    return _run(_open(path), "diff", f"{base}...HEAD", what="diff")


def tree_of(root: Path, commit: str) -> str:
    """The tree id of ``commit``."""
    return str(_open(root).commit(commit).tree.hexsha)


def index_tree(root: Path) -> str:
    """The tree the index at ``root`` would commit."""
    return _run(_open(root), "write-tree", what="reading the index").strip()


def copy_included(root: Path, path: Path) -> tuple[str, ...]:
    """Copy the untracked files ``.worktreeinclude`` names from ``root`` into ``path``.

    ``.worktreeinclude`` (Claude Code's convention) lists gitignore-style patterns;
    files that match them and that git ignores (``.env``, local settings) are copied,
    since a new worktree has only what git tracks. Returns the copied paths.
    """
    spec = root / ".worktreeinclude"
    if not spec.is_file():
        return ()
    repo = _open(root)
    out = _run(
        repo,
        "ls-files",
        "-z",
        "--others",
        "--ignored",
        f"--exclude-from={spec}",
        what="reading .worktreeinclude",
    )
    copied = []
    import shutil

    for rel in filter(None, out.split("\0")):
        source = root / rel
        if rel.startswith(".the-loop/") or not source.is_file():
            continue  # loop's state is the coordinator's, never a lane's
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        copied.append(rel)
    return tuple(copied)


def relative_to_top(root: Path, path: Path) -> str:
    """``path`` relative to the top of the repository at ``root``, with ``/``."""
    top = Path(_open(root).working_tree_dir or root).resolve()
    return Path(os.path.relpath(path.resolve(), top)).as_posix()
