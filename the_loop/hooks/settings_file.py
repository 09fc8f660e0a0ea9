"""Merging loop's hook entries into a harness's JSON settings, and taking them out again.

Claude Code's ``.claude/settings.json`` and Codex's ``.codex/hooks.json`` share
one shape: ``{"hooks": {EVENT: [{"matcher": …, "hooks": [{"type": "command",
"command": …}]}]}}``. loop adds one group per event holding only its own
command and recognises its entries by that command (``… hook EVENT --harness
H``), so every entry the user had stays as it was, in its place. The file is
written back in its own indentation.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from the_loop.errors import LoopError, Where
from the_loop.hooks.commands import hook_command

# The tool events need a matcher; "*" matches every tool in both harnesses.
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
_OURS = re.compile(
    r"(?:\bloop\b|\bthe_loop\b).*\shook\s+(?:'|\")?(?P<event>[A-Za-z]+)(?:'|\")?\s+"
    r"--harness\s+(?:'|\")?(?P<harness>claude|codex)\b"
)


class SettingsFileError(LoopError):
    """A settings file loop cannot merge into (not JSON, not an object, odd shape)."""


def parse(text: str, where: str) -> dict[str, Any]:
    """The settings object; ``SettingsFileError`` naming the file when unusable."""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise SettingsFileError(
            f"not valid JSON: {exc}",
            where=Where(where),
            hint="fix the file (or move it away), then run `loop install` again",
        ) from exc
    if not isinstance(data, dict):
        raise SettingsFileError("the settings are not a JSON object", where=Where(where))
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise SettingsFileError('"hooks" is not an object', where=Where(where))
    return data


def is_ours(command: object, harness: str | None = None) -> bool:
    """Whether a hook command is one ``loop install`` wrote (for ``harness``)."""
    if not isinstance(command, str):
        return False
    match = _OURS.search(command)
    return match is not None and (harness is None or match["harness"] == harness)


def without_ours(data: Mapping[str, Any], harness: str) -> dict[str, Any]:
    """A copy of ``data`` with loop's entries for ``harness`` removed (and nothing else)."""
    out = copy.deepcopy(dict(data))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            entries = [h for h in group["hooks"] if not _entry_is_ours(h, harness)]
            if len(entries) == len(group["hooks"]):
                kept_groups.append(group)
            elif entries:
                kept_groups.append({**group, "hooks": entries})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


_STATUSLINE = re.compile(r"(?:\bloop\b|\bthe_loop\b)\S*'?\s+statusline\b")


def is_our_statusline(value: object) -> bool:
    """Whether a ``statusLine`` setting is the one ``loop install claude`` wrote."""
    return isinstance(value, dict) and bool(_STATUSLINE.search(str(value.get("command", ""))))


def with_statusline(data: Mapping[str, Any], command: str) -> dict[str, Any]:
    """``data`` with loop's status line, unless the user has a status line of their own."""
    out = copy.deepcopy(dict(data))
    current = out.get("statusLine")
    if current is None or is_our_statusline(current):
        out["statusLine"] = {"type": "command", "command": command}
    return out


def without_statusline(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without loop's status line (a user's own is kept)."""
    out = copy.deepcopy(dict(data))
    if is_our_statusline(out.get("statusLine")):
        del out["statusLine"]
    return out


def _entry_is_ours(entry: object, harness: str) -> bool:
    return isinstance(entry, dict) and is_ours(entry.get("command"), harness)


def with_ours(data: Mapping[str, Any], commands: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``data`` with one group per event running ``commands[event]``, appended."""
    out = copy.deepcopy(dict(data))
    hooks = out.setdefault("hooks", {})
    for event, command in commands.items():
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
        if event in TOOL_EVENTS:
            group = {"matcher": "*", **group}
        existing = hooks.get(event)
        hooks[event] = [*existing, group] if isinstance(existing, list) else [group]
    return out


def installed_events(data: Mapping[str, Any], harness: str) -> dict[str, str]:
    """``{event: command}`` for loop's entries for ``harness`` in ``data``."""
    found: dict[str, str] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                if _entry_is_ours(entry, harness):
                    found[event] = entry["command"]
    return found


def render(data: Mapping[str, Any], like: str | None) -> str:
    """``data`` as JSON, indented like ``like`` (the file's old text), ending in a newline."""
    indent: int | str = 2
    if like:
        for line in like.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and stripped != line:
                lead = line[: len(line) - len(stripped)]
                indent = lead if "\t" in lead else len(lead)
                break
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def hook_commands(entry: Sequence[str], harness: str, events: Sequence[str]) -> dict[str, str]:
    """``{event: command line}`` for every event loop installs."""
    return {event: hook_command(entry, event, harness) for event in events}
