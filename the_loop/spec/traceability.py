"""Traceability: the tasks' ``_Requirements:_`` citations against the defined ids.

``trace`` reports undefined ids and uncovered requirements; ``coverage`` maps
every requirement id to the tasks that cover it. No LLM: plain ids, read by
``the_loop.spec.requirements`` and ``the_loop.tasks``.

Traceability rules (``trace``):

* A cited id that is not defined is an error at the task's ``_Requirements:_``
  line, with the defined ids closest to it as the hint.
* Citing ``R2`` covers ``R2`` and all its criteria; citing ``R2.1`` covers
  ``R2.1`` and leaves ``R2`` *partly* covered; ``all`` covers everything.
* A requirement that nothing covers is one warning at its heading, however
  many criteria it has. When a requirement is partly covered, each of its
  criteria that no task cites is a warning of its own.
* A file that defines no ids while tasks cite some is one warning (the grammar
  did not match; no per-citation errors). Tasks that cite nothing at all mean
  traceability is not in use: one info, nothing else. When it is in use, a task
  citing nothing is an info.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from the_loop.errors import Where
from the_loop.findings import Finding, Level, sorted_findings
from the_loop.spec.requirements import ALL, RECOGNIZED_FORMS, Requirement, RequirementSet, short
from the_loop.tasks import Task, TaskList


def trace(reqs: RequirementSet, tasks: TaskList) -> list[Finding]:
    """Check the tasks' citations against the ids ``reqs`` defines (rules: module doc).

    Linear in the number of citations plus the number of ids.
    """
    if not tasks.tasks:
        return []  # no task list to trace; the tasks reader reports an empty one
    if not any(task.requirements for task in tasks.tasks):
        return [_no_references(tasks)]
    if not reqs.ids:
        return [_no_ids(reqs, tasks)]
    children = _children(reqs)
    hints: dict[str, str] = {}
    findings: list[Finding] = []
    covered: set[str] = set()
    cites_all = False
    for task in tasks.tasks:
        if not task.requirements:
            findings.append(_unlinked(task, tasks))
        for cited in task.requirements:
            if cited.lower() == ALL:
                cites_all = True
            elif cited in reqs.ids:
                covered.add(cited)
            else:
                if cited not in hints:
                    hints[cited] = _closest(cited, reqs, children)
                findings.append(_undefined(task, tasks, cited, reqs, hints[cited]))
    if not cites_all:
        findings.extend(_uncovered(reqs, covered, children))
    return sorted_findings(findings)


def coverage(reqs: RequirementSet, tasks: TaskList) -> Mapping[str, tuple[str, ...]]:
    """Every defined id → the ids of the tasks covering it, in task order.

    A task covers what it cites, every criterion of a requirement it cites, and
    everything when it cites ``all``. A task citing only some criteria of a
    requirement is listed under the requirement too (partial coverage: look at
    the criteria, or at ``trace``, to know whether all of them are covered).
    """
    children = _children(reqs)
    result: dict[str, list[str]] = {req_id: [] for req_id in reqs.ids}
    for task in tasks.tasks:
        for req_id in _covered_by(task, reqs, children):
            result[req_id].append(task.id)
    return MappingProxyType(
        {req_id: tuple(dict.fromkeys(task_ids)) for req_id, task_ids in result.items()}
    )


def _covered_by(
    task: Task, reqs: RequirementSet, children: Mapping[str, list[Requirement]]
) -> Iterable[str]:
    if any(cited.lower() == ALL for cited in task.requirements):
        return reqs.ids.keys()
    hit: dict[str, None] = {}
    for cited in task.requirements:
        req = reqs.ids.get(cited)
        if req is None:
            continue
        hit[cited] = None
        hit.update(dict.fromkeys(child.id for child in children.get(cited, ())))
        if req.parent is not None and req.parent in reqs.ids:
            hit[req.parent] = None  # partial coverage of the requirement
    return hit


def _children(reqs: RequirementSet) -> dict[str, list[Requirement]]:
    """Parent id → its criteria, in definition order (whether or not the parent is defined)."""
    result: dict[str, list[Requirement]] = {}
    for req in reqs.ids.values():
        if req.parent is not None:
            result.setdefault(req.parent, []).append(req)
    return result


def _uncovered(
    reqs: RequirementSet, covered: set[str], children: Mapping[str, list[Requirement]]
) -> Iterable[Finding]:
    """One warning per uncovered requirement, or per uncovered criterion of a partly covered one."""
    for req in reqs.ids.values():
        if req.parent in reqs.ids or req.id in covered:
            continue  # criteria are judged with their requirement
        kids = children.get(req.id, [])
        if not any(kid.id in covered for kid in kids):
            yield _uncovered_requirement(reqs, req, kids)
            continue
        for kid in kids:
            if kid.id not in covered:
                yield _uncovered_criterion(reqs, kid)


def _uncovered_requirement(
    reqs: RequirementSet, req: Requirement, kids: list[Requirement]
) -> Finding:
    if kids:
        message = (
            f'{req.id} "{short(req.text)}" is not covered: no task cites it '
            f"or any of its criteria ({_ranges([k.id for k in kids])})"
        )
        hint = f"cite {req.id} (or some of its criteria) in a task's _Requirements:_"
    else:
        message = f'{req.id} "{short(req.text)}" is not covered by any task'
        hint = f"cite {req.id} in a task's _Requirements:_"
    return Finding(
        Level.WARNING,
        "trace.uncovered",
        message,
        Where(reqs.path, req.line),
        hint=hint + ", or move it out of scope",
    )


def _uncovered_criterion(reqs: RequirementSet, kid: Requirement) -> Finding:
    return Finding(
        Level.WARNING,
        "trace.uncovered",
        f'{kid.id} "{short(kid.text)}" is not covered: tasks cite other criteria '
        f"of {kid.parent}, not this one",
        Where(reqs.path, kid.line),
        hint=f"cite {kid.id} (or {kid.parent} as a whole) in a task's _Requirements:_",
    )


def _undefined(task: Task, tasks: TaskList, cited: str, reqs: RequirementSet, hint: str) -> Finding:
    return Finding(
        Level.ERROR,
        "trace.undefined",
        f"task {task.id} cites {cited}, which {reqs.path.name} does not define",
        Where(tasks.path, task.requirements_line or task.line),
        hint=hint,
    )


def _unlinked(task: Task, tasks: TaskList) -> Finding:
    return Finding(
        Level.INFO,
        "trace.unlinked-task",
        f"task {task.id} cites no requirement",
        Where(tasks.path, task.line),
        hint="add `_Requirements:_` with the ids it delivers (or `all`)",
    )


def _no_references(tasks: TaskList) -> Finding:
    return Finding(
        Level.INFO,
        "trace.no-references",
        f"no task in {tasks.path.name} cites a requirement; traceability is not in use",
        Where(tasks.path),
        hint="give tasks a `_Requirements:_ R1, R2.3` sub-bullet to have coverage checked",
    )


def _no_ids(reqs: RequirementSet, tasks: TaskList) -> Finding:
    cited = dict.fromkeys(c for task in tasks.tasks for c in task.requirements)
    shown = ", ".join(list(cited)[:3]) + (", …" if len(cited) > 3 else "")
    return Finding(
        Level.WARNING,
        "trace.no-ids",
        f"{reqs.path.name} defines no requirement ids, but tasks cite {shown}; "
        "citations cannot be checked",
        Where(reqs.path),
        hint=f"recognized: {RECOGNIZED_FORMS}",
    )


_CITED = re.compile(r"^(NFR|FR|AC|R)([0-9]+)(?:\.([0-9]+))?$")


def _closest(cited: str, reqs: RequirementSet, children: Mapping[str, list[Requirement]]) -> str:
    """A hint naming the defined ids nearest to an undefined citation."""
    name = reqs.path.name
    m = _CITED.match(cited)
    if m and m.group(3) is not None:
        parent = f"{m.group(1)}{m.group(2)}"
        kids = children.get(parent)
        if kids:
            return f"{parent} has criteria {_ranges([k.id for k in kids])}"
        if parent in reqs.ids:
            return f"{parent} has no numbered criteria: cite {parent}"
    elif m:
        kids = children.get(cited)
        if kids:
            return f"{cited} is not defined itself, but {_ranges([k.id for k in kids])} are"
        ac = f"AC{m.group(2)}"
        if m.group(1) != "AC" and ac in reqs.ids:
            acs = [i for i in reqs.ids if i.startswith("AC")]
            return f"{name} numbers its acceptance criteria {_ranges(acs)}: did you mean {ac}?"
    tops = [req.id for req in reqs.ids.values() if req.parent not in reqs.ids]
    return f"{name} defines {_ranges(tops)}"


def _ranges(ids: list[str], limit: int = 12) -> str:
    """``R1–R4, R6`` for ids with consecutive numbers under the same stem."""
    runs: list[list[str]] = []
    previous: tuple[str, int] | None = None
    for req_id in ids:
        m = re.match(r"^(.*?)([0-9]+)$", req_id)
        key = (m.group(1), int(m.group(2))) if m else (req_id, -2)
        if runs and previous and key[0] == previous[0] and key[1] == previous[1] + 1:
            runs[-1].append(req_id)
        else:
            runs.append([req_id])
        previous = key
    parts = [f"{run[0]}–{run[-1]}" if len(run) > 2 else ", ".join(run) for run in runs[:limit]]
    return ", ".join(parts) + (", …" if len(runs) > limit else "")
