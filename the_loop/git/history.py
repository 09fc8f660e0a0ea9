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
