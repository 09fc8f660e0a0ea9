"""Findings: what a check found, where, and how to fix it.

Validation collects every finding before reporting, so one run shows all of
them; callers sort them and decide the exit code (``--strict`` promotes
warnings).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from the_loop.errors import Where


class Level(str, Enum):
    """Severity of a finding, most severe first when sorted by ``rank``."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Level.ERROR: 0, Level.WARNING: 1, Level.INFO: 2}


@dataclass(frozen=True)
class Finding:
    """One observation: a level, a place, a message and an optional fix hint.

    ``code`` is a short stable identifier (``dag.cycle``, ``config.enum``) that
    tests and ``--json`` consumers can rely on; messages may be reworded.
    """

    level: Level
    code: str
    message: str
    where: Where | None = None
    hint: str | None = None

    def sort_key(self) -> tuple[str, int, int, int, str]:
        path = str(self.where.path) if self.where else ""
        line = self.where.line or 0 if self.where else 0
        col = self.where.col or 0 if self.where else 0
        return (path, line, col, self.level.rank, self.message)

    def render(self) -> str:
        place = f"{self.where}: " if self.where else ""
        text = f"{place}{self.level.value}: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def to_json(self) -> dict[str, object]:
        where = self.where
        return {
            "level": self.level.value,
            "code": self.code,
            "message": self.message,
            "path": str(where.path) if where else None,
            "line": where.line if where else None,
            "col": where.col if where else None,
            "hint": self.hint,
        }


def sorted_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in a stable order: by file, line, column, then severity."""
    return sorted(findings, key=Finding.sort_key)


def failing(findings: Iterable[Finding], *, strict: bool = False) -> bool:
    """True when the findings should fail the run (errors; warnings too if strict)."""
    blocking = {Level.ERROR, Level.WARNING} if strict else {Level.ERROR}
    return any(f.level in blocking for f in findings)


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    """Number of findings per level, every level present."""
    result = {level.value: 0 for level in Level}
    for f in findings:
        result[f.level.value] += 1
    return result
