"""loop's runtime state folder, ``.the-loop/state/``: never committed.

It holds the repository lock, the checkpoint journal and reset records. The
folder carries its own ``.gitignore`` (``*``) so that a checkpoint commit with
``git add -A`` never picks it up, even in a project where ``loop init`` never
ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from the_loop.config.loader import CONFIG_DIR
from the_loop.errors import StateError, Where
from the_loop.io import atomic

STATE = "state"


def state_dir(root: Path, *, create: bool = False) -> Path:
    """The state folder of the project at ``root`` (created on request)."""
    folder = root / CONFIG_DIR / STATE
    if create and not folder.is_dir():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            ignore = folder / ".gitignore"
            if not ignore.exists():
                atomic.write_text(ignore, "# loop's runtime state: never commit\n*\n")
        except OSError as exc:
            raise StateError(
                f"cannot create loop's state folder: {exc.strerror}",
                where=Where(folder),
                hint="commands that change state need a writable project folder",
            ) from exc
    return folder


def read_json(path: Path) -> Any:
    """Load one state file; a damaged file is a ``StateError`` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StateError(
            f"loop's state file is damaged: {exc}",
            where=Where(path),
            hint="`loop doctor` shows loop's state; remove the file if it is not needed",
        ) from exc


def write_json(path: Path, data: Any) -> None:
    """Write one state file atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
