"""``loop doctor``'s view of the hooks: installed where, and whether they fire.

Written is not wired: a harness may not run the hooks (Codex's trust review,
a moved virtual environment). So beside what the settings say, this reports
when each event last fired (``loop hook`` records it), the command's program
still existing, and the newest hook errors.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import LoopError
from the_loop.hooks import records, settings_file
from the_loop.hooks.install import targets


@dataclass(frozen=True)
class HarnessHooks:
    """One harness's hooks in one project."""

    harness: str  # the target's name: claude, claude-local, codex
    settings: Path
    installed: dict[str, str]  # event → command
    missing: tuple[str, ...]  # events loop answers that are not installed
    broken: tuple[str, ...]  # programs named by the commands that do not exist
    fired: dict[str, str]  # event → last fired (UTC)
    problem: str | None = None  # the settings file cannot be read

    @property
    def install_command(self) -> str:
        if self.harness == "claude-local":
            return "loop install claude --local"
        return f"loop install {self.harness}"

    @property
    def relevant(self) -> bool:
        """Worth a line in ``loop doctor``: installed, broken, or (the shared file) fired."""
        fired_here = bool(self.fired) and self.harness != "claude-local"
        return bool(self.installed or self.problem or fired_here)

    def to_json(self) -> dict[str, object]:
        return {
            "harness": self.harness,
            "settings": str(self.settings),
            "installed": sorted(self.installed),
            "missing": list(self.missing),
            "broken": list(self.broken),
            "lastFired": self.fired,
            "problem": self.problem,
        }

    def lines(self, root: Path) -> list[str]:
        where = self.settings
        if where.is_relative_to(root):
            where = where.relative_to(root)
        if self.problem:
            return [f"hooks ({self.harness}): {where}: {self.problem}"]
        out = []
        if self.installed:
            text = f"hooks ({self.harness}): installed in {where} for {len(self.installed)} events"
            if self.missing:
                text += f"; missing: {', '.join(self.missing)} → `{self.install_command}`"
            out.append(text)
        else:
            out.append(f"hooks ({self.harness}): not installed, but fired before")
        for program in self.broken:
            out.append(
                f"hooks ({self.harness}): the hook command's program {program} does not exist "
                f"→ `{self.install_command}` again from the loop you use"
            )
        fired = [f"{event} {self.fired[event]}" for event in sorted(self.fired)]
        never = [e for e in self.installed if e not in self.fired]
        out.append(
            f"hooks ({self.harness}): last fired: {', '.join(fired) or 'never'}"
            + (f"; not yet: {', '.join(sorted(never))}" if never and fired else "")
        )
        return out


def hook_health(root: Path) -> list[HarnessHooks]:
    """Each harness's hooks in the project at ``root``."""
    fired = records.fired(root)
    found = []
    for where in targets(root):
        harness = where.harness
        installed: dict[str, str] = {}
        problem = None
        try:
            text = where.settings.read_text(encoding="utf-8")
            data = settings_file.parse(text, str(where.settings))
            installed = settings_file.installed_events(data, harness)
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError, LoopError) as exc:
            problem = getattr(exc, "message", None) or str(exc)
        missing = tuple(e for e in where.events if installed and e not in installed)
        found.append(
            HarnessHooks(
                where.name,
                where.settings,
                installed,
                missing,
                _broken(installed.values()),
                fired.get(harness, {}),
                problem,
            )
        )
    return found


def _broken(commands: Iterable[str]) -> tuple[str, ...]:
    missing = set()
    for command in commands:
        try:
            program = shlex.split(command)[0]
        except (ValueError, IndexError):
            continue
        if Path(program).is_absolute() and not Path(program).exists():
            missing.add(program)
        elif not Path(program).is_absolute() and shutil.which(program) is None:
            missing.add(program)
    return tuple(sorted(missing))


def error_lines(root: Path) -> list[str]:
    """The newest hook errors, as doctor lines."""
    return [f"hook error: {line}" for line in records.last_errors(root)]
