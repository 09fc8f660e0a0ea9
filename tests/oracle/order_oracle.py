"""A second, deliberately simple reading of Kiro and Spec Kit task lists (tests only).

``dag_oracle`` reads the-loop's own ``tasks.md``, where only stated dependencies
count. This module reads the two formats that rely on order instead, from the
order rule of ``docs/formats.md`` ("The order rule") and the formats' public
descriptions, and shares no code with ``the_loop``. It is written to be obviously
right, not fast: every rule below is a few lines of its own.

Kiro (``.kiro/specs/<feature>/tasks.md``, also cc-sdd):

* A task is a checkbox list item at any indent whose text starts with a dotted id
  (``1.``, ``2.1``); ``- [ ]*`` marks it optional. ``N.M`` is a sub-task of ``N``.
* Each task waits for the required siblings above it (its parent's list, or the top
  level); a parent waits for its required sub-tasks and is done exactly when they
  are; every sub-task waits for whatever its parent waits for.
* Nothing waits for an optional task.
* A checkpoint task (title starting with "Checkpoint") waits for every required
  task above it; every task below it waits for it.
* A ```` ```json ```` block ``{"waves": [{"id": 0, "tasks": [...]}, ...]}`` replaces
  the sibling order among the tasks it lists: wave *k* waits for wave *k − 1*.

Spec Kit (``specs/NNN-feature/tasks.md``):

* A task is ``- [ ] T001 [P] [US1] text``: id ``1``, ``[P]`` parallel.
* A plain task waits for the task before it, or for the whole ``[P]`` run before it;
  a ``[P]`` run waits only for the task before the run. Runs end at a phase heading.
* Every task of a ``## Phase`` waits for every task of the phase before it.

Both: ``depends on`` statements in a task's own text, where they start a sentence or
follow ``—``, ``;`` or ``(`` (``(depends on T003)``, ``_Depends on:_ 1, 2``), lines
labelled ``Critical path:``/``DAG:``/``Order:``, and the mermaid charts and DAG chains
``dag_oracle`` reads are unioned with the order. A statement this reader cannot read is listed in
``unread`` and holds its task back.

Readiness: a task may start when it is open, is not a parent of required work, every
task it waits for directly is done, and so is every task before it by order, through
any number of others: where order is the dependency, a ticked task does not release
the open work above it. What only a statement orders is released by a tick, as in
the-loop's own files (a done task that depends on an open one is a warning there).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from dag_oracle import MERMAID, PROSE, parse_dag

KIRO = "kiro"
SPEC_KIT = "spec-kit"

Pair = tuple[str, str]  # (dep, task): task waits for dep


@dataclass(frozen=True)
class PlanTask:
    """One task as the file writes it."""

    id: str
    line: int
    ticked: bool
    optional: bool = False
    checkpoint: bool = False
    parent: str | None = None
    parallel: bool = False
    phase: int = 0


@dataclass(frozen=True)
class Unread:
    """A dependency statement this reader could not read: its task is held back."""

    line: int
    task: str
    text: str


@dataclass
class Plan:
    """The tasks, edges and readiness of one Kiro or Spec Kit ``tasks.md``."""

    format: str
    tasks: list[PlanTask]
    edges: set[Pair] = field(default_factory=set)
    order: set[Pair] = field(default_factory=set)  # the edges the format's order implies
    stated: dict[Pair, set[int]] = field(default_factory=dict)  # explicit edges → lines
    unread: list[Unread] = field(default_factory=list)
    wave_lines: range = range(0)

    @property
    def ids(self) -> list[str]:
        """Task ids in file order."""
        return [t.id for t in self.tasks]

    def task(self, tid: str) -> PlanTask:
        """The task with id ``tid``."""
        return next(t for t in self.tasks if t.id == tid)

    def required_children(self, tid: str) -> list[str]:
        """The required sub-tasks directly under ``tid``."""
        return [t.id for t in self.tasks if t.parent == tid and not t.optional]

    def done(self) -> dict[str, bool]:
        """Task id → done: a parent of required work is done exactly when it is."""
        out: dict[str, bool] = {}
        for t in reversed(self.tasks):  # children come after their parent
            kids = self.required_children(t.id)
            out[t.id] = all(out[k] for k in kids) if kids else t.ticked
        return out

    def optional_open(self) -> int:
        """How many optional tasks are not done."""
        done = self.done()
        return sum(t.optional and not done[t.id] for t in self.tasks)

    def known_edges(self) -> set[Pair]:
        """Edges between tasks the file lists."""
        known = set(self.ids)
        return {(a, b) for a, b in self.edges if a in known and b in known}

    def dangling(self) -> set[Pair]:
        """Edges from a task the file does not list (they hold their task back)."""
        known = set(self.ids)
        return {(a, b) for a, b in self.edges if a not in known}

    def waits_for(self, tid: str, edges: set[Pair] | None = None) -> set[str]:
        """Every task ``tid`` waits for along ``edges`` (all by default), directly or
        through others (unknown ids too)."""
        seen: set[str] = set()
        todo = [tid]
        while todo:
            cur = todo.pop()
            for a, b in self.edges if edges is None else edges:
                if b == cur and a not in seen:
                    seen.add(a)
                    todo.append(a)
        seen.discard(tid)
        return seen

    def blockers(self, tid: str) -> set[str]:
        """What must be done before ``tid`` may start: every task it waits for directly,
        and every task before it by order, through any number of others (a tick does not
        release order; a ticked task does release what only a statement made it wait for)."""
        return {a for a, b in self.edges if b == tid} | self.waits_for(tid, self.order)

    def ready(self) -> set[str]:
        """The tasks that may start now."""
        done = self.done()
        held = {u.task for u in self.unread}
        out = set()
        for t in self.tasks:
            if done[t.id] or self.required_children(t.id) or t.id in held:
                continue
            if all(done.get(d, False) for d in self.blockers(t.id)):
                out.add(t.id)
        return out


def closure(ids: list[str], edges: set[Pair]) -> set[Pair]:
    """Every ``(dep, task)`` pair joined by a path of ``edges``."""
    after: dict[str, set[str]] = {i: set() for i in ids}
    for a, b in edges:
        after.setdefault(a, set()).add(b)
        after.setdefault(b, set())
    out: set[Pair] = set()
    for start in after:
        todo, seen = [start], set()
        while todo:
            for nxt in after[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        out |= {(start, s) for s in seen if s != start}
    return out


def detect(path: Path) -> str:
    """The format a ``tasks.md`` is in, by where it lives."""
    parts = path.resolve().parts
    if len(parts) >= 4 and parts[-4:-2] == (".kiro", "specs"):
        return KIRO
    if len(parts) >= 3 and parts[-3] == "specs" and re.match(r"\d+-", parts[-2]):
        return SPEC_KIT
    raise ValueError(f"{path}: neither .kiro/specs/<feature>/ nor specs/NNN-feature/")


def read_plan(path: Path) -> Plan:
    """Read ``path`` in the format its location says."""
    return parse_plan(path.read_text(encoding="utf-8"), detect(path))


def parse_plan(text: str, fmt: str) -> Plan:
    """Read ``text``, a ``tasks.md`` in ``fmt`` (``KIRO`` or ``SPEC_KIT``)."""
    lines = text.splitlines()
    plan, bodies, waves = _tasks(lines, fmt)
    if fmt == KIRO:
        _kiro_order(plan, waves)
    else:
        _spec_kit_order(plan)
    for tid, body in bodies.items():
        for lineno, piece in body:
            _depends(plan, tid, lineno, piece)
    charted = parse_dag(text).edges_by_source()
    plan.edges |= charted[MERMAID] | charted[PROSE]
    _labelled_chains(plan, lines)
    if fmt == KIRO:
        _inherit(plan)  # last: a sub-task waits for every edge into its parent
    return plan


# ---------------------------------------------------------------------------
# The line pass: tasks, their text, phases and the waves block

_CHECKBOX = re.compile(r"(\s*)[-*+]\s+\[(.)\](\*?)\s+(.*)$")
_KIRO_ID = re.compile(r"(\d+(?:\.\d+)*)\.?(?=\s)")
_SPEC_KIT_ID = re.compile(r"T(\d+)(?=\s)")
_MARKER = re.compile(r"\s*\[(P|US\d+)\]")
_PHASE = re.compile(r"##\s+Phase\s+\d+", re.IGNORECASE)
_HEADING = re.compile(r"#{1,6}\s")
_FENCE = re.compile(r"\s*(```|~~~)\s*(\w*)")
_CHECKPOINT = re.compile(r"[\W_]*checkpoint\b", re.IGNORECASE)


def _parent(tid: str, above: set[str]) -> str | None:
    """The nearest task above whose id prefixes ``tid`` (``2.1`` → ``2``); a group
    heading (``### 2. Reading``) is no task, so its ``2.1`` is a top-level task."""
    parts = tid.split(".")[:-1]
    while parts:
        if ".".join(parts) in above:
            return ".".join(parts)
        parts.pop()
    return None


def _canonical(dotted: str) -> str:
    return ".".join(str(int(part)) for part in dotted.split("."))


def _tasks(
    lines: list[str], fmt: str
) -> tuple[Plan, dict[str, list[tuple[int, str]]], list[tuple[range, str]]]:
    tasks: list[PlanTask] = []
    bodies: dict[str, list[tuple[int, str]]] = {}
    waves: list[tuple[range, str]] = []
    phase = 0
    current: tuple[str, int] | None = None  # (task id, its checkbox's indent)
    fence: tuple[str, str, int, list[str]] | None = None
    for n, raw in enumerate(lines, start=1):
        if fence is not None:
            if raw.strip().startswith(fence[0]):
                if fence[1] == "json":
                    waves.append((range(fence[2], n + 1), "\n".join(fence[3])))
                fence = None
            else:
                fence[3].append(raw)
            continue
        if opened := _FENCE.match(raw):
            fence = (opened.group(1), opened.group(2).lower(), n, [])
            continue
        if _HEADING.match(raw):
            current = None
            if _PHASE.match(raw):
                phase += 1
            continue
        box = _CHECKBOX.match(raw)
        head = _KIRO_ID if fmt == KIRO else _SPEC_KIT_ID
        m = head.match(box.group(4)) if box else None
        if box and m:
            indent, mark, star, rest = box.groups()
            tid = _canonical(m.group(1))
            title = rest[m.end() :]
            markers = []
            while mk := _MARKER.match(title):
                markers.append(mk.group(1))
                title = title[mk.end() :]
            parent = _parent(tid, {t.id for t in tasks})
            tasks.append(
                PlanTask(
                    id=tid,
                    line=n,
                    ticked=mark in "xX",
                    optional=star == "*",
                    checkpoint=bool(_CHECKPOINT.match(title)),
                    parent=parent,
                    parallel="P" in markers,
                    phase=phase,
                )
            )
            bodies[tid] = [(n, title)]
            current = (tid, len(indent))
            continue
        if current is not None and raw.strip():
            if len(raw) - len(raw.lstrip()) > current[1]:
                bodies[current[0]].append((n, raw.strip()))
            else:
                current = None
    return Plan(fmt, tasks), bodies, waves


# ---------------------------------------------------------------------------
# The order each format implies


def _add(plan: Plan, dep: str, task: str, *, stated: bool = False) -> None:
    plan.edges.add((dep, task))
    if not stated:
        plan.order.add((dep, task))


def _kiro_order(plan: Plan, blocks: list[tuple[range, str]]) -> None:
    waves, listed = _waves(plan, blocks)
    _sibling_order(plan, listed)
    _wave_order(plan, waves)
    _checkpoints(plan)
    for t in plan.tasks:  # a parent waits for its required sub-tasks
        for kid in plan.required_children(t.id):
            _add(plan, kid, t.id)


def _sibling_order(plan: Plan, listed: set[str]) -> None:
    """Each task waits for the required siblings above it, unless waves order both.

    Every sibling above, not only the nearest: where order is the dependency, a ticked
    task does not release the open ones before it, and a task the waves leave out
    still comes after everything above it (``docs/formats.md``).
    """
    for i, t in enumerate(plan.tasks):
        for u in plan.tasks[:i]:
            if u.parent == t.parent and not u.optional and not (u.id in listed and t.id in listed):
                _add(plan, u.id, t.id)


def _wave_order(plan: Plan, waves: list[list[str]]) -> None:
    """Wave k waits for wave k - 1, and so for every wave before it: each of their
    required tasks (an id the file does not list too: it holds the next wave back)."""
    by_id = {t.id: t for t in plan.tasks}
    for k, after in enumerate(waves):
        for dep in (d for before in waves[:k] for d in before):
            for task in after:
                if task in by_id and not (dep in by_id and by_id[dep].optional):
                    _add(plan, dep, task)


def _checkpoints(plan: Plan) -> None:
    """A checkpoint waits for every required task above it; all below wait for it."""
    for i, c in enumerate(plan.tasks):
        if not c.checkpoint:
            continue
        family = _ancestors(plan, c.id) | _descendants(plan, c.id)
        for u in plan.tasks[:i]:
            if not u.optional and u.id not in family:
                _add(plan, u.id, c.id)
        for w in plan.tasks[i + 1 :]:
            if w.id not in family and not c.optional:  # nothing waits for an optional task
                _add(plan, c.id, w.id)


def _inherit(plan: Plan) -> None:
    """A sub-task waits for whatever its parent waits for."""
    by_id = {t.id: t for t in plan.tasks}
    for t in plan.tasks:  # parents first, so a grandchild inherits the whole chain
        if t.parent in by_id:
            inherited = {a for a, b in plan.edges if b == t.parent}
            for dep in inherited - _descendants(plan, t.parent) - {t.parent}:
                _add(plan, dep, t.id, stated=(dep, t.parent) not in plan.order)


def _ancestors(plan: Plan, tid: str) -> set[str]:
    out = set()
    parent = plan.task(tid).parent
    while parent is not None and parent in plan.ids:
        out.add(parent)
        parent = plan.task(parent).parent
    return out


def _descendants(plan: Plan, tid: str) -> set[str]:
    return {t.id for t in plan.tasks if tid in _ancestors(plan, t.id)}


def _waves(plan: Plan, blocks: list[tuple[range, str]]) -> tuple[list[list[str]], set[str]]:
    """The wave lists of the first ``{"waves": …}`` block, and every id they name."""
    for lines, body in blocks:
        try:
            data = json.loads(body)
        except ValueError:
            continue
        if not isinstance(data, dict) or "waves" not in data:
            continue
        plan.wave_lines = lines
        ordered = sorted(data["waves"], key=lambda w: int(w["id"]))
        waves = [[_canonical(str(x)) for x in w["tasks"]] for w in ordered]
        return waves, {x for w in waves for x in w}
    return [], set()


def _spec_kit_order(plan: Plan) -> None:
    tasks = plan.tasks
    for i, t in enumerate(tasks):
        if i == 0:
            continue
        prev = tasks[i - 1]
        run_broken = prev.phase != t.phase
        if t.parallel:
            j = i
            while j > 0 and tasks[j - 1].parallel and tasks[j - 1].phase == t.phase:
                j -= 1
            if j > 0:
                _add(plan, tasks[j - 1].id, t.id)
        elif prev.parallel and not run_broken:
            j = i - 1
            while j >= 0 and tasks[j].parallel and tasks[j].phase == t.phase:
                _add(plan, tasks[j].id, t.id)
                j -= 1
        else:
            _add(plan, prev.id, t.id)
    phases = sorted({t.phase for t in tasks})
    for before, after in zip(phases, phases[1:], strict=False):
        for u in (x for x in tasks if x.phase == before):
            for w in (x for x in tasks if x.phase == after):
                _add(plan, u.id, w.id)


# ---------------------------------------------------------------------------
# Explicit statements

_DEPENDS = re.compile(r"(\()?\s*depends\s+on\b[\s:_*]*", re.IGNORECASE)
_END = re.compile(r"\.(?=\s|$)|;|\s[—–·|]\s|_(?=\s|$)|\*")
_NONE = re.compile(r"(?:none|nothing|n/a)\b|[—–-](?:\s|$)", re.IGNORECASE)
_SPLIT = re.compile(r"\s*(?:,|\+|&|\band\b)\s*", re.IGNORECASE)
_ONE = re.compile(r"(?:task\s+)?[Tt]?(\d+(?:\.\d+)*)$", re.IGNORECASE)
_SPAN = re.compile(r"(?:tasks?\s+)?[Tt]?(\d+)\s*(?:\.\.|–|—|-|to)\s*[Tt]?(\d+)$", re.IGNORECASE)


def _ids(value: str) -> list[str] | None:
    """The ids of a dependency value, or None when a token is not an id."""
    value = re.sub(r"\([^()]*\)", " ", value).strip().strip("*_ .`")
    if not value or _NONE.match(value):
        return []
    out: list[str] = []
    for token in _SPLIT.split(value):
        token = token.strip().strip("*_`")
        if one := _ONE.match(token):
            out.append(_canonical(one.group(1)))
        elif (span := _SPAN.match(token)) and int(span.group(1)) <= int(span.group(2)):
            out += [str(k) for k in range(int(span.group(1)), int(span.group(2)) + 1)]
        elif token:
            return None
    return out


def _depends(plan: Plan, tid: str, lineno: int, text: str) -> None:
    for m in _DEPENDS.finditer(text):
        before = text[: m.start()].rstrip(" \t*_-")
        if before and before[-1] not in ".;:—–·|(!?" and not m.group(1):
            continue  # "the table US2 depends on": mid-sentence, prose
        rest = text[m.end() :]
        if m.group(1):  # "(depends on T3)": the clause ends with its parenthesis
            value = rest.split(")", 1)[0]
        else:
            end = _END.search(rest)
            value = rest[: end.start()] if end else rest
        deps = _ids(value)
        if deps is None:
            plan.unread.append(Unread(lineno, tid, m.group(0) + value))
            continue
        for dep in deps:
            _add(plan, dep, tid, stated=True)
            plan.stated.setdefault((dep, tid), set()).add(lineno)


_LABELLED = re.compile(r"[>\s*-]*(?:DAG|Order|Critical path)\s*:\s*(.*)", re.IGNORECASE)
_ARROW = re.compile(r"\s*(?:→|->)\s*")


def _labelled_chains(plan: Plan, lines: list[str]) -> None:
    """``Critical path: T1 → T4 → T9`` on a line of its own: each arrow is an edge."""
    for n, raw in enumerate(lines, start=1):
        m = _LABELLED.match(raw)
        if not m or not _ARROW.search(m.group(1)):
            continue
        groups = [
            _ids(g.replace("{", "").replace("}", "").replace("/", ","))
            for g in _ARROW.split(m.group(1).strip().rstrip("."))
        ]
        if any(g is None for g in groups):
            plan.unread.append(Unread(n, "", raw))
            continue
        for left, right in zip(groups, groups[1:], strict=False):
            for dep in left or []:
                for task in right or []:
                    _add(plan, dep, task, stated=True)
                    plan.stated.setdefault((dep, task), set()).add(n)
