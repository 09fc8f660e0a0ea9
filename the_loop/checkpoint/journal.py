"""The checkpoint journal's values, and reading them back from a file that may be damaged.

The journal (``.the-loop/state/checkpoint.json``) is written by loop and read
after a crash, so it is read as untrusted input: every field is checked for
its type before anything acts on it, and a damaged file is a ``StateError``
naming the file, what is wrong with it, and the way out (``loop doctor``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import StateError, Where
from the_loop.git.commands import DEFAULT_TIMEOUT
from the_loop.git.commit import DEFAULT_MAX_FILE_BYTES

if TYPE_CHECKING:
    from typing import Any

STEPS = ("tick", "log", "phase", "commit", "reset")
RESETS = ("clear", "compact", "none")
STAGES = ("all", "tracked", "paths")
TASK_MARKS = ("open", "in-progress", "done")


@dataclass(frozen=True)
class CommitSpec:
    """The commit that ends the checkpoint."""

    message: str
    stage: str  # all | tracked | paths
    paths: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT  # seconds for git commit and the user's hooks
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES


@dataclass(frozen=True)
class Plan:
    """Everything a checkpoint will do, decided before anything is written."""

    id: str
    item: str
    item_dir: str
    log_path: str
    entry_text: str
    summary: str
    reset: str
    reset_reason: str
    tasks_path: str | None = None
    task_id: str | None = None
    tick_from: str | None = None  # the checkbox state before the tick
    tick_to: str | None = None
    # Where the tick goes in the file as the plan read it: (mark offset, SHA-256 of
    # the file). While the file is unchanged the tick needs no second parse.
    tick_at: tuple[int, str] | None = None
    phase: str | None = None
    log_status: str | None = None
    transition: tuple[str, str, str] | None = None
    commit: CommitSpec | None = None
    session: str | None = None
    wip: str = ""
    # Open resets this checkpoint settles, as resets.Supersession fields (the
    # journal is JSON): closed in the reset step, before the new one is prepared.
    supersedes: tuple[tuple[str, str, str, str, str], ...] = ()


@dataclass(frozen=True)
class RestorePoint:
    """A file as it was before the checkpoint: a copy, its digest and its size."""

    path: str
    backup: str
    sha256: str
    size: int


@dataclass
class Journal:
    """A plan in progress: which steps are done and how to check or undo them."""

    plan: Plan
    done: list[str] = field(default_factory=list)
    appended: dict[str, Any] | None = None
    restore: dict[str, RestorePoint] = field(default_factory=dict)
    head_before: str | None = None
    commit_sha: str | None = None
    committed_files: list[str] = field(default_factory=list)
    rolling_back: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class _Damaged(Exception):
    """One thing wrong with the journal's content (internal to this module)."""


def journal_from_json(data: Any, path: Path) -> Journal:
    """The journal in ``data`` (read from ``path``); ``StateError`` when anything is off."""
    try:
        return _journal(data)
    except _Damaged as exc:
        raise damaged(path, str(exc)) from None


def damaged(path: Path, what: str) -> StateError:
    """The error for a damaged journal: where, what, and how to get going again."""
    return StateError(
        f"the checkpoint journal is damaged: {what}",
        where=Where(path),
        hint="`loop doctor` shows it; `loop doctor --discard` sets it aside "
        "(check the work item's tasks.md and execution-log.md afterwards)",
    )


def _journal(data: Any) -> Journal:
    top = _mapping(data, "the file")
    plan = _plan(_mapping(top.get("plan"), "plan"))
    done = _list(top.get("done", []), "done")
    for step in done:
        if step not in STEPS or done.count(step) > 1:
            raise _Damaged(f"done: {step!r} is not a step (or is listed twice)")
    appended = top.get("appended")
    if appended is not None:
        _appended(_mapping(appended, "appended"))
    restore = {
        _text(kind, "restore key"): _restore_point(_mapping(value, f"restore.{kind}"), kind)
        for kind, value in _mapping(top.get("restore", {}), "restore").items()
    }
    return Journal(
        plan=plan,
        done=[str(s) for s in done],
        appended=appended,
        restore=restore,
        head_before=_optional_text(top.get("head_before"), "head_before"),
        commit_sha=_optional_text(top.get("commit_sha"), "commit_sha"),
        committed_files=[
            _text(f, "committed_files") for f in _list(top.get("committed_files", []), "files")
        ],
        rolling_back=_bool(top.get("rolling_back", False), "rolling_back"),
    )


def _plan(data: dict[str, Any]) -> Plan:
    texts = ("id", "item", "item_dir", "log_path", "entry_text", "summary", "reset_reason")
    values: dict[str, Any] = {k: _text(data.get(k), f"plan.{k}") for k in texts}
    values["reset"] = _choice(data.get("reset"), RESETS, "plan.reset")
    for key in ("tasks_path", "task_id", "phase", "log_status", "session"):
        values[key] = _optional_text(data.get(key), f"plan.{key}")
    for key in ("tick_from", "tick_to"):
        value = data.get(key)
        values[key] = None if value is None else _choice(value, TASK_MARKS, f"plan.{key}")
    tick_at = data.get("tick_at")
    if tick_at is not None:
        items = _list(tick_at, "plan.tick_at")
        if len(items) != 2 or type(items[0]) is not int or items[0] < 0:
            raise _Damaged("plan.tick_at must hold an offset and a digest")
        values["tick_at"] = (items[0], _text(items[1], "plan.tick_at"))
    values["wip"] = _text(data.get("wip", ""), "plan.wip")
    transition = data.get("transition")
    if transition is not None:
        items = _list(transition, "plan.transition")
        if len(items) != 3:
            raise _Damaged("plan.transition must hold three texts")
        values["transition"] = tuple(_text(t, "plan.transition") for t in items)
    commit = data.get("commit")
    if commit is not None:
        spec = _mapping(commit, "plan.commit")
        values["commit"] = CommitSpec(
            _text(spec.get("message"), "plan.commit.message"),
            _choice(spec.get("stage"), STAGES, "plan.commit.stage"),
            tuple(_text(p, "plan.commit.paths") for p in _list(spec.get("paths", []), "paths")),
            _number(spec.get("timeout", DEFAULT_TIMEOUT), "plan.commit.timeout"),
            int(_number(spec.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES), "plan.commit.max")),
        )
    rows = []
    for row in _list(data.get("supersedes", []), "plan.supersedes"):
        items = _list(row, "plan.supersedes")
        if len(items) != 5:
            raise _Damaged("plan.supersedes rows must hold five texts")
        rows.append(tuple(_text(x, "plan.supersedes") for x in items))
    values["supersedes"] = tuple(rows)
    return Plan(**values)


def _number(value: Any, what: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise _Damaged(f"{what} must be a number > 0, not {_kind(value)}")
    return float(value)


def _appended(data: dict[str, Any]) -> None:
    for key in ("offset", "size_before"):
        value = data.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _Damaged(f"appended.{key} must be a whole number ≥ 0")
    _text(data.get("digest"), "appended.digest")
    _bool(data.get("fast"), "appended.fast")
    try:
        base64.b64decode(_text(data.get("data"), "appended.data"), validate=True)
    except (binascii.Error, ValueError):
        raise _Damaged("appended.data is not base64") from None


def _restore_point(data: dict[str, Any], kind: str) -> RestorePoint:
    size = data.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise _Damaged(f"restore.{kind}.size must be a whole number ≥ 0")
    return RestorePoint(
        _text(data.get("path"), f"restore.{kind}.path"),
        _text(data.get("backup"), f"restore.{kind}.backup"),
        _text(data.get("sha256"), f"restore.{kind}.sha256"),
        size,
    )


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Damaged(f"{what} must be a JSON object, not {_kind(value)}")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Damaged(f"{what} must be a JSON list, not {_kind(value)}")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _Damaged(f"{what} must be text, not {_kind(value)}")
    return value


def _optional_text(value: Any, what: str) -> str | None:
    return None if value is None else _text(value, what)


def _bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise _Damaged(f"{what} must be true or false, not {_kind(value)}")
    return value


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    text = _text(value, what)
    if text not in allowed:
        raise _Damaged(f"{what} is {text!r}, not one of: {', '.join(allowed)}")
    return text


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)
