"""Traceability: the tasks' citations against the ids the requirements file defines.

``trace`` reports undefined ids and uncovered requirements; ``coverage`` maps
every requirement id to the tasks that cover it; ``resolve_citation`` says which
defined ids one citation names. No LLM: plain ids, read by
``the_loop.spec.requirements`` and ``the_loop.tasks``.

How a citation finds its ids, in order (the first rule that finds one wins):

1. an id the file defines, or an alias of one (an ``(AC7)`` marker);
2. ``ACn.m`` or a bare ``n.m`` → ``Rn.m`` (criterion m of Requirement n);
3. ``ACn`` → ``Rn`` (all of Requirement n), when the file defines no ``AC`` id;
4. ``REQn`` (``req 2``) → ``Rn``, else ``ACn``;
5. ``NFR`` (alone or with a word) → the non-functional section: never an error.

A range (``AC2.1–2.3``) was expanded by the tasks reader, so each id maps on its
own. Citing ``R2`` covers ``R2`` and all its criteria; citing ``R2.1`` covers
``R2.1`` and leaves ``R2`` *partly* covered; ``all`` covers everything.

The confidence rule (docs/formats.md): a citation is an **error**
(``trace.undefined``) only when the file was read completely (no line that looks
like a definition went unread) and no rule finds the id. When part of the file
was not understood, the same citation is a warning (``trace.unconfirmed``): the
id may be defined in the part loop could not read. A citation of a family the
file does not use at all (``D2`` for a design decision, ``A5`` for an abuse
case) names something else: an info (``trace.other-reference``). The R family
is always a requirement family: ``R2`` against a file of ``AC1``–``AC4`` is an
error whose hint names the ``AC`` id meant.

Coverage (for the requirement families R, AC, FR, NFR and REQ; other
families, such as abuse cases ``A1`` or a table of call sites ``C1``, may be
cited but are not owed a task): a requirement that nothing covers is one warning
at its heading,
however many criteria it has; when a requirement is partly covered, each of its
criteria that no task cites is a warning of its own. A file that defines no ids
while tasks cite some is one warning (no per-citation findings). Tasks that cite
nothing at all mean traceability is not in use: one info, nothing else. When it
is in use, a task citing nothing is an info.

Story-level tracing (Spec Kit's way: tasks tagged ``[US1]``, never an ``FR-`` id):
when every citation names a user story or one of its scenarios, the file never
says which task delivers which ``FR-001``, so those are not judged (one info,
``trace.story-level``); instead each user story is owed a task, and a story no
task cites is the warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from the_loop.errors import Where
from the_loop.findings import Finding, Level, sorted_findings
from the_loop.spec.requirements import ALL, RECOGNIZED_FORMS, Requirement, RequirementSet, short
from the_loop.tasks import Task, TaskList

# Families that always name requirements: a citation of one that is not found is
# an undefined requirement, never "something else".
REQUIREMENT_FAMILIES = frozenset({"R", "AC", "FR", "NFR", "REQ"})
NFR = "NFR"
# Ids of these families are owed a task; any other family a file defines (`US1`
# user stories, whose criteria carry the ids tasks cite; `A2` abuse cases; `C1`
# call sites in a table) can be cited, but an uncited one is not reported.
_COVERED_FAMILIES = REQUIREMENT_FAMILIES
STORY = "US"  # Spec Kit's `### User Story N`, scenarios `USn.m`
_CITED_ID = re.compile(r"^([A-Z]*)([0-9].*)$")
_TOPS = "\0tops"  # the hints cache key of the list of top-level ids


def _family_of(req_id: str) -> str:
    m = _CITED_ID.match(req_id)
    return m.group(1) if m else req_id


def resolve_citation(reqs: RequirementSet, cited: str) -> tuple[str, ...]:
    """The defined ids ``cited`` names (rules in the module doc); ``()`` when none."""
    found = reqs.resolve(cited)
    if found is not None:
        return (found,)
    m = _CITED_ID.match(cited)
    if m is None:
        return ()
    family, number = m.groups()
    candidates: list[str] = []
    if family in ("AC", "") and "." in number:
        candidates.append(f"R{number}")
    elif family == "AC" and not _uses_family(reqs, "AC"):
        candidates.append(f"R{number}")
    elif family == "REQ":
        candidates += [f"R{number}", f"AC{number}"]
    for candidate in candidates:
        found = reqs.resolve(candidate)
        if found is not None:
            return (found,)
    return ()


def _uses_family(reqs: RequirementSet, family: str) -> bool:
    return family in reqs.families


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
    families = reqs.families
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
                continue
            found = resolve_citation(reqs, cited)
            if found:
                covered.update(found)
                continue
            finding = _unresolved(task, tasks, cited, reqs, families, children, hints)
            if finding is not None:
                findings.append(finding)
    if not cites_all:
        by_story = bool(covered) and all(_family_of(req_id) == STORY for req_id in covered)
        owed = frozenset({STORY}) if by_story else _COVERED_FAMILIES
        findings.extend(_uncovered(reqs, covered, children, owed))
        if by_story:
            findings.extend(_story_level(reqs))
    return sorted_findings(findings)


def _story_level(reqs: RequirementSet) -> Iterable[Finding]:
    """One info: the requirements tasks cannot be traced to, when they cite stories only."""
    owed = [r for r in reqs.ids.values() if _family_of(r.id) in _COVERED_FAMILIES]
    if not owed:
        return
    first = min(owed, key=lambda r: r.line or 0)
    yield Finding(
        Level.INFO,
        "trace.story-level",
        f"tasks cite user stories only ([{STORY}n]), so which task delivers each of the "
        f"{len(owed)} requirement(s) from {first.id} on is not stated: their coverage is "
        "judged per story",
        Where(reqs.path, first.line),
        hint=f"cite {first.id} (and the others) in the tasks that deliver them to have "
        "each one traced",
    )


def _unresolved(
    task: Task,
    tasks: TaskList,
    cited: str,
    reqs: RequirementSet,
    families: frozenset[str],
    children: Mapping[str, list[Requirement]],
    hints: dict[str, str],
) -> Finding | None:
    """The finding for a citation no rule resolves: error, warning or info (module doc)."""
    where = Where(tasks.path, task.requirements_line or task.line)
    name = reqs.path.name
    m = _CITED_ID.match(cited)
    family = m.group(1) if m else cited
    if family == NFR and cited == NFR:
        if reqs.nfr_line is not None or _uses_family(reqs, NFR):
            return None
        return Finding(
            Level.INFO,
            "trace.nfr-unresolved",
            f"task {task.id} cites the non-functional requirements, but {name} has no "
            "non-functional section",
            where,
            hint="add a `## Non-functional requirements` section, or cite a requirement id",
        )
    if family == "" and "." in cited:
        family = "R"  # a bare `3.9` is criterion 9 of Requirement 3
    if family not in REQUIREMENT_FAMILIES and family not in families:
        if _TOPS not in hints:  # computed once per trace, not per citation
            hints[_TOPS] = _ranges(_tops(reqs))
        return Finding(
            Level.INFO,
            "trace.other-reference",
            f"task {task.id} cites {cited}, and {name} defines no {family or 'bare'} ids: "
            "read as a reference to something else (a design decision, an abuse case, a "
            "test), not checked",
            where,
            hint=f"cite requirement ids of {name} ({hints[_TOPS]}) to have them traced",
        )
    if cited not in hints:
        hints[cited] = _closest(cited, reqs, children)
    labelled = reqs.labels.get(cited) or reqs.labels.get(f"R{cited}")
    if labelled is not None:
        return Finding(
            Level.WARNING,
            "trace.unconfirmed",
            f"task {task.id} cites {cited}, which {name} writes at line {labelled} in a form "
            "loop did not read as a definition; it is not checked",
            where,
            hint=f"write it as a labelled criterion (`- **{cited}** …`) to have it traced",
        )
    unread = reqs.not_understood()
    if unread is None:
        return Finding(
            Level.ERROR,
            "trace.undefined",
            f"task {task.id} cites {cited}, which {name} does not define",
            where,
            hint=hints[cited],
        )
    return Finding(
        Level.WARNING,
        "trace.unconfirmed",
        f"task {task.id} cites {cited}, which is not among the ids read from {name}; "
        f"line {unread.where.line if unread.where else '?'} of it was not understood, so "
        f"{cited} may be defined there",
        where,
        hint=hints[cited],
    )


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
        for found in resolve_citation(reqs, cited):
            req = reqs.ids[found]
            hit[found] = None
            hit.update(dict.fromkeys(child.id for child in children.get(found, ())))
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
    reqs: RequirementSet,
    covered: set[str],
    children: Mapping[str, list[Requirement]],
    owed: frozenset[str] = _COVERED_FAMILIES,
) -> Iterable[Finding]:
    """One warning per uncovered requirement, or per uncovered criterion of a partly covered
    one, of the families ``owed`` a task."""
    for req in reqs.ids.values():
        if req.parent in reqs.ids or req.id in covered:
            continue  # criteria are judged with their requirement
        if _family_of(req.id) not in owed:
            continue  # `A2` (an abuse case), `C1` (a call site): citable, not owed a task
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
    if _family_of(req.id) == STORY:
        hint = f"tag the tasks that deliver it `[{req.id}]`"
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
        Where(tasks.path, tasks.tasks[0].line),
        hint="give tasks a `_Requirements:_ R1, R2.3` sub-bullet to have coverage checked",
    )


def _tops(reqs: RequirementSet) -> list[str]:
    return [req.id for req in reqs.ids.values() if req.parent not in reqs.ids]


def _no_ids(reqs: RequirementSet, tasks: TaskList) -> Finding:
    cited = dict.fromkeys(c for task in tasks.tasks for c in task.requirements)
    shown = ", ".join(list(cited)[:3]) + (", …" if len(cited) > 3 else "")
    return Finding(
        Level.WARNING,
        "trace.no-ids",
        f"{reqs.path.name} defines no requirement ids, but tasks cite {shown}; "
        "citations cannot be checked",
        Where(reqs.path, 1),
        hint=f"recognized: {RECOGNIZED_FORMS}",
    )


_CITED = re.compile(r"^([A-Z]*)([0-9]+[a-z]?)(?:\.([0-9]+[a-z]?))?$")


def _closest(cited: str, reqs: RequirementSet, children: Mapping[str, list[Requirement]]) -> str:
    """A hint naming the defined ids nearest to an undefined citation."""
    name = reqs.path.name
    m = _CITED.match(cited)
    if m and m.group(3) is not None:
        for parent in dict.fromkeys((f"{m.group(1)}{m.group(2)}", f"R{m.group(2)}")):
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
        if m.group(1) != "AC" and reqs.resolve(ac) is not None:
            acs = [i for i in (*reqs.ids, *reqs.aliases) if _CITED.match(i) and i[:2] == "AC"]
            acs.sort(key=lambda i: int(re.sub(r"[^0-9].*$", "", i[2:]) or 0))
            return f"{name} numbers its acceptance criteria {_ranges(acs)}: did you mean {ac}?"
    return f"{name} defines {_ranges(_tops(reqs))}"


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
