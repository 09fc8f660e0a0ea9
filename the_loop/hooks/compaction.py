"""PreCompact and PostCompact: save the work before a compaction, record it after.

PreCompact takes an interim checkpoint when a task is in progress and the
working tree holds uncommitted work, so the WIP commit always lands before
the harness compacts. Its reset is that compaction (whatever the pressure
verdict), recorded as dispatched for this session. PostCompact completes the
session's open compactions (Codex sends it before SessionStart(compact),
Claude Code after; whichever comes first completes, the other finds nothing
open) and re-arms the pressure announcement.
"""

from __future__ import annotations

from dataclasses import replace

from the_loop.checkpoint import resets
from the_loop.checkpoint import seen_sessions as sessions
from the_loop.git.repo import repo_status
from the_loop.hooks.answer import NOTHING, HookAnswer
from the_loop.hooks.call import HookCall
from the_loop.hooks.focus import find_focus
from the_loop.workflow.task_transitions import mid_task


def on_pre_compact(call: HookCall) -> HookAnswer:
    """Answer PreCompact: the interim checkpoint, when there is work to save."""
    record = call.seen()
    focus = find_focus(call.project, session=record)
    if focus is None or focus.task is None:
        return NOTHING
    status = repo_status(call.root)
    if not status.is_repo or not status.dirty:
        return NOTHING  # nothing uncommitted: the last checkpoint still holds
    trigger = call.input.trigger or "unknown"
    if record is not None:
        # The compaction the session already owed is the one starting now: resolve it
        # before the new checkpoint, which would otherwise record it as skipped.
        resets.complete_by_hook(
            call.root, record.id, mode="compact", event=f"PreCompact (trigger {trigger})"
        )
    task = focus.task
    outcome, _ = mid_task(
        focus.ctx,
        did=f"work in progress on task {task.id} ({task.title}), saved before the harness "
        f"compacted the context (PreCompact hook, trigger {trigger})",
        next_step=f"continue task {task.id} ({task.title}) from this interim checkpoint",
        task_id=task.id,
        tests="not run (taken by the PreCompact hook)",
        session=record.id if record else None,
        compacting=f"the harness is compacting now (PreCompact, trigger {trigger})",
    )
    if outcome.record is not None:
        # the compaction is under way: the harness, not a person, performs this reset
        resets.mark_dispatched(call.root, outcome.record)
    return NOTHING


def on_post_compact(call: HookCall) -> HookAnswer:
    """Answer PostCompact: the compaction happened; complete what it resolves."""
    record = call.seen()
    if record is None:
        return NOTHING
    sessions.save(call.root, replace(record, announced=None, compactions=record.compactions + 1))
    trigger = call.input.trigger or "unknown"
    resets.complete_by_hook(
        call.root, record.id, mode="compact", event=f"PostCompact (trigger {trigger})"
    )
    return NOTHING
