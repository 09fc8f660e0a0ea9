"""Which tasks ``execution-log.md`` records as done by a checkpoint, read in one pass.

A task is done only with its checkpoint: the entry loop appends when the task is
finished (``### <stamp> — task N done: <title>``), whose **WIP:** line names the
commit that carries it (``Loop-Checkpoint: <id>``) or says why there is none. A
checkbox ticked by hand has no such entry. This module finds those entries with
one scan of the log's text and no other parsing (in a log with no code fence, a
few regex passes that never split it into lines), so ``loop status`` can ask on
every call; comparing them with the checkboxes and with git's history is
``the_loop.workflow.tick_evidence``'s work.

A log loop never wrote to (one kept by hand, before loop) has no checkpoints at
all, so nothing in it can be judged; ``kept_by_loop`` says whether loop keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from the_loop.io.fences import unfenced_lines

_HEADING = re.compile(r"^###\s+\d{4}-\d{2}-\d{2}\S*\s*(?:UTC\s*)?(?:[—–]|--?)\s*(?P<summary>.*)$")
_TASK_DONE = re.compile(r"^task\s+(?P<id>[^\s:;,]+)\s+done\b")
_WIP = re.compile(r"^[-*]\s+\*\*WIP:?\*\*:?\s*(?P<value>.*)$")
_CHECKPOINT_ID = re.compile(r"Loop-Checkpoint:\s*(?P<id>[\w.:-]+)")
# The fast path's patterns: a heading that may say "task N done" (after a newline, so
# that re searches for the literal rather than trying every position; the first line
# apart), a heading or WIP line, any WIP line.
_MAYBE_DONE = re.compile(r"\n(#[^\n]*done[^\n]*)")
_MAYBE_DONE_FIRST = re.compile(r"(#[^\n]*done[^\n]*)")
_HEADING_OR_WIP = re.compile(r"^(?:#|[-*][^\S\n]+\*\*WIP)[^\n]*", re.MULTILINE)
_ANY_WIP = re.compile(r"^[-*][^\S\n]+\*\*WIP:?\*\*", re.MULTILINE)
# loop's own log template says so in its introduction; a log created by
# `loop new` is kept by loop from its first line.
_TEMPLATE_MARK = "written by `loop` at every checkpoint"


def names_a_checkpoint(text: str) -> bool:
    """Whether any entry of the log ``text`` says a checkpoint commit holds it.

    Without one, nothing in the log can be looked up in git's history.
    """
    return _CHECKPOINT_ID.search(text) is not None


@dataclass(frozen=True)
class TaskCheckpoint:
    """The latest log entry recording a task as done.

    ``checkpoint`` is the ``Loop-Checkpoint`` id the entry says its commit
    carries; ``None`` when the entry says nothing was committed (no repository,
    ``checkpoint.commit: false``), which the entry alone then proves.
    """

    task: str
    line: int
    stamp: str
    checkpoint: str | None


@dataclass(frozen=True)
class LogCheckpoints:
    """Every task the log records as done, by id (the latest entry wins)."""

    kept_by_loop: bool
    done: Mapping[str, TaskCheckpoint]


NONE = LogCheckpoints(False, {})


# The last text scanned and what it holds: a ``task done`` reads the log in two
# reports (its quick checks, then under the checkpoint's lock); the file is read
# afresh each time, and only an identical text skips the scan.
_last: tuple[str, LogCheckpoints] | None = None


def read_task_checkpoints(path: Path) -> LogCheckpoints:
    """Scan the log at ``path``; an absent or unreadable log records nothing."""
    global _last
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return NONE
    if _last is not None and _last[0] == text:
        return _last[1]
    found = scan_task_checkpoints(text)
    _last = (text, found)
    return found


def scan_task_checkpoints(text: str) -> LogCheckpoints:
    """The task checkpoints in a log's text (see the module docstring)."""
    if "```" not in text and "~~~" not in text:  # no fence can open: the fast path
        return _scan_unfenced(text)
    return _scan_lines(text)


def _scan_lines(text: str) -> LogCheckpoints:
    """The scan line by line, fences followed (any log)."""
    kept = _TEMPLATE_MARK in text[:4096]
    done: dict[str, TaskCheckpoint] = {}
    current: tuple[str, int, str] | None = None  # task id, heading line, stamp
    for number, line, _after_fence in unfenced_lines(text.split("\n")):
        if line.startswith("#"):
            current = None
            heading = _HEADING.match(line)
            task = _TASK_DONE.match(heading["summary"]) if heading else None
            if heading and task:
                stamp = line[4:].split(" ", 1)[0] if line.startswith("### ") else ""
                current = (task["id"], number, stamp)
            continue
        wip = _WIP.match(line)
        if wip is None:
            continue
        kept = True  # only loop writes a WIP line
        if current is not None:
            found = _CHECKPOINT_ID.search(wip["value"])
            task_id, at, stamp = current
            done[task_id] = TaskCheckpoint(task_id, at, stamp, found["id"] if found else None)
            current = None
    return LogCheckpoints(kept, done)


def _scan_unfenced(text: str) -> LogCheckpoints:
    """``scan_task_checkpoints`` for a log without a code fence: regex passes in C.

    Without fences every heading is a heading, so only the headings that may say
    ``task N done`` and the line after each that is a heading or a WIP line need
    looking at; the rest of a long log (nearly all of it) is never split into lines.
    """
    kept = _TEMPLATE_MARK in text[:4096] or _ANY_WIP.search(text) is not None
    done: dict[str, TaskCheckpoint] = {}
    number, at = 1, 0
    first = _MAYBE_DONE_FIRST.match(text)
    for found in ([first] if first else []) + list(_MAYBE_DONE.finditer(text)):
        start = found.start(1)
        number += text.count("\n", at, start)
        at = start
        line = found.group(1).rstrip("\r")
        heading = _HEADING.match(line)
        task = _TASK_DONE.match(heading["summary"]) if heading else None
        if heading is None or task is None:
            continue
        after = _HEADING_OR_WIP.search(text, found.end(1))
        if after is None or after.group().startswith("#"):
            continue  # the entry ends before any WIP line: it records no checkpoint
        wip = _WIP.match(after.group().rstrip("\r"))
        if wip is None:
            continue
        stamp = line[4:].split(" ", 1)[0] if line.startswith("### ") else ""
        checkpoint = _CHECKPOINT_ID.search(wip["value"])
        done[task["id"]] = TaskCheckpoint(
            task["id"], number, stamp, checkpoint["id"] if checkpoint else None
        )
    return LogCheckpoints(kept, done)
