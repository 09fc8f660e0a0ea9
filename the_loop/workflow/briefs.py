"""Briefs: what an agent needs for the next step, and nothing more.

Each brief names the files to read (only those the step needs), what to
produce and what done means. They are rendered from ``templates/briefs/`` and
stay factual: statements, not exhortations. The resume brief is bounded (a
few thousand characters) whatever the length of the log.
"""

from __future__ import annotations

from pathlib import Path

from the_loop.checkpoint.resets import open_resets
from the_loop.config.state_folder import journal_exists
from the_loop.errors import LoopError
from the_loop.io.templating import render
from the_loop.log.execution_log import LogEntry, read_log
from the_loop.tasks import TaskState
from the_loop.workflow.answer_limits import LIST_LIMIT, capped
from the_loop.workflow.item_report import ItemReport, relative
from the_loop.workflow.next_action import Action, next_action
from the_loop.workflow.next_answer import next_view

_GUIDANCE = {
    "brainstorm": "Explore the idea, the open questions and the options; it is the root "
    "artifact the requirements will be derived from.",
    "bugfix": "The summary, steps to reproduce, expected vs actual, the root cause, and "
    "numbered acceptance criteria under `## Acceptance criteria` (read as AC1, AC2, …; "
    "tasks cite those ids).",
    "requirements": "User stories with numbered, testable acceptance criteria (WHEN … THEN "
    "the system SHALL …) under `### R<n> — title` headings, and a Security "
    "considerations section.",
    "design": "Architecture, components and interfaces, data models, error handling, "
    "security design and testing strategy that meet every requirement.",
    "testing-plan": "How the work item will be proved: a test matrix, the scenarios with "
    "the requirement each one traces to, the verification environment, the evidence "
    "to keep, and the verification results once the plan has run.",
    "tasks": "A DAG of small, verifiable tasks: `- [ ] N. title` with `_Depends on:_`, "
    "`_Requirements:_` (ids from the requirements) and `_Test:_` (a command in "
    "backticks) sub-bullets.",
}
_UPSTREAM = {
    "brainstorm": (),
    "requirements": ("brainstorm",),
    "design": ("requirements",),
    "testing-plan": ("requirements", "design"),
    "tasks": ("requirements", "design", "testing-plan"),
}
_RESUME_LIMIT = 8000  # characters, about 2,000 tokens
# The resume brief's layout, for a continuation agent that reads it as its state file:
# 2 added the remaining ids, the files each finished task touched (from git), the
# decisions logged and the test last run.
RESUME_FORMAT = 2
_FILES_PER_TASK = 8
_DECISIONS = 5
_LIST_LIMIT = 10


def _path(report: ItemReport, kind: str) -> str:
    art = report.item.artifact(kind) if kind != "execution-log" else report.item.artifacts[kind]
    return relative(art.path, report.ctx.project.root)


def _resume(report: ItemReport) -> str | None:
    entry = report.last_entry
    return entry.next if entry and entry.next else None


def brief(report: ItemReport, action: Action) -> str:
    """The brief for ``action`` on ``report``'s item."""

    common = {"item": report.id, "title": report.title, "action": action, "resume": _resume(report)}
    if action.kind in ("write", "revise") and action.artifact:
        return render("briefs/artifact.md.j2", **common, **_artifact_context(report, action))
    if action.kind in ("approve", "reapprove") and action.artifact:
        lock = report.locks[action.artifact]
        return render(
            "briefs/approve.md.j2",
            **common,
            target=_path(report, action.artifact),
            status=lock.label
            if not lock.stale
            else "stale (" + "; ".join(lock.stale_reasons) + ")",
        )
    if action.kind == "adopt":
        return render(
            "briefs/adopt.md.j2",
            **common,
            ticks=report.unrecorded_ticks,
            tasks_path=_path(report, "tasks"),
        )
    if action.kind == "implement" and action.task:
        return render("briefs/task.md.j2", **common, **_task_context(report, action.task))
    if action.kind in ("review", "done"):
        done, total = report.counts
        return render(
            "briefs/review.md.j2",
            **common,
            done=done,
            total=total,
            read=_review_reads(report),
            log_path=_path(report, "execution-log"),
        )
    return render("briefs/blocked.md.j2", **common)


def _artifact_context(report: ItemReport, action: Action) -> dict[str, object]:
    kind = action.artifact or "requirements"
    read = [
        (_path(report, up), "approved upstream; derive from it")
        for up in _UPSTREAM[kind]
        if report.locks[up].exists
    ]
    lock = report.locks[kind]
    if lock.exists:
        label = "" if lock.label == "draft" else f"{lock.label} "
        read.append((_path(report, kind), f"the {label}draft to finish"))
    done = []
    if kind == "tasks":
        done.append(f"`loop check {report.id}` reports no errors for tasks.md")
    if kind in ("requirements",):
        done.append("each criterion is testable and numbered, so tasks can cite it")
    word = report.item.word(kind)
    return {
        "read": read,
        "target": _path(report, kind),
        "status": lock.label,
        "guidance": _GUIDANCE[word],
        "done": done,
        "approve_as": word,
    }


def _task_context(report: ItemReport, task_id: str) -> dict[str, object]:

    assert report.dag is not None
    task = report.dag.task(task_id)
    cited = [view for view in next_view(report).tasks if view.task.id == task_id]
    requirements = cited[0].requirements if cited else ()
    tasks_path = _path(report, "tasks")
    read = [(f"{tasks_path}:{task.line}-{task.end_line}", "this task")]
    if report.locks["design"].exists:
        read.append(
            (_path(report, "design"), "the approved design (the sections this task touches)")
        )
    done, total = report.counts
    depends = task.depends_on or ()
    return {
        "task": task,
        "depends_shown": capped(depends, LIST_LIMIT),
        "depends_more": max(0, len(depends) - LIST_LIMIT),
        "tasks_path": tasks_path,
        "requirements": requirements,
        "read": read,
        "done": done,
        "total": total,
        "verify": report.config.checkpoint.verify_tests,
    }


def _review_reads(report: ItemReport) -> list[tuple[str, str]]:
    reads = [
        (_path(report, "requirements"), "what was asked"),
        (_path(report, "design"), "what was agreed"),
        (_path(report, "tasks"), "what was done"),
        (_path(report, "execution-log"), "how it went; record review rounds here"),
    ]
    return [r for r in reads if (report.ctx.project.root / r[0].split(":")[0]).exists()]


def resume_brief(report: ItemReport) -> str:
    """Where to pick up after a reset, in about 2,000 tokens at most."""

    action = next_action(report)
    tasks = report.tasks.tasks if report.tasks else ()
    dag = report.dag
    in_progress = [t for t in tasks if t.state is TaskState.IN_PROGRESS][:_LIST_LIMIT]
    # A task in progress is not also "ready": it is taken.
    ready_ids = [t for t in dag.ready if t not in {i.id for i in in_progress}] if dag else []
    ready = [dag.task(t) for t in ready_ids[:_LIST_LIMIT]] if dag else []
    done, total = report.counts
    handoff = _handoff(report)
    read: list[tuple[str, str]] = []
    if action.kind == "implement" and action.task:
        read = _task_context(report, action.task)["read"]  # type: ignore[assignment]
    elif action.kind in ("write", "revise"):
        read = _artifact_context(report, action)["read"]  # type: ignore[assignment]
    text = render(
        "briefs/resume.md.j2",
        item=report.id,
        title=report.title,
        phase=report.phase.implied,
        recorded=report.phase.recorded,
        relation=report.phase.relation,
        done=done,
        total=total,
        entry=report.last_entry,
        in_progress=in_progress,
        ready=ready,
        ready_count=len(ready_ids),
        format_version=RESUME_FORMAT,
        **handoff,
        open_count=total - done,
        action=action,
        read=read,
        resets=open_resets(report.ctx.project.root, report.id),
    )
    root = report.ctx.project.root
    journal = None
    if journal_exists(root):
        from the_loop.checkpoint import transaction

        journal = transaction.pending(root)
    anchor = _anchor_warning(report)
    if anchor:
        text = anchor + text
    if journal is not None:
        # The last entry may be half-written: say so before anything is trusted.
        text = (
            f"WARNING: checkpoint {journal.plan.id} ({journal.plan.summary}) was "
            "interrupted; the last log entry may be incomplete. Run `loop doctor --repair` "
            "first.\n\n"
        ) + text
    if len(text) > _RESUME_LIMIT:
        text = text[: _RESUME_LIMIT - 40].rstrip() + "\n… (brief truncated at its size budget)\n"
    return text


def _anchor_warning(report: ItemReport) -> str:
    """A warning when the last checkpointed entry differs from what its commit recorded."""
    from the_loop.checkpoint.anchor import anchor_problem

    log = report.item.artifacts["execution-log"].path
    try:
        problem = anchor_problem(report.ctx.project.root, log)
    except LoopError:
        return ""  # git cannot answer: the brief stands without the comparison
    if problem is None:
        return ""
    shown = relative(log, report.ctx.project.root)
    return f"WARNING: {problem.sentence()}. {problem.hint(Path(shown))}\n\n"


def _handoff(report: ItemReport) -> dict[str, object]:
    """What a continuation agent needs beyond the last Next: (format ``RESUME_FORMAT``)."""
    tasks = report.tasks.tasks if report.tasks else ()
    remaining = [t.id for t in tasks if t.state is not TaskState.DONE]
    finished = [t for t in tasks if t.state is TaskState.DONE]
    touched: list[tuple[str, list[str], int]] = []
    if finished:
        touched = _touched(report, [t.id for t in finished])
    entries = _log_entries(report)
    decisions = [
        f"{e.stamp}: {value}"
        for e in entries
        for key, value in e.fields.items()
        if key.lower().startswith("decision")
    ][-_DECISIONS:]
    tested = next((e for e in reversed(entries) if e.fields.get("tests")), None)
    return {
        "remaining": capped(remaining, 3 * _LIST_LIMIT),
        "remaining_more": max(0, len(remaining) - 3 * _LIST_LIMIT),
        "touched": touched,
        "decisions": decisions,
        "last_test": f"{tested.fields['tests']} ({tested.stamp})" if tested else None,
    }


def _touched(report: ItemReport, done: list[str]) -> list[tuple[str, list[str], int]]:
    """``(task, files, files not shown)`` for the newest finished tasks, from git."""
    from the_loop.git.history import task_files  # git only when a task is finished

    root = report.ctx.project.root
    try:
        found = task_files(root, report.id, report.item.artifacts["execution-log"].path) or {}
    except LoopError:
        return []
    folder = relative(report.item.path, root).rstrip("/") + "/"
    rows = []
    for task in done[-_LIST_LIMIT:]:
        files = [f for f in found.get(task, ()) if not f.startswith(folder)]
        rows.append((task, files[:_FILES_PER_TASK], max(0, len(files) - _FILES_PER_TASK)))
    return rows


def _log_entries(report: ItemReport) -> tuple[LogEntry, ...]:
    log = report.item.artifacts["execution-log"].path
    if not log.is_file():
        return ()
    try:
        return read_log(log).entries
    except LoopError:
        return ()
