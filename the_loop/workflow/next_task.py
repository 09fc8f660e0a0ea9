"""``loop next``: the next task with everything an agent needs to start it."""

from __future__ import annotations

from dataclasses import dataclass

from the_loop.findings import Level
from the_loop.spec.traceability import resolve_citation
from the_loop.tasks import Task, test_command
from the_loop.workflow.item_report import ItemReport, relative
from the_loop.workflow.next_action import next_action

_BLOCKED_SHOWN = 20


@dataclass(frozen=True)
class TaskView:
    """One task as ``loop next`` presents it."""

    task: Task
    path: str
    requirements: tuple[tuple[str, str, str], ...]  # (id, text, file:line)

    def to_json(self) -> dict[str, object]:
        t = self.task
        return {
            "id": t.id,
            "label": t.label,
            "title": t.title,
            "state": t.state.value,
            "line": t.line,
            "path": self.path,
            "dependsOn": list(t.depends_on or ()),
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
    """The answer of ``loop next``."""

    item: str
    tasks: tuple[TaskView, ...]
    blocked: dict[str, tuple[str, ...]]
    done: int
    total: int
    errors: int
    message: str

    @property
    def failing(self) -> bool:
        stuck = not self.tasks and self.done < self.total
        return stuck or self.errors > 0

    def to_json(self) -> dict[str, object]:
        return {
            "item": self.item,
            "next": self.tasks[0].to_json() if self.tasks else None,
            "ready": [t.to_json() for t in self.tasks],
            "done": self.done,
            "total": self.total,
            "blockedBy": {k: list(v) for k, v in self.blocked.items()},
            "graphErrors": self.errors,
            "message": self.message,
        }

    def render(self) -> str:
        parts = [f"{self.item}: {self.message}"]
        parts.extend(view.render() for view in self.tasks)
        if self.blocked:
            shown = list(self.blocked.items())[:_BLOCKED_SHOWN]
            waits = "; ".join(f"{k} waits for {', '.join(v)}" for k, v in shown)
            more = len(self.blocked) - len(shown)
            parts.append("not ready: " + waits + (f"; and {more} more" if more > 0 else ""))
        return "\n".join(parts) + "\n"


def next_view(report: ItemReport, *, all_ready: bool = False) -> NextView:
    """The next task (or every ready task) of ``report``'s item."""
    dag = report.dag
    if dag is None:
        return NextView(report.id, (), {}, 0, 0, 0, "no tasks.md yet: " + _first_steps(report))
    chosen = list(dag.ready) if all_ready else ([dag.next] if dag.next else [])
    views = tuple(_task_view(report, dag.task(task_id)) for task_id in chosen)
    # Errors reading tasks.md count too: a dependency that could not be read makes
    # "ready" unreliable (the task may wait for something loop cannot see).
    parsed = report.tasks.findings if report.tasks else ()
    errors = sum(1 for f in (*dag.findings, *parsed) if f.level is Level.ERROR)
    if views:
        message = (
            f"{len(views)} ready task(s)" if all_ready else "next task"
        ) + f" ({dag.done}/{dag.total} done)"
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
    return NextView(report.id, views, dict(dag.blocked_by), dag.done, dag.total, errors, message)


def _first_steps(report: ItemReport) -> str:

    return next_action(report).text


def _task_view(report: ItemReport, task: Task) -> TaskView:
    root = report.ctx.project.root
    reqs = report.requirements
    cited: list[tuple[str, str, str]] = []
    if reqs is not None:
        for cited_id in task.requirements:
            for req_id in resolve_citation(reqs, cited_id):
                requirement = reqs.ids[req_id]
                where = f"{relative(reqs.path, root)}:{requirement.line}"
                cited.append((req_id, requirement.text, where))
    path = relative(report.tasks.path, root) if report.tasks else ""
    return TaskView(task, path, tuple(cited))
