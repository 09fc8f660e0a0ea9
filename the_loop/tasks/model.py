"""The values a ``tasks.md`` reads into: ``TaskState``, ``Task`` and ``TaskList``.

They sit apart from the reader and the writer so that both can build on them
without importing each other. The rest of loop imports them from
``the_loop.tasks``, which re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from the_loop.findings import Finding


class TaskState(str, Enum):
    """The state a task's checkbox shows."""

    OPEN = "open"  # [ ]
    IN_PROGRESS = "in-progress"  # [-]
    DONE = "done"  # [x] or [X]

    @property
    def mark(self) -> str:
        """The character written between the brackets for this state."""
        return _MARKS[self]


_MARKS = {TaskState.OPEN: " ", TaskState.IN_PROGRESS: "-", TaskState.DONE: "x"}
STATE_OF_MARK = {
    " ": TaskState.OPEN,
    "-": TaskState.IN_PROGRESS,
    "x": TaskState.DONE,
    "X": TaskState.DONE,
}


@dataclass(frozen=True)
class Task:
    """One top-level checkbox task.

    ``id`` is canonical (``"3"`` for ``3.``, ``T3`` and ``**T3 — …**``); ``label``
    is the id as the file writes it. ``depends_on`` is ``None`` when the file
    states nothing about dependencies and ``()`` when it says ``none``.
    Lines are 1-based; ``mark_offset`` is the byte offset of the checkbox
    character within the file, which is what the line-local writer changes.
    """

    id: str
    label: str
    title: str
    state: TaskState
    line: int
    end_line: int
    mark_offset: int
    depends_on: tuple[str, ...] | None = None
    depends_line: int | None = None
    requirements: tuple[str, ...] = ()
    requirements_line: int | None = None
    test: str | None = None
    test_line: int | None = None
    details: tuple[str, ...] = ()
    # The line of a dependency statement loop could not read: the task may wait
    # for something loop cannot see, so the graph never offers it as ready.
    unread_depends_line: int | None = None
    # What the file's form says about the task beyond its fields (docs/formats.md,
    # "The order rule"): the task whose sub-task it is (``2`` for ``2.1``), Kiro's
    # optional mark (``- [ ]*``), a checkpoint ("Checkpoint — ensure all tests
    # pass"), Spec Kit's ``[P]`` and the phase heading it sits under (its line).
    parent: str | None = None
    optional: bool = False
    checkpoint: bool = False
    parallel: bool = False
    phase: int | None = None
    # The state the order rule reads when it differs from the box: a parent is done
    # exactly when its required sub-tasks are. ``state`` stays what the box shows
    # (what the writer ticks and the log's checkpoints record).
    effective: TaskState | None = None

    @property
    def progress(self) -> TaskState:
        """The state scheduling uses: ``effective`` when set, else the box's."""
        return self.effective or self.state


@dataclass(frozen=True)
class TaskList:
    """Everything read from one ``tasks.md``.

    ``dependency_source`` names the sources the edges came from, joined by
    ``+``: ``"fields"`` (``_Depends on:_`` fields and ``depends on`` clauses),
    ``"mermaid"`` (flowcharts), ``"prose"`` (arrow chains in a DAG section),
    ``"table"`` (dependency tables), e.g. ``"fields+mermaid"``; ``"none"`` when no
    source states anything.
    """

    path: Path
    tasks: tuple[Task, ...]
    findings: tuple[Finding, ...]
    dependency_source: str = "none"
    # The format the file is written in: "the-loop", "kiro" or "spec-kit"
    # (``the_loop.tasks.order.detect_format``).
    format: str = "the-loop"

    def not_understood(self) -> Finding | None:
        """The first line that may be a task loop could not read, if any.

        With one, an id that is not found may be that task: a dependency on it is
        not certainly unknown.
        """
        return next((f for f in self.findings if f.code in TASK_NOT_UNDERSTOOD), None)


# Findings about lines that may be tasks the reader could not read.
TASK_NOT_UNDERSTOOD = frozenset(
    {"tasks.no-id", "tasks.heading-no-checkbox", "tasks.unclosed-fence", "tasks.none-understood"}
)


def new_task(values: dict[str, object]) -> Task:
    """A ``Task`` whose instance dict is ``values``, built without the generated ``__init__``.

    That frozen ``__init__`` sets each of the 15 fields through ``object.__setattr__``,
    a tenth of the reader's time on a 100k-task file; copying defaults and values
    into a fresh dict was another few percent. ``values`` must name every field
    (the reader's one call does); the result equals ``Task(**values)`` as long as
    ``Task`` stays a plain frozen dataclass without ``__post_init__``
    (``tests/test_tasks_reader.py`` pins both and rebuilds a parsed task field by field).
    """
    task = _new(Task)
    _set_attribute(task, "__dict__", values)
    return task


_new = object.__new__
_set_attribute = object.__setattr__  # the frozen class refuses its own __setattr__
