"""One hook call: the input, the project it concerns, and the session it comes from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.checkpoint import seen_sessions as sessions
from the_loop.checkpoint.seen_sessions import SessionRecord
from the_loop.hooks.commands import loop_words
from the_loop.hooks.payload import HookInput

if TYPE_CHECKING:
    from the_loop.spec.project import Project


@dataclass(frozen=True)
class HookCall:
    """What every event handler works from."""

    input: HookInput
    root: Path
    env: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def project(self) -> Project:
        # Loaded on first use: PostToolUse below its threshold never opens the project.
        from the_loop.spec.project import open_project

        return open_project(self.root)

    @cached_property
    def loop(self) -> str:
        """How the agent spells ``loop`` in a command line."""
        return loop_words(self.env)

    def seen(self) -> SessionRecord | None:
        """Record that the session was heard from (None when the harness sent no id)."""
        if not self.input.session_id:
            return None
        transcript = self.input.transcript_path
        return sessions.seen(
            self.root,
            self.input.session_id,
            event=self.input.event + (f":{self.input.source}" if self.input.source else ""),
            harness=self.input.harness.value,
            transcript=str(transcript) if transcript else None,
            cwd=str(self.input.cwd) if self.input.cwd else None,
        )
