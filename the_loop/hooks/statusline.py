"""``loop statusline``: one line for Claude Code's status bar, from the JSON it sends.

Claude Code runs the status-line command after each assistant message with a
JSON object on stdin (``session_id``, ``transcript_path``, ``context_window``:
``current_usage``, ``context_window_size``, ``used_percentage``). The line says
the item and the task in progress, the tokens in use against both arms of the
pressure policy, and the reset the next boundary brings, so a person sees the
pressure rising before a hook has to block. It never fails: anything it cannot
tell is left out, and an unusable payload gives a short line, exit 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from the_loop.checkpoint import seen_sessions as sessions
from the_loop.checkpoint.policy import Verdict, pressure_verdict
from the_loop.config.project_root import CONFIG_DIR
from the_loop.config.settings import ContextPolicy
from the_loop.errors import LoopError
from the_loop.hooks.payload import bounded_text

_IN_USE = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_MARK = {
    Verdict.NO_OP: "",
    Verdict.SELECTIVE_DROP: " ! past soft: checkpoint soon",
    Verdict.FULL_CLEAR: " !! past hard: checkpoint now",
}


def statusline_text(root: Path | None, stdin: str) -> str:
    """The status line for the payload ``stdin`` in the project at ``root`` (None: none)."""
    try:
        payload = json.loads(stdin) if stdin.strip() else {}
    except ValueError:
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    tokens, window = _usage(payload.get("context_window"))
    if root is None or not (root / CONFIG_DIR).is_dir():
        return "loop: not a loop project" + (f" · {_tokens(tokens, window)}" if tokens else "")
    try:
        return _line(root, payload, tokens, window)
    except LoopError as exc:
        return f"loop: {exc.message[:80]}"


def _line(root: Path, payload: Mapping[str, object], tokens: int | None, window: int | None) -> str:
    from the_loop.hooks.focus import find_focus
    from the_loop.spec.project import open_project

    project = open_project(root)
    session_id = bounded_text(payload.get("session_id"))
    record = sessions.load(root, session_id) if session_id else None
    focus = find_focus(project, session=record)
    policy = focus.ctx.config.context if focus is not None else project.config.context
    parts = []
    if focus is None:
        parts.append("loop: no item in progress")
    else:
        task = f" · task {focus.task.id} {focus.task.title[:30]}" if focus.task else ""
        parts.append(f"loop {focus.item}{task}")
    parts.append(_pressure(policy, tokens, window))
    parts.append(_next_boundary(policy, focus is not None and focus.task is not None))
    return " · ".join(p for p in parts if p)


def _usage(context: object) -> tuple[int | None, int | None]:
    """Tokens in use (input + cache creation + cache read) and the window size."""
    if not isinstance(context, dict):
        return None, None
    size = context.get("context_window_size")
    window = size if isinstance(size, int) and size > 0 else None
    usage = context.get("current_usage")
    if isinstance(usage, dict):
        values = [usage.get(k) for k in _IN_USE]
        if any(isinstance(v, int) for v in values):
            return sum(v for v in values if isinstance(v, int) and v >= 0), window
    # current_usage is null right after /compact: unknown, never zero.
    return None, window


def _pressure(policy: ContextPolicy, tokens: int | None, window: int | None) -> str:
    limits = policy.pressure
    arms = (
        f"soft {_k(limits.soft_tokens)}/hard {_k(limits.hard_tokens)}, "
        f"{limits.selective_percent}/{limits.full_clear_percent}%"
    )
    if tokens is None:
        return f"tokens unknown ({arms})"
    usable = window if window is not None and window >= tokens else None
    reading = pressure_verdict(limits, tokens=tokens, window=usable)
    mark = _MARK[reading.verdict] if reading.verdict is not None else ""
    return f"{_tokens(tokens, usable)} ({arms}){mark}"


def _next_boundary(policy: ContextPolicy, in_task: bool) -> str:
    if not policy.enabled:
        return "resets off"
    if in_task:
        return f"after the task: {policy.task_boundary}"
    return f"next phase: {policy.phase_boundary}"


def _tokens(tokens: int | None, window: int | None) -> str:
    if tokens is None:
        return "tokens unknown"
    if window:
        return f"{_k(tokens)}/{_k(window)} tokens {tokens * 100 // window}%"
    return f"{_k(tokens)} tokens"


def _k(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    return f"{n / 1000:.0f}k" if n >= 1000 else str(n)
