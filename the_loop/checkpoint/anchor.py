"""The resume anchor, checked against the checkpoint commit that recorded it.

After a clear, a session that remembers nothing starts from the last log
entry's ``Next:``. That text is trusted only as the checkpoint committed it: the
newest checkpoint commit that changed ``execution-log.md`` holds the entry as
written, so an entry edited by hand since (its ``Next:`` above all) or deleted
is found by comparing the two. ``resume``, the hooks' brief and ``check`` show
the problem at its line with both texts; nothing is corrected silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import RefusedError, Where
from the_loop.findings import Finding, Level
from the_loop.git.history import checkpoint_version, tracked_at_head
from the_loop.log.execution_log import LogEntry, parse_log
from the_loop.log.task_checkpoints import names_a_checkpoint

EDITED = "log.anchor-edited"
MISSING = "log.anchor-missing"
_SHOWN = ("next", "did", "context")  # the fields a fresh session acts on, in that order


@dataclass(frozen=True)
class AnchorProblem:
    """The entry the last checkpoint committed, and what the log holds now."""

    kind: str  # EDITED | MISSING
    commit: str
    recorded: LogEntry
    now: LogEntry | None
    field: str | None  # the first field that differs (EDITED)

    def sentence(self) -> str:
        """The problem in one line, both texts shown."""
        head = f"{self.recorded.stamp} — {self.recorded.summary}"
        if self.kind == MISSING or self.now is None:
            return (
                f"the log entry checkpoint {self.commit[:10]} committed ({head}) is gone from "
                "the log"
            )
        label = (self.field or "text").capitalize()
        return (
            f"the {label}: of the last checkpointed entry ({head}) was edited after its "
            f"checkpoint commit {self.commit[:10]}: it now reads "
            f"{self.now.fields.get(self.field or '', '')!r}, the commit recorded "
            f"{self.recorded.fields.get(self.field or '', '')!r}"
        )

    def hint(self, log: Path) -> str:
        return (
            f"git diff {self.commit[:10]} -- {log}  # shows the edit; restore the entry with "
            f"git checkout {self.commit[:10]} -- {log}, or record the new step with a "
            "checkpoint"
        )


def anchor_problem(root: Path, log: Path) -> AnchorProblem | None:
    """How the log's checkpointed last entry differs from its commit; None when it holds.

    None too when nothing can be compared: no repository, no checkpoint commit
    of the log, or a log that is missing (reported elsewhere).
    """
    if not log.is_file() or not _in_a_repository(log):
        return None
    text = log.read_text(encoding="utf-8", errors="replace")
    if not names_a_checkpoint(text):
        # No entry says a checkpoint committed it, so there is no commit to find:
        # looking would walk the whole history for nothing.
        return None
    found = checkpoint_version(root, log)
    if found is None:
        return None
    commit, committed_text = found
    committed = parse_log(committed_text, log).entries
    if not committed:
        return None
    recorded = committed[-1]
    current = parse_log(text, log).entries
    same = [e for e in current if (e.stamp, e.summary) == (recorded.stamp, recorded.summary)]
    if not same:
        return AnchorProblem(MISSING, commit, recorded, None, None)
    now = same[-1]
    for key in (*_SHOWN, *sorted(set(recorded.fields) | set(now.fields))):
        if recorded.fields.get(key) != now.fields.get(key):
            return AnchorProblem(EDITED, commit, recorded, now, key)
    return None


def anchor_findings(root: Path, log: Path) -> list[Finding]:
    """``anchor_problem`` as a ``check`` finding at the entry's line."""
    problem = anchor_problem(root, log)
    if problem is None:
        return []
    line = problem.now.line if problem.now is not None else None
    code = EDITED if problem.kind == EDITED else MISSING
    shown = _relative(root, log)
    return [Finding(Level.ERROR, code, problem.sentence(), Where(log, line), problem.hint(shown))]


MISSING_LOG = "log.tracked-missing"


def missing_tracked_log(root: Path, log: Path) -> RefusedError | None:
    """The refusal for a log deleted from the tree while git still tracks it, else None.

    A checkpoint would start a fresh log and commit it over the history; the
    way back is to restore the file, so that is the hint.
    """
    if log.exists() or not _in_a_repository(log.parent):
        return None

    if not tracked_at_head(root, log):
        return None
    shown = _relative(root, log)
    return RefusedError(
        f"{shown} is missing from the working tree, but git tracks it: the execution log "
        "(the resume anchor) was deleted, and a checkpoint would write a fresh one over "
        "its history",
        where=Where(log),
        hint=f"git checkout -- {shown}  # restores it from the last commit",
    )


def missing_log_findings(root: Path, log: Path) -> list[Finding]:
    """``missing_tracked_log`` as a ``check`` error."""
    refusal = missing_tracked_log(root, log)
    if refusal is None:
        return []
    return [Finding(Level.ERROR, MISSING_LOG, refusal.message, refusal.where, refusal.hint)]


def _in_a_repository(path: Path) -> bool:
    """Whether a ``.git`` is at or above ``path``: a stat walk, so a read outside a
    repository never loads git's layer (and its process machinery) to learn nothing."""
    return any((folder / ".git").exists() for folder in path.resolve().parents)


def _relative(root: Path, path: Path) -> Path:
    try:
        return path.relative_to(root)
    except ValueError:
        return path
