"""Sweep away what a killed loop command left half-made, before a checkpoint commits.

A process killed between writing a temporary file and renaming it over its
target leaves ``.tasks.md.k2j4x9q1.tmp`` beside ``tasks.md``; one killed while
``loop new`` built an item aside leaves ``.issue-42.a8d3kq0z/`` in the spec
folder. With ``checkpoint.stage: all`` the next commit (``git add -A``) would
pick them up. They are loop's own and only ever exist while a command holds the
project lock, so under the lock any that exist are debris.

Only names loop itself makes are touched: a temporary file of a file loop
writes, and a staging folder that holds nothing but artifact files. The caches
in ``state/cache/`` are written by read-only commands, without the lock, so a
temporary file there is debris only once the process named in it is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from the_loop.config.project_root import CONFIG_DIR, CONFIG_FILE
from the_loop.io.atomic import TEMP_NAME

# Files loop replaces atomically (and so may leave a temporary file of).
_WRITTEN = {
    "brainstorm.md",
    "requirements.md",
    "bugfix.md",
    "design.md",
    "tasks.md",
    "execution-log.md",
    CONFIG_FILE,
    ".gitignore",
    "checkpoint.json",
}
_STAGING = re.compile(r"^\.[A-Za-z0-9][A-Za-z0-9._-]*\.[A-Za-z0-9_]{8}$")
# The caches' temporary files: ``.<entry>.<pid>.<8 hex>.tmp`` (io/content_cache).
_CACHE_TEMP = re.compile(r"^\..+\.(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp$")


def sweep(root: Path, spec_root: Path | None = None) -> list[Path]:
    """Remove loop's leftovers in its own folders and (given) the spec folder.

    Call with the project lock held: every write to these files happens under it.
    """
    removed = []
    for path in _candidates(root, spec_root):
        with contextlib.suppress(OSError):  # best effort: debris never blocks a checkpoint
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
    return removed


def _candidates(root: Path, spec_root: Path | None) -> Iterator[Path]:
    state = root / CONFIG_DIR / "state"
    folders = [root / CONFIG_DIR, state, state / "resets"]
    if spec_root is not None and spec_root.is_dir() and not spec_root.is_symlink():
        folders.append(spec_root)
        folders.extend(spec_root / name for name in _children(spec_root, dirs=True))
    for folder in folders:
        for name in _children(folder, dirs=False):
            if _is_temp_of_ours(name):
                yield folder / name
    if spec_root is not None:
        for name in _children(spec_root, dirs=True):
            if _STAGING.match(name) and _only_artifacts(spec_root / name):
                yield spec_root / name
    for folder in (state / "cache", state / "cache" / "answers"):
        for name in _children(folder, dirs=False):
            match = _CACHE_TEMP.match(name)
            if match is not None and not _running(int(match["pid"])):
                yield folder / name


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (a killed cache writer's does not)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or no process could have that id
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _is_temp_of_ours(file_name: str) -> bool:
    match = TEMP_NAME.match(file_name)
    if match is None:
        return False
    name = match["name"]
    return name in _WRITTEN or name.endswith((".json", ".jsonl", ".orig"))


def _only_artifacts(folder: Path) -> bool:
    return all(
        name in _WRITTEN or _is_temp_of_ours(name) for name in _children(folder, dirs=False)
    ) and not list(_children(folder, dirs=True))


def _children(folder: Path, *, dirs: bool) -> Iterator[str]:
    """The names of ``folder``'s folders (``dirs``) or of its other entries."""
    # scandir knows each entry's type from the directory itself: no stat per entry,
    # and names rather than paths (the reset records grow by one a checkpoint).
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except OSError:
        return
    for entry in entries:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)  # a link to a folder is not one
        except OSError:
            continue
        if is_dir == dirs:
            yield entry.name
