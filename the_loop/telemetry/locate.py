"""Find a session's transcript on disk, and tell which harness wrote a file.

* Claude Code: ``<config>/projects/<project folder>/<session-id>.jsonl``, where
  ``<config>`` is ``$CLAUDE_CONFIG_DIR``, else ``$HOME/.claude``. The project
  folder is the session's cwd with "/" replaced by "-" (real-clients.md, Claude
  Code 2.1.328: ``/tmp/cc/repo1`` → ``-tmp-cc-repo1``). Claude Code is also
  known to turn other non-alphanumeric characters into "-", which the
  reference does not cover, so both spellings are tried, then every project
  folder (one directory listing: session ids are unique).
* Codex: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<thread-id>.jsonl``,
  ``CODEX_HOME`` defaulting to ``$HOME/.codex``. Day folders are searched newest
  first, at most ``MAX_DAY_FOLDERS`` of them; a time-ordered (v7) thread id
  names its own day, which is tried before the scan.

Every search is bounded; none reads a transcript's contents except
``detect_harness``, which reads a small tail.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import LoopError, UsageError
from the_loop.telemetry.jsonl import parse_object
from the_loop.telemetry.reading import Harness
from the_loop.telemetry.tail import TailReader

MAX_DAY_FOLDERS = 400  # a little over a year of daily folders
_SNIFF_BUDGET = 256 * 1024
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
_CODEX_TYPES = {"session_meta", "event_msg", "response_item", "turn_context", "compacted"}
_CLAUDE_TYPES = {"assistant", "user", "system", "summary", "queue-operation", "attachment"}


class TranscriptNotFoundError(LoopError):
    """No transcript could be found or opened for the session asked about (exit 1)."""


@dataclass(frozen=True)
class Located:
    """A transcript file and the harness that writes it."""

    harness: Harness
    path: Path
    harness_assumed: bool = False  # nothing in the file said which harness wrote it


def claude_config_dir(env: Mapping[str, str]) -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``$HOME/.claude``."""
    explicit = env.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser()
    return _home(env) / ".claude"


def codex_home(env: Mapping[str, str]) -> Path:
    """``$CODEX_HOME``, else ``$HOME/.codex``."""
    explicit = env.get("CODEX_HOME")
    if explicit:
        return Path(explicit).expanduser()
    return _home(env) / ".codex"


def claude_project_folders(cwd: Path) -> list[str]:
    """Project-folder names Claude Code may have used for ``cwd``, likeliest first."""
    text = str(cwd)
    observed = text.replace("/", "-")
    wider = re.sub(r"[^A-Za-z0-9]", "-", text)
    return [observed] if wider == observed else [observed, wider]


def find_claude_transcript(session_id: str, *, cwd: Path, env: Mapping[str, str]) -> Path | None:
    """The transcript of Claude Code session ``session_id``, or None."""
    projects = claude_config_dir(env) / "projects"
    name = f"{session_id}.jsonl"
    for folder in claude_project_folders(cwd):
        candidate = projects / folder / name
        if candidate.is_file():
            return candidate
    try:
        folders = sorted(entry.path for entry in os.scandir(projects) if entry.is_dir())
    except OSError:
        return None
    for folder in folders:
        candidate = Path(folder) / name
        if candidate.is_file():
            return candidate
    return None


def find_codex_rollout(session_id: str, *, env: Mapping[str, str]) -> Path | None:
    """The rollout of Codex thread ``session_id``, or None (newest days first, bounded)."""
    sessions = codex_home(env) / "sessions"
    suffix = f"-{session_id}.jsonl"
    for day in _day_folders(sessions, _id_days(session_id)):
        try:
            names = [e.name for e in os.scandir(day) if e.name.endswith(suffix)]
        except OSError:
            continue
        matches = sorted(n for n in names if n.startswith("rollout-"))
        if matches:
            return day / matches[-1]
    return None


def locate_transcript(
    *,
    transcript: Path | None,
    session_id: str | None,
    harness: Harness | None,
    cwd: Path,
    env: Mapping[str, str],
) -> Located:
    """The transcript to read: an explicit path, or the one for a session id.

    Raises ``UsageError`` for a bad combination or session id, and
    ``TranscriptNotFoundError`` when nothing can be found.
    """
    if (transcript is None) == (session_id is None):
        raise UsageError(
            "say which session: give --transcript PATH or --session ID (one of them)",
            hint="a hook's stdin carries both transcript_path and session_id",
        )
    if transcript is not None:
        path = transcript if transcript.is_absolute() else cwd / transcript
        if not path.is_file():
            raise TranscriptNotFoundError(
                f"no transcript at {path}" + (" (it is a folder)" if path.is_dir() else ""),
                hint="pass the transcript_path a hook received, or use --session ID",
            )
        chosen = harness or detect_harness(path)
        return Located(chosen or Harness.CLAUDE, path, harness_assumed=chosen is None)
    if session_id is None or not _SESSION_ID.fullmatch(session_id):
        raise UsageError(
            f"--session {session_id!r} is not a session id (letters, digits, '-' and '_' only)"
        )
    return _by_session(session_id, harness, cwd, env)


def _by_session(
    session_id: str, harness: Harness | None, cwd: Path, env: Mapping[str, str]
) -> Located:
    found: list[Located] = []
    if harness in (None, Harness.CLAUDE):
        path = find_claude_transcript(session_id, cwd=cwd, env=env)
        if path is not None:
            found.append(Located(Harness.CLAUDE, path))
    if harness in (None, Harness.CODEX):
        path = find_codex_rollout(session_id, env=env)
        if path is not None:
            found.append(Located(Harness.CODEX, path))
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(
            f"session {session_id} has a Claude Code transcript and a Codex rollout",
            details=tuple(str(f.path) for f in found),
            hint="say which with --harness claude or --harness codex",
        )
    raise TranscriptNotFoundError(
        f"no transcript found for session {session_id}",
        details=tuple(_searched(session_id, harness, cwd, env)),
        hint="pass --transcript PATH (a hook's transcript_path), "
        "or set CLAUDE_CONFIG_DIR / CODEX_HOME to where the harness keeps its sessions",
    )


def _searched(
    session_id: str, harness: Harness | None, cwd: Path, env: Mapping[str, str]
) -> Iterator[str]:
    if harness in (None, Harness.CLAUDE):
        projects = claude_config_dir(env) / "projects"
        folder = claude_project_folders(cwd)[0]
        yield f"claude: {projects / folder / session_id}.jsonl, then {projects}/*/"
    if harness in (None, Harness.CODEX):
        sessions = codex_home(env) / "sessions"
        yield (
            f"codex: {sessions}/YYYY/MM/DD/rollout-*-{session_id}.jsonl "
            f"(newest {MAX_DAY_FOLDERS} days)"
        )


def detect_harness(path: Path) -> Harness | None:
    """Which harness wrote ``path``, from its name or its last lines; None if nothing says."""
    if path.name.startswith("rollout-"):
        return Harness.CODEX
    reader = TailReader(path, budget=_SNIFF_BUDGET)
    try:
        for line in reader.lines():
            obj = parse_object(line.data)
            if obj is None:
                continue
            kind = obj.get("type")
            if "payload" in obj and kind in _CODEX_TYPES:
                return Harness.CODEX
            if "sessionId" in obj or kind in _CLAUDE_TYPES:
                return Harness.CLAUDE
    except OSError:
        return None
    return None


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME")
    return Path(home) if home else Path.home()


def _id_days(session_id: str) -> list[dt.date]:
    """The UTC day (and its neighbours, for local-time folders) a v7 thread id was made."""

    try:
        parsed = uuid.UUID(session_id)
    except ValueError:
        return []
    if parsed.version != 7:
        return []
    millis = parsed.int >> 80
    try:
        day = dt.datetime.fromtimestamp(millis / 1000, tz=dt.timezone.utc).date()
    except (OverflowError, OSError, ValueError):
        return []
    return [day, day - dt.timedelta(days=1), day + dt.timedelta(days=1)]


def _day_folders(sessions: Path, first: list[dt.date]) -> Iterator[Path]:
    """Day folders to search: ``first`` days, then the newest ``MAX_DAY_FOLDERS``."""
    tried: set[Path] = set()
    for day in first:
        folder = sessions / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
        tried.add(folder)
        if folder.is_dir():
            yield folder
    seen = 0
    for year in _numbered(sessions, 4):
        for month in _numbered(year, 2):
            for day_folder in _numbered(month, 2):
                if seen >= MAX_DAY_FOLDERS:
                    return
                seen += 1
                if day_folder not in tried:
                    yield day_folder


def _numbered(folder: Path, width: int) -> list[Path]:
    """Sub-folders named by a number of ``width`` digits, highest first."""
    try:
        entries = [e for e in os.scandir(folder) if e.is_dir()]
    except OSError:
        return []
    names = sorted(e.name for e in entries if len(e.name) == width and e.name.isdigit())
    return [folder / n for n in reversed(names)]
