"""What the hooks leave in the state folder: when each fired, and what went wrong.

``.the-loop/state/hooks/fired.json`` holds the last time each event fired per
harness (``loop doctor`` shows it: proof the hooks are wired, not just
written); ``hooks/errors.log`` holds one line per failure, newest last, kept
under ``ERROR_LOG_LIMIT`` bytes. Neither ever holds transcript text.
"""

from __future__ import annotations

from pathlib import Path

from the_loop.config.state_folder import read_json, state_dir, write_json
from the_loop.errors import LoopError
from the_loop.io import clock

FOLDER = "hooks"
FIRED = "fired.json"
ERRORS = "errors.log"
ERROR_LOG_LIMIT = 64 * 1024


def hooks_folder(root: Path) -> Path:
    """Where the hooks keep their records (not created here)."""
    return state_dir(root) / FOLDER


def note_fired(root: Path, harness: str, event: str) -> None:
    """Record that ``event`` fired for ``harness`` now."""
    path = hooks_folder(root) / FIRED
    data = fired(root)
    data.setdefault(harness, {})[event] = clock.second_stamp(clock.utc_now())
    state_dir(root, create=True)
    write_json(path, data)


def fired(root: Path) -> dict[str, dict[str, str]]:
    """``{harness: {event: last fired (UTC)}}``; empty when nothing fired (or damaged)."""
    try:
        data = read_json(hooks_folder(root) / FIRED)
    except LoopError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(h): {str(e): str(t) for e, t in events.items()}
        for h, events in data.items()
        if isinstance(events, dict)
    }


def log_error(root: Path, harness: str, event: str, text: str) -> Path | None:
    """Append one line about a failed hook; returns the log's path (None if unwritable)."""
    path = hooks_folder(root) / ERRORS
    line = f"{clock.second_stamp(clock.utc_now())} {harness} {event}: {' '.join(text.split())}\n"
    try:
        state_dir(root, create=True)
        path.parent.mkdir(exist_ok=True)
        if path.is_file() and path.stat().st_size > ERROR_LOG_LIMIT:
            # keep the newer half: the log answers "what went wrong lately"
            kept = path.read_bytes()[-ERROR_LOG_LIMIT // 2 :]
            path.write_bytes(kept[kept.find(b"\n") + 1 :])
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line)
    except (OSError, LoopError):
        return None
    return path


def last_errors(root: Path, count: int = 3) -> list[str]:
    """The newest ``count`` error lines (for ``loop doctor``)."""
    try:
        lines = (hooks_folder(root) / ERRORS).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return lines[-count:]
