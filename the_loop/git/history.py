"""Which checkpoint commits are still in the current branch's history.

A task's checkpoint names its commit by the ``Loop-Checkpoint`` trailer. A
rebase that keeps the messages keeps the trailers, so the id is looked for, not
the sha; a squash folds the messages into one, so a ``Loop-Checkpoint:`` line
anywhere in a message counts, not only in its trailer block. One ``git log``
over HEAD answers for every checkpoint at once.
"""

from __future__ import annotations

import re
from pathlib import Path

from the_loop.git.refs import find_repo_root
from the_loop.git.repo import head_sha
from the_loop.git.runner import run_git

_LINE = re.compile(r"^Loop-Checkpoint:[ \t]*(?P<id>\S+)[ \t]*$", re.MULTILINE | re.IGNORECASE)


def checkpoint_commits(root: Path) -> dict[str, str] | None:
    """``{checkpoint id: sha}`` for every commit on HEAD naming a checkpoint.

    ``None`` when there is no repository (nothing can be looked up); ``{}``
    before the first commit. When a checkpoint id appears in several commits
    (a cherry-pick), the newest wins.
    """
    top = find_repo_root(root)
    if top is None:
        return None
    if head_sha(top) is None:
        return {}
    args = [
        "log",
        "-z",
        "--no-show-signature",
        "--format=%H%n%B",
        "--regexp-ignore-case",
        "--grep=^Loop-Checkpoint:",
        "HEAD",
        "--",
    ]
    out = run_git(top, args).out
    found: dict[str, str] = {}
    for record in filter(None, out.split("\0")):
        sha, _, message = record.partition("\n")
        for match in _LINE.finditer(message):
            found.setdefault(match["id"], sha.strip())
    return found


def checkpoint_version(root: Path, path: Path) -> tuple[str, str] | None:
    """``(sha, text)`` of ``path`` in the newest checkpoint commit on HEAD that changed it.

    The text a checkpoint committed is the authority a later hand edit is
    compared with (issue 21). ``None`` without a repository, a commit, or a
    checkpoint commit of that file.
    """
    from the_loop.git.repo import repo_relative

    top = find_repo_root(root)
    if top is None or head_sha(top) is None:
        return None
    spec = repo_relative(top, root, path)
    args = ["log", "-1", "--no-show-signature", "--format=%H", "--regexp-ignore-case"]
    sha = run_git(top, [*args, "--grep=^Loop-Checkpoint:", "HEAD", "--", spec]).out.strip()
    if not sha:
        return None
    shown = run_git(top, ["show", f"{sha}:{spec}"], ok=(0, 128))
    return (sha, shown.out) if shown.status == 0 else None


def task_files(root: Path, item: str) -> dict[str, tuple[str, ...]] | None:
    """``{task id: files}`` each task checkpoint commit of ``item`` on HEAD changed.

    Read from git, not from what an agent remembers: the resume brief lists them
    so a fresh session knows where the finished work lives. Commits are matched
    by their ``Loop-Item`` and ``Loop-Task`` trailers; the newest commit of a
    task comes first. ``None`` without a repository.
    """
    top = find_repo_root(root)
    if top is None:
        return None
    if head_sha(top) is None:
        return {}
    args = [
        "log",
        "--no-show-signature",
        "--format=%x1e%B%x1f",
        "--name-only",
        "--regexp-ignore-case",
        f"--grep=^Loop-Item: {re.escape(item)}$",
        "HEAD",
        "--",
    ]
    out = run_git(top, args, config={"core.quotePath": "false"}).out
    found: dict[str, list[str]] = {}
    for record in filter(None, out.split("\x1e")):
        message, _, names = record.partition("\x1f")
        task = _TASK.search(message)
        if task is None:
            continue
        files = found.setdefault(task["id"], [])
        files += [n for n in names.splitlines() if n.strip() and n not in files]
    return {task: tuple(files) for task, files in found.items()}


_TASK = re.compile(r"^Loop-Task:[ \t]*(?P<id>\S+)[ \t]*$", re.MULTILINE | re.IGNORECASE)


def tracked_at_head(root: Path, path: Path) -> bool:
    """Whether HEAD's tree holds ``path`` (False without a repository or a commit)."""
    from the_loop.git.repo import repo_relative

    top = find_repo_root(root)
    if top is None or head_sha(top) is None:
        return False
    spec = repo_relative(top, root, path)
    return run_git(top, ["cat-file", "-e", f"HEAD:{spec}"], ok=(0, 128)).status == 0
