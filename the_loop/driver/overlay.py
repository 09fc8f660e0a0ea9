"""The per-run settings overlay that makes loop decide every reset of a driven Claude run.

Without ``loop install``, a driven ``claude -p`` has no loop hooks: a compaction
Claude Code decides on its own happens with no checkpoint before it, and its
own threshold may fire before loop's. So each run the driver starts gets:

* ``--settings <file>``: a settings file in loop's state folder holding loop's
  hooks (PreCompact checkpoints before any compaction, PostCompact records it),
  written only when the project's own settings do not already hold them (they
  would then run twice). The user's files are never edited.
* an auto-compaction point above loop's hard arm, in the run's environment:
  ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` above ``fullClearPercent`` and
  ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` above ``hardTokens``, so loop's
  checkpoint-then-compact comes first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from the_loop.config.settings import ContextPolicy
from the_loop.config.state_folder import state_dir, write_json
from the_loop.hooks import settings_file
from the_loop.hooks.payload import CLAUDE_EVENTS

_MARGIN_PERCENT = 5  # points above fullClearPercent (at most 99)
_MARGIN_TOKENS = 0.1  # a tenth above hardTokens


@dataclass(frozen=True)
class Overlay:
    """What a driven Claude run gets on top of the user's settings."""

    settings: Path | None  # the --settings file; None when the project has loop's hooks
    env: dict[str, str] = field(default_factory=dict)


def harness_thresholds(policy: ContextPolicy) -> dict[str, str]:
    """The run's auto-compaction point, above both of loop's hard thresholds."""
    pressure = policy.pressure
    percent = min(99, pressure.full_clear_percent + _MARGIN_PERCENT)
    tokens = int(pressure.hard_tokens * (1 + _MARGIN_TOKENS))
    return {
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": str(percent),
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(tokens),
    }


def claude_overlay(root: Path, item: str, policy: ContextPolicy, entry: Sequence[str]) -> Overlay:
    """The overlay for ``item``'s driven runs (writes the settings file when needed)."""
    env = harness_thresholds(policy)
    if _installed(root):
        return Overlay(None, env)
    commands = settings_file.hook_commands(entry, "claude", CLAUDE_EVENTS)
    data = settings_file.with_ours({}, commands)
    folder = state_dir(root, create=True) / "driver"
    folder.mkdir(exist_ok=True)
    path = folder / f"{item}.claude-settings.json"
    write_json(path, data)
    return Overlay(path, env)


def _installed(root: Path) -> bool:
    """Whether the project's own Claude settings already run loop's hooks."""
    for name in ("settings.json", "settings.local.json"):
        path = root / ".claude" / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and settings_file.installed_events(data, "claude"):
            return True
    return False
