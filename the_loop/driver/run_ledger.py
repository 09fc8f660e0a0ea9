"""The driver's side of the ledger: charge each agent process it starts to its task.

Before a run, the session's running total so far is noted (the ledger's cursor
for it, else what its transcript says now, else nothing for a new session);
after it, the run is charged the new total minus that, read from the run's own
output or, failing that, the session's transcript or rollout
(``ledger.harness_usage``). A command agent is charged what it appended to
``$LOOP_USAGE_FILE`` (set for every run). While the run goes on, ``live``
tells the budget watchdog what it has spent.

A lane of a parallel run uses it too, from its own thread: it opens with
``announce=False`` (the run state says what the lanes do), finds the session's
transcript from its worktree (``cwd``), and only charges the run (``charge``) — the
record goes back to the coordinator with the attempt's result, and the
coordinator's thread alone appends it (``store.append``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from the_loop.driver import transcripts
from the_loop.driver.agents import Agent, AgentKind, Invocation
from the_loop.driver.budget import StreamCounter
from the_loop.io import clock
from the_loop.io.processes import Completed
from the_loop.ledger import harness_usage, store
from the_loop.ledger.prices import Prices, dollars
from the_loop.ledger.records import RunRecord
from the_loop.ledger.tokens import Tokens, usage_minus, usage_total

USAGE_VARIABLE = "LOOP_USAGE_FILE"


@dataclass(frozen=True)
class RunEnd:
    """How one run ended, as its ledger record tells it."""

    session: str | None  # the session the run ended in (a fresh one, after a clear)
    task: str | None
    attempt: int
    kind: str  # the record's kind; a compaction run is always "compaction"
    stopped: str | None = None  # the limit that stopped it, if one did


@dataclass
class OpenRun:
    """A run under way: where it started from."""

    session: str | None
    baseline: dict[str, Tokens]
    usage_file: Path
    started: str
    counter: StreamCounter


class RunLedger:
    """Charges the driver's runs of one item to the ledger."""

    def __init__(
        self,
        *,
        root: Path,
        item: str,
        agent: Agent,
        env: Mapping[str, str],
        prices: Prices,
        cwd: Path | None = None,
        lane: int | None = None,
    ) -> None:
        self.root = root
        self.item = item
        self.agent = agent
        self.env = env
        self.prices = prices
        self.cwd = cwd or root  # where the agent runs: its transcripts are filed by it
        self.lane = lane
        self.task: str | None = None  # the task the next run is for (set by the keeper)

    def open(self, session: str | None, *, announce: bool = True) -> OpenRun:
        """Note where ``session``'s running total stands before a run."""
        baseline: dict[str, Tokens] = {}
        if session is not None:
            kept = store.cursor(self.root, session)
            baseline = kept if kept is not None else (self._recorded_total(session) or {})
        folder = store.folder(self.root, create=True) / "usage"
        folder.mkdir(exist_ok=True)
        if announce:
            store.announce(
                self.root,
                self.item,
                {"task": self.task, "session": session, "agent": self.agent.kind.value, "lane": 1},
            )
        return OpenRun(
            session=session,
            baseline=baseline,
            usage_file=folder / f"{uuid.uuid4().hex}.jsonl",
            started=clock.second_stamp(clock.utc_now()),
            counter=StreamCounter(),
        )

    def close(
        self, run: OpenRun, invocation: Invocation, finished: Completed, end: RunEnd
    ) -> RunRecord:
        """Charge the finished run and append its record; returns the record."""
        record, total = self.charge(run, invocation, finished, end)
        store.announce(self.root, self.item, None)
        store.append(self.root, record, total=total)
        return record

    def charge(
        self, run: OpenRun, invocation: Invocation, finished: Completed, end: RunEnd
    ) -> tuple[RunRecord, dict[str, Tokens] | None]:
        """The finished run's record and the session total to move its cursor to; writes nothing.

        Only the run's own usage file is removed.
        """
        session = end.session
        kind = "compaction" if invocation.purpose == "compact" else end.kind
        total, source = self._total_after(run, session, finished.stdout)
        if self.agent.kind is AgentKind.COMMAND:
            usage = total or {}
            total_for_cursor = None
        else:
            base = run.baseline if session == run.session else {}
            usage = usage_minus(total, base) if total is not None else {}
            total_for_cursor = total
        run.usage_file.unlink(missing_ok=True)
        record = RunRecord(
            item=self.item,
            task=end.task,
            attempt=end.attempt,
            kind=kind,
            agent=self.agent.kind.value,
            session=session,
            started=run.started,
            seconds=round(finished.seconds, 3),
            usage=usage,
            tokens_known=total is not None,
            exit_code=finished.returncode,
            stopped=end.stopped,
            source=source,
            lane=self.lane,
        )
        return record, total_for_cursor

    def live(self, run: OpenRun) -> tuple[int, float | None]:
        """What the run has spent so far, for the watchdog (an estimate; see ``budget``)."""
        if self.agent.kind is AgentKind.CODEX and run.session is not None:
            now = self._recorded_total(run.session)
            usage = usage_minus(now, run.baseline) if now is not None else {}
        elif self.agent.kind is AgentKind.COMMAND:
            usage = harness_usage.command_reported(run.usage_file) or {}
        else:
            return run.counter.tokens, None
        return usage_total(usage).total, dollars(usage, self.prices)

    def _recorded_total(self, session: str) -> dict[str, Tokens] | None:
        path = transcripts.locate(self.agent, session, cwd=self.cwd, env=self.env)
        if self.agent.kind is AgentKind.CLAUDE:
            return harness_usage.claude_transcript_total(path)
        if self.agent.kind is AgentKind.CODEX:
            return harness_usage.codex_rollout_total(path)
        return None

    def _total_after(
        self, run: OpenRun, session: str | None, stdout: str
    ) -> tuple[dict[str, Tokens] | None, str]:
        kind = self.agent.kind
        if kind is AgentKind.COMMAND:
            return harness_usage.command_reported(run.usage_file), f"${USAGE_VARIABLE}"
        if kind is AgentKind.CLAUDE:
            found = harness_usage.claude_result_total(stdout)
            if found is not None:
                return found, "claude result modelUsage"
        recorded = self._recorded_total(session) if session is not None else None
        if recorded is not None:
            return recorded, "transcript" if kind is AgentKind.CLAUDE else "rollout token_count"
        if kind is AgentKind.CODEX:
            found = harness_usage.codex_stdout_total(stdout, None)
            if found is not None:
                return found, "codex exec --json turn.completed"
        return None, "no record"
