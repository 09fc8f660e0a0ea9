"""What ``status``, ``next``, ``check`` and ``graph`` print, computed without click.

Each function takes the project root, the current folder and the parsed options,
and returns an :class:`Answer`: the text for stdout (with colour codes, which
are stripped when stdout is not a terminal), what goes to stderr before and
after it, and the exit code. The click
commands in ``the_loop.cli.cmd_items`` and the quick path in
``the_loop.cli.quick`` both print these, so the two cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from the_loop.cli.text import (
    bad,
    dim,
    finding_line,
    good,
    heading,
    json_table_text,
    json_text,
    relative_finding,
    shown_path,
    warn,
)
from the_loop.errors import ExitCode, UsageError
from the_loop.workflow.item_report import ItemReport

TYPE_CHECKING = False  # typing is not imported at run time: it costs every cold start ~2 ms
if TYPE_CHECKING:
    from the_loop.workflow.status import ItemStatus


@dataclass(frozen=True)
class Answer:
    """What a report command prints (all of stdout and stderr) and its exit code.

    ``notes`` go to stderr before the answer (problems that did not stop the
    command, such as an item's bad override), ``errors`` after it.
    """

    text: str
    exit: int = 0
    notes: str = ""
    errors: str = ""


class NotesThenError(Exception):
    """An error met after ``notes`` were made: they are printed first, then ``error``."""

    def __init__(self, notes: str, error: Exception) -> None:
        super().__init__(str(error))
        self.notes = notes
        self.error = error


def _lines(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def problems_text(report: ItemReport) -> str:
    """The findings that did not stop a read-only command, as ``echo_problems`` prints them."""
    return _lines([finding_line(f) for f in report.ctx.problems])


def reports(root: Path, cwd: Path, item_ref: str | None, all_items: bool) -> list[ItemReport]:
    """The reports a command works on: one item, or every item with ``--all``."""
    from the_loop.spec.project import item_context, open_item, open_project

    if item_ref and all_items:
        raise UsageError("give a work item or --all, not both")
    if item_ref:
        return [ItemReport(open_item(root, item_ref, cwd=cwd, tolerant=True))]
    if not all_items:
        raise UsageError("name a work item (e.g. `42` or `issue-42`) or pass --all")
    project = open_project(root)
    return [ItemReport(item_context(project, item, tolerant=True)) for item in project.items()]


def status_answer(
    root: Path, cwd: Path, item_ref: str | None, *, all_items: bool, as_json: bool, full: bool
) -> Answer:
    """``loop status``: where one item (or every item) stands."""
    from the_loop.workflow.answer_limits import LIST_LIMIT
    from the_loop.workflow.status import item_status

    views = [item_status(r) for r in reports(root, cwd, item_ref, all_items)]
    if as_json:
        limit = None if full else LIST_LIMIT
        answers = [v.to_json(limit) for v in views]
        return Answer(json_text(answers if all_items else answers[0]))
    lines = _status_table(views) if all_items else status_lines(views[0])
    return Answer("".join(line + "\n" for line in lines))


def next_answer(
    root: Path, cwd: Path, item_ref: str, *, all_ready: bool, as_json: bool, full: bool
) -> Answer:
    """``loop next``: the next ready task (or every one); exit 1 when none can start."""
    from the_loop.workflow import next_task
    from the_loop.workflow.answer_limits import LIST_LIMIT

    report = reports(root, cwd, item_ref, False)[0]
    notes = problems_text(report)
    if as_json:
        data, failing = next_task.next_answer(
            report, all_ready=all_ready, limit=None if full else LIST_LIMIT
        )
        text = json_text(data)
    else:
        view = next_task.next_view(report, all_ready=all_ready)
        text, failing = view.render(), view.failing
    return Answer(text, int(ExitCode.FAILURE) if failing else 0, notes)


def check_answer(
    root: Path, cwd: Path, item_ref: str | None, *, all_items: bool, strict: bool, as_json: bool
) -> Answer:
    """``loop check``: every finding; exit 1 on errors (warnings too with ``strict``)."""
    from the_loop.findings import counts, failing

    selected = reports(root, cwd, item_ref, all_items)
    checked = [r.check() for r in selected]
    findings = [f for found, _count in checked for f in found]
    evaluated = sum(count for _found, count in checked)
    summary = counts(findings)
    nothing = evaluated == 0
    failed = failing(findings, strict=strict) or nothing
    exit_code = int(ExitCode.FAILURE) if failed else 0
    if as_json:
        data = {
            "ok": not failed,
            "items": [r.id for r in selected],
            "evaluated": evaluated,
            "counts": summary,
            "findings": [relative_finding(f).to_json() for f in findings],
        }
        return Answer(json_text(data), exit_code)
    lines = [finding_line(f) for f in findings]
    if nothing:
        where = shown_path(_spec_root(root))
        lines.append(bad("nothing was checked: ") + f"no work items were found under {where}")
    verdict = bad("failed") if failed else good("ok")
    lines.append(
        f"{verdict}: {summary['error']} error(s), {summary['warning']} warning(s), "
        f"{summary['info']} info in {len(selected)} work item(s)"
    )
    return Answer("".join(line + "\n" for line in lines), exit_code)


def _spec_root(root: Path) -> Path:
    from the_loop.spec.project import open_project

    return open_project(root).spec_root


def graph_answer(root: Path, cwd: Path, item_ref: str, *, fmt: str, as_json: bool) -> Answer:
    """``loop graph``: the task DAG as text, mermaid, DOT or JSON.

    A graph with errors is still drawn as far as it can be; the errors follow
    (on stderr, or as ``errors`` in the JSON) and the exit code is 1.
    """
    from the_loop.workflow import graph_view

    report = reports(root, cwd, item_ref, False)[0]
    notes = problems_text(report)
    if not report.item.artifacts["tasks"].exists:
        missing = UsageError(
            f"{report.id} has no tasks.md yet",
            hint=f"`loop work-on {report.id}` says what comes first",
        )
        raise NotesThenError(notes, missing) if notes else missing
    if as_json:
        data, errors = graph_view.graph_answer(report)
        data = {**data, "errors": [relative_finding(f).to_json() for f in errors]}
        exit_code = int(ExitCode.FAILURE) if errors else 0
        return Answer(json_table_text(data), exit_code, notes)
    from the_loop.dag.render import RENDERERS

    assert report.tasks is not None and report.dag is not None
    text = RENDERERS[fmt](report.id, report.tasks, report.dag)
    errors = graph_view.graph_errors(report)
    if not errors:
        return Answer(text, 0, notes)
    lines = [
        bad("error: ") + f"the task graph of {report.id} has {len(errors)} error(s); "
        "what is drawn leaves out what they break"
    ]
    lines += ["  " + finding_line(f).replace("\n", "\n  ") for f in errors]
    lines.append(f"hint: `loop check {report.id}` lists every finding")
    return Answer(text, int(ExitCode.FAILURE), notes, _lines(lines))


# --- status as text ---------------------------------------------------------------


def _phase_text(view: ItemStatus) -> str:
    phase = view.phase
    text = phase.implied
    if phase.relation == "same":
        return text + dim("  (log agrees)")
    if phase.relation == "unrecorded":
        return text + dim("  (not recorded: no log phase)")
    if phase.relation in ("pending", "behind"):
        return text + warn(f"  (log: {phase.recorded}; boundary pending)")
    return text + bad(f"  (log says {phase.recorded})")


def status_lines(v: ItemStatus) -> list[str]:
    """One item's status as lines of text (``loop status ID``, ``loop work-on``)."""
    lines = [heading(f"{v.id}") + (f"  {v.title}" if v.title else "")]
    rows = [("phase", _phase_text(v) + dim(f"  — {v.phase.reason}"))]
    rows.append(("artifacts", "  ".join(_artifact_word(a) for a in v.artifacts.values())))
    rows.append(("tasks", _tasks_text(v)))
    rows.append(("next", f"{v.action.text}  {dim('→ ' + v.action.command)}"))
    if v.resume is not None:
        rows.append(
            (
                "resume",
                f"{v.resume.next or bad('(no Next: in the last entry)')}"
                + dim(f"  — {v.resume.stamp}"),
            )
        )
    for problem in v.tick_problems:
        what = (
            "ticked without a checkpoint"
            if problem.kind == "no-checkpoint"
            else "its checkpoint commit is gone from history"
        )
        rows.append(
            (
                "tick",
                bad(f"task {problem.task.id} {what}")
                + dim(f"  ({v.tasks_path}:{problem.task.line}) → {problem.command}"),
            )
        )
    for record in v.open_resets:
        rows.append(
            (
                "reset",
                warn(
                    f"{record.mode} after checkpoint {record.checkpoint} not "
                    f"confirmed ({record.state})"
                )
                + dim(f"  → loop reset confirm {v.id} --session <id>"),
            )
        )
    if v.skipped_resets:
        rows.append(
            (
                "resets",
                dim(f"{v.skipped_resets} skipped (the session went on without the reset)"),
            )
        )
    if v.interrupted_checkpoint:
        rows.append(
            (
                "checkpoint",
                bad(f"{v.interrupted_checkpoint} was interrupted")
                + dim("  → loop doctor --repair"),
            )
        )
    counts = v.finding_counts
    if counts["error"] or counts["warning"]:
        rows.append(("findings", _counts_text(counts) + dim(f"  → loop check {v.id}")))
    lines += [f"  {label:<10} {value}" for label, value in rows]
    return lines


def _artifact_word(art: dict[str, object]) -> str:
    name = str(art["artifact"])
    if not art.get("exists"):
        return dim(f"{name}: missing")
    if "locked" not in art:
        return name
    if art.get("stale"):
        return bad(f"{name}: stale")
    if art.get("locked"):
        return good(f"{name}: approved")
    return warn(f"{name}: {art.get('status') or 'no status'}")


def _tasks_text(v: ItemStatus) -> str:
    if not v.total:
        return dim("none yet")
    text = f"{v.done}/{v.total} done"
    if v.in_progress:
        text += f" · in progress: {', '.join(v.in_progress)}"
    if v.running:
        lanes = ", ".join(f"{task} (lane {lane})" for task, lane in v.running.items())
        text += f" · running: {lanes}"
    if v.queued:
        text += f" · queued to merge: {', '.join(v.queued)}"
    if v.ready:
        ready = list(v.ready[:8]) + (["…"] if len(v.ready) > 8 else [])
        text += f" · ready: {', '.join(ready)}"
    return text


def _counts_text(counts: dict[str, int]) -> str:
    parts = []
    if counts["error"]:
        parts.append(bad(f"{counts['error']} error(s)"))
    if counts["warning"]:
        parts.append(warn(f"{counts['warning']} warning(s)"))
    return ", ".join(parts)


def _status_table(views: list[ItemStatus]) -> list[str]:
    if not views:
        return ['no work items yet; `loop new "<title>"` creates one']
    lines = []
    width = max(len(v.id) for v in views)
    disagree = False
    for v in views:
        tasks = f"{v.done}/{v.total}" if v.total else "-"
        mismatch = v.phase.relation not in ("same", "pending", "behind", "unrecorded")
        disagree = disagree or mismatch
        phase = f"{v.phase.implied}{'!' if mismatch else ''}"
        notes = _counts_text(v.finding_counts)
        lines.append(
            f"{v.id:<{width}}  {bad(f'{phase:<24}') if mismatch else f'{phase:<24}'}"
            f"{tasks:>7}  {v.action.text}" + (f"  {notes}" if notes else "")
        )
    if disagree:
        lines.append(dim("! the log records another phase: `loop status ID` shows both"))
    return lines
