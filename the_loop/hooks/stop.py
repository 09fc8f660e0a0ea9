"""Stop and SessionEnd: no stopping with unsaved work; note when a session ends.

Stop blocks while a task this session started (or inherited after a clear)
is in progress and the working tree has changes that are neither committed
nor checkpointed, naming the command that saves them. It blocks at most
``STOP_BLOCKS`` times per session, so an agent that cannot comply is never
held in a loop. SessionEnd marks the session ended, so later ``loop``
commands outside it do not take its id. Both charge the turn to the ledger
(``turn_cost``) when loop did not start the session.
"""

from __future__ import annotations

from dataclasses import replace

from the_loop.checkpoint import seen_sessions as sessions
from the_loop.git.repo import repo_status
from the_loop.hooks.answer import NOTHING, HookAnswer
from the_loop.hooks.call import HookCall
from the_loop.hooks.commands import mid_task_command, task_done_command
from the_loop.hooks.turn_cost import charge_turn
from the_loop.tasks import Task, TaskState, read_tasks

STOP_BLOCKS = 2


def on_stop(call: HookCall) -> HookAnswer:
    """Answer Stop (see the module docstring)."""
    charge_turn(call)  # the ledger, for a session loop did not start
    record = call.seen()
    if record is not None and not call.input.stop_hook_active:
        # Stopping at a clear boundary: hand the next unit on instead (said once).
        from the_loop.hooks.handoff import offer

        handoff = offer(call, record, block=True)
        if not handoff.empty:
            return handoff
    if record is None or record.stop_blocks >= STOP_BLOCKS or not record.tasks:
        return NOTHING
    owned = _owned_in_progress(call, record.tasks)
    if not owned:
        return NOTHING
    status = repo_status(call.root)
    if not status.is_repo or not status.dirty:
        return NOTHING
    record = sessions.save(call.root, replace(record, stop_blocks=record.stop_blocks + 1))
    item, task = owned[-1]
    left = STOP_BLOCKS - record.stop_blocks
    return HookAnswer(
        block=f"loop: task {task.id} of {item} ({task.title}) is in progress, and the working "
        "tree has changes that are neither committed nor checkpointed. "
        f"`{mid_task_command(call.loop, item, task.id)}` saves them as an interim checkpoint; "
        f"if the task is finished, `{task_done_command(call.loop, item, task.id)}` does. "
        f"(Stopping is held back {left} more time(s) in this session at most.)"
    )


def _owned_in_progress(call: HookCall, keys: tuple[str, ...]) -> list[tuple[str, Task]]:
    found = []
    for key in keys:
        item, _, task_id = key.partition("#")
        path = call.project.spec_root / item / "tasks.md"
        if not path.is_file():
            continue
        for task in read_tasks(path).tasks:
            if task.id == task_id and task.state is TaskState.IN_PROGRESS:
                found.append((item, task))
    return found


def on_session_end(call: HookCall) -> HookAnswer:
    """Answer SessionEnd: the session is over (a resume revives it)."""
    charge_turn(call)
    if call.input.session_id:
        sessions.ended(call.root, call.input.session_id, reason=call.input.reason)
    return NOTHING
