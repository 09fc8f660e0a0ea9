"""The ledger for sessions loop did not start: each turn a hook sees is charged to the focus.

A session run by hand (or by another tool) with loop's hooks installed is charged at
``Stop`` and ``SessionEnd``: what its running total (Claude Code's transcript
``cost-state``, Codex's rollout ``token_count``; see ``ledger.harness_usage``) added
since the ledger's cursor for the session, as a ``hook`` record of the item and task
in focus. A run the driver started is left alone (``LOOP_TASK`` is in its
environment): the driver charges it itself, with its attempt and kind.
"""

from __future__ import annotations

from the_loop.hooks.call import HookCall
from the_loop.io import clock
from the_loop.ledger import harness_usage, store
from the_loop.ledger.records import RunRecord
from the_loop.ledger.tokens import usage_minus
from the_loop.telemetry import Harness


def charge_turn(call: HookCall) -> None:
    """Charge what the session used since it was last charged (see the module docstring)."""
    session, path = call.input.session_id, call.input.transcript_path
    if not session or path is None or call.env.get("LOOP_TASK"):
        return
    if call.input.harness is Harness.CLAUDE:
        total = harness_usage.claude_transcript_total(path)
    else:
        total = harness_usage.codex_rollout_total(path)
    if total is None:
        return
    usage = usage_minus(total, store.cursor(call.root, session) or {})
    if not usage:
        return
    from the_loop.hooks.focus import find_focus

    focus = find_focus(call.project, session=call.seen())
    if focus is None:
        return  # no item to charge; the cursor stays, so a later turn with a focus gets it
    record = RunRecord(
        item=focus.item,
        task=focus.task.id if focus.task is not None else None,
        attempt=0,
        kind="hook",
        agent=call.input.harness.value,
        session=session,
        started=clock.second_stamp(clock.utc_now()),
        seconds=0.0,
        usage=usage,
        source=f"{call.input.event} hook: the session's own running total",
    )
    store.append(call.root, record, total=total)
