"""The order rule: what a task list's form says about which task may start.

A task is ready only when the file's own semantics say it may start
(``docs/formats.md``, "The order rule"). The reader gathers what the file
states outright (fields, clauses, charts, chains, tables); this module adds what
its *form* says, after those sources are joined:

* **Format.** A file with front matter is the-loop's: a task that states nothing
  is a root. A file without it is Kiro's (``.kiro/specs/<feature>/``, and the
  default) or Spec Kit's (a ``specs/NNN-feature/`` folder, ``T001`` ids or
  ``Phase N`` headings): formats that rely on order.
* **Order is the dependency** in Kiro and Spec Kit: each task waits for the
  required task above it. Spec Kit's ``[P]`` opens this up (a run of ``[P]``
  tasks shares the task before the run, and the next plain task waits for the
  whole run), and a new phase waits for everything of the phase before it. A
  Kiro ``waves`` graph (a ```json block) replaces the file order among the tasks
  it lists: wave *k* waits for wave *k - 1*; between listed and unlisted tasks
  the file order stands.
* **Sub-tasks are tasks.** ``2.1`` is a sub-task of ``2`` when task ``2`` comes
  before it (nested or flat). A parent waits for its required sub-tasks and is
  done exactly when they are, whatever its own box shows; its sub-tasks wait
  for what the parent waits for. Siblings follow the order rule among themselves.
* **Optional tasks** (Kiro's ``- [ ]*``) are tasks, never required: no parent,
  checkpoint or later task waits for one.
* **A checkpoint** ("Checkpoint — ensure all tests pass") waits for every
  required task above it, and every task below it waits for the checkpoint, at
  any depth (its own ancestors aside) and whatever the waves allow.

Where order is the dependency, an open checkbox that is no task (``tasks.no-id``)
holds back every task below it. Explicit statements are kept and unioned with
these edges. Everything here is one linear pass (a parent's sub-tasks are
visited once).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from the_loop.findings import Level
from the_loop.tasks.assembly import Context
from the_loop.tasks.model import STATE_OF_MARK, Task, TaskState
from the_loop.tasks.values import canonical_id

THE_LOOP = "the-loop"
KIRO = "kiro"
SPEC_KIT = "spec-kit"
FORMATS = (THE_LOOP, KIRO, SPEC_KIT)

_SPEC_KIT_DIR_RE = re.compile(r"[0-9]{3,}-")
# Spec Kit numbers its tasks T001, T002, …: zero-padded to three digits.
_SPEC_KIT_TEXT_RE = re.compile(r"^[-*+][ \t]+\[.\][ \t]+T0[0-9]{2}\b", re.M)
_KIRO_TEXT_RE = re.compile(
    r"^[ \t]*[-*+][ \t]+\[.\]\*|^[ \t]+[-*+][ \t]+\[.\][ \t]+[0-9]{1,9}\.[0-9]"
    r"|^#[ \t]+Implementation[ \t]+Plan|^[-*+][ \t]+\[.\][ \t]+[0-9]{1,9}\.?[ \t]+Checkpoint\b",
    re.M | re.I,
)
_MAX_DEPTH = 8
_WAVE_ID_RE = re.compile(r"[Tt]?([0-9]{1,9}(?:\.[0-9]{1,9})*[a-z]?)")


def detect_format(path: Path, text: str) -> str:
    """``"the-loop"``, ``"kiro"`` or ``"spec-kit"`` for the tasks file ``path`` holding ``text``.

    Where the item lives decides first (``.kiro/specs/<feature>/``,
    ``specs/NNN-feature/``); front matter makes it the-loop's; without either, the
    forms only Kiro or Spec Kit write (optional ``[ ]*`` tasks, nested ``N.M``
    sub-tasks, a checkpoint task, ``# Implementation Plan``; ``T001`` ids) decide, and
    a file with none of them is read as the-loop's.
    """
    if ".kiro" in path.parts:
        return KIRO
    if _SPEC_KIT_DIR_RE.match(path.parent.name) and path.parent.parent.name == "specs":
        return SPEC_KIT
    if text.lstrip("\ufeff").startswith("---"):
        return THE_LOOP
    if _SPEC_KIT_TEXT_RE.search(text):
        return SPEC_KIT
    if _KIRO_TEXT_RE.search(text):
        return KIRO
    return THE_LOOP


def read_waves(lines: list[str], line: int, ctx: Context) -> list[tuple[list[str], int]]:
    """Kiro's ``{"waves": [{"id": 0, "tasks": ["1"]}, …]}`` block: each wave's task ids.

    A block that names waves but does not read is not understood (a warning) and
    adds nothing; the file order then stands for it.
    """
    try:
        data = json.loads("\n".join(lines))
    except ValueError:
        data = None
    waves = data.get("waves") if isinstance(data, dict) else None
    read: list[tuple[list[str], int]] = []
    for wave in waves if isinstance(waves, list) else ():
        tasks = wave.get("tasks") if isinstance(wave, dict) else None
        ids = [_wave_id(t) for t in tasks] if isinstance(tasks, list) else None
        if ids is None or None in ids:
            read = []
            break
        read.append(([i for i in ids if i is not None], line))
    if not read:
        ctx.note(
            Level.WARNING,
            "tasks.waves-unreadable",
            "not understood: this JSON block mentions waves but does not read as "
            '`{"waves": [{"id": 0, "tasks": ["1", "2"]}, …]}`; the file order stands',
            line,
            'list each wave\'s task ids: `{"waves": [{"id": 0, "tasks": ["1"]}]}`',
        )
    return read


def _wave_id(value: object) -> str | None:
    m = _WAVE_ID_RE.fullmatch(str(value).strip()) if isinstance(value, (str, int)) else None
    return canonical_id(m.group(1)) if m else None


def apply_order(
    tasks: tuple[Task, ...],
    fmt: str,
    waves: list[tuple[list[str], int]],
    ctx: Context,
) -> tuple[tuple[Task, ...], list[str]]:
    """``tasks`` with the edges and states their form implies, and the sources that added any."""
    if fmt == THE_LOOP and not ctx.shaped:
        return tasks, []  # no sub-task and no checkpoint: fields say it all (the large case)
    order = _Order(tasks, ctx)
    sources: list[str] = []
    if fmt != THE_LOOP:
        if waves:
            order.waves(waves)
            sources.append("waves")
        else:
            order.sequence(order.top, set())
            sources.append("phases" if fmt == SPEC_KIT and order.has_phases else "order")
    if order.checkpoints():
        sources.append("checkpoints")
    if fmt != THE_LOOP:
        order.after_unread(ctx.no_id)
    if order.children:
        order.families()
        sources.append("sub-tasks")
    if not order.changed:
        return tasks, []
    return order.result(), sources


class _Order:
    """Working state of one pass: the tasks by id, sub-tasks, and the edges added."""

    def __init__(self, tasks: tuple[Task, ...], ctx: Context) -> None:
        self.tasks = tasks
        self.ctx = ctx
        self.first: dict[str, int] = {}
        for i, task in enumerate(tasks):
            self.first.setdefault(task.id, i)
        self.parent: dict[int, int] = {}
        self.children: dict[int, list[int]] = {}
        for i, task in enumerate(tasks):
            if "." in task.id and self.first[task.id] == i:
                p = self._parent_of(task.id, i)
                if p is not None:
                    self.parent[i] = p
                    self.children.setdefault(p, []).append(i)
        self.top = [
            i for i, t in enumerate(tasks) if i not in self.parent and self.first[t.id] == i
        ]
        self.extra: dict[int, dict[str, None]] = {}
        self.held: dict[int, int] = {}
        self.states: dict[int, TaskState] = {}
        self.has_phases = any(t.phase is not None for t in tasks)
        self._done_memo: dict[int, bool] = {}
        self.changed = bool(self.parent)

    def _parent_of(self, task_id: str, at: int) -> int | None:
        head = task_id
        if head.count(".") > _MAX_DEPTH:
            return None  # no plan nests this deep: an id like `1.1.1.…` is not a family
        while "." in head:
            head = head.rsplit(".", 1)[0]
            p = self.first.get(head)
            if p is not None and p < at:
                return p
        return None

    def add(self, i: int, deps: set[str] | list[str]) -> None:
        own = self.tasks[i].id
        new = [d for d in deps if d != own]
        if new:
            self.extra.setdefault(i, {}).update(dict.fromkeys(new))
            self.changed = True

    def required(self, i: int) -> bool:
        return not self.tasks[i].optional

    # -- the file order ------------------------------------------------------

    def sequence(self, group: list[int], base: set[str]) -> set[str]:
        """Chain ``group`` (siblings in file order) after ``base``; the frontier after it.

        A ``[P]`` task waits only for the task before its run; a plain task waits for
        that task and the whole run; a new phase waits for the frontier before it.
        """
        run: set[str] = set()
        phase = self.tasks[group[0]].phase if group else None
        for i in group:
            task = self.tasks[i]
            if task.phase != phase:
                base, run, phase = base | run, set(), task.phase
            if task.parallel:
                self.add(i, base)
                if self.required(i):
                    run.add(task.id)
            else:
                self.add(i, base | run)
                if self.required(i):
                    base, run = {task.id} | self.carried(base | run, i), set()
            if i in self.children:
                self.sequence(self.children[i], set())
        return base | run

    def waves(self, waves: list[tuple[list[str], int]]) -> None:
        """Wave *k* waits for every task of wave *k - 1*; unlisted tasks keep the file order."""
        listed: set[str] = set()
        previous: list[str] = []  # what the next wave waits for
        for ids, line in waves:
            known = [t for t in ids if t in self.first]
            for missing in (t for t in ids if t not in self.first):
                self.ctx.note(
                    Level.WARNING,
                    "tasks.waves-unknown-task",
                    f"the waves graph names task {missing}, which this file does not list; "
                    "the tasks of the next wave are held back until it reads",
                    line,
                    "fix the id in the waves block, or add the task",
                )
            for t in known:
                self.add(self.first[t], previous)
            listed.update(known)
            # The next wave waits for this one and for every open task of earlier waves:
            # a ticked wave does not release the open work before it.
            still_open = [t for t in previous if not self.done(self.first[t])]
            previous = [t for t in known if self.required(self.first[t])] + still_open
        self._hold_unknown(waves)
        # The waves replace the file order only among the tasks they list. An unlisted
        # task waits for every required task above it (the waves let listed tasks run
        # side by side, so the one just above may be done while others are open); a
        # listed task waits for the unlisted ones above it.
        frontier: dict[str, None] = {}
        unlisted: dict[str, None] = {}  # the last required unlisted task, and what it carries
        for i in self.top:
            task = self.tasks[i]
            if task.id not in listed:
                self.add(i, list(frontier))
                if self.required(i):
                    carried = self.carried(set(frontier), i)
                    frontier = dict.fromkeys([task.id, *sorted(carried)])
                    unlisted = dict.fromkeys([task.id, *sorted(self.carried(set(unlisted), i))])
            else:
                self.add(i, list(unlisted))
                if self.required(i):
                    frontier[task.id] = None
            if i in self.children:
                self.sequence(self.children[i], set())

    def _hold_unknown(self, waves: list[tuple[list[str], int]]) -> None:
        """Tasks in the wave after one naming an unknown task wait for what cannot be seen."""
        for (ids, line), (after, _) in zip(waves, waves[1:], strict=False):
            if any(t not in self.first for t in ids):
                for t in after:
                    if t in self.first:
                        self.held.setdefault(self.first[t], line)
                        self.changed = True

    def done(self, i: int) -> bool:
        """Whether task ``i`` is done as the order rule reads it (a parent: by its sub-tasks)."""
        memo = self._done_memo
        if i not in memo:
            kids = [k for k in self.children.get(i, ()) if self.required(k)]
            if kids:
                memo[i] = all(self.done(k) for k in kids)
            else:
                memo[i] = self.tasks[i].state is TaskState.DONE
        return memo[i]

    def carried(self, before: set[str], i: int) -> set[str]:
        """What a task after ``i`` still waits for beyond ``i``: ``i``'s open predecessors.

        A ticked task does not release the open work above it: order is the
        dependency, so what comes after waits for all of it.
        """
        if not self.done(i):
            return set()
        return {d for d in before if not self.done(self.first[d])}

    def after_unread(self, unread: list[tuple[int, str, str, str | None]]) -> None:
        """Where order is the dependency, an open checkbox loop cannot read as a task
        (``tasks.no-id``) still comes first: every task below it is held back.

        ``unread``: the context's ``no_id`` entries, ``(line, mark, …)``. Only the
        first open one matters; everything below it waits for it already.
        """
        line = next(
            (n for n, mark, *_ in unread if STATE_OF_MARK.get(mark) is not TaskState.DONE), None
        )
        if line is None:
            return
        for i in self.first.values():
            if self.tasks[i].line > line:
                self.held.setdefault(i, line)
                self.changed = True

    # -- checkpoints ---------------------------------------------------------

    def checkpoints(self) -> bool:
        """A checkpoint waits for every required task above it; each task below waits for it.

        At any depth: a checkpoint sub-task (``2.2 Checkpoint``) gates the tasks below
        it outside its parent too, whatever the waves allow. Its own ancestors are the
        exception both ways: a parent already waits for its sub-tasks.
        """
        if not any(t.checkpoint for t in self.tasks):
            return False
        gate: set[str] = set()  # what a task below the last checkpoint waits for
        since: list[str] = []
        for i in sorted(self.first.values()):  # every task, sub-tasks too, in file order
            task = self.tasks[i]
            ancestors = self._ancestors(i)
            if task.checkpoint:
                waits = (set(since) | gate) - ancestors
                # A sub-task whose parent is waited for is covered by it: no second edge.
                waits = {d for d in waits if not self._ancestors(self.first[d]) & waits}
                self.add(i, waits)
                gate, since = {task.id} | self.carried(waits, i), []
                continue
            self.add(i, gate - ancestors)
            if self.required(i):
                since.append(task.id)
        return True

    # -- parents and sub-tasks -----------------------------------------------

    def families(self) -> None:
        """Parents wait for their required sub-tasks, which wait for what the parent waits for."""
        tasks = self.tasks
        for p, kids in self.children.items():
            self.add(p, [tasks[k].id for k in kids if self.required(k)])
        for i in sorted(self.parent):  # file order: a parent's edges are final before its kids
            p = self.parent[i]
            ancestors = self._ancestors(i)
            inherited = [d for d in self._deps(p) if d in self.first and d not in ancestors]
            inherited = [d for d in inherited if not self._within(self.first[d], p)]
            self.add(i, inherited)
            if p in self.held:
                self.held.setdefault(i, self.held[p])
            elif (unread := tasks[p].unread_depends_line) is not None:
                self.held.setdefault(i, unread)
        for p in sorted(self.children, reverse=True):  # sub-tasks before their parents
            self._derive_state(p)

    def _deps(self, i: int) -> list[str]:
        return [*(self.tasks[i].depends_on or ()), *self.extra.get(i, ())]

    def _ancestors(self, i: int) -> set[str]:
        found: set[str] = set()
        while i in self.parent:
            i = self.parent[i]
            found.add(self.tasks[i].id)
        return found

    def _within(self, i: int, p: int) -> bool:
        """Whether task ``i`` is ``p`` or one of its sub-tasks, at any depth."""
        while True:
            if i == p:
                return True
            if i not in self.parent:
                return False
            i = self.parent[i]

    def _derive_state(self, p: int) -> None:
        """A parent is done exactly when its required sub-tasks are."""
        kids = [k for k in self.children[p] if self.required(k)]
        if not kids:
            return
        states = [self.states.get(k, self.tasks[k].state) for k in kids]
        if all(s is TaskState.DONE for s in states):
            state = TaskState.DONE
        elif any(s is not TaskState.OPEN for s in states):
            state = TaskState.IN_PROGRESS
        else:
            state = TaskState.OPEN
        parent = self.tasks[p]
        if parent.state is TaskState.DONE and state is not TaskState.DONE:
            open_kids = [
                self.tasks[k].id
                for k, s in zip(kids, states, strict=True)
                if s is not TaskState.DONE
            ]
            self.ctx.note(
                Level.WARNING,
                "tasks.parent-ticked-early",
                f"task {parent.id} is ticked but its sub-tasks {', '.join(open_kids)} are not "
                "done; it is read as not done until they are",
                parent.line,
                f"finish {', '.join(open_kids)}, or untick task {parent.id}",
            )
        if state is not parent.state:
            self.states[p] = state  # the box keeps what it shows; scheduling reads this
            self.changed = True

    # -- the result ----------------------------------------------------------

    def result(self) -> tuple[Task, ...]:
        out = list(self.tasks)
        parents = {i: self.tasks[p].id for i, p in self.parent.items()}
        for i in set(self.extra) | set(self.held) | set(self.states) | set(parents):
            task = out[i]
            changes: dict[str, object] = {}
            if i in self.extra:
                stated = dict.fromkeys(task.depends_on or ())
                ancestors = self._ancestors(i) if i in self.parent else set()
                for d in list(stated):
                    if d in ancestors:  # "2.1 depends on 2": on what 2 waits for
                        del stated[d]
                stated.update(self.extra[i])
                changes["depends_on"] = tuple(stated)
            if i in self.held and task.unread_depends_line is None:
                changes["unread_depends_line"] = self.held[i]
            if i in self.states:
                changes["effective"] = self.states[i]
            if i in parents:
                changes["parent"] = parents[i]
            out[i] = replace(task, **changes)  # type: ignore[arg-type]
        return tuple(out)
