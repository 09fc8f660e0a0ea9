"""Everything known about one work item, computed lazily and once.

``status``, ``check``, ``next``, ``work-on`` and ``execute-tasks`` all start
from an ``ItemReport``; each piece (tasks, DAG, locks, phase, requirements,
last log entry) is read only when a command asks for it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from the_loop.config.loader import ALL_PHASES
from the_loop.dag.analysis import DagReport, analyze
from the_loop.errors import LoopError, Where
from the_loop.findings import Finding, Level, sorted_findings
from the_loop.log.execution_log import LogEntry, entered_phases, last_entry
from the_loop.log.task_checkpoints import NONE, LogCheckpoints, read_task_checkpoints
from the_loop.spec.approval import Lock, lock_findings, locks, written_ahead
from the_loop.spec.items import Artifact, load_item
from the_loop.spec.phase import (
    PhaseState,
    phase_findings,
    phase_state,
    task_counts,
    without_unrecorded_ticks,
)
from the_loop.spec.placeholders import placeholder_findings
from the_loop.spec.project import ItemContext, item_context
from the_loop.spec.requirements import RequirementSet, parse_requirements, read_requirements
from the_loop.spec.traceability import trace
from the_loop.tasks import Task, TaskList, TaskState, parse_tasks, read_tasks
from the_loop.workflow import task_tests, tick_evidence


class ItemReport:
    """Lazy views of one work item (construct per command; nothing is cached across)."""

    def __init__(self, ctx: ItemContext) -> None:
        self.ctx = ctx
        self.item = ctx.item
        self.config = ctx.config

    @property
    def id(self) -> str:
        return self.item.id

    @cached_property
    def tasks(self) -> TaskList | None:
        art = self.item.artifacts["tasks"]
        if not art.exists:
            return None
        try:
            # Reuse the text the item reader already decoded; without it (unreadable)
            # read again so the precise error becomes the finding.
            return parse_tasks(art.text, art.path) if art.text is not None else read_tasks(art.path)
        except LoopError as exc:
            finding = Finding(Level.ERROR, "tasks.unreadable", exc.message, exc.where, exc.hint)
            return TaskList(art.path, (), (finding,), "none")

    @cached_property
    def dag(self) -> DagReport | None:
        if self.tasks is None:
            return None

        return analyze(self.tasks)

    @cached_property
    def locks(self) -> dict[str, Lock]:
        return locks(self.item)

    @cached_property
    def phase(self) -> PhaseState:
        phases = self.config.workflow.phases
        state = phase_state(self.item, self.locks, self.tasks, phases)
        if state.implied != "needs-review":
            return state
        return without_unrecorded_ticks(state, len(self.unrecorded_ticks), self.counts[1], phases)

    @cached_property
    def requirements(self) -> RequirementSet | None:
        art = self.item.requirements
        if not art.exists:
            return None

        if art.text is not None:
            return parse_requirements(art.text, art.path)
        return read_requirements(art.path)

    @cached_property
    def last_entry(self) -> LogEntry | None:
        return last_entry(self.item.artifacts["execution-log"].path)

    @cached_property
    def title(self) -> str:
        """The item's title: the first H1 of its first artifact, minus a type prefix."""
        for kind in ("requirements", "brainstorm", "execution-log", "design", "tasks"):
            art = self.item.artifact(kind) if kind != "execution-log" else self.item.artifacts[kind]
            if art.text is not None:
                title = _first_heading(art.text)
                if title:
                    return title
        return ""

    @property
    def counts(self) -> tuple[int, int]:
        return task_counts(self.tasks)

    @cached_property
    def log_checkpoints(self) -> LogCheckpoints:
        """The log's task checkpoints; the log is read only when some task is ticked."""
        if not self.counts[0]:
            return NONE
        return read_task_checkpoints(self.item.artifacts["execution-log"].path)

    @cached_property
    def unrecorded_ticks(self) -> tuple[Task, ...]:
        """Ticked tasks no checkpoint records (from the log alone, without git)."""
        return tuple(tick_evidence.unrecorded_ticks(self))

    @cached_property
    def tick_problems(self) -> tuple[tick_evidence.TickProblem, ...]:
        """Ticks without their evidence, checked against git's history too."""
        return tuple(tick_evidence.tick_problems(self))

    def findings(self, *, deep: bool = True) -> list[Finding]:
        """Every finding about the item; ``deep`` adds traceability and log checks."""
        found: list[Finding] = [*self.item.findings, *self.ctx.problems]
        found.extend(lock_findings(self.item, self.locks))
        found.extend(written_ahead(self.item, self.locks))
        found.extend(phase_findings(self.item, self.phase))
        if self.tasks is not None:
            found.extend(self.tasks.findings)
            found.extend(self.dag.findings if self.dag else ())
            found.extend(self._ahead_of_lock())
            found.extend(tick_evidence.tick_findings(self))
            found.extend(task_tests.test_command_findings(self))
        found.extend(placeholder_findings(self.item))
        if deep:
            found.extend(self._trace())
            found.extend(self._log_findings())
        return sorted_findings(found)

    def _ahead_of_lock(self) -> list[Finding]:
        """Work that ran ahead of a lock: ticked tasks while tasks.md is not locked."""
        lock = self.locks["tasks"]
        done = [t for t in (self.tasks.tasks if self.tasks else ()) if t.state is TaskState.DONE]
        if not done or lock.locked:
            return []
        return [
            Finding(
                Level.WARNING,
                "lock.work-ahead",
                f"{len(done)} task(s) are ticked while tasks.md is {lock.label}: work ran ahead of "
                "the lock",
                Where(lock.path, done[0].line),
                hint=f"review tasks.md and `loop approve {self.id} tasks --by @you`",
            )
        ]

    def _trace(self) -> list[Finding]:
        reqs = self.requirements
        found: list[Finding] = []
        if reqs is not None:
            found.extend(reqs.findings)
            if self.tasks is not None:
                found.extend(trace(reqs, self.tasks))
        return found

    def _log_findings(self) -> list[Finding]:
        log = self.item.artifacts["execution-log"]
        if not log.exists:
            return []
        found = self._transitions_ahead(log)
        entry = self.last_entry
        if entry is not None and not (entry.next or "").strip():
            return found + [
                Finding(
                    Level.WARNING,
                    "log.no-next",
                    "the last log entry has no **Next:**, so a fresh session has no "
                    f"resume anchor (entry {entry.stamp} — {entry.summary})",
                    Where(log.path, entry.line or _entry_line(log.path, entry.stamp)),
                    hint="the next checkpoint writes one",
                )
            ]
        return found

    def _transitions_ahead(self, log: Artifact) -> list[Finding]:
        """The log's own transitions table recording a phase later than its ``phase:``."""

        recorded = self.phase.recorded
        if recorded not in ALL_PHASES or log.text is None:
            return []
        path = log.path
        later = [
            (p, n)
            for p, n in entered_phases(log.text)
            if p in ALL_PHASES and ALL_PHASES.index(p) > ALL_PHASES.index(recorded)
        ]
        if not later:
            return []
        phase, line = max(later, key=lambda row: ALL_PHASES.index(row[0]))
        return [
            Finding(
                Level.WARNING,
                "log.transitions-ahead",
                f"the Phase transitions table records {phase} as entered, but the front matter "
                f"says phase: {recorded}",
                Where(path, line),
                hint="one of the two is wrong; `loop work-on ID --sync` sets the front matter "
                "from the artifacts",
            )
        ]

    def evaluated(self) -> int:
        """How many things a check looked at (a check that saw nothing must not pass)."""
        count = sum(1 for art in self.item.artifacts.values() if art.exists)
        return count + (len(self.tasks.tasks) if self.tasks else 0)


def fresh_report(ctx: ItemContext) -> ItemReport:
    """A new report on the item as it is on disk now (files change under a lock)."""

    return ItemReport(item_context(ctx.project, load_item(ctx.item.path, ctx.item.spec_root)))


def _entry_line(path: Path, stamp: str) -> int | None:
    """The line of the last heading carrying ``stamp`` (an entry read from the tail has none)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    at = text.rfind(f"### {stamp}")
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _first_heading(text: str) -> str | None:
    for line in text[:8192].split("\n"):
        if line.startswith("# "):
            text = line[2:].strip()
            prefix, sep, rest = text.partition(":")
            return rest.strip() if sep and len(prefix) <= 30 and rest.strip() else text
    return None


def relative(path: Path, root: Path) -> str:
    """``path`` relative to the project root when it is inside it."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
