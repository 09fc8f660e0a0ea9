"""Which work item (and task) a session is on, as far as loop can tell.

In order: the item whose reset the event just completed; the tasks this
session started (or inherited after a clear) that are still in progress; the
item the hooks last found it on; else the most recently touched item that has
an execution log and is not complete. Items are only read in that order, a few
at most, so a project with many items stays fast.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from the_loop.checkpoint.seen_sessions import SessionRecord
from the_loop.errors import LoopError
from the_loop.spec.items import ARTIFACT_FILES, list_items, load_item
from the_loop.spec.project import ItemContext, Project, item_context
from the_loop.tasks import Task, TaskState, read_tasks

_SCANNED = 10  # most recently touched items read before giving up
_TOUCHED_BY = ("tasks.md", "execution-log.md")


@dataclass(frozen=True)
class Focus:
    """The item a session is on, its task in progress (if any) and why it was chosen."""

    ctx: ItemContext
    task: Task | None
    why: str

    @property
    def item(self) -> str:
        return self.ctx.item.id


def find_focus(
    project: Project, *, session: SessionRecord | None, prefer: str | None = None
) -> Focus | None:
    """The session's focus (see the module docstring), or None."""
    seen: set[str] = set()
    for folder, why in _candidates(project, session, prefer):
        if folder.name in seen or not folder.is_dir():
            continue
        seen.add(folder.name)
        focus = _read(project, folder, session, why)
        if focus is not None:
            return focus
    return None


def _candidates(
    project: Project, session: SessionRecord | None, prefer: str | None
) -> Iterator[tuple[Path, str]]:
    spec_root = project.spec_root
    if prefer:
        yield spec_root / prefer, "its reset was just completed"
    if session is not None:
        for key in reversed(session.tasks):
            item, _, task = key.partition("#")
            yield spec_root / item, f"this session started task {task}"
        if session.item:
            yield spec_root / session.item, "this session worked on it last"
    for folder in _recently_touched(spec_root)[:_SCANNED]:
        yield folder, "the most recently touched work item in progress"


def _recently_touched(spec_root: Path) -> list[Path]:
    stamped = []
    for folder in list_items(spec_root):
        times = []
        for name in _TOUCHED_BY:
            try:
                times.append((folder / name).stat().st_mtime_ns)
            except OSError:
                continue
        if (folder / ARTIFACT_FILES["execution-log"]).is_file():
            stamped.append((max(times), folder))
    return [folder for _, folder in sorted(stamped, key=lambda pair: pair[0], reverse=True)]


def _read(project: Project, folder: Path, session: SessionRecord | None, why: str) -> Focus | None:
    try:
        item = load_item(folder, project.spec_root)
        log = item.artifacts["execution-log"]
        if not log.exists or (log.front is not None and log.front.get("phase") == "complete"):
            return None
        ctx = item_context(project, item, tolerant=True)
        return Focus(ctx, _task_in_progress(ctx, session), why)
    except LoopError:
        return None  # an unreadable item is not a focus; `loop check` reports it


def _task_in_progress(ctx: ItemContext, session: SessionRecord | None) -> Task | None:
    tasks_file = ctx.item.artifacts["tasks"]
    if not tasks_file.exists:
        return None
    active = [t for t in read_tasks(tasks_file.path).tasks if t.state is TaskState.IN_PROGRESS]
    if session is not None:
        owned = [t for t in active if session.owns(ctx.item.id, t.id)]
        if owned:
            return owned[-1]
    return active[0] if active else None
