"""The one exception tree, and the exit codes it maps to.

Exceptions carry data (where, what, what next) and never print; the single
handler in ``the_loop.cli.handler`` turns them into text and an exit code.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """Documented process exit codes (docs/exit-codes.md; pinned by a test)."""

    OK = 0
    FAILURE = 1  # findings, a refusal, or an operation that failed
    USAGE = 2  # bad arguments or unusable input (missing/unreadable file)
    INTERNAL = 3  # a bug in loop
    INTERRUPTED = 130  # Ctrl-C


@dataclass(frozen=True)
class Where:
    """A place in a file: ``path:line:col``. Line and column are 1-based."""

    path: Path | str
    line: int | None = None
    col: int | None = None

    def __str__(self) -> str:
        text = str(self.path)
        if self.line is not None:
            text += f":{self.line}"
            if self.col is not None:
                text += f":{self.col}"
        return text


class LoopError(Exception):
    """Base of every error loop reports on purpose."""

    exit_code: ExitCode = ExitCode.FAILURE

    def __init__(
        self,
        message: str,
        *,
        where: Where | None = None,
        hint: str | None = None,
        details: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint
        self.details = details

    def render(self) -> str:
        """The user-facing text: ``where: message`` plus details and a hint."""
        head = f"{self.where}: {self.message}" if self.where else self.message
        lines = [head, *(f"  {d}" for d in self.details)]
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


class UsageError(LoopError):
    """Bad arguments: an unknown work item, an option that makes no sense."""

    exit_code = ExitCode.USAGE


class UnusableInputError(LoopError):
    """A file that should be there is missing, unreadable or not text."""

    exit_code = ExitCode.USAGE


class ConfigError(LoopError):
    """The configuration is invalid (the details list every finding)."""


class SpecError(LoopError):
    """A work item or one of its artifacts is not in a usable state."""


class RefusedError(LoopError):
    """The process forbids this step now (an unlocked upstream, an open dependency)."""


class DagError(LoopError):
    """The task graph cannot answer the question (a cycle, an unknown task)."""


class GitError(LoopError):
    """Git refused, or the repository is in a state a checkpoint cannot commit in."""


class TemplateError(LoopError):
    """A template is missing, escapes the template root, or fails to render."""


class LockError(LoopError):
    """Another loop command holds the repository lock for too long."""


class FileSystemError(LoopError):
    """The file system refused: permissions, a full disk, a read-only file or folder."""


class StateError(LoopError):
    """loop's own state (journal, reset record) needs attention before going on."""


class WriteError(LoopError):
    """A file could not be written: read-only, no space, too large, or outside the project."""
