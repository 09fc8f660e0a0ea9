"""Hand-off where the harness cannot clear itself: the next unit goes to a fresh subagent.

Inside an interactive Claude Code session nothing but a person can type
``/clear``. At a boundary whose reset is ``clear``, loop's hook replies
(PostToolUse after the checkpoint, Stop if the session would end there) tell the
agent to hand the next task to a fresh subagent (the Agent tool, formerly Task)
with loop's brief as its whole prompt, and to go on without asking when the
session is unattended. The subagent starts with an empty window, which is what
the clear was for.

When the subagent starts, the SubagentStart hook completes the reset record
with the subagent's own id (``<session>/agent-<id>``), exactly once: the record
is closed then, so a second subagent, a rerun of the hook, or the subagent's own
``loop task done`` (which runs with the parent's session id) finds nothing open
to complete or to skip. With ``tokenEconomy.subAgentDelegation.enabled: false``
(or a harness without subagents) the reply says so and falls back to ending the
session at the boundary for a person to clear.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from the_loop.checkpoint import seen_sessions as sessions
from the_loop.checkpoint.seen_sessions import SessionRecord
from the_loop.config.state_folder import RESETS, state_dir
from the_loop.errors import LoopError
from the_loop.hooks.answer import NOTHING, HookAnswer
from the_loop.hooks.call import HookCall
from the_loop.telemetry.reading import Harness

if TYPE_CHECKING:
    from the_loop.checkpoint.resets import ResetRecord

BRIEF_START = "<<<LOOP BRIEF"
BRIEF_END = "LOOP BRIEF>>>"
_OFFERED = "handoff"  # session extra: the reset record a hand-off was offered for
# Permission modes in which nobody is there to answer a question.
_UNATTENDED_MODES = ("bypassPermissions", "dontAsk")
_BRIEF_LIMIT = 7000  # the whole reply stays under the hook's 10,000-character limit


def open_clear(call: HookCall, record: SessionRecord | None) -> ResetRecord | None:
    """This session's open clear, the one a hand-off would perform."""
    if record is None or not any((state_dir(call.root) / RESETS).glob("*.json")):
        return None  # the common case, read without loading a record
    # Loaded only when a reset record exists: PostToolUse asks this on every tool call.
    from the_loop.checkpoint import resets

    try:
        found = resets.open_resets(call.root)
    except LoopError:
        return None
    mine = [r for r in found if r.mode == "clear" and r.session == record.id]
    return mine[-1] if mine else None


def offer(call: HookCall, record: SessionRecord | None, *, block: bool) -> HookAnswer:
    """The hand-off instruction for this session's open clear, offered once per reset."""
    if call.env.get("LOOP_DRIVEN") == "1":
        return NOTHING  # a driven run: the driver starts the fresh session itself
    pending = open_clear(call, record)
    if pending is None or record is None:
        return NOTHING
    if record.extra.get(_OFFERED) == pending.id:
        return NOTHING  # said once for this reset
    sessions.save(call.root, replace(record, extra={**record.extra, _OFFERED: pending.id}))
    text = instruction(call, pending)
    return HookAnswer(block=text) if block else HookAnswer(context=text)


def instruction(call: HookCall, pending: ResetRecord) -> str:
    """What the agent is told to do instead of the /clear it cannot type."""
    from the_loop.spec.project import open_item  # only at a clear boundary

    ctx = open_item(call.root, pending.item, cwd=call.root)
    head = (
        f"loop hand-off: checkpoint {pending.checkpoint} of {pending.item} is taken and its "
        "reset is a clear, which this session cannot do to itself."
    )
    delegate = ctx.config.data.get("tokenEconomy", {}).get("subAgentDelegation", {})
    if call.input.harness is not Harness.CLAUDE or not delegate.get("enabled", True):
        why = (
            "tokenEconomy.subAgentDelegation is off"
            if call.input.harness is Harness.CLAUDE
            else "this harness has no subagent loop can hand to"
        )
        return (
            f"{head} No hand-off ({why}): end the session here; a person clears it "
            f"(/clear, or a new session) and the next session starts from {call.loop} "
            f"resume {pending.item}."
        )
    brief = next_brief(ctx)
    go = (
        "Do it now, without asking: this session is unattended."
        if unattended(call)
        else "Do it now unless the user says otherwise; there is no need to ask first."
    )
    return (
        f"{head} Hand the next unit to a fresh subagent instead: call the Agent tool "
        "(Claude Code's Task tool) with subagent_type general-purpose, a short "
        "description, and as its whole prompt the brief between the two marker lines "
        f"below, unchanged. {go} Carry the same execution mode to the subagent. When it "
        "returns, report what it did and stop; do not redo its work.\n"
        f"{BRIEF_START}\n{brief}\n{BRIEF_END}"
    )


def next_brief(ctx: object) -> str:
    """loop's brief for the next step of the item (what ``execute-tasks`` would print)."""
    from the_loop.spec.project import ItemContext
    from the_loop.workflow.briefs import brief, resume_brief
    from the_loop.workflow.item_report import ItemReport
    from the_loop.workflow.next_action import next_action

    assert isinstance(ctx, ItemContext)
    report = ItemReport(ctx)
    action = next_action(report)
    text = brief(report, action) if action.kind == "implement" else resume_brief(report)
    if len(text) > _BRIEF_LIMIT:
        text = text[: _BRIEF_LIMIT - 40].rstrip() + "\n… (brief cut at its size budget)"
    return text


def unattended(call: HookCall) -> bool:
    """Whether nobody is there to ask: a permission mode that never asks, or said so."""
    if call.input.permission_mode in _UNATTENDED_MODES:
        return True
    return any(call.env.get(name) == "1" for name in ("CLAUDE_UNATTENDED", "LOOP_UNATTENDED"))


def on_subagent_start(call: HookCall) -> HookAnswer:
    """Answer SubagentStart: a hand-off offered for an open clear completes it, once."""
    agent = call.input.agent_id
    record = call.seen()
    if record is None or not agent:
        return NOTHING
    offered = record.extra.get(_OFFERED)
    pending = open_clear(call, record)
    if pending is None or pending.id != offered:
        return NOTHING  # no hand-off was offered (a compaction fork, a user's own subagent)
    subagent = f"{record.id}/agent-{agent}"
    from the_loop.checkpoint import resets  # a reset record exists: open_clear found it

    try:
        done = resets.confirm(
            call.root,
            pending.item,
            subagent,
            checkpoint=pending.checkpoint,
            how=f"handed off to subagent {agent} ({call.input.agent_type or 'unknown type'}) "
            "with loop's brief as its prompt (SubagentStart hook)",
        )
    except LoopError:
        return NOTHING  # closed meanwhile: nothing is performed twice
    extra = {k: v for k, v in record.extra.items() if k != _OFFERED}
    sessions.save(call.root, replace(record, extra=extra))
    return HookAnswer(
        context=f"loop: this subagent continues {done.item} after checkpoint "
        f"{done.checkpoint}; its fresh window is that checkpoint's clear. Work from the "
        "brief you were given and record the task with loop task done."
    )
