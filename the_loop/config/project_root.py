"""Find the project a command works on.

``--repo/-C DIR`` wins. Otherwise walk up from the current folder: the first
folder holding ``.the-loop/`` is the project; the search stops at the git root
(a ``.the-loop/`` above the repository belongs to something else), which is the
project when nothing nearer was found; outside git, the current folder. The
home folder never counts by accident: other tools keep a ``~/.the-loop/``.
"""

from __future__ import annotations

import os
from pathlib import Path

from the_loop.config.root_search import search
from the_loop.errors import UsageError


def find_project_root(start: Path, explicit: Path | None = None) -> Path:
    """The project root for a command started in ``start``."""
    if explicit is not None:
        root = explicit.expanduser()
        if not root.is_dir():
            raise UsageError(f"--repo: {explicit} is not a folder")
        return root.resolve()
    return Path(search(os.path.realpath(start)))
