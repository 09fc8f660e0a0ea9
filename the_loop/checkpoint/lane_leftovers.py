"""What a parallel run left behind, for ``loop doctor``: worktrees, lane branches, leases.

A run removes a task's worktree, branch and lease once the task lands; a run
killed (or a task given up) leaves them. Leftovers are the ones no live lease
covers: a worktree under ``.the-loop/state/worktrees/``, a ``loop/<item>/<task>``
branch with no worktree, a lease whose holder died, a worktree git still lists
whose folder is gone. ``repair`` commits a leftover worktree's uncommitted work
on its branch (so a rerun picks it up: nothing is lost), removes the worktree,
deletes the branches of tasks that landed, drops dead leases and prunes git's
worktree list.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from the_loop.checkpoint import leases
from the_loop.config.state_folder import state_dir
from the_loop.errors import LoopError
from the_loop.git import worktrees
from the_loop.spec.project import open_item
from the_loop.tasks import TaskState, read_tasks

FOLDER = "worktrees"


@dataclass(frozen=True)
class Leftover:
    """One thing a parallel run left; ``what`` says it in words."""

    kind: str  # worktree | branch | lease | stale-worktree
    item: str
    task: str
    what: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "item": self.item, "task": self.task, "what": self.what}


def _live(root: Path) -> set[tuple[str, str]]:
    return {(lease.item, lease.task) for lease in leases.leases(root) if lease.live()}


def find(root: Path) -> list[Leftover]:
    """Every leftover of a parallel run (nothing when the project never ran one)."""
    base = state_dir(root) / FOLDER
    has_leases = (state_dir(root) / leases.FOLDER).is_dir()
    if not base.is_dir() and not has_leases:
        return []
    live = _live(root)
    found: list[Leftover] = []
    listed = {w.path: w for w in worktrees.list_worktrees(root)}
    for path, tree in sorted(listed.items()):
        if tree.prunable:
            found.append(Leftover("stale-worktree", "", "", f"{path} is gone; git still lists it"))
    seen: set[tuple[str, str]] = set()
    if base.is_dir():
        for folder in sorted(p for p in base.glob("*/*") if p.is_dir()):
            item, task = folder.parent.name, folder.name
            seen.add((item, task))
            if (item, task) not in live:
                found.append(Leftover("worktree", item, task, f"{folder} (task {task} of {item})"))
    for name in sorted(worktrees.task_branches(root)):
        _prefix, item, task = name.split("/", 2)
        if (item, task) not in seen and (item, task) not in live:
            # kept on purpose (a task given up, or work a doctor repair committed): a
            # rerun picks it up; listed, but not a fault
            found.append(Leftover("branch", item, task, f"branch {name} (no worktree)"))
    for lease in leases.dead(root):
        found.append(
            Leftover(
                "lease",
                lease.item,
                lease.task,
                f"lease of task {lease.task} of {lease.item}: holder pid {lease.pid} is gone",
            )
        )
    return found


def landed(root: Path, found: list[Leftover]) -> set[tuple[str, str]]:
    """The (item, task) pairs of ``found`` whose task is ticked in its tasks.md."""

    result: set[tuple[str, str]] = set()
    for item in sorted({left.item for left in found if left.item}):
        try:
            ctx = open_item(root, item, cwd=root, tolerant=True)
            tasks = read_tasks(ctx.item.artifacts["tasks"].path)
        except LoopError:
            continue  # an item gone or unreadable: keep its branches
        result |= {(item, t.id) for t in tasks.tasks if t.state is TaskState.DONE}
    return result


def repair(root: Path, found: list[Leftover], done: set[tuple[str, str]]) -> list[str]:
    """Clear ``found`` (see the module docstring); ``done``: (item, task) pairs that landed."""
    notes: list[str] = []
    for left in found:
        if left.kind == "worktree":
            path = state_dir(root) / FOLDER / left.item / left.task
            if (path / ".git").exists() and (left.item, left.task) not in done:
                base = worktrees.head_of(path)
                sha, _ = worktrees.squash_work(
                    path,
                    base,
                    f"lane({left.item}): task {left.task} work kept by `loop doctor --repair`\n",
                    loop_owned=(),
                )
                if sha is not None:
                    notes.append(
                        f"committed the uncommitted work of task {left.task} on its branch"
                    )
            worktrees.remove_worktree(root, path)
            notes.append(f"removed worktree {path}")
    worktrees.prune_worktrees(root)
    for name in worktrees.task_branches(root):
        _prefix, item, task = name.split("/", 2)
        if (item, task) in done:
            worktrees.delete_branch(root, name)
            notes.append(f"deleted branch {name} (its task has landed)")
    for lease in leases.remove_dead(root):
        notes.append(f"dropped the dead lease of task {lease.task} of {lease.item}")
    return notes
