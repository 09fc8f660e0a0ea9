"""Build checkpoint plans: the log entry, the commit message and the WIP line.

Every command that resets (``task done``, ``checkpoint --mid-task``, phase
crossings in ``work-on`` and ``execute-tasks``) describes its checkpoint here
and hands the plan to ``the_loop.checkpoint.transaction.run``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from the_loop.checkpoint import resets
from the_loop.checkpoint.anchor import missing_tracked_log
from the_loop.checkpoint.policy import Decision, context_line
from the_loop.checkpoint.transaction import CommitSpec, Plan, new_id, wip_text
from the_loop.errors import ConfigError, TemplateError
from the_loop.io import atomic, clock
from the_loop.io.templating import render, render_string
from the_loop.log import entry_fields
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
        # A deleted but tracked log is restored, never replaced by a fresh one (issue 21).
        gone = missing_tracked_log(ctx.project.root, path)
        if gone is not None:
            raise gone
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
    tick_at: tuple[int, str] | None = None,
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
    # Free text is data: encoded so no input can change the log's structure.
    entry_text = render(
        "log-entry.md.j2",
        stamp=clock.minute_stamp(clock.utc_now()),
        summary=entry_fields.encode_line(entry.summary),
        phase=entry.phase,
        did=entry_fields.encode(entry.did),
        tests=entry_fields.encode(entry.tests),
        next=entry_fields.encode(entry.next),
        context=context_line(decision),
        blockers=entry_fields.encode(entry.blockers),
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
        line = _subject(ctx, names)
        # One line each: nothing in a title can forge a trailer or a paragraph.
        message = render(
            "commit-message.txt.j2",
            subject=entry_fields.one_line(line),
            summary=entry_fields.one_line(entry.summary),
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
        tick_at=tick_at,
        phase=mirror_phase,
        log_status=log_status,
        transition=transition,
        commit=commit,
        session=session,
        wip=wip,
        supersedes=tuple((f.record, f.mode, f.checkpoint, f.state, f.why) for f in settled),
    )


def _subject(ctx: ItemContext, names: dict[str, str]) -> str:
    """The commit subject from ``checkpoint.messageTemplate``; a broken template is a
    config error at its line."""
    template = ctx.config.checkpoint.message_template
    try:
        return render_string(template, what="checkpoint.messageTemplate", **names)
    except TemplateError as exc:
        origin = ctx.config.origins.get(("checkpoint", "messageTemplate"))
        raise ConfigError(
            exc.message,
            where=origin.where if origin is not None else None,
            hint=(exc.hint or "") + "; the template fills one line from these names only "
            "(no include, import or extends)",
        ) from exc


def _commit_spec(ctx: ItemContext, stage: str, message: str) -> CommitSpec:
    if stage == "all":
        return CommitSpec(message, "all")
    item_dir = str(ctx.item.path)
    return CommitSpec(message, "tracked" if stage == "tracked" else "paths", (item_dir,))
