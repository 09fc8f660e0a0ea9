"""``loop install claude|codex``: wire the hooks (and the slash commands) into a project.

* Claude Code: the hooks go into ``.claude/settings.json`` and loop's slash
  commands (``commands/*.md``) into ``.claude/commands/``.
* Codex: the hooks go into ``.codex/hooks.json`` (the same JSON shape). Codex
  has no project-level slash commands, so none are installed.

Every entry the user had stays. The settings file as it was is backed up in
``.the-loop/state/install/`` before the first change; installing twice changes
nothing the second time; ``--uninstall`` puts back the backup byte for byte
when the file has not changed since, and otherwise takes out only loop's
entries. A slash command the user already has under the same name is kept,
and one loop installed is removed on uninstall only if unchanged.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from the_loop.config.project_root import CONFIG_DIR
from the_loop.config.state_folder import read_json, state_dir, write_json
from the_loop.errors import LoopError, RefusedError, UsageError
from the_loop.git import repo as gitrepo
from the_loop.hooks import settings_file
from the_loop.hooks.payload import CLAUDE_EVENTS, EVENTS
from the_loop.io import atomic
from the_loop.io.resources import resource_dir

FOLDER = "install"


@dataclass(frozen=True)
class Target:
    """Where one harness's hooks and commands go in a project."""

    name: str  # names its records in the state folder: claude, claude-local, codex
    harness: str
    settings: Path
    commands: Path | None
    events: tuple[str, ...]


def target(root: Path, harness: str, *, local: bool = False) -> Target:
    """The install target of ``harness`` in the project at ``root``.

    ``local``: Claude Code's per-person ``.claude/settings.local.json`` (its hooks
    fire like the shared file's; slash commands stay with the shared install).
    """
    if harness == "claude":
        folder = root / ".claude"
        if local:
            local_file = folder / "settings.local.json"
            return Target("claude-local", harness, local_file, None, CLAUDE_EVENTS)
        commands = folder / "commands"
        return Target(harness, harness, folder / "settings.json", commands, CLAUDE_EVENTS)
    if harness == "codex":
        if local:
            raise UsageError("--local is for Claude Code's settings.local.json; Codex has none")
        # Codex 0.169.0 fires all six (checked against the real CLI); see docs/hooks.md.
        return Target(harness, harness, root / ".codex" / "hooks.json", None, EVENTS)
    raise UsageError(f"loop installs into claude or codex, not {harness!r}")


def targets(root: Path) -> list[Target]:
    """Every place loop may have installed hooks in the project."""
    return [target(root, "claude"), target(root, "claude", local=True), target(root, "codex")]


@dataclass(frozen=True)
class Change:
    """What happened (or, in a dry run, would happen) to one file."""

    path: Path
    action: str  # created | updated | unchanged | restored | removed | kept | absent
    detail: str = ""


@dataclass(frozen=True)
class InstallResult:
    """Everything one ``loop install`` did."""

    harness: str
    uninstall: bool
    dry_run: bool
    changes: tuple[Change, ...]
    backup: Path | None = None
    preview: str | None = None  # the settings file as it would be written (dry run)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "harness": self.harness,
            "uninstall": self.uninstall,
            "dryRun": self.dry_run,
            "changes": [
                {"path": str(c.path), "action": c.action, "detail": c.detail} for c in self.changes
            ],
            "backup": str(self.backup) if self.backup else None,
            "preview": self.preview,
            "notes": list(self.notes),
        }


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest_path(root: Path, harness: str) -> Path:
    return state_dir(root) / FOLDER / f"{harness}.json"


def _manifest(root: Path, harness: str) -> dict[str, Any]:
    try:
        data = read_json(_manifest_path(root, harness))
    except LoopError:
        return {}
    return data if isinstance(data, dict) else {}


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _shown(path: Path, root: Path) -> Path:
    try:
        return path.relative_to(root)
    except ValueError:
        return path


def install(
    root: Path,
    harness: str,
    *,
    entry: Sequence[str],
    dry_run: bool = False,
    local: bool = False,
) -> InstallResult:
    """Merge loop's hooks for ``harness`` into the project (see the module docstring)."""
    if not (root / CONFIG_DIR).is_dir():
        # the hooks answer only in a loop project; installing them elsewhere does nothing
        raise RefusedError(
            f"{root} is not a loop project (no {CONFIG_DIR}/)",
            hint="`loop init` first, then `loop install " + harness + "`",
        )
    where = target(root, harness, local=local)
    manifest = _manifest(root, where.name)
    before = _read(where.settings)
    text = before.decode("utf-8") if before is not None else None
    data = settings_file.parse(text or "", str(where.settings))
    commands = settings_file.hook_commands(entry, harness, where.events)
    wanted = settings_file.with_ours(settings_file.without_ours(data, harness), commands)
    if harness == "claude":
        # Pressure in the status bar, before a hook has to block (kept if the user has one).
        wanted = settings_file.with_statusline(wanted, shlex.join([*entry, "statusline"]))
    changes: list[Change] = []
    backup = None
    shown = _shown(where.settings, root)
    if wanted == data:
        changes.append(Change(shown, "unchanged", "loop's hooks are already there"))
        new_text = None
    else:
        new_text = settings_file.render(wanted, text)
        action = "created" if before is None else "updated"
        events = ", ".join(where.events)
        changes.append(Change(shown, action, f"hooks for {events}"))
        first = "settings" not in manifest and not settings_file.installed_events(data, harness)
        if not dry_run:
            if first:
                backup = _backup(root, where.name, before, manifest)
            # loop's entries were there without a record of installing them (state lost):
            # no backup to restore, so uninstall will only take the entries out
            manifest.setdefault("settings", {}).setdefault("existed", before is not None)
            atomic_write(where.settings, new_text)
            manifest["settings"] = {
                **manifest.get("settings", {}),
                "path": str(shown),
                "written": _digest(new_text.encode("utf-8")),
            }
    command_changes = _install_commands(root, where, manifest, dry_run)
    changes += command_changes
    if not dry_run:
        manifest["entry"] = list(entry)
        write_json(_state(root) / f"{where.name}.json", manifest)
    return InstallResult(
        harness,
        False,
        dry_run,
        tuple(changes),
        backup,
        new_text if dry_run else None,
        _notes(root, where),
    )


def _state(root: Path) -> Path:
    folder = state_dir(root, create=True) / FOLDER
    folder.mkdir(exist_ok=True)
    return folder


def _backup(root: Path, name: str, before: bytes | None, manifest: dict[str, Any]) -> Path | None:
    """Keep the settings file as it was before loop first touched it."""
    settings: dict[str, Any] = {"existed": before is not None, "backup": None}
    path = None
    if before is not None:
        path = _state(root) / f"{name}-settings.orig"
        atomic.write_bytes(path, before)
        settings["backup"] = path.name
    manifest["settings"] = settings
    return path


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` atomically, creating the folder (loop's ``.claude/`` or ``.codex/``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, text)


def _install_commands(
    root: Path, where: Target, manifest: dict[str, Any], dry_run: bool
) -> list[Change]:
    if where.commands is None:
        return []
    changes = []
    ours: dict[str, str] = dict(manifest.get("commands", {}))
    for source in sorted(resource_dir("commands").glob("*.md")):
        shipped = source.read_bytes()
        dest = where.commands / source.name
        shown = _shown(dest, root)
        current = _read(dest)
        if current == shipped:
            changes.append(Change(shown, "unchanged", "slash command"))
            continue
        if current is not None and source.name not in ours:
            changes.append(Change(shown, "kept", "a command of yours has this name; not replaced"))
            continue
        if current is not None and ours.get(source.name) != _digest(current):
            changes.append(Change(shown, "kept", "changed since loop installed it; not replaced"))
            continue
        changes.append(Change(shown, "created" if current is None else "updated", "slash command"))
        if not dry_run:
            atomic_write(dest, shipped.decode("utf-8"))
            ours[source.name] = _digest(shipped)
    if not dry_run:
        manifest["commands"] = ours
    return changes


def uninstall(
    root: Path, harness: str, *, dry_run: bool = False, local: bool = False
) -> InstallResult:
    """Take loop's hooks (and unchanged slash commands) out again."""
    where = target(root, harness, local=local)
    manifest = _manifest(root, where.name)
    changes = [_uninstall_settings(root, where, manifest, dry_run)]
    changes += _uninstall_commands(root, where, manifest, dry_run)
    if not dry_run:
        _manifest_path(root, where.name).unlink(missing_ok=True)
        backup = manifest.get("settings", {}).get("backup")
        if backup:
            (_manifest_path(root, where.name).parent / backup).unlink(missing_ok=True)
    return InstallResult(harness, True, dry_run, tuple(changes), notes=())


def _uninstall_settings(
    root: Path, where: Target, manifest: dict[str, Any], dry_run: bool
) -> Change:
    shown = _shown(where.settings, root)
    current = _read(where.settings)
    if current is None:
        return Change(shown, "absent", "nothing to take out")
    recorded = manifest.get("settings", {})
    if recorded.get("written") == _digest(current):
        # Untouched since loop wrote it: put back exactly what was there.
        if not recorded.get("existed"):
            if not dry_run:
                where.settings.unlink()
                _remove_empty(where.settings.parent, root)
            return Change(shown, "removed", "loop created it")
        backup = recorded.get("backup")
        if backup:
            original = (_manifest_path(root, where.name).parent / backup).read_bytes()
            if not dry_run:
                atomic.write_bytes(where.settings, original)
            return Change(shown, "restored", "byte for byte, from the backup")
    text = current.decode("utf-8")
    data = settings_file.parse(text, str(where.settings))
    left = settings_file.without_ours(data, where.harness)
    if where.harness == "claude":
        left = settings_file.without_statusline(left)
    if left == data:
        return Change(shown, "unchanged", "no loop hooks in it")
    if not left and recorded and not recorded.get("existed"):
        if not dry_run:
            where.settings.unlink()
            _remove_empty(where.settings.parent, root)
        return Change(shown, "removed", "only loop's hooks were left in it")
    if not dry_run:
        atomic_write(where.settings, settings_file.render(left, text))
    return Change(shown, "updated", "loop's hooks taken out; everything else kept")


def _uninstall_commands(
    root: Path, where: Target, manifest: dict[str, Any], dry_run: bool
) -> list[Change]:
    if where.commands is None:
        return []
    changes = []
    for name, digest in sorted(dict(manifest.get("commands", {})).items()):
        dest = where.commands / name
        current = _read(dest)
        if current is None:
            continue
        if _digest(current) != digest:
            changes.append(Change(_shown(dest, root), "kept", "changed since loop installed it"))
            continue
        if not dry_run:
            dest.unlink()
        changes.append(Change(_shown(dest, root), "removed", "slash command"))
    if not dry_run:
        _remove_empty(where.commands, root)
    return changes


def _remove_empty(folder: Path, root: Path) -> None:
    """Remove ``folder`` and its parents up to ``root`` while they are empty."""
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _notes(root: Path, where: Target) -> tuple[str, ...]:
    if where.name == "claude-local" and where.settings.exists():
        in_git = gitrepo.find_repo_root(root) is not None
        if in_git and not gitrepo.is_ignored(root, where.settings):
            return (
                f"{where.settings.relative_to(root)} is not ignored by git: add it to "
                ".gitignore, or the next checkpoint commits it",
            )
        return ()
    if where.harness == "codex":
        return (
            "Codex runs project hooks only in a trusted project whose hooks are trusted: "
            "`codex` → /hooks to review them once (or run with "
            "`--enable hooks --dangerously-bypass-hook-trust`, and `--trust` for the project)",
            "Codex has no project-level slash commands; commands/ was not installed",
        )
    return ()
