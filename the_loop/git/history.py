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

from the_loop.git.repo import _git, _head, _open_repo, find_repo_root

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
    with _open_repo(top) as repo:
        if _head(repo.git, top) is None:
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
        out = _git(repo.git, top, args).out
    found: dict[str, str] = {}
    for record in filter(None, out.split("\0")):
        sha, _, message = record.partition("\n")
        for match in _LINE.finditer(message):
            found.setdefault(match["id"], sha.strip())
    return found
