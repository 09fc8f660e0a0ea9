"""Agent sessions loop has seen: who is working, in which transcript, on which task.

The harness hooks (``loop hook``) record every session they hear from in
``.the-loop/state/sessions/<id>.json``: its harness, its transcript, when it
was last seen, whether it ended, the tasks it started or inherited, and the
little state the hooks keep per session (how often Stop was blocked, which
pressure level was last announced). Nothing here is ever committed.

``resolve_session`` answers "which session is running this command?" for
every command that takes ``--session``, so an agent never types it:

1. an explicit ``--session`` (or ``LOOP_SESSION_ID``, which click maps onto it);
2. the harness's own variable in the agent's tool environment:
   ``CLAUDE_CODE_SESSION_ID`` (Claude Code) or ``CODEX_THREAD_ID`` (Codex), both
   observed with the pinned CLIs;
3. the one live session the hooks recorded (seen in the last ``LIVE_HOURS`` and
   not ended); with none or several, no guess is made.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.config.state_folder import read_json, state_dir, write_json
from the_loop.errors import LoopError
from the_loop.io import clock

if TYPE_CHECKING:
    from typing import Any

FOLDER = "sessions"
LIVE_HOURS = 6  # a session not heard from for longer is not assumed to be running
KEEP_DAYS = 30  # records older than this are pruned when a session starts
HARNESS_VARIABLES = ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID")
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


@dataclass(frozen=True)
class SessionRecord:
    """What loop knows about one agent session."""

    id: str
    harness: str | None = None
    transcript: str | None = None
    cwd: str | None = None
    first_seen: str = ""
    last_seen: str = ""
    last_event: str = ""
    ended: str | None = None
    end_reason: str | None = None
    item: str | None = None  # the work item the hooks last found it on
    tasks: tuple[str, ...] = ()  # "item#task" it started or inherited after a clear
    stop_blocks: int = 0
    announced: str | None = None  # pressure level last announced; cleared by a compaction
    compactions: int = 0
    extra: dict[str, Any] = field(default_factory=dict)  # fields a newer loop wrote

    @property
    def live(self) -> bool:
        """Not ended, and heard from within ``LIVE_HOURS``."""
        if self.ended:
            return False
        seen = _parse(self.last_seen)
        return seen is not None and clock.utc_now() - seen <= timedelta(hours=LIVE_HOURS)

    def owns(self, item: str, task: str) -> bool:
        return task_key(item, task) in self.tasks

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tasks"] = list(self.tasks)
        extra = data.pop("extra")
        return {**extra, **data}


def task_key(item: str, task: str) -> str:
    """How a session's tasks are listed: ``issue-7#2``."""
    return f"{item}#{task}"


def _parse(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _folder(root: Path) -> Path:
    return state_dir(root) / FOLDER


def _file(root: Path, session: str) -> Path:
    # A harness's ids are uuids; anything else is hashed rather than trusted as a name.
    name = session if _SAFE.fullmatch(session) else hashlib.sha256(session.encode()).hexdigest()
    return _folder(root) / f"{name}.json"


def load(root: Path, session: str) -> SessionRecord | None:
    """The record of ``session``, or None (a damaged record reads as none)."""
    try:
        data = read_json(_file(root, session))
    except LoopError:
        return None
    return _from_json(data) if isinstance(data, dict) else None


def _from_json(data: dict[str, Any]) -> SessionRecord | None:
    known = {name for name in SessionRecord.__dataclass_fields__ if name != "extra"}
    values = {k: v for k, v in data.items() if k in known}
    if not isinstance(values.get("id"), str):
        return None
    values["tasks"] = tuple(str(t) for t in values.get("tasks") or ())
    try:
        return SessionRecord(**values, extra={k: v for k, v in data.items() if k not in known})
    except TypeError:
        return None


def save(root: Path, record: SessionRecord) -> SessionRecord:
    """Write ``record`` (atomically; the state folder is created if needed)."""
    state_dir(root, create=True)
    write_json(_file(root, record.id), record.to_json())
    return record


def seen(
    root: Path,
    session: str,
    *,
    event: str,
    harness: str | None = None,
    transcript: str | None = None,
    cwd: str | None = None,
) -> SessionRecord:
    """Note that ``session`` was heard from now (a start after an end revives it)."""
    now = clock.second_stamp(clock.utc_now())
    record = load(root, session) or SessionRecord(id=session, first_seen=now)
    record = replace(
        record,
        harness=harness or record.harness,
        transcript=transcript or record.transcript,
        cwd=cwd or record.cwd,
        last_seen=now,
        last_event=event,
        ended=None,
        end_reason=None,
    )
    return save(root, record)


def ended(root: Path, session: str, *, reason: str | None) -> SessionRecord | None:
    """Note that ``session`` ended (a later resume revives it)."""
    record = load(root, session)
    if record is None:
        return None
    now = clock.second_stamp(clock.utc_now())
    return save(root, replace(record, ended=now, end_reason=reason, last_event="SessionEnd"))


def own_task(root: Path, session: str | None, item: str, task: str) -> None:
    """Record that ``session`` started (or took over) ``task`` of ``item``."""
    if not session:
        return
    record = load(root, session) or SessionRecord(
        id=session, first_seen=clock.second_stamp(clock.utc_now())
    )
    key = task_key(item, task)
    if key not in record.tasks:
        save(root, replace(record, tasks=(*record.tasks, key), item=item))


def records(root: Path) -> list[SessionRecord]:
    """Every session record, most recently seen first."""
    folder = _folder(root)
    if not folder.is_dir():
        return []
    found = [load(root, p.stem) for p in folder.glob("*.json")]
    return sorted(
        (r for r in found if r is not None), key=lambda r: (r.last_seen, r.id), reverse=True
    )


def prune(root: Path, *, keep_days: int = KEEP_DAYS) -> int:
    """Remove records not seen for ``keep_days``; returns how many."""
    cutoff = clock.utc_now() - timedelta(days=keep_days)
    gone = 0
    for record in records(root):
        seen_at = _parse(record.last_seen)
        if seen_at is not None and seen_at < cutoff:
            _file(root, record.id).unlink(missing_ok=True)
            gone += 1
    return gone


def resolve_session(
    root: Path | None, given: str | None, env: Mapping[str, str] | None = None
) -> str | None:
    """The session running this command (see the module docstring), or None."""
    if given:
        return given
    env = os.environ if env is None else env
    for variable in HARNESS_VARIABLES:
        value = env.get(variable, "").strip()
        if value:
            return value
    if root is None or not _folder(root).is_dir():
        return None
    live = [r for r in records(root) if r.live]
    return live[0].id if len(live) == 1 else None
