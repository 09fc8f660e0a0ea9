"""Evidence for every tick: a task is done only with its checkpoint.

A ``[x]`` in tasks.md is a claim; the checkpoint that loop takes when a task is
finished is its evidence: a log entry (``task N done``) and a commit carrying
``Loop-Checkpoint: <id>``. A box ticked by hand (an editor, ``sed``) has
neither, and a checkpoint whose commit was rebased or reset away has lost half
of it. Both are reported with the task's ``file:line`` and the command that
records the checkpoint after the fact (``loop task done … --adopt``).

Cost: the log is scanned once, and only when some task is ticked; git is asked
(one ``git log``) only when an entry says its checkpoint was committed, and
only by the full check (``status`` and ``check``), never by ``next_action``.
A log loop has never written to is not judged: there is nothing to compare with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from the_loop.errors import Where
from the_loop.findings import Finding, Level
from the_loop.tasks import TaskState

if TYPE_CHECKING:
    from collections.abc import Iterable

    from the_loop.log.task_checkpoints import TaskCheckpoint
    from the_loop.tasks import Task
    from the_loop.workflow.item_view import ItemView

NO_CHECKPOINT = "no-checkpoint"
COMMIT_GONE = "commit-gone"


@dataclass(frozen=True)
class TickProblem:
    """A ticked task whose checkpoint is missing (or whose commit is gone)."""

    task: Task
    kind: str  # no-checkpoint | commit-gone
    entry: TaskCheckpoint | None
    command: str  # what records the checkpoint after the fact

    def to_json(self, path: str) -> dict[str, object]:
        return {
            "task": self.task.id,
            "problem": self.kind,
            "path": path,
            "line": self.task.line,
            "checkpoint": self.entry.checkpoint if self.entry else None,
            "logLine": self.entry.line if self.entry else None,
            "command": self.command,
        }


def adopt_command(item: str, task_id: str) -> str:
    """The command that checkpoints a ticked task without ticking it again."""
    return (
        f"loop task done {item} {task_id} --adopt --did '<what was done>' --next '<the next step>'"
    )


def ticked_tasks(report: ItemView) -> list[Task]:
    """Ticked tasks, each id once (its first definition, as the DAG reads it)."""
    seen: set[str] = set()
    ticked = []
    for task in report.tasks.tasks if report.tasks else ():
        if task.id in seen:
            continue
        seen.add(task.id)
        if task.state is TaskState.DONE:
            ticked.append(task)
    return ticked


def unrecorded_ticks(report: ItemView) -> list[Task]:
    """Ticked tasks with no checkpoint entry in the log (the log alone; no git)."""
    records = report.log_checkpoints
    if not records.kept_by_loop:
        return []
    return [t for t in ticked_tasks(report) if t.id not in records.done]


def tick_problems(report: ItemView) -> list[TickProblem]:
    """Every tick without its evidence: no entry, or an entry whose commit is gone."""
    records = report.log_checkpoints
    if not records.kept_by_loop:
        return []
    item = report.id
    problems: list[TickProblem] = []
    committed: list[tuple[Task, TaskCheckpoint]] = []
    for task in ticked_tasks(report):
        entry = records.done.get(task.id)
        if entry is None:
            problems.append(TickProblem(task, NO_CHECKPOINT, None, adopt_command(item, task.id)))
        elif entry.checkpoint is not None:
            committed.append((task, entry))
    if committed and report.config.checkpoint.trailers:
        # Without trailers (checkpoint.trailers: false) no commit names its checkpoint,
        # so history cannot be asked; the entry stands on its own.
        problems.extend(_gone(report, committed))
    return sorted(problems, key=lambda p: p.task.line)


def _gone(report: ItemView, committed: list[tuple[Task, TaskCheckpoint]]) -> list[TickProblem]:
    # git and the checkpoint transaction are loaded only here: a read that finds
    # no committed checkpoint to look up never needs them.
    from the_loop.checkpoint import transaction as checkpoint
    from the_loop.git.history import checkpoint_commits

    root = report.ctx.project.root
    wanted = {entry.checkpoint for _, entry in committed if entry.checkpoint}
    log = report.item.artifacts["execution-log"].path
    in_history = checkpoint_commits(root, wanted=wanted, log=log)  # stops once all are found
    if in_history is None:
        return []  # no repository any more: nothing to look the commits up in
    journal = checkpoint.pending(root)
    unfinished = journal.plan.id if journal is not None else None  # its commit may be next
    return [
        TickProblem(task, COMMIT_GONE, entry, adopt_command(report.id, task.id))
        for task, entry in committed
        if entry.checkpoint not in in_history and entry.checkpoint != unfinished
    ]


def tick_findings(report: ItemView, problems: Iterable[TickProblem]) -> list[Finding]:
    """The findings ``loop check`` and ``loop status`` report for ``tick_problems``."""
    if report.tasks is None:
        return []
    path = report.tasks.path
    log = report.item.artifacts["execution-log"].path.name
    found = []
    for problem in problems:
        task = problem.task
        if problem.kind == NO_CHECKPOINT:
            found.append(
                Finding(
                    Level.ERROR,
                    "tick.no-checkpoint",
                    f"task {task.id} is ticked, but no checkpoint records it (no `task "
                    f"{task.id} done` entry in {log}): it was ticked by hand, so nothing "
                    "logged or committed the work",
                    Where(path, task.line),
                    # The command first and the why as a shell comment: pasted whole, it runs.
                    hint=f"{problem.command}  # records the checkpoint now without ticking "
                    "again; or untick it and finish it with loop task done",
                )
            )
        else:
            entry = problem.entry
            assert entry is not None
            found.append(
                Finding(
                    Level.WARNING,
                    "tick.commit-gone",
                    f"task {task.id}'s checkpoint {entry.checkpoint} ({log}:{entry.line}) was "
                    "committed, but no commit on this branch carries it any more: it was "
                    "rebased, squashed or reset away",
                    Where(path, task.line),
                    hint=f"if the work is still there, `{problem.command}` records a new "
                    "checkpoint for it; if not, untick the task and do it again",
                )
            )
    return found
