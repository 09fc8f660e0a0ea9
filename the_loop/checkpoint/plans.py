"""Build checkpoint plans: the log entry, the commit message and the WIP line.

Every command that resets (``task done``, ``checkpoint --mid-task``, phase
crossings in ``work-on`` and ``execute-tasks``) describes its checkpoint here
and hands the plan to ``the_loop.checkpoint.transaction.run``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from the_loop.checkpoint import resets
from the_loop.checkpoint.policy import Decision, context_line
from the_loop.checkpoint.transaction import CommitSpec, Plan, new_id, wip_text
from the_loop.io import atomic, clock
from the_loop.io.templating import render, render_string
from the_loop.spec.project import ItemContext


@dataclass(frozen=True)
class EntryText:
    """What a checkpoint writes into the log, beyond the reset decision."""

    summary: str
    phase: str
    did: str
    next: str
    tests: str = "not run"
    blockers: str = "none"


def ensure_log(ctx: ItemContext, title: str, phase: str) -> Path:
    """The item's execution log, created from the template when it is missing."""

    path = ctx.item.artifacts["execution-log"].path
    if not path.exists():
        atomic.create_exclusive(
            path,
            render(
                "execution-log.md.j2", item=ctx.item.id, title=title or ctx.item.id, phase=phase
            ),
        )
    return path


def build(
    ctx: ItemContext,
    entry: EntryText,
    decision: Decision,
    *,
    subject: str,
    task_id: str | None = None,
    tick_from: str | None = None,
    tick_to: str | None = None,
    mirror_phase: str | None = None,
    log_status: str | None = None,
    transition: tuple[str, str, str] | None = None,
    session: str | None = None,
    settle_all: bool = False,
) -> Plan:
    """A complete checkpoint plan for ``ctx``'s item.

    Open resets this checkpoint supersedes (the same session's; every one with
    ``settle_all``) are named in the entry's **Corrections:** line and closed
    by the checkpoint's reset step: the log is append-only, so an announced
    reset that did not happen is corrected by a later line, never rewritten.
    """

    root = ctx.project.root
    settings = ctx.config.checkpoint
    checkpoint_id = new_id()
    log = ctx.item.artifacts["execution-log"].path
    wip, will_commit = wip_text(root, settings.commit, checkpoint_id, log)
    settled = resets.superseded_by(root, ctx.item.id, session, every_session=settle_all)
    entry_text = render(
        "log-entry.md.j2",
        stamp=clock.minute_stamp(clock.utc_now()),
        summary=entry.summary,
        phase=entry.phase,
        did=entry.did,
        tests=entry.tests,
        next=entry.next,
        context=context_line(decision),
        blockers=entry.blockers,
        wip=wip,
        corrections=[found.sentence() for found in settled],
    )
    commit = None
    if will_commit:
        names = {
            "item": ctx.item.id,
            "subject": subject,
            "task": task_id or "",
            "phase": entry.phase,
            "reset": decision.reset.value,
        }
        line = render_string(settings.message_template, what="checkpoint.messageTemplate", **names)
        message = render(
            "commit-message.txt.j2",
            subject=line.strip(),
            summary=entry.summary,
            trailers=settings.trailers,
            item=ctx.item.id,
            task=task_id,
            phase=entry.phase,
            reset=decision.reset.value,
            checkpoint=checkpoint_id,
        )
        commit = _commit_spec(ctx, settings.stage, message)
        commit = replace(
            commit,
            timeout=float(settings.hook_timeout_seconds),
            max_file_bytes=settings.max_file_bytes,
        )
    tasks = ctx.item.artifacts["tasks"].path
    return Plan(
        id=checkpoint_id,
        item=ctx.item.id,
        item_dir=str(ctx.item.path),
        log_path=str(ctx.item.artifacts["execution-log"].path),
        entry_text=entry_text,
        summary=entry.summary,
        reset=decision.reset.value,
        reset_reason=decision.reason,
        tasks_path=str(tasks) if task_id else None,
        task_id=task_id,
        tick_from=tick_from,
        tick_to=tick_to,
        phase=mirror_phase,
        log_status=log_status,
        transition=transition,
        commit=commit,
        session=session,
        wip=wip,
        supersedes=tuple((f.record, f.mode, f.checkpoint, f.state, f.why) for f in settled),
    )


def _commit_spec(ctx: ItemContext, stage: str, message: str) -> CommitSpec:
    if stage == "all":
        return CommitSpec(message, "all")
    item_dir = str(ctx.item.path)
    return CommitSpec(message, "tracked" if stage == "tracked" else "paths", (item_dir,))
