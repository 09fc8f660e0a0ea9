"""Everything known about one work item, computed lazily and once.

``status``, ``check``, ``next``, ``work-on`` and ``execute-tasks`` all start
from an ``ItemReport``; each piece (tasks, DAG, locks, phase, requirements,
last log entry) is read only when a command asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.config.loader import ALL_PHASES
from the_loop.config.state_folder import project_cache
from the_loop.errors import LoopError, Where
from the_loop.findings import Finding, Level, sorted_findings
from the_loop.io import collector
from the_loop.io.content_cache import findings_from_plain, findings_to_plain
from the_loop.spec.items import HEAD_LIMIT, Artifact, load_item
from the_loop.spec.project import ItemContext, item_context
from the_loop.tasks import TaskList, TaskState

if TYPE_CHECKING:
    from typing import Any

    from the_loop.dag.analysis import DagReport
    from the_loop.io.content_cache import ContentCache
    from the_loop.log.execution_log import LogEntry
    from the_loop.log.task_checkpoints import LogCheckpoints
    from the_loop.spec.approval import Lock
    from the_loop.spec.phase import PhaseState
    from the_loop.spec.requirements import RequirementSet
    from the_loop.tasks import Task
    from the_loop.workflow.tick_evidence import TickProblem

# Parsers, the graph analysis, the log reader, locks, phases and tick evidence
# are imported where they run: a command loads only what it asks for, and with
# the parse cache warm it needs no parser at all.

# Below this many characters a lock hash is computed rather than looked up.
_CACHED_HASH_SIZE = 64 * 1024


@dataclass(frozen=True)
class TaskSummary:
    """What the status and the next action need of tasks.md, without every task.

    Kept in the parse cache on its own: on a large plan, loading it costs nothing
    beside loading 100k tasks. ``next_title`` is the title of ``next``;
    ``unschedulable`` counts the tasks no wave reaches.
    """

    done: int
    total: int
    ready: tuple[str, ...]
    in_progress: tuple[str, ...]
    next: str | None
    next_title: str | None
    unschedulable: int


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
    def cache(self) -> ContentCache:
        """The project's parse cache (one that keeps nothing when it is off)."""
        return project_cache(self.ctx.project.root)

    @cached_property
    def _graph(self) -> tuple[TaskList, DagReport] | None:
        """tasks.md read and its graph analysed.

        Not cached itself: the answers made of it are (the summary, ``next``,
        ``graph``, ``check``), which is what a later read loads, at a fraction
        of the size of every task.
        """
        art = self.item.artifacts["tasks"]
        if not art.exists:
            return None
        if art.text is None:
            return _analysed(_unreadable_tasks(art.path))
        return _analysed(_parsed(art.text, art))  # the text the item reader already decoded

    @cached_property
    def summary(self) -> TaskSummary | None:
        """The task counts, the ready and started tasks and the next one (None: no tasks.md)."""
        art = self.item.artifacts["tasks"]
        if not art.exists:
            return None
        if art.text is None:
            return self._summarize()
        return self.cache.cached(
            "summary", art.path, art.text, self._summarize, encode=_plain_summary, decode=_summary
        )

    def _summarize(self) -> TaskSummary:
        tasks, dag = self.tasks, self.dag
        assert tasks is not None and dag is not None
        started = TaskState.IN_PROGRESS
        return TaskSummary(
            done=dag.done,
            total=dag.total,
            ready=dag.ready,
            in_progress=tuple(t.id for t in tasks.tasks if t.state is started),
            next=dag.next,
            next_title=dag.task(dag.next).title if dag.next else None,
            unschedulable=len(dag.unschedulable),
        )

    @property
    def tasks(self) -> TaskList | None:
        graph = self._graph
        return graph[0] if graph is not None else None

    @property
    def dag(self) -> DagReport | None:
        graph = self._graph
        return graph[1] if graph is not None else None

    @cached_property
    def locks(self) -> dict[str, Lock]:
        from the_loop.spec.approval import locks

        return locks(self.item, self._lock_hash)

    def _lock_hash(self, art: Artifact) -> str | None:
        """An artifact's lock hash; a large file's comes from the cache while it is unchanged."""
        from the_loop.spec.approval import current_hash

        text = art.text
        if text is None or len(text) < _CACHED_HASH_SIZE:
            return current_hash(art)  # cheaper to compute than to look up
        return self.cache.cached("lock-hash", art.path, text, lambda: current_hash(art))

    @cached_property
    def phase(self) -> PhaseState:
        from the_loop.spec.phase import phase_state, without_unrecorded_ticks

        phases = self.config.workflow.phases
        # The counts stand for the tasks: the phase needs no task itself, unless
        # every task is ticked and the ticks' evidence decides needs-review.
        state = phase_state(self.item, self.locks, None, phases, self.counts)
        if state.implied != "needs-review":
            return state
        return without_unrecorded_ticks(state, len(self.unrecorded_ticks), self.counts[1], phases)

    @cached_property
    def requirements(self) -> RequirementSet | None:
        from the_loop.spec.requirements import parse_requirements, read_requirements

        art = self.item.requirements
        if not art.exists:
            return None
        text = art.text
        if text is None:
            return read_requirements(art.path)
        return parse_requirements(text, art.path)

    @cached_property
    def last_entry(self) -> LogEntry | None:
        from the_loop.log.execution_log import last_entry

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

    @cached_property
    def counts(self) -> tuple[int, int]:
        """``(done, total)`` over distinct task ids, as the graph counts them."""
        summary = self.summary
        return (summary.done, summary.total) if summary is not None else (0, 0)

    def check(self) -> tuple[list[Finding], int]:
        """``(findings(), evaluated())``, from the cache while none of the item's files changed.

        The findings are a function of the item's files, the configured phases,
        test shell and checkpoint trailers, the errors of its overrides and, once a
        task is ticked, the git history its checkpoint commits are looked up in
        (HEAD's commit) and an unfinished checkpoint, so those make the key; an
        unreadable file or a log read only in part (over 64 KB) is always checked
        afresh.
        """
        key = self._check_key()
        if key is None:
            return self.findings(), self.evaluated()
        found, evaluated = self.cache.cached(
            "check",
            self.item.path,
            key,
            lambda: (self.findings(), self.evaluated()),
            trust_stat=False,
            encode=lambda answer: (findings_to_plain(answer[0]), answer[1]),
            decode=lambda plain: (findings_from_plain(plain[0]), int(plain[1])),
        )
        return list(found), evaluated

    def _check_key(self) -> str | None:
        if not self.cache.enabled:
            return None
        problems = tuple(problem.render() for problem in self.ctx.problems)
        config = self.config
        settings = (config.workflow.phases, config.testing.shell, config.checkpoint.trailers)
        return self.answer_key(tuple(self.item.artifacts), settings, problems, self._history_key())

    def _history_key(self) -> tuple[str | None, str | None] | None:
        """What the tick evidence reads outside the item's files (None: it reads nothing).

        Git is asked only when a task is ticked, the log names a checkpoint commit
        and commits carry trailers; then HEAD's commit stands for the
        history the checkpoint commits are looked up in, and an unfinished
        checkpoint counts too (its commit may be next).
        """
        log = self.item.artifacts["execution-log"]
        if not self.counts[0] or not log.exists or not self.config.checkpoint.trailers:
            return None
        from the_loop.log.task_checkpoints import names_a_checkpoint

        if log.text is not None and not names_a_checkpoint(log.text):
            return None  # nothing is looked up in git
        from the_loop.config.state_folder import journal_exists
        from the_loop.git.repo import head_sha

        root = self.ctx.project.root
        unfinished = None
        if journal_exists(root):
            from the_loop.checkpoint import transaction

            journal = transaction.pending(root)
            unfinished = journal.plan.id if journal is not None else None
        return head_sha(root), unfinished

    def answer_key(self, kinds: tuple[str, ...], *extra: object) -> str | None:
        """A cache key for an answer made from these artifacts (and ``extra``), else None.

        The key holds each artifact's content hash (or its absence) and ``extra``;
        None when one is unreadable, or is a long log the item reader read only
        in part, so that such an answer is always computed afresh; None too when
        the cache is off (no key is worth hashing the files for).
        """
        if not self.cache.enabled:
            return None
        parts = [repr(extra)]
        for kind in kinds:
            art = self.item.artifact(kind)  # "requirements" is bugfix.md for a bug
            text = art.text
            if not art.exists:
                parts.append(f"{kind}: -")
                continue
            if text is None or (kind == "execution-log" and _read_in_part(art)):
                return None
            parts.append(f"{art.kind}: {self.cache.digest(art.path, text)}")
        return "\n".join(parts)

    @cached_property
    def log_checkpoints(self) -> LogCheckpoints:
        """The log's task checkpoints; the log is read only when some task is ticked."""
        from the_loop.log.task_checkpoints import NONE, read_task_checkpoints

        if not self.counts[0]:
            return NONE
        return read_task_checkpoints(self.item.artifacts["execution-log"].path)

    @cached_property
    def unrecorded_ticks(self) -> tuple[Task, ...]:
        """Ticked tasks no checkpoint records (from the log alone, without git)."""
        if not self.counts[0]:
            return ()  # nothing ticked: neither tasks nor log need reading
        from the_loop.workflow import tick_evidence

        return tuple(tick_evidence.unrecorded_ticks(self))

    @cached_property
    def tick_problems(self) -> tuple[TickProblem, ...]:
        """Ticks without their evidence, checked against git's history too."""
        if not self.counts[0]:
            return ()
        from the_loop.workflow import tick_evidence

        return tuple(tick_evidence.tick_problems(self))

    def findings(self, *, deep: bool = True) -> list[Finding]:
        """Every finding about the item; ``deep`` adds traceability and log checks."""
        from the_loop.spec.approval import lock_findings, written_ahead
        from the_loop.spec.phase import phase_findings
        from the_loop.spec.placeholders import placeholder_findings
        from the_loop.workflow import task_tests, tick_evidence

        found: list[Finding] = [*self.item.findings, *self.ctx.problems]
        found.extend(lock_findings(self.item, self.locks))
        found.extend(written_ahead(self.item, self.locks))
        found.extend(phase_findings(self.item, self.phase))
        if self.tasks is not None:
            found.extend(self.tasks.findings)
            found.extend(self.dag.findings if self.dag else ())
            found.extend(self._ahead_of_lock())
            found.extend(tick_evidence.tick_findings(self, self.tick_problems))
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
        from the_loop.spec.traceability import trace

        reqs = self.requirements
        found: list[Finding] = []
        if reqs is not None:
            found.extend(reqs.findings)
            if self.tasks is not None:
                found.extend(trace(reqs, self.tasks))
        return found

    def _log_findings(self) -> list[Finding]:
        log = self.item.artifacts["execution-log"]
        # The resume anchor as its checkpoint commit recorded it (issue 21).
        from the_loop.checkpoint.anchor import anchor_findings, missing_log_findings

        if not log.exists:
            return missing_log_findings(self.ctx.project.root, log.path)
        found = self._transitions_ahead(log)
        found += anchor_findings(self.ctx.project.root, log.path)
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
        from the_loop.log.execution_log import entered_phases

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


def _plain_summary(summary: TaskSummary) -> list[object]:
    """A ``TaskSummary`` as plain data for the cache."""
    return [getattr(summary, name) for name in summary.__dataclass_fields__]


def _summary(plain: list[Any]) -> TaskSummary:
    """The ``TaskSummary`` :func:`_plain_summary` stored."""
    done, total, ready, in_progress, next_id, next_title, unschedulable = plain
    return TaskSummary(
        int(done), int(total), tuple(ready), tuple(in_progress), next_id, next_title, unschedulable
    )


def fresh_report(ctx: ItemContext) -> ItemReport:
    """A new report on the item as it is on disk now (files change under a lock)."""

    return ItemReport(item_context(ctx.project, load_item(ctx.item.path, ctx.item.spec_root)))


def _read_in_part(log: Artifact) -> bool:
    """Whether the item reader kept only the head of this (long) log."""
    try:
        return log.path.stat().st_size > HEAD_LIMIT
    except OSError:
        return True


def _parsed(text: str, art: Artifact) -> TaskList:
    from the_loop.tasks import parse_tasks

    # About one object per 20 characters of tasks.md; the parser keeps them all.
    with collector.paused(expected_objects=len(text) // 20):
        return parse_tasks(text, art.path)


def _unreadable_tasks(path: Path) -> TaskList:
    """Read tasks.md again so that the precise reason it is unreadable becomes the finding."""
    from the_loop.tasks import read_tasks

    try:
        return read_tasks(path)
    except LoopError as exc:
        finding = Finding(Level.ERROR, "tasks.unreadable", exc.message, exc.where, exc.hint)
        return TaskList(path, (), (finding,), "none")


def _analysed(tasks: TaskList) -> tuple[TaskList, DagReport]:
    from the_loop.dag.analysis import analyze

    return tasks, analyze(tasks)


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
