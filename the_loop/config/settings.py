"""The effective configuration as frozen records: what code past the loader reads.

``the_loop.config.loader`` builds them (schema defaults, config.yaml, environment,
front-matter overrides, all validated); everything else only reads them. Kept
apart from the loader so that a reader of settings does not pay for the
machinery that builds them: the hook that runs after every tool call reads a
context policy it remembered, and never loads YAML, the schema or the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import Where

if TYPE_CHECKING:
    from typing import Any

    from the_loop.findings import Finding

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Origin:
    """Where one effective value came from."""

    kind: str  # "default" | "config" | "environment" | "override"
    where: Where | None = None

    def __str__(self) -> str:
        return "schema default" if self.kind == "default" else str(self.where)


@dataclass(frozen=True)
class Pressure:
    """Thresholds of the two-arm pressure verdict."""

    soft_tokens: int
    hard_tokens: int
    selective_percent: int
    full_clear_percent: int


@dataclass(frozen=True)
class ContextPolicy:
    """``contextManagement``: what reset follows each kind of boundary."""

    enabled: bool
    phase_boundary: str
    task_boundary: str
    mid_task: str
    pressure: Pressure


@dataclass(frozen=True)
class CheckpointSettings:
    """``checkpoint``: how the work in progress is committed."""

    commit: bool
    stage: str
    message_template: str
    trailers: bool
    verify_tests: bool
    test_timeout_seconds: int
    hook_timeout_seconds: int
    max_file_bytes: int


@dataclass(frozen=True)
class TestingSettings:
    """``testing``, the part loop itself acts on: how a task's test command runs."""

    shell: bool = False  # run _Test:_ commands through `sh -c`


@dataclass(frozen=True)
class ClaudeAgentSettings:
    """``agent.claude``: how Claude Code runs headless."""

    allowed_tools: tuple[str, ...]
    model: str | None
    args: tuple[str, ...]


@dataclass(frozen=True)
class CodexAgentSettings:
    """``agent.codex``: how Codex runs headless."""

    sandbox: str
    model: str | None
    args: tuple[str, ...]


@dataclass(frozen=True)
class AgentSettings:
    """``agent``: the headless driver."""

    kind: str
    command: tuple[str, ...]
    timeout_seconds: int
    max_attempts: int
    backoff_seconds: float
    claude: ClaudeAgentSettings
    codex: CodexAgentSettings


@dataclass(frozen=True)
class WorkflowSettings:
    """``workflow``: where specs live and which phases the process uses."""

    spec_dir: str
    phases: tuple[str, ...]
    require_human_review: bool
    phase_label_prefix: str


@dataclass(frozen=True)
class Config:
    """The effective configuration and the origin of every value in it."""

    data: Mapping[str, Any]
    origins: Mapping[Path_, Origin]
    file: Path | None
    workflow: WorkflowSettings
    context: ContextPolicy
    checkpoint: CheckpointSettings
    agent: AgentSettings
    warnings: tuple[Finding, ...] = field(default=())
    testing: TestingSettings = field(default=TestingSettings())
