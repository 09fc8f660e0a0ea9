"""``loop hook EVENT --harness H``: read the hook's JSON, answer, never break the harness.

Any failure, from unreadable input to a bug, ends the same way: exit 0, one
line on stderr, one line in ``.the-loop/state/hooks/errors.log``. A folder that
is not a loop project (no ``.the-loop/``) gets no answer and no state written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from the_loop.config.project_root import CONFIG_DIR, find_project_root
from the_loop.errors import LoopError
from the_loop.hooks import records
from the_loop.hooks.answer import HookAnswer, render
from the_loop.hooks.call import HookCall
from the_loop.hooks.payload import HookInput, parse_input


@dataclass(frozen=True)
class HookResult:
    """What the hook process writes and how it exits (always 0)."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


Handler = Callable[[HookCall], HookAnswer]


def _handler(event: str) -> Handler:
    # Imported per event: PostToolUse runs after every tool call and must not pay
    # for the SessionStart brief (Jinja) or the checkpoint machinery.
    if event == "SessionStart":
        from the_loop.hooks.session_start import on_session_start

        return on_session_start
    if event == "PostToolUse":
        from the_loop.hooks.tool_use import on_post_tool_use

        return on_post_tool_use
    if event == "PreCompact":
        from the_loop.hooks.compaction import on_pre_compact

        return on_pre_compact
    if event == "PostCompact":
        from the_loop.hooks.compaction import on_post_compact

        return on_post_compact
    if event == "Stop":
        from the_loop.hooks.stop import on_stop

        return on_stop
    if event == "SubagentStart":
        from the_loop.hooks.handoff import on_subagent_start

        return on_subagent_start
    from the_loop.hooks.stop import on_session_end

    return on_session_end


def project_of(start: Path | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The loop project the hook is about: the session's cwd (``start``), else the
    harness's project folder, else this process's cwd; None when not a loop project."""
    if start is None:
        start = Path(env["CLAUDE_PROJECT_DIR"]) if env.get("CLAUDE_PROJECT_DIR") else cwd
    try:
        root = find_project_root(start) if start.is_dir() else None
    except (OSError, LoopError):
        return None
    return root if root is not None and (root / CONFIG_DIR).is_dir() else None


def run_hook(
    *, event: str, harness: str, stdin: str, env: Mapping[str, str], cwd: Path
) -> HookResult:
    """Answer one hook call; never raises."""
    root: Path | None = None
    try:
        hook = parse_input(stdin, event=event, harness=harness)
        root = project_of(hook.cwd, env, cwd)
        if root is None:
            return HookResult()
        records.note_fired(root, hook.harness.value, event)
        if env.get("LOOP_DRIVEN") == "1" and not _harness_compaction(hook):
            # A driven run: the driver briefs, verifies, checkpoints and resets itself;
            # only a compaction the harness starts on its own needs the hooks.
            return HookResult()
        answer = _handler(event)(HookCall(hook, root, env))
        return HookResult(stdout=render(answer, event=event, harness=hook.harness))
    except Exception as exc:  # a hook must never break the harness, whatever went wrong
        if root is None:  # unusable input: log where the harness runs, if that is a project
            root = project_of(None, env, cwd)
        return _failed(root, harness, event, exc)


def _harness_compaction(hook: HookInput) -> bool:
    """PreCompact/PostCompact of a compaction the harness started itself (trigger auto)."""
    return hook.event in ("PreCompact", "PostCompact") and hook.trigger == "auto"


def _failed(root: Path | None, harness: str, event: str, exc: Exception) -> HookResult:
    what = exc.message if isinstance(exc, LoopError) else f"{type(exc).__name__}: {exc}"
    log = records.log_error(root, harness, event, what) if root is not None else None
    where = f" (see {log})" if log is not None else ""
    return HookResult(stderr=f"loop hook {event}: {what.splitlines()[0] if what else ''}{where}")
