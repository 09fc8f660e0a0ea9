"""One line of the ledger: one agent run, attributed and counted.

``kind`` says why the run happened: ``task`` (a task's brief, or its
continuation after an unfinished run), ``retry`` (after a failed run),
``compaction`` (a compaction pass of its own) or ``hook`` (a turn of a session
loop did not start, seen by its hooks). ``usage`` holds counts per model;
``tokens_known`` is false when the harness left no record to read (a command
agent that reports nothing): then the run costs "unknown", never zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from the_loop.ledger.tokens import Tokens, Usage, usage_from_json, usage_to_json, usage_total

KINDS = ("task", "retry", "compaction", "hook")


@dataclass(frozen=True)
class RunRecord:
    """One agent run in the ledger."""

    item: str
    task: str | None
    attempt: int
    kind: str  # task | retry | compaction | hook
    agent: str  # claude | codex | command
    session: str | None
    started: str  # UTC stamp
    seconds: float
    usage: Usage = field(default_factory=dict)
    tokens_known: bool = True
    exit_code: int | None = None
    stopped: str | None = None  # why loop stopped the run (a budget), if it did
    source: str = ""  # where the counts were read
    lane: int | None = None  # the lane of a parallel run that made it; None: a serial run

    @property
    def tokens(self) -> Tokens:
        """Every model's counts added up."""
        return usage_total(self.usage)

    @property
    def models(self) -> tuple[str, ...]:
        """The models the run called, sorted."""
        return tuple(sorted(self.usage))

    def to_json(self) -> dict[str, object]:
        """The record as one JSON object (camelCase keys)."""
        return {
            "item": self.item,
            "task": self.task,
            "attempt": self.attempt,
            "kind": self.kind,
            "agent": self.agent,
            "session": self.session,
            "started": self.started,
            "seconds": self.seconds,
            "usage": usage_to_json(self.usage),
            "tokensKnown": self.tokens_known,
            "exitCode": self.exit_code,
            "stopped": self.stopped,
            "source": self.source,
            "lane": self.lane,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> RunRecord | None:
        """A record read back; None when the line is not one (it is skipped)."""
        item, kind = data.get("item"), data.get("kind")
        if not isinstance(item, str) or kind not in KINDS:
            return None
        task = data.get("task")
        attempt = data.get("attempt")
        seconds = data.get("seconds")
        exit_code = data.get("exitCode")
        lane = data.get("lane")
        return cls(
            item=item,
            task=task if isinstance(task, str) else None,
            attempt=attempt if isinstance(attempt, int) else 0,
            kind=str(kind),
            agent=str(data.get("agent") or ""),
            session=_text(data.get("session")),
            started=str(data.get("started") or ""),
            seconds=float(seconds) if isinstance(seconds, (int, float)) else 0.0,
            usage=usage_from_json(data.get("usage")),
            tokens_known=data.get("tokensKnown") is not False,
            exit_code=exit_code if isinstance(exit_code, int) else None,
            stopped=_text(data.get("stopped")),
            source=str(data.get("source") or ""),
            lane=lane if isinstance(lane, int) and not isinstance(lane, bool) else None,
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
