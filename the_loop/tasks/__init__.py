"""Read and edit ``tasks.md``: the task list of a work item.

The reader turns the markdown into typed ``Task`` values plus findings for
whatever it cannot read with certainty; it never raises on content. The writer
changes exactly one checkbox character and preserves every other byte.

Grammar (one linear pass over ``\\n``-separated lines; a ``\\r`` before the
``\\n`` is not content; line numbers are 1-based and absolute):

* YAML front matter (a first line ``---`` up to the next ``---``) and fenced
  code blocks (three or more ````` or ``~``, closed by a fence of the same
  character at least as long, at any indentation) are not read for tasks; a
  fence that is never closed is a warning. A ``mermaid`` block is handed to
  ``the_loop.tasks.mermaid``.
* A task is a list item at column 0 with a checkbox: ``-``, ``*`` or ``+``,
  then ``[ ]`` (open), ``[x]``/``[X]`` (done) or ``[-]`` (in progress). Any
  other mark is an error and the task is read as open, so the graph stays whole.
* The id follows the checkbox: ``3.``, ``3)``, ``3:``, ``3 —``, ``T3``,
  ``T3.``, ``T3 —``, dotted ``3.2``; or it opens a bold span,
  ``**T3 — Title.**``. The canonical id is the number (``T03`` → ``"3"``);
  ``label`` keeps what the file wrote. A bare number needs punctuation after
  it, so ``- [ ] 3 retries`` has no id (an error, like any checkbox without one).
* The title is the text after the id, ``**`` removed. When the title is bold
  (``**T3 — Title.**`` or ``3. **Title.**``) only the bold part is the title,
  without its final period, and the rest of the paragraph is a detail; a bold
  span holding only the id (``**T3.** Title``) leaves the rest as the title.
  Indented non-bullet lines right after the task line continue its paragraph.
* The task owns the indented and blank lines up to the next non-blank column-0
  line. Each indented bullet starts a sub-item; indented text continues the
  sub-item above it (or starts a new one after a blank line). A checkbox on an
  indented bullet is not a task (info finding).
* Fields: ``_Key:_``, ``*Key:*``, ``**Key:**``, ``_Key_:`` or ``_Key: value_``
  anywhere in the task paragraph or a sub-item, for the keys ``Depends on``
  (also ``Dependencies``), ``Requirements`` and ``Test`` in any case; at the
  start of a sub-item also plain ``Depends on:``, ``Requirements:``, ``Test:``
  (not plain ``Dependencies:``, which is usually about packages). A value runs
  to the next field marker, so fields can share a line joined by `` — ``,
  `` – ``, `` · `` or `` | `` (the separator is dropped), and a value may
  contain dashes itself. Sub-items that are not fields are details.
* Depends on: ``none``/``nothing``/``n/a``/``—`` (text after it ignored); ids
  (``3``, ``T3``, ``task 3``, ``3.2``) joined by ``,``, ``;``, ``&`` or
  ``and``; ranges ``1–6``, ``1—6``, ``1-6``, ``T1–T7``, ``1..6`` (at most
  100 000 ids); ``all`` = every task listed above (an info finding says what it
  became). Parenthesised text is ignored. If any part cannot be read, the value
  is an error and ``depends_on`` is ``None``: a dependency is never guessed.
  Several depends fields on one task add up.
* In a bold-title task the rest of the paragraph may say ``depends on T1,
  T2.`` (up to the end of the sentence, at most 200 characters). The clause
  counts only if its list reads completely; one led by a dash that does not is
  a warning, other prose is left alone. ``*(AC7, R2)*`` there lists
  requirements.
* Requirements: ``R1``, ``R1.2``, ``AC7``, ``AC 7``, ``NFR1``, ``FR1`` and
  ranges of them (``R1–R5``, ``R1.1–R1.7``, ``AC 1–3``, ``AC2–AC6``), in order,
  without repeats; a value starting with ``all`` gives ``"all"``. Inside
  parentheses only ids are taken and nothing is reported (``(design D2)`` is
  prose); elsewhere a token with a digit that is not an id is a warning.
* Test: the trimmed raw value (the first one; later ones become details).
  ``test_command`` splits its first code span with ``shlex``; a warning says
  when that cannot work (unbalanced quotes).

Where the edges come from (``TaskList.dependency_source``): the fields and
prose clauses when any task states one, ``none`` included (``"fields"``);
otherwise the mermaid flowcharts that name at least one task (``"mermaid"``:
each task gets the sources of its incoming edges, ``()`` when none); with both,
the fields win and each task whose two answers differ is a warning
(``"both"``); with neither, ``"none"``: every ``depends_on`` stays ``None`` and,
when there are two or more tasks, one info finding says they are independent.
A flowchart edge into a task the file does not list is a warning; a flowchart
that names no task is an info and is not read as the DAG.

Duplicate ids, unknown dependencies and cycles are left to ``the_loop.dag.analysis``.

This module is the public face (the rest of loop imports from here) and the one
description of the format; the work is split by concern: ``task_model`` (the
values), ``task_reader`` (the pass over the lines), ``task_assembly`` (one task
from its lines), ``task_values`` (the grammar of ids and field values),
``task_edges`` (fields or flowchart) and ``task_writer`` (the checkbox edit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from the_loop.tasks.model import Task, TaskList, TaskState

if TYPE_CHECKING:
    from the_loop.tasks.reader import parse_tasks, read_tasks
    from the_loop.tasks.values import test_command
    from the_loop.tasks.writer import set_state, with_state

# The reader, the writer and the value grammar compile their patterns when
# imported; a command that finds its tasks in the parse cache never needs them.
# They are imported on first use of these names.
_LAZY = {
    "parse_tasks": "the_loop.tasks.reader",
    "read_tasks": "the_loop.tasks.reader",
    "test_command": "the_loop.tasks.values",
    "set_state": "the_loop.tasks.writer",
    "with_state": "the_loop.tasks.writer",
}

__all__ = [
    "Task",
    "TaskList",
    "TaskState",
    "parse_tasks",
    "read_tasks",
    "set_state",
    "test_command",
    "with_state",
]


def __getattr__(name: str) -> object:
    """Import the reader, the writer or the value grammar when one of their names is used."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value  # later uses skip this hook
    return value
