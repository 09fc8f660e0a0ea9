"""The walk up to a project's root, in plain ``os`` calls (no pathlib, no loop imports).

:func:`the_loop.config.project_root.find_project_root` is the API; this is its
walk.
"""

from __future__ import annotations

import errno
import os
import stat

CONFIG_DIR = ".the-loop"

# The errors pathlib's is_dir()/exists() read as "no" (any other is raised).
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def search(start: str) -> str:
    """The project root for a command started in ``start`` (an absolute, resolved path).

    Walk up from ``start``: the first folder holding ``.the-loop/`` is the
    project; a folder holding ``.git`` ends the walk and is the project; with
    neither, ``start`` itself. The home folder's ``.the-loop/`` counts only
    when the walk starts there (other tools keep a ``~/.the-loop/``).
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
