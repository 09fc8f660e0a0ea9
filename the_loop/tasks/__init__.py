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
  ``the_loop.tasks.mermaid``. Neither is an HTML comment block: a line that
  starts with ``<!--`` (up to three spaces in) and does not close it on the
  same line hides every line up to the one holding ``-->``.
* A task is a list item at column 0 with a checkbox: ``-``, ``*`` or ``+``,
  then ``[ ]`` (open), ``[x]``/``[X]`` (done) or ``[-]`` (in progress). Any
  other mark is not understood (a warning) and the task is read as open.
* A task is also a heading (any level) whose text starts with ``T<id>`` or
  ``Task <id>`` (``### T1 — title``). Its state is the first checkbox without an
  id below it, before the next heading (``- [x] Done``), which is also what the
  writer ticks; the bullets and paragraphs below it are its sub-items. Without
  such a checkbox the heading is not a task (a warning).
* The id follows the checkbox: ``3.``, ``3)``, ``3:``, ``3 —``, ``T3``,
  ``T3.``, ``T3 —``, dotted ``3.2``, a letter suffix ``T12b``; or it opens a bold
  span, ``**T3 — Title.**``. The canonical id is the number (``T03`` → ``"3"``,
  ``T12b`` → ``"12b"``); ``label`` keeps what the file wrote. A bare number needs
  punctuation after it, so ``- [ ] 3 retries`` has no id: a checkbox without an
  id is not understood (a warning whose hint proposes a number no task uses).
* The title is the text after the id, ``**`` removed. When the title is bold
  (``**T3 — Title.**`` or ``3. **Title.**``) only the bold part is the title,
  without its final period, and the rest of the paragraph is a detail; a bold
  span holding only the id (``**T3.** Title``) or a lead-in (``**Security:**
  text``) leaves the rest as the title. Indented non-bullet lines right after the
  task line continue its paragraph.
* The task owns the indented and blank lines up to the next non-blank column-0
  line (a heading task: up to the next heading). Each indented bullet starts a
  sub-item; indented text continues the sub-item above it (or starts a new one
  after a blank line). A checkbox on an indented bullet is not a task (info).
* Fields: ``_Key:_``, ``*Key:*``, ``**Key:**``, ``_Key_:`` or ``_Key: value_``
  anywhere in the task paragraph or a sub-item, for the keys ``Depends on``
  (also ``Dependencies``), ``Requirements`` and ``Test`` in any case; at the
  start of a sub-item also plain ``Depends on:``, ``Requirements:``, ``Test:``
  (not plain ``Dependencies:``, which is usually about packages). A value runs
  to the next field marker, so fields can share a line joined by `` — ``,
  `` – ``, `` · `` or `` | `` (the separator is dropped), and a value may
  contain dashes itself. Sub-items that are not fields are details.
* Clauses in running text (the paragraph after the title, a detail): plain
  ``Depends on: T2.`` and ``Requirements: R1.1.`` anywhere, and ``depends on T1``
  without a colon where it starts a sentence or a clause (after ``.``, ``;``,
  ``—``, ``(``, …): ``— depends on T1, T2.``, ``Depends on T1 and T2.``. The
  value runs to the end of its clause (``.`` and a space, ``;``, `` — ``,
  `` · ``, `` | ``, ``*(``), wrapping lines included; ``whatever depends on the
  cache`` mid-sentence is prose. Code spans are never read.
* Depends on: ``none``/``nothing``/``n/a``/``—`` (text after it ignored); ids
  (``3``, ``T3``, ``T12b``, ``task 3``, ``3.2``) joined by ``,``, ``;``, ``&``,
  ``+`` or ``and``; ranges of numbers ``1–6``, ``1—6``, ``1-6``, ``T1–T7``,
  ``1..6`` (at most 100 000 ids; a range never includes a suffixed id); ``all`` =
  every task listed above (an info finding says what it became). Parenthesised
  text is ignored. A statement that does not read completely is not understood:
  a warning, ``depends_on`` stays what other sources say, and the task keeps
  ``unread_depends_line`` so the graph holds it back: a dependency is never
  guessed, and never assumed absent.
* Requirements: citation tokens of any family ``<LETTERS><n>(.<m>)``: ``R1``,
  ``R1.2``, ``R1a.1``, ``AC7``, ``AC 7``, ``AC2.1``, ``NFR1``, ``FR1``,
  ``REQ-1``, ``D2``; a bare criterion ``1.2``; ``NFR`` alone or with a word
  (``NFR back-compat``); ``req 2``; ``AC R1.2`` (= ``R1.2``); ranges
  (``R1–R5``, ``R1.1–R1.7``, ``AC 1–3``, ``AC2.1–2.3``), in order, without
  repeats; a value starting with ``all`` gives ``"all"``. Phrases that cite
  something else are dropped: ``abuse case 3``, ``Security §1–§4``, code, links.
  Inside parentheses only ids of the requirement families (``R``, ``AC``,
  ``FR``, ``NFR``, ``REQ``) are taken and nothing is reported (``(design D2)`` is
  prose); elsewhere a token with a digit that is not an id is not understood (a
  warning). What each family means is the traceability check's business.
* Citation groups in running text: ``*(AC7, R2)*`` and ``_(AC7)_``; in the
  task's header paragraph also plain ``(AC1.3, AC1.4)`` and ``(req 2)``.
* Test: the trimmed raw value (the first one; later ones become details).
  ``test_command`` splits its first code span with ``shlex``; a warning says
  when that cannot work (unbalanced quotes).

Where the edges come from (``TaskList.dependency_source``, ``the_loop.tasks.edges``):
every source that states something, joined: the tasks' fields and clauses
(``fields``), mermaid flowcharts anywhere in the file (``mermaid``), and arrow
chains in a DAG section (``prose``, ``the_loop.tasks.prose_dag``). A task depends
on the union of what they say; a source that does not mention a task says
nothing about it. Sources that order a task's dependencies differently (compared
through their transitive closures, so a chart drawing the transitive reduction
of the fields agrees) give one warning per task, naming both places. With no
source at all, every ``depends_on`` stays ``None`` and, when there are two or
more tasks, one info finding says they are independent. A flowchart or chain
edge into a task the file does not list is a warning; a flowchart that names no
task is an info and is not read as the DAG.

Duplicate ids, unknown dependencies and cycles are left to ``the_loop.dag.analysis``.

This module is the public face (the rest of loop imports from here) and the one
description of the format; the work is split by concern: ``model`` (the values),
``reader`` (the pass over the lines), ``assembly`` (one task from its lines),
``values`` (the grammar of ids and field values), ``prose_dag`` (arrow chains),
``mermaid`` (flowcharts), ``edges`` (the sources joined) and ``writer`` (the
checkbox edit).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from the_loop.tasks.model import Task, TaskList, TaskState

if TYPE_CHECKING:
    from the_loop.tasks.reader import parse_tasks, read_tasks
    from the_loop.tasks.values import test_command
    from the_loop.tasks.writer import set_state, text_digest, with_state

# The reader, the writer and the value grammar compile their patterns when
# imported; a command that finds its tasks in the parse cache never needs them.
# They are imported on first use of these names.
_LAZY = {
    "parse_tasks": "the_loop.tasks.reader",
    "read_tasks": "the_loop.tasks.reader",
    "test_command": "the_loop.tasks.values",
    "set_state": "the_loop.tasks.writer",
    "with_state": "the_loop.tasks.writer",
    "text_digest": "the_loop.tasks.writer",
}

__all__ = [
    "Task",
    "TaskList",
    "TaskState",
    "parse_tasks",
    "read_tasks",
    "set_state",
    "test_command",
    "text_digest",
    "with_state",
]


def __getattr__(name: str) -> object:
    """Import the reader, the writer or the value grammar when one of their names is used."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    value = getattr(import_module(module), name)
    globals()[name] = value  # later uses skip this hook
    return value
