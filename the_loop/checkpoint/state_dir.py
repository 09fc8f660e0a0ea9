"""Reading and writing loop's state files in ``.the-loop/state/``.

The folder itself (and its ``.gitignore``) is ``the_loop.config.state_folder``'s,
re-exported here for the checkpoint modules.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from the_loop.config.state_folder import state_dir
from the_loop.errors import StateError, UnusableInputError, Where
from the_loop.io import atomic
from the_loop.io.textfile import read_limited

TYPE_CHECKING = False  # typing is not imported at run time: it costs every cold start ~2 ms
if TYPE_CHECKING:
    from typing import Any

JOURNAL = "checkpoint.json"  # the checkpoint journal (``transaction`` writes it)
RESETS = "resets"  # reset records and their history (``resets`` writes them)


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


DAMAGED = "damaged"


_STATE_LIMIT = 16 * 1024 * 1024  # a journal holds one entry; anything bigger is damage


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
