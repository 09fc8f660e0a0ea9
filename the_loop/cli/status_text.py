"""``loop status`` as text: one item's rows (also what ``loop work-on`` shows) or the table of all.

Colours mark what needs a look (red: broken or disagreeing, yellow: pending,
dim: for reference); ``click.echo`` drops them off a terminal.
"""

from __future__ import annotations

from the_loop.cli.render import bad, dim, good, heading, warn
from the_loop.workflow.status import ItemStatus


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
    rows.append(("format", v.format))
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
    if v.cost is not None:
        rows.append(("cost", f"{v.cost['line']}" + dim(f"  → loop cost {v.id}")))
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
        return good(f"{name}: {'external' if art.get('status') == 'external' else 'approved'}")
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


def status_table(views: list[ItemStatus]) -> list[str]:
    """Every item on one line each (``loop status --all``): phase, tasks done, the next action."""
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
