"""Which ready tasks a free lane may take: ``next`` order, less busy and overlapping tasks.

The ready set and its order are loop's own (``dag.analysis``: the same ``next``
a serial run follows). A task is held back while a task that names one of the
same files runs or waits in the merge queue: **predicted overlap**, read from
the task's text (its title, its sub-bullets, a ``Files:`` line, its test). What
a task's text does not name, only the merge queue catches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from the_loop.dag.analysis import DagReport
from the_loop.tasks import Task

# A path: a word with a slash or a dot-extension, e.g. `src/app.py`, README.md.
_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,8}|(?:[\w.-]+/)+[\w.-]+)"
)
_FILES = re.compile(r"^\s*_?Files:?_?\s*:?\s*(.+)$", re.IGNORECASE)
_NOT_PATHS = {"e.g", "i.e", "etc."}


def predicted_paths(task: Task) -> frozenset[str]:
    """The files ``task``'s text names (its overlap with other tasks is predicted from these)."""
    texts = [task.title, *task.details]
    if task.test:
        texts.append(" ".join(task.test.strip("`").split()[1:]))  # the command's arguments
    found: set[str] = set()
    for text in texts:
        listed = _FILES.match(text)
        if listed:
            found.update(p.strip(" `'\",") for p in re.split(r"[,\s]+", listed.group(1)) if p)
            continue
        for match in _PATH.finditer(text):
            word = match.group(1).rstrip(".")
            if word.lower() not in _NOT_PATHS and not word.replace(".", "").isdigit():
                found.add(word.removeprefix("./"))
    return frozenset(p for p in found if p)


def overlapping(paths: frozenset[str], busy: Iterable[frozenset[str]]) -> bool:
    """Whether ``paths`` shares a file (or a folder and a file in it) with any busy task."""
    for other in busy:
        for a in paths:
            for b in other:
                if a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/"):
                    return True
    return False


def pick(
    dag: DagReport,
    busy: Mapping[str, frozenset[str]],
    skip: set[str],
) -> tuple[str | None, tuple[str, ...]]:
    """The next ready task a lane may start, and the ready tasks held back by overlap."""
    held: list[str] = []
    for task_id in dag.ready:
        if task_id in busy or task_id in skip:
            continue
        paths = predicted_paths(dag.task(task_id))
        if overlapping(paths, busy.values()):
            held.append(task_id)
            continue
        return task_id, tuple(held)
    return None, tuple(held)
