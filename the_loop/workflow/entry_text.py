"""A ``Next:`` a fresh session can act on, and a ``Did:`` that says something.

The last log entry's Next: is the resume anchor: after a clear, a session that
remembers nothing starts from it. So it must point at something that exists:
a task of this item (``task 4``, ``T4`` or its title), a file or folder in the
project (``poller/ledger.py``; a new file whose folder exists, ``pkg/new.py``;
a folder named by a bare word, ``run the suite in tests``), or a command
(``loop execute-tasks 42``, or a command in backticks whose program exists).
Filler (``tbd tbd tbd``, ``carry on with the work``) is refused outright.
A refusal proposes a Next: built from the task that comes next in the DAG,
so the fix is one copy away.

Did: only has to say something (not ``tbd``, ``-``, ``…``): it is a record of
what happened, and it may name things that are gone now.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from the_loop.errors import UsageError
from the_loop.tasks import Task, TaskState
from the_loop.tasks.values import canonical_id
from the_loop.workflow.item_report import ItemReport

# `loop` subcommands a Next: may name without backticks (tests keep it equal to
# the CLI's own list).
LOOP_COMMANDS = frozenset(
    "init config new promote work-on approve finish status next check graph log resume "
    "execute-tasks task checkpoint pressure reset doctor".split()
)
# Words that stand for no content at all: a Did: made only of these is empty.
_EMPTY = frozenset("tbd tbc tba todo xxx fixme wip n/a na none nothing etc ... … - — ? !".split())
# Words that say nothing on their own: a Next: made only of these is filler.
_FILLER = _EMPTY | frozenset(
    """continue continuing carry carrying on keep going go proceed proceeding resume
    next step steps task tasks work working stuff things thing more rest remaining
    same as before usual the a an with and then to of it this that do doing done did
    finish finishing finished complete completed on up everything all some whatever
    see above below later soon again""".split()
)
_WORD = re.compile(r"[^\s`'\"()\[\]{},;:!?]+")
_TASK_REF = re.compile(
    r"\b(?:tasks?\s+#?[Tt]?|[Tt])(?P<id>[0-9]{1,9}(?:\.[0-9]{1,9})*)\b", re.IGNORECASE
)
_CODE = re.compile(r"`([^`]+)`")
_LOOP_WORD = re.compile(r"\bloop\s+(?P<command>[a-z][a-z-]*)\b")
_PATHLIKE = re.compile(r"[\w.-]*[/\\][\w./\\-]*|[\w-]+\.[A-Za-z][\w]{0,7}")
_LINE_SUFFIX = re.compile(r":\d+(?:-\d+)?$")
_TITLE_MIN = 6  # characters; a shorter title ("Docs") is too likely to match by accident


def is_filler(text: str, vocabulary: frozenset[str] = _FILLER) -> bool:
    """True when ``text`` has no word beyond ``vocabulary`` (empty text included)."""
    words = [w.lower().strip(".") for w in _WORD.findall(text)]
    return not [w for w in words if w and w not in vocabulary]


def concrete_did(text: str) -> str:
    """``text`` as given (the log keeps it exactly), or ``UsageError`` when it says nothing."""
    if is_filler(" ".join(text.split()), _EMPTY):
        raise UsageError(
            f"--did must say what was done, got {text!r}",
            hint="e.g. --did 'added PollState.retry_budget and its unit test'",
        )
    return text


def concrete_next(text: str, report: ItemReport, *, finishing: str | None = None) -> str:
    """``text`` when it names a task, file or command that exists; else ``UsageError``.

    ``finishing`` is the task this checkpoint completes; the proposal in the
    refusal's hint is built from the task that comes after it.
    """
    cleaned = " ".join(text.split())
    if is_filler(cleaned):
        raise _vague(text, "it is filler: no task, file or command", report, finishing)
    if names_something(cleaned, report):
        return cleaned
    why = f"it names no task of {report.id}, no file that exists and no command"
    raise _vague(text, why, report, finishing)


def names_something(text: str, report: ItemReport) -> bool:
    """Whether ``text`` names a task of the item, an existing path or a command."""
    return (
        _names_task(text, report)
        or _names_command(text, report.ctx.project.root)
        or _names_path(text, report.ctx.project.root)
    )


def _names_task(text: str, report: ItemReport) -> bool:
    dag = report.dag
    if dag is None:
        return False
    ids = dag.tasks_by_id
    if any(canonical_id(m["id"]) in ids for m in _TASK_REF.finditer(text)):
        return True
    lowered = text.lower()
    tasks = report.tasks.tasks if report.tasks else ()
    return any(len(t.title) >= _TITLE_MIN and t.title.lower() in lowered for t in tasks)


def _names_command(text: str, root: Path) -> bool:
    if any(m["command"] in LOOP_COMMANDS for m in _LOOP_WORD.finditer(text)):
        return True
    for span in _CODE.findall(text):
        words = span.split()
        if not words:
            continue
        program = words[0]
        if program == "loop" or shutil.which(program) or _exists(root, program):
            return True
    return False


def _names_path(text: str, root: Path) -> bool:
    for token in _PATHLIKE.findall(text):
        token = _LINE_SUFFIX.sub("", token.strip(".,;:"))
        if not token or "://" in token:
            continue
        # A file about to be written is named in a folder that exists.
        if _exists(root, token) or ("/" in token.rstrip("/") and _is_dir(root, token)):
            return True
    # A folder or file named by a bare word: "run the suite in tests".
    return any(
        len(word) > 2 and word.lower() not in _FILLER and _exists(root, word)
        for word in (w.strip(".") for w in _WORD.findall(text))
    )


def _is_dir(root: Path, name: str) -> bool:
    """Whether the folder ``name`` would be written in exists."""
    try:
        path = Path(name.rstrip("/"))
        return (path.parent if path.is_absolute() else root / path.parent).is_dir()
    except (OSError, ValueError):
        return False


def _exists(root: Path, name: str) -> bool:
    try:
        path = Path(name)
        return (path if path.is_absolute() else root / path).exists()
    except (OSError, ValueError):
        return False


def proposed_next(report: ItemReport, finishing: str | None) -> str:
    """A Next: built from the task that comes after ``finishing`` in the DAG."""
    task = _following(report, finishing)
    if task is not None:
        # No backticks: the proposal is pasted into a shell inside quotes.
        return (
            f"implement task {task.id}: {task.title} (loop execute-tasks {report.id} hands it out)"
        )
    if finishing is None:
        return f"see loop status {report.id} for the next action"
    return f"review the work: loop work-on {report.id} prints the review brief"


def _following(report: ItemReport, finishing: str | None) -> Task | None:
    dag = report.dag
    if dag is None or report.tasks is None:
        return None
    if finishing is None:
        active = [t for t in report.tasks.tasks if t.state is TaskState.IN_PROGRESS]
        if active:
            return active[0]
    for task_id in dag.ready:
        if task_id != finishing:
            return dag.task(task_id)
    # Nothing else is ready now: the first task this one's completion unblocks.
    done = {t.id for t in report.tasks.tasks if t.state is TaskState.DONE} | {finishing}
    for task_id in dag.order:
        task = dag.task(task_id)
        if task.state is not TaskState.DONE and task_id != finishing:
            if set(task.depends_on or ()) <= done:
                return task
    return None


def _vague(text: str, why: str, report: ItemReport, finishing: str | None) -> UsageError:
    return UsageError(
        f"--next must name a concrete next step a fresh session can act on, got {text!r}",
        details=(f"{why}; a fresh session starts from this line and remembers nothing else",),
        hint=f"e.g. --next {shlex.quote(proposed_next(report, finishing))}",
    )
