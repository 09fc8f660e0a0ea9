"""loop's runtime state folder, ``.the-loop/state/``: never committed, and its cache.

It holds the repository lock, the checkpoint journal, reset records and the
parse cache. The folder carries its own ``.gitignore`` (``*``) so that a
checkpoint commit with ``git add -A`` never picks it up, even in a project where
``loop init`` never ran. It sits this low (beside the config) because reading
the config and the spec files already uses its cache.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from the_loop.config.loader import CONFIG_DIR
from the_loop.errors import StateError, Where
from the_loop.io.content_cache import ContentCache

STATE = "state"
CACHE = "cache"


def state_dir(root: Path, *, create: bool = False) -> Path:
    """The state folder of the project at ``root`` (created on request)."""
    folder = root / CONFIG_DIR / STATE
    if create:
        from the_loop.io import atomic  # tempfile: only for commands that write

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


IGNORE_ALL = "# loop's runtime state: never commit\n*\n"


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
    that is read-only, even for root, who could (a shared reference checkout).
    """
    config_dir = root / CONFIG_DIR
    if not config_dir.is_dir() or not _writable(config_dir):
        return ContentCache(None)
    return ContentCache(state_dir(root) / CACHE, lambda: state_dir(root, create=True))


def _writable(folder: Path) -> bool:
    """Writable by its permission bits, not only by privilege (root ignores the bits)."""
    return bool(folder.stat().st_mode & 0o222) and os.access(folder, os.W_OK)
