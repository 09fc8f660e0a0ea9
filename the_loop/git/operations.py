"""Which git operation is in progress, and which ones a checkpoint refuses to commit in.

A merge, rebase, cherry-pick, revert or ``git am`` stopped half-way holds a
half-made commit in the index, and a checkpoint committed then would be folded
into it; a bisect does not. Git marks each with a file in the (per-worktree)
git dir, so this is path work that never runs git. It is apart from
``the_loop.git.repo`` because it is one rule with its own data: the markers,
the order they are checked in, and how to finish or abort each operation.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from the_loop.errors import GitError, Where

Operation = Literal["merge", "rebase", "cherry-pick", "revert", "am", "bisect"]

# Marker in the (per-worktree) git dir → operation, checked in this order. A
# rebase comes first because it can stop inside a merge or a pick and leave
# those markers too; `git am` keeps its state in rebase-apply like the old
# rebase backend, told apart by the "applying" file.
_OPERATION_MARKERS: tuple[tuple[str, Operation], ...] = (
    ("rebase-merge", "rebase"),
    ("rebase-apply/applying", "am"),
    ("rebase-apply", "rebase"),
    ("MERGE_HEAD", "merge"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("BISECT_LOG", "bisect"),
)

# Operations a checkpoint refuses to commit in: each holds a half-made commit
# in the index that the checkpoint would be folded into. A bisect does not,
# so it only earns a warning. operation → (how to finish, how to abort)
_BLOCKING: dict[Operation, tuple[str, str]] = {
    "merge": ("git commit", "git merge --abort"),
    "rebase": ("git rebase --continue", "git rebase --abort"),
    "cherry-pick": ("git cherry-pick --continue", "git cherry-pick --abort"),
    "revert": ("git revert --continue", "git revert --abort"),
    "am": ("git am --continue", "git am --abort"),
}


def operation_in_progress(git_dir: Path) -> Operation | None:
    """The operation in progress, from its marker in the (per-worktree) git dir."""
    for marker, operation in _OPERATION_MARKERS:
        if os.path.exists(git_dir / marker):
            return operation
    return None


def refuse_during(operation: Operation | None, top: Path) -> None:
    """Raise when ``operation`` holds a half-made commit a checkpoint must not join."""
    if operation not in _BLOCKING:
        return
    finish, abort = _BLOCKING[operation]
    article = "an" if operation == "am" else "a"
    raise GitError(
        f"cannot commit the checkpoint: {article} {operation} is in progress "
        "(nothing was staged or committed)",
        where=Where(top),
        hint=f"finish it (`{finish}`) or abort it (`{abort}`), then checkpoint again",
    )
