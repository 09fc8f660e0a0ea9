"""Reading and writing loop's state files in ``.the-loop/state/``.

The folder itself (and its ``.gitignore``) is ``the_loop.config.state_folder``'s,
re-exported here for the checkpoint modules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from the_loop.config.state_folder import STATE, state_dir
from the_loop.errors import StateError, Where
from the_loop.io import atomic

__all__ = ["JOURNAL", "STATE", "journal_exists", "read_json", "state_dir", "write_json"]

JOURNAL = "checkpoint.json"  # the checkpoint journal (``transaction`` writes it)


def journal_exists(root: Path) -> bool:
    """Whether a checkpoint journal is on disk: the cheap test before reading it.

    Reports ask this first so that, in the common case, they never import the
    checkpoint machinery (and git's layer with it).
    """
    return (state_dir(root) / JOURNAL).exists()


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
