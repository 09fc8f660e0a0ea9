"""``loop next``: the next task with everything an agent needs to start it.

The JSON answer is bounded whatever the size of the plan (see
``the_loop.workflow.answer_limits``): the ready tasks, what blocks whom and a
task's dependencies are capped beside their counts, and ``more`` names the
command that prints everything (``--full``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice

from the_loop.findings import Level
from the_loop.tasks import Task
from the_loop.workflow.answer_limits import LIST_LIMIT, capped
from the_loop.workflow.item_report import ItemReport, relative

_BLOCKED_SHOWN = 20


@dataclass(frozen=True)
class TaskView:
    """One task as ``loop next`` presents it."""

    task: Task
    path: str
    requirements: tuple[tuple[str, str, str], ...]  # (id, text, file:line)

    def to_json(self, limit: int | None = LIST_LIMIT) -> dict[str, object]:
        """The task as JSON; ``dependsOn`` holds at most ``limit`` ids (None: all)."""
        from the_loop.tasks import test_command  # the value grammar: not on a cached answer

        t = self.task
        depends = t.depends_on or ()
        return {
            "id": t.id,
            "label": t.label,
            "title": t.title,
            "state": t.state.value,
            "line": t.line,
            "path": self.path,
            "dependsOn": capped(depends, limit),
            "dependsOnCount": len(depends),
            "requirements": [{"id": i, "text": x, "where": w} for i, x, w in self.requirements],
            "test": t.test,
            "testCommand": test_command(t),
            "details": list(t.details),
        }

    def render(self) -> str:
        t = self.task
        lines = [f"task {t.id}: {t.title}  ({self.path}:{t.line}, {t.state.value})"]
        if t.depends_on:
            lines.append(f"  depends on: {', '.join(t.depends_on)} (all done)")
        for req_id, text, where in self.requirements:
            lines.append(f"  requires {req_id}: {text}  ({where})")
        if t.test:
            lines.append(f"  test: {t.test}")
        lines.extend(f"  - {d}" for d in t.details)
        return "\n".join(lines)


@dataclass(frozen=True)
class NextView:
    """The answer of ``loop next``.

    ``tasks`` holds the views built (the first ``limit`` of the chosen tasks);
    ``ready_count`` counts every chosen one; ``limit`` None means everything.
    """

    item: str
    tasks: tuple[TaskView, ...]
    blocked: Mapping[str, tuple[str, ...]]
    done: int
    total: int
    errors: int
    message: str
    ready_count: int = 0
    limit: int | None = None
    all_ready: bool = False

    @property
    def failing(self) -> bool:
        stuck = not self.tasks and self.done < self.total
        return stuck or self.errors > 0

    def to_json(self) -> dict[str, object]:
        """The JSON answer; lists capped at ``limit`` beside their full counts."""
        limit = self.limit
        views = self.tasks if limit is None else self.tasks[:limit]
        blocked = dict(islice(self.blocked.items(), limit))
        cut = limit is not None and (
            len(views) < self.ready_count
            or len(blocked) < len(self.blocked)
            or any(len(holders) > limit for holders in blocked.values())
            or any(len(view.task.depends_on or ()) > limit for view in views)
        )
        answer: dict[str, object] = {
            "item": self.item,
            "next": views[0].to_json(limit) if views else None,
            "ready": [t.to_json(limit) for t in views],
            "readyCount": self.ready_count,
            "done": self.done,
            "total": self.total,
            "blockedBy": {k: capped(v, limit) for k, v in blocked.items()},
            "blockedByCount": len(self.blocked),
            "graphErrors": self.errors,
            "message": self.message,
            "truncated": cut,
        }
        if cut:
            every = " --all-ready" if self.all_ready else ""
            answer["more"] = f"loop next {self.item}{every} --json --full"
        return answer

    def render(self) -> str:
        parts = [f"{self.item}: {self.message}"]
        parts.extend(view.render() for view in self.tasks)
        if self.blocked:
            shown = list(islice(self.blocked.items(), _BLOCKED_SHOWN))
            waits = "; ".join(f"{k} waits for {', '.join(v)}" for k, v in shown)
            more = len(self.blocked) - len(shown)
            parts.append("not ready: " + waits + (f"; and {more} more" if more > 0 else ""))
        return "\n".join(parts) + "\n"


def next_view(report: ItemReport, *, all_ready: bool = False, limit: int | None = None) -> NextView:
    """The next task (or every ready task) of ``report``'s item.

    ``limit`` bounds the lists of the JSON answer (None: everything).
    """
    dag = report.dag
    if dag is None:
        message = "no tasks.md yet: " + _first_steps(report)
        return NextView(report.id, (), {}, 0, 0, 0, message, 0, limit, all_ready)
    chosen = dag.ready if all_ready else ((dag.next,) if dag.next else ())
    views = tuple(_task_view(report, dag.task(task_id)) for task_id in capped(chosen, limit))
    # Errors reading tasks.md count too: a dependency that could not be read makes
    # "ready" unreliable (the task may wait for something loop cannot see).
    parsed = report.tasks.findings if report.tasks else ()
    errors = sum(1 for f in (*dag.findings, *parsed) if f.level is Level.ERROR)
    if views:
        message = (
            f"{len(chosen)} ready task(s)" if all_ready else "next task"
        ) + f" ({dag.done}/{dag.total} done)"
    elif not dag.total:
        # Never "all 0 tasks are done": a plan loop read as empty is not finished work.
        message = f"tasks.md lists no task loop can read; `loop check {report.id}` says why"
    elif dag.done == dag.total:
        message = f"all {dag.total} tasks are done"
    else:
        message = (
            f"no task can start ({dag.done}/{dag.total} done); `loop check {report.id}` says why"
        )
    if errors:
        message += f"; tasks.md has {errors} error(s): `loop check {report.id}`"
    unrecorded = len(report.unrecorded_ticks)
    if unrecorded:
        # A tick without its checkpoint is not finished work; say so wherever done is counted.
        message += (
            f"; {unrecorded} ticked without a checkpoint (`loop status {report.id}` lists them)"
        )
    return NextView(
        report.id,
        views,
        dag.blocked_by,
        dag.done,
        dag.total,
        errors,
        message,
        len(chosen),
        limit,
        all_ready,
    )


def next_answer(
    report: ItemReport, *, all_ready: bool = False, limit: int | None = LIST_LIMIT
) -> tuple[dict[str, object], bool]:
    """``loop next --json``: the answer and whether it fails (exit 1).

    The answer is made of tasks.md and the requirements alone (and, once a task
    is ticked, of the log, whose checkpoints say which ticks are unrecorded), so
    it is kept in the parse cache under their content hashes: a warm call loads
    neither the graph analysis nor the parsers.
    """

    def compute() -> tuple[dict[str, object], bool]:
        view = next_view(report, all_ready=all_ready, limit=limit)
        return view.to_json(), view.failing

    root = report.ctx.project.root
    tasks = report.item.artifacts["tasks"]
    kinds: tuple[str, ...] = ("tasks", "requirements")
    if tasks.exists and report.counts[0]:
        kinds += ("execution-log",)  # the ticks' checkpoints are read from it
    key = (
        report.answer_key(kinds, "next", all_ready, limit, str(root))
        if tasks.exists
        else None  # the answer is then the next action, which depends on more
    )
    if key is None:
        return compute()
    return report.cache.cached(
        "next",
        tasks.path,
        key,
        compute,
        trust_stat=False,
        decode=lambda plain: (dict(plain[0]), bool(plain[1])),
    )


def _first_steps(report: ItemReport) -> str:
    from the_loop.workflow.next_action import next_action

    return next_action(report).text


def _task_view(report: ItemReport, task: Task) -> TaskView:
    root = report.ctx.project.root
    reqs = report.requirements
    cited: list[tuple[str, str, str]] = []
    if reqs is not None:
        from the_loop.spec.traceability import resolve_citation

        for cited_id in task.requirements:
            for req_id in resolve_citation(reqs, cited_id):
                requirement = reqs.ids[req_id]
                where = f"{relative(reqs.path, root)}:{requirement.line}"
                cited.append((req_id, requirement.text, where))
    path = relative(report.tasks.path, root) if report.tasks else ""
    return TaskView(task, path, tuple(cited))
