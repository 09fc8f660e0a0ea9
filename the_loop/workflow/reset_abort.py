"""``loop reset abort``: a reset that did not happen, corrected in the log.

A checkpoint's entry says what is about to happen (``Context: clear (about
to): …``). When the reset is then aborted, the log would keep saying it
happened; the log is append-only, so a correction entry is appended instead,
carrying the last Next: forward so the resume anchor stays where it was.
"""

from __future__ import annotations

from the_loop.checkpoint import resets
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.resets import ResetRecord
from the_loop.io import clock
from the_loop.io.templating import render
from the_loop.log.execution_log import append_entry
from the_loop.spec.project import ItemContext
from the_loop.workflow.item_report import fresh_report


def abort_reset(
    ctx: ItemContext, *, checkpoint_id: str | None = None, reason: str | None = None
) -> ResetRecord:
    """Resolve an open reset as not performed, and correct the log's Context: line."""
    root = ctx.project.root
    with checkpoint.locked(root):
        record = resets.pick(root, ctx.item.id, checkpoint_id)
        log = ctx.item.artifacts["execution-log"].path
        if log.is_file():
            last = fresh_report(ctx).last_entry
            next_step = (last.next if last else None) or f"run `loop resume {ctx.item.id}`"
            why = f"the {record.mode} was aborted ({reason or 'by request'})"
            append_entry(
                log,
                render(
                    "log-correction.md.j2",
                    stamp=clock.minute_stamp(clock.utc_now()),
                    mode=record.mode,
                    checkpoint=record.checkpoint,
                    why=why,
                    next=next_step,
                ),
            )
        return resets.abort(root, ctx.item.id, checkpoint=record.checkpoint, reason=reason)
