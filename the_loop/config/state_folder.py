"""loop's runtime state folder, ``.the-loop/state/``, and the state files in it.

It holds the repository lock, the checkpoint journal, reset records, session
records and the parse cache. The folder carries its own ``.gitignore`` (``*``)
so that a checkpoint commit with ``git add -A`` never picks it up, even in a
project where ``loop init`` never ran. It sits this low (beside the config)
because reading the spec files already uses its cache; the checkpoint, hook
and driver modules read and write their files through the helpers here.

Like every write, the folder is confined to the project: a ``state`` that
resolves outside it (a symlink) gets no cache, and is refused for state.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from the_loop.config.project_root import CONFIG_DIR
from the_loop.errors import RefusedError, StateError, UnusableInputError, Where
from the_loop.io import atomic
from the_loop.io.content_cache import ContentCache
from the_loop.io.textfile import read_limited

if TYPE_CHECKING:
    from typing import Any

STATE = "state"
CACHE = "cache"
JOURNAL = "checkpoint.json"  # the checkpoint journal (``checkpoint.transaction`` writes it)
RESETS = "resets"  # reset records and their history (``checkpoint.resets`` writes them)
DAMAGED = "damaged"
IGNORE_ALL = "# loop's runtime state: never commit\n*\n"

_STATE_LIMIT = 16 * 1024 * 1024  # a journal holds one entry; anything bigger is damage


def state_dir(root: Path, *, create: bool = False) -> Path:
    """The state folder of the project at ``root`` (created on request, inside the project)."""
    folder = root / CONFIG_DIR / STATE
    if create:
        _refuse_outside(root, folder)
        atomic.landing_place(folder)  # the lock, journal, records and cache live here
        try:
            folder.mkdir(parents=True, exist_ok=True)
            ignore = folder / ".gitignore"
            # Checked every time: without it, `git add -A` would commit the journal.
            if not _ignores_all(ignore):
                atomic.write_text(ignore, IGNORE_ALL)
        except OSError as exc:
            raise StateError(
                f"cannot create loop's state folder: {exc.strerror}",
                where=Where(folder),
                hint="commands that change state need a writable project folder",
            ) from exc
    return folder


def _inside(root: Path, path: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


def _refuse_outside(root: Path, folder: Path) -> None:
    """Refuse a state folder that resolves outside the project, whoever writes it."""
    if not _inside(root, folder):
        raise RefusedError(
            f"refusing to write outside the project: loop's state folder resolves to "
            f"{os.path.realpath(folder)}, which is outside {os.path.realpath(root)}",
            where=Where(folder),
            hint="replace the symlink with a real folder inside the project "
            f"(rm {folder} && mkdir {folder})",
        )


def _ignores_all(ignore: Path) -> bool:
    try:
        return "*" in ignore.read_text(errors="replace").split("\n")
    except OSError:
        return False


@cache
def project_cache(root: Path) -> ContentCache:
    """The parse cache of the project at ``root``: ``.the-loop/state/cache/``.

    A folder without ``.the-loop/`` gets a cache that keeps nothing: loop never
    creates ``.the-loop/`` for a cache. Nor does it write into a ``.the-loop/``
    that is read-only, even for root, who could (a shared reference checkout),
    nor into a state or cache folder that resolves outside the project.
    """
    config_dir = root / CONFIG_DIR
    folder = state_dir(root) / CACHE
    if not config_dir.is_dir() or not _writable(config_dir) or not _inside(root, folder):
        return ContentCache(None)
    return ContentCache(folder, lambda: state_dir(root, create=True))


def _writable(folder: Path) -> bool:
    """Writable by its permission bits, not only by privilege (root ignores the bits)."""
    return bool(folder.stat().st_mode & 0o222) and os.access(folder, os.W_OK)


def journal_exists(root: Path) -> bool:
    """Whether a checkpoint journal is on disk: the cheap test before reading it.

    Reports ask this first so that, in the common case, they never import the
    checkpoint machinery (and git's layer with it).
    """
    return (state_dir(root) / JOURNAL).exists()


def resets_exist(root: Path) -> bool:
    """Whether anything is at the reset records' place: without it there are none to read.

    ``loop status`` asks this first, so that a project that never reset a session
    does not load the reset machinery.
    """
    return (state_dir(root) / RESETS).exists()


def read_json(path: Path) -> Any:
    """Load one state file; a damaged file is a ``StateError`` naming it."""
    try:
        data = read_limited(path, _STATE_LIMIT, what="state file")
        return json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise damaged_state(path, "it is a folder, not a file") from exc
    except OSError as exc:
        raise damaged_state(path, f"it cannot be read: {exc.strerror or exc}") from exc
    except (ValueError, RecursionError, UnusableInputError) as exc:
        # ValueError covers bad UTF-8 and bad JSON; RecursionError, JSON nested thousands deep.
        raise damaged_state(path, _first_line(exc)) from exc


Record = TypeVar("Record")


def read_record(
    path: Path, record: Callable[..., Record], *, what: str, hint: str
) -> Record | None:
    """One state file as ``record(**fields)`` (a dataclass), or None when there is none.

    A file that does not read, or whose fields do not fit, is a ``StateError``
    naming it: "``what`` is damaged", with ``hint`` as the way out.
    """
    data = read_json(path)
    if data is None:
        return None
    try:
        return record(**data)
    except TypeError as exc:  # a field missing or unknown, or not an object at all
        raise StateError(f"{what} is damaged: {exc}", where=Where(path), hint=hint) from exc


def damaged_state(path: Path, what: str) -> StateError:
    """The error for a state file that cannot be used, with the way out."""
    return StateError(
        f"loop's state file is damaged: {what}",
        where=Where(path),
        hint="`loop doctor` shows loop's state and `loop doctor --discard` sets damaged "
        "files aside",
    )


def write_json(path: Path, data: Any) -> None:
    """Write one state file atomically."""

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def set_aside(root: Path, path: Path) -> Path | None:
    """Move a damaged state file into ``state/damaged/`` (kept, out of the way)."""
    if not path.exists() and not path.is_symlink():
        return None
    folder = state_dir(root, create=True) / DAMAGED
    target = folder / f"{path.name}.{time.strftime('%Y%m%dT%H%M%S')}.{os.getpid()}"
    try:
        folder.mkdir(exist_ok=True)
        os.replace(path, target)
    except OSError as exc:
        raise StateError(
            f"cannot set the damaged state file aside: {exc.strerror or exc}",
            where=Where(path),
            hint=f"remove it by hand (rm -r {path})",
        ) from exc
    return target


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
