"""The checkpoint commit: stage exactly what the checkpoint holds, commit it, or undo.

Three git processes on the fresh path: one ``status`` (what changed, from
the index and the tree as they are after the tick and the log entry), one
``add``, one ``commit``. HEAD, the branch and the index file come from
GitPython (``the_loop.git.head``, ``the_loop.git.opening``), without a process.
The commit goes through the real ``git commit`` so the user's hooks, signing
and config all apply; loop never bypasses a hook, but it does bound it
(``timeout``). A commit that git refuses or that runs out of time leaves
nothing half-done: the index is put back byte for byte as it was before loop
staged anything.

With ``stage="all"`` untracked junk (editor swap files, logs, build and cache
folders, files larger than ``max_file_bytes``) is left out with a warning; a
checkpoint is a record of the work, not of whatever lay around.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from the_loop.errors import GitError, Where
from the_loop.git.commands import DEFAULT_TIMEOUT, run_git
from the_loop.git.head import read_head
from the_loop.git.identity import identity
from the_loop.git.index import IndexSnapshot
from the_loop.git.opening import GitDirs, find_repo_root, git_dirs, repo_relative
from the_loop.git.operations import operation_in_progress, refuse_during

CommitStatus = Literal["committed", "nothing-to-commit", "not-a-repo"]
STAGES = ("all", "tracked", "paths")
DEFAULT_MAX_FILE_BYTES = 1024 * 1024

# Untracked files a checkpoint leaves out under stage "all": what editors,
# test runs and builds leave behind. Matched against the path's last part
# (files) or any folder part (folders).
JUNK_FILES = ("*.swp", "*.swo", "*~", ".#*", "#*#", "*.log", "*.tmp", ".DS_Store", "*.pyc")
JUNK_FOLDERS = (
    "__pycache__",
    "node_modules",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".venv",
    "venv",
    ".tox",
    "build",
    "dist",
    "target",
    ".cache",
)

_HINT = "see git's message above; nothing was committed"


@dataclass(frozen=True)
class CommitOutcome:
    """What a checkpoint commit did.

    ``sha`` is the new commit, ``None`` unless ``status == "committed"``;
    ``files`` the repository-relative paths it holds; ``left_out`` the
    changed paths it deliberately did not take. ``warnings`` are sentences
    for the user (a commit on no branch, a path left out and why).
    """

    status: CommitStatus
    sha: str | None
    branch: str | None
    detached: bool
    files: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Change:
    """One line of ``git status``: a path, whether it is untracked, its other name if renamed."""

    path: str
    untracked: bool
    staged: bool
    orig: str | None = None
    # staged as deleted and absent from the working tree ("D."): the index already
    # holds the deletion, and `git add` on a path it cannot find fails the commit
    gone: bool = False


def commit_checkpoint(
    root: Path,
    *,
    message: str,
    stage: str = "all",
    paths: Sequence[Path] = (),
    timeout: float = DEFAULT_TIMEOUT,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> CommitOutcome:
    """Stage the work in progress and commit it with ``message``.

    ``stage``: ``"all"`` takes every change git does not ignore, less untracked
    junk; ``"tracked"`` takes changes to tracked files plus ``paths`` and
    names the untracked files it left out; ``"paths"`` takes only ``paths``.
    What the user had staged already is part of the commit. The message is
    committed verbatim, with a final newline added when missing.

    Outside a repository this returns ``status="not-a-repo"``. It raises
    :class:`GitError` without touching the index when an operation is in
    progress or git does not know who the user is; and, after putting the
    index back exactly as it was, when ``git add`` or ``git commit`` fails or
    runs past ``timeout`` seconds (a hook).
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, not {stage!r}")
    if not message.strip() or "\0" in message:
        raise ValueError("a checkpoint commit needs a non-empty message without NUL characters")
    text = message if message.endswith("\n") else message + "\n"
    top = find_repo_root(root)
    if top is None:
        return CommitOutcome(status="not-a-repo", sha=None, branch=None, detached=False)
    dirs = git_dirs(top)
    operation = operation_in_progress(dirs.git_dir)
    refuse_during(operation, top)
    identity(top)  # before anything is staged: never a commit by a guessed author
    outcome = _stage_and_commit(dirs, Path(root), text, stage, paths, timeout, max_file_bytes)
    if outcome.sha is not None and operation == "bisect":
        warning = (
            "a bisect is in progress: the checkpoint commit sits on the commit under test "
            "and is not part of the bisect; keep it on a branch before `git bisect reset`"
        )
        outcome = replace(outcome, warnings=(*outcome.warnings, warning))
    return outcome


def _stage_and_commit(
    dirs: GitDirs,
    root: Path,
    text: str,
    stage: str,
    paths: Sequence[Path],
    timeout: float,
    max_file_bytes: int,
) -> CommitOutcome:
    """The transaction: snapshot the index, stage, commit; roll back on any failure."""
    top = dirs.top
    before = read_head(dirs)
    snapshot = IndexSnapshot.take(dirs.index)
    specs = [repo_relative(top, root, Path(p)) for p in paths]
    try:
        changes = _changes(top)
        wanted, left_out, warnings = _select(top, changes, stage, specs, max_file_bytes)
        warnings += _unusable_specs(top, specs) if stage != "all" else ()
        if not wanted:
            return CommitOutcome(
                "nothing-to-commit",
                None,
                before.branch,
                before.branch is None,
                left_out=left_out,
                warnings=warnings,
            )
        _add(top, changes, wanted, stage)
        _commit(top, text, timeout)
    except BaseException:
        # Ctrl-C included: whatever stopped us, the user's staging area comes back
        _roll_back(dirs, before.sha, snapshot)
        raise
    after = read_head(dirs)
    if after.sha is None or after.sha == before.sha:
        raise GitError("git commit reported success but HEAD did not move", where=Where(top))
    if before.branch is None:
        warnings += (
            f"HEAD is detached: checkpoint commit {after.sha[:12]} is on no branch; "
            "keep it with `git switch -c <name>` before checking out anything else",
        )
    return CommitOutcome(
        "committed",
        after.sha,
        before.branch,
        before.branch is None,
        files=tuple(sorted(wanted)),
        left_out=left_out,
        warnings=warnings,
    )


def _changes(top: Path) -> list[_Change]:
    """Every change git sees: staged, unstaged and untracked (not ignored), one per path."""
    args = ["status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames"]
    changes: list[_Change] = []

    def record(line: str) -> None:
        kind = line[:1]
        if kind == "?":
            changes.append(_Change(line[2:], untracked=True, staged=False))
        elif kind == "1":  # "1 XY sub mH mI mW hH hI path"
            fields = line.split(" ", 8)
            xy = fields[1]
            changes.append(
                _Change(fields[8], untracked=False, staged=xy[0] != ".", gone=xy == "D.")
            )
        elif kind == "u":  # unmerged: "u XY sub m1 m2 m3 mW h1 h2 h3 path"
            changes.append(_Change(line.split(" ", 10)[10], untracked=False, staged=True))

    # each record parsed as git writes it: a large tree's status is never held whole
    run_git(top, args, global_options=["--no-optional-locks"], on_record=record, hint=_HINT)
    return changes


def _select(
    top: Path, changes: list[_Change], stage: str, specs: list[str], max_file_bytes: int
) -> tuple[set[str], tuple[str, ...], tuple[str, ...]]:
    """Which changed paths the commit takes, which it leaves out, and what to say about it."""
    wanted: set[str] = set()
    junk: list[str] = []
    untracked_out: list[str] = []
    for change in changes:
        inside = any(change.path == s or change.path.startswith(s.rstrip("/") + "/") for s in specs)
        if change.staged:
            wanted.add(change.path)  # the user staged it: git commits it whatever we do
        elif stage == "paths" and not inside:
            continue
        elif change.untracked and stage == "tracked" and not inside:
            untracked_out.append(change.path)
        elif change.untracked and stage == "all" and _is_junk(top, change.path, max_file_bytes):
            junk.append(change.path)
        else:
            wanted.add(change.path)
    warnings: list[str] = []
    if junk:
        warnings.append(
            f"left out of the commit as junk (untracked): {_listing(junk)}; commit them with "
            "git yourself if they belong to the work"
        )
    if untracked_out:
        warnings.append(
            f"left out of the commit (checkpoint.stage: tracked, untracked): "
            f"{_listing(untracked_out)}; `git add` them or use stage: all"
        )
    return wanted, (*junk, *untracked_out), tuple(warnings)


def _unusable_specs(top: Path, specs: list[str]) -> tuple[str, ...]:
    """Warnings for named paths the commit cannot hold: missing, or ignored by git."""
    warnings = [
        f"{spec} was not committed: it does not exist"
        for spec in specs
        if not os.path.lexists(top / spec)
    ]
    present = [spec for spec in specs if os.path.lexists(top / spec)]
    if present:
        stdin = "".join(f"{spec}\0" for spec in present).encode("utf-8")
        ignored: set[str] = set()
        args = ["check-ignore", "-z", "--stdin"]
        run_git(top, args, ok=(0, 1), stdin=stdin, on_record=ignored.add)
        warnings += [
            f"{spec} was not committed: git ignores it (.gitignore or .git/info/exclude)"
            for spec in present
            if spec in ignored
        ]
    return tuple(warnings)


def _is_junk(top: Path, path: str, max_file_bytes: int) -> bool:
    parts = path.split("/")
    if any(part in JUNK_FOLDERS for part in parts[:-1]):
        return True
    if any(fnmatch.fnmatchcase(parts[-1], pattern) for pattern in JUNK_FILES):
        return True
    try:
        return os.lstat(top / path).st_size > max_file_bytes
    except OSError:
        return False


def _listing(paths: list[str], limit: int = 8) -> str:
    shown = ", ".join(paths[:limit])
    return shown if len(paths) <= limit else f"{shown} and {len(paths) - limit} more"


# Past this many paths, one walk of the whole tree (`git add -A`) costs less than
# matching each path; below it, the named paths are all git looks at (on a
# 20,000-file tree: 15 ms of CPU for three paths against 40 ms for the walk).
_NAMED_ADD_LIMIT = 1000


def _add(top: Path, changes: list[_Change], wanted: set[str], stage: str) -> None:
    """Stage ``wanted``: the literal list, or plain ``git add -A`` when that is it and long."""
    everything = stage == "all" and len(wanted) == len({c.path for c in changes})
    if everything and len(wanted) > _NAMED_ADD_LIMIT:
        # without a pathspec, -A covers the whole working tree wherever git runs
        run_git(top, ["add", "-A"], hint=_HINT)
        return
    # -A on named paths stages their deletions too; literal: "a*.md" is that file
    gone = {c.path for c in changes if c.gone} - {c.path for c in changes if not c.gone}
    named = sorted(wanted - gone)
    if not named:
        return  # only staged deletions: the index holds the commit already (an empty
        # pathspec list would make `add -A` take the whole tree)
    stdin = "".join(f"{path}\0" for path in named).encode("utf-8")
    run_git(
        top,
        ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"],
        global_options=["--literal-pathspecs"],
        stdin=stdin,
        hint=_HINT,
    )


def _commit(top: Path, text: str, timeout: float) -> None:
    """Run ``git commit`` on the index; raise with git's (and the hooks') output on failure."""
    # The message goes in on stdin rather than through -m (argv limits, git's
    # paragraph handling); --cleanup=verbatim keeps every byte whatever the
    # user's commit.cleanup says; useConfigOnly: never a guessed identity.
    run_git(
        top,
        ["commit", "--quiet", "--cleanup=verbatim", "--file=-"],
        config={"user.useConfigOnly": "true"},
        stdin=text.encode("utf-8"),
        timeout=timeout,
        failure="git commit failed, so nothing was committed and the index is as it was "
        "before the checkpoint",
        hint="a hook or commit signing refused the commit; fix what it reports "
        "and checkpoint again (loop never skips hooks)",
    )


def _roll_back(dirs: GitDirs, head_before: str | None, snapshot: IndexSnapshot) -> None:
    """Put the index back as it was, unless the commit happened after all."""
    if read_head(dirs).sha != head_before:
        return  # interrupted after git committed: the index belongs to that commit now
    try:
        snapshot.restore()
    except OSError as e:
        raise GitError(
            "the checkpoint failed, and loop could not put the index back",
            where=Where(snapshot.path),
            details=(str(e),),
            hint=snapshot.recovery_hint(),
        ) from e
