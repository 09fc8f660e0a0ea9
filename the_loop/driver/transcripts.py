"""What an agent session's own records say: where they are, how full, whether it compacted.

Claude Code keeps a transcript under ``$CLAUDE_CONFIG_DIR/projects`` (else
``~/.claude``), Codex a rollout under ``$CODEX_HOME/sessions``; both are found
through ``the_loop.telemetry`` with the agent's environment. A compaction is
confirmed by a new line in that file (Claude: ``compact_boundary``; Codex:
``compacted``) written after the size noted before the compaction ran; only
those new bytes are read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from the_loop.driver.agents import Agent
from the_loop.errors import UsageError
from the_loop.telemetry import (
    ContextReading,
    Located,
    TranscriptNotFoundError,
    locate_transcript,
    read_located,
)

_MAX_NEW_BYTES = 64 * 1024 * 1024  # a compaction writes kilobytes; never read more than this


def locate(agent: Agent, session: str | None, *, cwd: Path, env: Mapping[str, str]) -> Path | None:
    """The session's transcript, or None (no session, no telemetry, or not written yet)."""
    if agent.harness is None or session is None:
        return None
    try:
        found = locate_transcript(
            transcript=None, session_id=session, harness=agent.harness, cwd=cwd, env=env
        )
    except (TranscriptNotFoundError, UsageError):
        return None
    return found.path


def size_of(path: Path | None) -> int:
    """The file's size now (0 when there is no file yet)."""
    if path is None:
        return 0
    try:
        return path.stat().st_size
    except OSError:
        return 0


def compacted_since(path: Path | None, offset: int, marker: tuple[str, str] | None) -> bool:
    """Whether a compaction line was written to ``path`` after byte ``offset``."""
    if path is None or marker is None:
        return False
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            lines = handle.read(_MAX_NEW_BYTES).splitlines()
    except OSError:
        return False
    return any(_compactions(lines, marker))  # a compaction line is a non-empty object


def _compactions(lines: list[bytes], marker: tuple[str, str]) -> Iterator[dict[str, object]]:
    """The JSON lines of ``lines`` whose ``marker`` key holds its value (compaction lines)."""
    key, value = marker
    needle = value.encode()
    for line in lines:
        if needle not in line:
            continue  # most lines: no JSON parse
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get(key) == value:
            yield obj


def reading(
    agent: Agent,
    session: str | None,
    *,
    cwd: Path,
    env: Mapping[str, str],
    windows: Mapping[str, int] | None = None,
) -> ContextReading | None:
    """How full the session's window is, from its transcript; None when there is none."""
    path = locate(agent, session, cwd=cwd, env=env)
    if path is None or agent.harness is None:
        return None
    try:
        return read_located(Located(agent.harness, path), result_windows=windows)
    except TranscriptNotFoundError:
        return None


def compacted_after(path: Path | None, marker: tuple[str, str] | None, stamp: str) -> bool:
    """Whether ``path`` has a compaction line timestamped at or after ``stamp`` (UTC ISO).

    How a rerun tells a compaction a crashed run performed from one still due.
    Only the file's last ``_MAX_NEW_BYTES`` are read.
    """
    if path is None or marker is None:
        return False
    since = stamp[:19]
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            handle.seek(max(0, size - _MAX_NEW_BYTES))
            lines = handle.read(_MAX_NEW_BYTES).splitlines()
    except OSError:
        return False
    for obj in _compactions(lines, marker):
        when = obj.get("timestamp")
        if isinstance(when, str) and when[:19] >= since:
            return True
    return False
