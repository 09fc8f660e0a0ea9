"""SessionStart: the resume brief, and the reset records a new start proves.

* ``clear`` (and ``startup``: a driver's fresh process is its clear) with a new
  session id completes the latest open clear of each item, verified by the
  id change; the new session inherits the old one's tasks in progress.
* ``compact`` with the same id completes that session's open compactions.
* Every source then gets the resume brief of the item the session is on, as
  additional context: factual statements, within the harness's 10,000-character
  limit.

With Claude Code, ``LOOP_SESSION_ID`` is also written to ``CLAUDE_ENV_FILE`` so
the agent's shell commands carry the id.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

from the_loop.checkpoint import resets
from the_loop.checkpoint import seen_sessions as sessions
from the_loop.checkpoint.resets import ResetRecord
from the_loop.checkpoint.seen_sessions import SessionRecord
from the_loop.hooks.answer import NOTHING, HookAnswer
from the_loop.hooks.call import HookCall
from the_loop.hooks.focus import Focus, find_focus
from the_loop.tasks import TaskState, read_tasks


def on_session_start(call: HookCall) -> HookAnswer:
    """Answer SessionStart (see the module docstring)."""
    source = call.input.source or "startup"
    record = call.seen()
    completed: list[ResetRecord] = []
    if record is not None:
        if source == "startup":
            sessions.prune(call.root)
        if source in ("clear", "startup"):
            completed = resets.complete_by_hook(
                call.root, record.id, mode="clear", event=f"SessionStart ({source})"
            )
            record = _inherit(call, record, completed)
        elif source == "compact":
            completed = resets.complete_by_hook(
                call.root, record.id, mode="compact", event="SessionStart (compact)"
            )
            record = sessions.save(call.root, replace(record, announced=None))
        _export_session_id(call, record.id)
    focus = find_focus(
        call.project, session=record, prefer=completed[-1].item if completed else None
    )
    if record is not None and focus is not None and record.item != focus.item:
        sessions.save(call.root, replace(record, item=focus.item))
    lines = [_completed_line(r) for r in completed]
    if focus is None:
        return HookAnswer(context="loop: " + " ".join(lines)) if lines else NOTHING
    return HookAnswer(context=_brief_text(call, focus, record, lines))


def _inherit(call: HookCall, record: SessionRecord, cleared: list[ResetRecord]) -> SessionRecord:
    """After a clear the fresh session carries on the old one's tasks in progress."""
    tasks = list(record.tasks)
    for reset in cleared:
        old = sessions.load(call.root, reset.session) if reset.session else None
        for key in old.tasks if old else ():
            item, _, task = key.partition("#")
            if key not in tasks and _in_progress(call.project.spec_root / item, task):
                tasks.append(key)
    if tasks == list(record.tasks):
        return record
    return sessions.save(call.root, replace(record, tasks=tuple(tasks)))


def _in_progress(item_dir: Path, task: str) -> bool:
    path = item_dir / "tasks.md"
    if not path.is_file():
        return False
    return any(t.id == task and t.state is TaskState.IN_PROGRESS for t in read_tasks(path).tasks)


def _completed_line(record: ResetRecord) -> str:
    how = "the same session, compacted" if record.mode == "compact" else "a new session"
    return (
        f"The {record.mode} after checkpoint {record.checkpoint} of {record.item} is "
        f"recorded as done ({how})."
    )


def _brief_text(
    call: HookCall, focus: Focus, record: SessionRecord | None, lines: list[str]
) -> str:
    # Imported here: the brief needs Jinja, which no other hook path loads.
    from the_loop.workflow.briefs import resume_brief
    from the_loop.workflow.item_report import ItemReport

    head = [f"loop: this session is on work item {focus.item} ({focus.why})."]
    if focus.task is not None:
        head.append(f"Task {focus.task.id} ({focus.task.title}) is in progress.")
    if record is not None:
        head.append(
            f"The session id {record.id} is recorded; loop commands run in this session use it."
        )
    head += lines
    return " ".join(head) + "\n\n" + resume_brief(ItemReport(focus.ctx))


def _export_session_id(call: HookCall, session: str) -> None:
    """Claude Code sources ``CLAUDE_ENV_FILE`` into the agent's shell commands."""
    env_file = call.env.get("CLAUDE_ENV_FILE")
    if not env_file or call.input.harness.value != "claude":
        return
    line = f"export LOOP_SESSION_ID={shlex.quote(session)}\n"
    path = Path(env_file)
    try:
        if path.is_file() and line in path.read_text(encoding="utf-8"):
            return
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line)
    except OSError:
        pass  # the harness's own variables still name the session
