"""PostToolUse: how full the window is, after every tool call, from the transcript.

The reading comes from the harness's own transcript (``the_loop.telemetry``)
and the verdict from the project's (or the item's) thresholds:

* below the soft threshold: nothing;
* at or above it (``selective_drop``): once, context saying the window is at
  N % and a mid-task checkpoint is due at the next safe point, with the command;
* at or above the hard threshold (``full_clear``): a block on every tool call,
  naming the exact ``loop checkpoint … --mid-task`` command; once that
  checkpoint is taken, the block says the compaction is what is due.

An unknown count says nothing (it is a gap the checkpoint reports, not a
reason to nag). The announcement is re-armed when the session compacts.
"""

from __future__ import annotations

import os
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.checkpoint import seen_sessions as sessions
from the_loop.checkpoint.policy import Verdict, pressure_verdict
from the_loop.checkpoint.seen_sessions import SessionRecord
from the_loop.config.project_root import CONFIG_DIR, CONFIG_FILE
from the_loop.config.settings import ContextPolicy, Pressure
from the_loop.errors import LoopError
from the_loop.hooks.answer import NOTHING, HookAnswer
from the_loop.hooks.call import HookCall
from the_loop.io import clock
from the_loop.telemetry import Harness, Located, read_located
from the_loop.workflow.session_reading import SessionPressure, numbers

if TYPE_CHECKING:
    from typing import Any

    from the_loop.hooks.focus import Focus

_COMPACT_HOW = {
    Harness.CLAUDE: "Claude Code: /compact",
    Harness.CODEX: "Codex compacts by itself when its window is full",
}


def on_post_tool_use(call: HookCall) -> HookAnswer:
    """Answer PostToolUse (see the module docstring)."""
    record = _session(call)
    if record is not None:
        # A clear this session cannot perform: hand the next unit to a subagent (once).
        from the_loop.hooks.handoff import offer

        handoff = offer(call, record, block=False)
        if not handoff.empty:
            return handoff
    transcript = call.input.transcript_path
    if transcript is None and record is not None and record.transcript:
        transcript = Path(record.transcript)
    if record is None or transcript is None or not transcript.is_file():
        return NOTHING
    try:
        found = numbers(read_located(Located(call.input.harness, transcript)))
    except LoopError:
        return NOTHING
    if found.tokens is None:
        return NOTHING
    policy, record = _policy(call, record)
    if not policy.enabled:
        return NOTHING
    verdict = pressure_verdict(
        policy.pressure, tokens=found.tokens, window=found.window, percent=found.percent
    ).verdict
    if verdict is None or verdict is Verdict.NO_OP:
        if record.announced is not None:
            sessions.save(call.root, replace(record, announced=None))
        return NOTHING
    # Imported only past the soft threshold: reading tasks.md is not needed below it.
    from the_loop.hooks.focus import find_focus

    focus = find_focus(call.project, session=record)
    if focus is not None and record.item != focus.item:
        record = sessions.save(call.root, replace(record, item=focus.item))
    if verdict is Verdict.SELECTIVE_DROP:
        return _soft(call, record, focus, found)
    return _hard(call, record, focus, found)


def _session(call: HookCall) -> SessionRecord | None:
    if not call.input.session_id:
        return None
    record = sessions.load(call.root, call.input.session_id)
    if record is None or record.ended or _stale(record):
        return call.seen()
    return record


def _stale(record: SessionRecord) -> bool:
    now = clock.second_stamp(clock.utc_now())
    # stamps are fixed-width UTC: comparing the text compares the times, to the minute here
    return record.last_seen[:16] != now[:16] or not record.last_seen


def _policy(call: HookCall, record: SessionRecord) -> tuple[ContextPolicy, SessionRecord]:
    """The effective ``contextManagement`` of the session's item (else the project's).

    Remembered in the session record with the sizes and times of the files it
    comes from (config.yaml and the item's artifacts, which may hold overrides),
    so the YAML is parsed again only when one of them changed.
    """
    cached = record.extra.get("policy")
    if (
        isinstance(cached, dict)
        and cached.get("item") == record.item
        and isinstance(cached.get("files"), list)
        and cached.get("stats") == _stats(cached["files"])
        and cached.get("env") == _env_key()
    ):
        try:
            return _policy_from(cached["value"]), record
        except (KeyError, TypeError, ValueError):
            pass  # written by another version: compute it again
    files = [str(call.root / CONFIG_DIR / CONFIG_FILE)]
    policy = None
    if record.item:
        try:
            # Only when the remembered policy is stale: most tool calls never read an item.
            from the_loop.spec.items import ARTIFACT_FILES
            from the_loop.spec.project import open_item

            ctx = open_item(call.root, record.item, cwd=call.root)
            policy = ctx.config.context
            files += [str(ctx.item.path / name) for name in ARTIFACT_FILES.values()]
        except LoopError:
            pass  # the item went away: the project's thresholds apply
    policy = policy or call.project.config.context
    value = {
        "item": record.item,
        "files": files,
        "stats": _stats(files),
        "env": _env_key(),
        "value": asdict(policy),
    }
    record = sessions.save(call.root, replace(record, extra={**record.extra, "policy": value}))
    return policy, record


def _env_key() -> list[str | None]:
    """The thresholds' environment overrides: a remembered policy holds only while they do."""
    from the_loop.config.env_overrides import VARIABLES

    return [os.environ.get(name) for name in VARIABLES]


def _stats(files: list[str]) -> list[list[int] | None]:
    found: list[list[int] | None] = []
    for name in files:
        try:
            stat = Path(name).stat()
            found.append([stat.st_mtime_ns, stat.st_size])
        except OSError:
            found.append(None)
    return found


def _policy_from(value: dict[str, Any]) -> ContextPolicy:
    pressure = value["pressure"]
    return ContextPolicy(
        enabled=bool(value["enabled"]),
        phase_boundary=str(value["phase_boundary"]),
        task_boundary=str(value["task_boundary"]),
        mid_task=str(value["mid_task"]),
        pressure=Pressure(
            soft_tokens=int(pressure["soft_tokens"]),
            hard_tokens=int(pressure["hard_tokens"]),
            selective_percent=int(pressure["selective_percent"]),
            full_clear_percent=int(pressure["full_clear_percent"]),
        ),
    )


def _level(found: SessionPressure) -> str:
    tokens = f"{found.tokens:,} tokens"
    if found.percent is not None:
        return f"at {found.percent:.0f} % ({tokens}, more than the window reported)"
    if found.window:
        percent = found.tokens * 100 / found.window if found.tokens is not None else 0
        return f"at {percent:.0f} % ({tokens} of {found.window:,})"
    return f"at {tokens} (window size unknown)"


def _soft(
    call: HookCall, record: SessionRecord, focus: Focus | None, found: SessionPressure
) -> HookAnswer:
    if record.announced is not None:
        return NOTHING  # said once; said again only after a compaction re-arms it
    sessions.save(call.root, replace(record, announced=Verdict.SELECTIVE_DROP.value))
    text = f"loop: the context window is {_level(found)}, past the soft threshold."
    if focus is None:
        return HookAnswer(context=text + " No loop work item is in progress here.")
    from the_loop.hooks.commands import mid_task_command  # past a threshold only

    command = mid_task_command(call.loop, focus.item, focus.task.id if focus.task else None)
    return HookAnswer(
        context=f"{text} A mid-task checkpoint of {focus.item} is due at the next safe point "
        f"(a test passing, a file finished): `{command}`. Its directive then asks for a "
        f"compaction ({_COMPACT_HOW[call.input.harness]})."
    )


def _hard(
    call: HookCall, record: SessionRecord, focus: Focus | None, found: SessionPressure
) -> HookAnswer:
    first = record.announced != Verdict.FULL_CLEAR.value
    if first:
        record = sessions.save(call.root, replace(record, announced=Verdict.FULL_CLEAR.value))
    text = f"loop: the context window is {_level(found)}, at or past the hard threshold."
    if focus is None:
        if not first:
            return NOTHING
        return HookAnswer(context=text + " No loop work item is in progress here.")
    # Past the hard threshold only: most tool calls need neither.
    from the_loop.checkpoint import resets
    from the_loop.hooks.commands import mid_task_command

    taken = [
        r
        for r in resets.open_resets(call.root, focus.item)
        if r.session == record.id and r.mode == "compact"
    ]
    how = _COMPACT_HOW[call.input.harness]
    if taken:
        return HookAnswer(
            block=f"{text} Checkpoint {taken[-1].checkpoint} of {focus.item} is taken; what is "
            f"due now is the compaction ({how}), so the turn ends here."
        )
    command = mid_task_command(call.loop, focus.item, focus.task.id if focus.task else None)
    return HookAnswer(
        block=f"{text} Work on {focus.item} stops until an interim checkpoint is taken: "
        f"`{command}` (fill in the two texts). Then the context is compacted ({how})."
    )
