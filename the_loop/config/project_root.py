"""Find the project a command works on.

``--repo/-C DIR`` wins. Otherwise walk up from the current folder: the first
folder holding ``.the-loop/`` is the project; the search stops at the git root
(a ``.the-loop/`` above the repository belongs to something else), which is the
project when nothing nearer was found; outside git, the current folder. The
home folder never counts by accident: other tools keep a ``~/.the-loop/``.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from the_loop.errors import UsageError

CONFIG_DIR = ".the-loop"
CONFIG_FILE = "config.yaml"  # in CONFIG_DIR

# The errors pathlib's is_dir()/exists() read as "no" (any other is raised).
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def find_project_root(start: Path, explicit: Path | None = None) -> Path:
    """The project root for a command started in ``start``."""
    if explicit is not None:
        root = explicit.expanduser()
        if not root.is_dir():
            raise UsageError(f"--repo: {explicit} is not a folder")
        return root.resolve()
    return Path(search(os.path.realpath(start)))


def search(start: str) -> str:
    """The project root for a command started in ``start`` (an absolute, resolved path).

    The walk of :func:`find_project_root`, on plain strings.
    """
    home = os.path.realpath(os.path.expanduser("~"))
    folder = start
    while True:
        found = _stat(os.path.join(folder, CONFIG_DIR))
        if found is not None and stat.S_ISDIR(found.st_mode) and (folder != home or start == home):
            return folder
        if _stat(os.path.join(folder, ".git")) is not None:
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return start
        folder = parent


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        raise
    except ValueError:  # a NUL in the path: pathlib reads that as "no" too
        return None
