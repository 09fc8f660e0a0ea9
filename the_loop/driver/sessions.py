"""The agent session the driver keeps, and the resets it performs on it.

A checkpoint leaves a reset record (clear or compact). The keeper performs it
when the next agent turn starts, then completes the record with the session
that resulted, through ``checkpoint.resets``:

* **clear**: the turn starts a new session; the record completes with the new
  id (a different id is what makes a clear verifiable);
* **compact**: the session is compacted first (Claude Code and Codex: a run of
  its own, confirmed by the compaction line it writes into the transcript; a
  ``command`` agent: the turn is started with ``LOOP_SESSION_START=compact``),
  then resumed with the prompt; the record completes with the same id;
* no record (``off``/``none``, or mid-task below the threshold): the session
  is resumed as it is.

A reset that cannot be performed (a compaction that failed, a session this run
does not drive) is aborted with the reason, never confirmed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from the_loop.checkpoint import resets
from the_loop.checkpoint.resets import ResetRecord, open_resets
from the_loop.driver import state, transcripts
from the_loop.driver.agents import Agent, AgentReply, Invocation, Start, one_line
from the_loop.driver.budget import Allowance, Budget, Watchdog
from the_loop.driver.events import Listener, ResetDone
from the_loop.driver.process import run_process
from the_loop.driver.run_ledger import USAGE_VARIABLE, OpenRun, RunEnd, RunLedger
from the_loop.errors import RefusedError
from the_loop.io.processes import Completed
from the_loop.spec.project import ItemContext
from the_loop.telemetry import ContextReading
from the_loop.workflow.reset_abort import abort_reset

# (what the agent is doing, tokens in use if known, seconds since the run started)
ProgressSink = Callable[[str, "int | None", float], None]
_SHOWN = 160  # characters of a command line kept in a reset record's note


@dataclass(frozen=True)
class Turn:
    """One agent turn: how it started, what it said, and how full its window is after."""

    start: Start
    session: str | None
    reply: AgentReply
    finished: Completed
    reading: ContextReading | None
    timeout: float
    stopped: str | None = None  # why the budget watchdog stopped the run

    @property
    def tokens(self) -> int | None:
        """Tokens in use after the turn: the transcript's count, else the output's."""
        if self.reading is not None and self.reading.tokens_in_use is not None:
            return self.reading.tokens_in_use
        return self.reply.tokens

    @property
    def error(self) -> str | None:
        """Why the run failed, or None for a clean run."""
        finished = self.finished
        if self.stopped is not None:
            return self.stopped
        if finished.timed_out:
            return (
                f"timed out after {self.timeout:g}s (agent.timeoutSeconds); "
                "its process group was stopped"
            )
        error = self.reply.error
        if error is None and finished.returncode != 0:
            error = f"exited {finished.returncode}"
        if error is not None and finished.stderr.strip() and not self.reply.message:
            error += f" — {one_line(finished.stderr.strip().splitlines()[-1], 200)}"
        return error


class SessionKeeper:
    """Holds the current session id and the reset still to perform on it."""

    def __init__(
        self,
        *,
        ctx: ItemContext,
        agent: Agent,
        env: Mapping[str, str],
        timeout: float,
        listener: Listener,
    ) -> None:
        self.ctx = ctx
        self.root = ctx.project.root
        self.item = ctx.item.id
        self.agent = agent
        self.env = env
        self.timeout = timeout
        self.listener = listener
        self.session: str | None = None
        self.pending: ResetRecord | None = None
        self.sessions: list[str] = []
        self.performed: Counter[str] = Counter()
        self.aborted = 0
        self.runs = 0
        self.tokens_peak: int | None = None
        self.task: str | None = None
        # The ledger and the budget (set by the driver): each run is charged, and watched.
        self.ledger: RunLedger | None = None
        self.budget = Budget()
        self.allowed: Allowance | None = None
        self.attempt = 0
        self.run_kind = "task"
        self.stopped: str | None = None

    # ---------------------------------------------------------------- records

    def resume_from(self, saved: state.DriverState | None) -> None:
        """Pick up where an earlier run stopped: its session, and resets left open."""
        if saved is not None and saved.kind == self.agent.kind.value and saved.session:
            self.session = saved.session
        records = open_resets(self.root, self.item)
        for older in records[:-1]:
            self._abort(older, "superseded by a later checkpoint (open when the driver started)")
        if records:
            self.adopt(records[-1])
            self._reconcile(records[-1])

    def _reconcile(self, record: ResetRecord) -> None:
        """An open reset a crashed run may have performed already: complete it, never redo it.

        A compaction is done when the session's transcript has a compaction line
        written after the checkpoint; a clear is done when the driver had already
        started (and saved) a new session since the checkpoint's.
        """
        if record.mode == "compact" and record.session is not None:
            path = transcripts.locate(self.agent, record.session, cwd=self.root, env=self.env)
            marker = self.agent.compaction_marker
            if transcripts.compacted_after(path, marker, record.created):
                how = (
                    f"{self.agent.kind.value}: reconciled when the driver started again: the "
                    "transcript records a compaction after the checkpoint, so it is not repeated"
                )
                self.session = record.session
                self._confirm(record, record.session, how)
        elif record.mode == "clear" and self.session and record.session not in (None, self.session):
            how = (
                f"{self.agent.kind.value}: reconciled when the driver started again: new session "
                f"{self.session} had already been started after the checkpoint"
            )
            self._confirm(record, self.session, how)

    def adopt(self, record: ResetRecord | None) -> None:
        """Take ``record`` as the reset to perform before the next turn."""
        if record is None:
            return
        if record.state == "prepared":
            record = resets.mark_dispatched(self.root, record)
        previous = self.pending
        if previous is not None and previous.id != record.id and self._is_open(previous):
            self._abort(previous, f"superseded by checkpoint {record.checkpoint}")
        self.pending = record

    def open_ids(self) -> set[str]:
        """Ids of the item's open reset records now."""
        return {r.id for r in open_resets(self.root, self.item)}

    def adopt_new(self, before: set[str]) -> None:
        """Adopt the newest reset record opened since ``before`` (the agent's own checkpoint)."""
        fresh = [r for r in open_resets(self.root, self.item) if r.id not in before]
        if fresh:
            self.adopt(fresh[-1])

    def leave_pending(self, reason: str) -> None:
        """Abort the reset still pending: nothing will run in this session any more."""
        if self.pending is not None:
            self._abort(self.pending, reason)

    def open_pending(self) -> ResetRecord | None:
        """The reset still to perform, if its record is open."""
        pending = self.pending
        return pending if pending is not None and self._is_open(pending) else None

    # ---------------------------------------------------------------- turns

    def next_start(self) -> Start:
        """How the next turn will begin, given the session and the pending reset."""
        pending = self.pending
        if self.session is None:
            return Start.NEW
        if pending is None:
            return Start.RESUME
        if pending.mode == "clear":
            return Start.NEW
        if pending.session is not None and pending.session != self.session:
            return Start.NEW  # a compaction meant for a session this run does not drive
        return Start.COMPACT

    def turn(self, prompt: str, *, task: str, focus: str, progress: ProgressSink) -> Turn:
        """Perform the pending reset, then give ``prompt`` to the session."""
        self.task = task
        self.stopped = None
        start, pending = self._prepare(focus, progress)
        session = self.agent.new_session_id() if start is Start.NEW else self.session
        if start is not Start.NEW:
            self._remember(session)
        if start is Start.COMPACT and pending is not None and session:
            # The turn itself carries the request (LOOP_SESSION_START=compact): it is
            # recorded as handed over now, before the program runs, because the
            # program's own `loop task done` in this turn would otherwise find the
            # compaction still open and close it as not seen.
            how = (
                f"{self.agent.kind.value}: requested with LOOP_SESSION_START=compact "
                "as the run started (loop cannot see inside the program to check it)"
            )
            self._confirm(pending, session, how)
            pending = None
        finished, reply = self._run(self.agent.turn(start, session, prompt), session, progress)
        self._settle(start, session, pending, finished, reply)
        if self.session is not None and self.session not in self.sessions:
            self.sessions.append(self.session)
        reading = transcripts.reading(
            self.agent, self.session, cwd=self.root, env=self.env, windows=reply.windows
        )
        result = Turn(start, self.session, reply, finished, reading, self.timeout, self.stopped)
        if result.tokens is not None:
            self.tokens_peak = max(self.tokens_peak or 0, result.tokens)
        return result

    def _prepare(self, focus: str, progress: ProgressSink) -> tuple[Start, ResetRecord | None]:
        """How the turn starts, after a compaction run when one is due; the reset still open."""
        pending = self.pending
        if pending is not None and not self._is_open(pending):
            self._elsewhere(pending)
            pending = None
        start = self.next_start()
        if start is Start.NEW and pending is not None and pending.mode == "compact":
            why = (
                "there was no agent session to compact yet"
                if self.session is None
                else f"it was taken in session {pending.session}, which this run does not drive"
            )
            self._abort(pending, f"not performed: {why}; the driver started a new session")
            return start, None
        if start is Start.COMPACT and pending is not None and self.session is not None:
            separate = self.agent.compaction(self.session, focus)
            if separate is not None:
                self._compact(separate, pending, progress)
                return Start.RESUME, None
        return start, pending

    def _settle(
        self,
        start: Start,
        session: str | None,
        pending: ResetRecord | None,
        finished: Completed,
        reply: AgentReply,
    ) -> None:
        """After the turn: the session it established, and the reset it performed."""
        established = reply.session
        if start is not Start.NEW and established is None and not finished.ok:
            if transcripts.locate(self.agent, session, cwd=self.root, env=self.env) is None:
                # The session to resume does not exist (it never started before a crash):
                # the next attempt starts a new one rather than failing the same way.
                self.session = None
        if start is Start.NEW and established is not None:
            self.session = established
            self._remember(established)
            if pending is not None and pending.mode == "clear":
                how = f"{self.agent.kind.value}: new session {established} started by the driver"
                self._confirm(pending, established, how)

    def _compact(self, invocation: Invocation, record: ResetRecord, progress: ProgressSink) -> None:
        session = self.session
        assert session is not None
        path = transcripts.locate(self.agent, session, cwd=self.root, env=self.env)
        offset = transcripts.size_of(path)
        finished, reply = self._run(invocation, session, progress, doing="compacting")
        path = path or transcripts.locate(self.agent, session, cwd=self.root, env=self.env)
        marker = self.agent.compaction_marker
        compacted = transcripts.compacted_since(path, offset, marker)
        if finished.ok and reply.error is None and compacted:
            shown = invocation.shown()
            shown = shown if len(shown) <= _SHOWN else shown[: _SHOWN - 1] + "…"
            how = (
                f"{self.agent.kind.value}: compacted by `{shown}`; the transcript records "
                f"the compaction ({marker[1] if marker else 'no marker'})"
            )
            self._confirm(record, session, how)
            return
        why = reply.error or (
            f"exited {finished.returncode}"
            if not finished.ok
            else "no compaction appeared in the transcript"
        )
        self._abort(record, f"compaction failed ({why}); the session was resumed without it")

    def _run(
        self,
        invocation: Invocation,
        session: str | None,
        progress: ProgressSink,
        *,
        doing: str = "running",
    ) -> tuple[Completed, AgentReply]:
        env = dict(self.env)
        env["LOOP_ITEM"] = self.item
        env["LOOP_TASK"] = self.task or ""
        # The driver performs every reset itself: the hooks must not offer a hand-off.
        env["LOOP_DRIVEN"] = "1"
        if session:
            env["LOOP_SESSION_ID"] = session
        else:
            env.pop("LOOP_SESSION_ID", None)  # a new Codex thread has no id until it starts
        env.update(invocation.env)
        for name in invocation.unset:
            env.pop(name, None)
        live: list[int | None] = [None]
        if self.ledger is not None:
            self.ledger.task = self.task
        charge = self.ledger.open(session) if self.ledger is not None else None
        watchdog = self._watchdog(charge)
        if charge is not None:
            env[USAGE_VARIABLE] = str(charge.usage_file)

        def on_line(line: str) -> None:
            tokens = self.agent.live_tokens(line)
            if tokens is not None:
                live[0] = tokens
            if watchdog is not None:
                watchdog.line(line)

        try:
            finished = run_process(
                invocation,
                cwd=self.root,
                env=env,
                timeout=self.timeout,
                on_line=on_line,
                on_tick=lambda elapsed: progress(doing, live[0], elapsed),
                on_start=watchdog.start if watchdog is not None else lambda pid: None,
            )
        finally:
            if watchdog is not None:
                watchdog.stop()
        self.runs += 1
        reply = self.agent.reply(finished.stdout, finished.returncode, session)
        stopped = watchdog.tripped if watchdog is not None else None
        stopped = stopped or reply.limit
        if stopped is not None:
            self.stopped = stopped
        if charge is not None and self.ledger is not None:
            end = RunEnd(reply.session or session, self.task, self.attempt, self.run_kind, stopped)
            self.ledger.close(charge, invocation, finished, end)
        return finished, reply

    def _watchdog(self, charge: OpenRun | None) -> Watchdog | None:
        """The budget's watchdog for one run, when a budget is set."""
        if not self.budget.watched or charge is None or self.ledger is None:
            return None
        ledger = self.ledger
        return Watchdog(
            self.budget,
            self.allowed or Allowance(None, None),
            root=self.root,
            spend=lambda: ledger.live(charge),
            counter=charge.counter,
        )

    # ---------------------------------------------------------------- resolving

    def _is_open(self, record: ResetRecord) -> bool:
        return any(r.id == record.id for r in open_resets(self.root, self.item))

    def _confirm(self, record: ResetRecord, session: str, how: str) -> None:
        if not self._is_open(record):
            self._elsewhere(record)
            return
        try:
            closed = resets.confirm(
                self.root, self.item, session, checkpoint=record.checkpoint, how=how
            )
        except RefusedError as exc:
            self._abort(record, f"could not be confirmed: {exc.message}")
            return
        self.performed[closed.mode] += 1
        self._ended(record, "completed", closed.note or how, session_after=session)

    def _abort(self, record: ResetRecord, reason: str) -> None:
        if self.pending is not None and self.pending.id == record.id:
            self.pending = None
        if not self._is_open(record):
            return
        # Through `loop reset abort`'s path: the log's Context: line announced this reset,
        # so a correction entry says it did not happen.
        abort_reset(self.ctx, checkpoint_id=record.checkpoint, reason=reason)
        self.aborted += 1
        self._ended(record, "aborted", reason)

    def _elsewhere(self, record: ResetRecord) -> None:
        """The record was resolved by someone else (a hook, ``loop reset confirm``)."""
        self._ended(record, "elsewhere", "resolved outside the driver (a hook or `loop reset`)")

    def _ended(
        self, record: ResetRecord, state: str, how: str, *, session_after: str | None = None
    ) -> None:
        """``record`` is no longer pending; the listener hears how its reset ended."""
        if self.pending is not None and self.pending.id == record.id:
            self.pending = None
        self.listener(
            ResetDone(
                mode=record.mode,
                checkpoint=record.checkpoint,
                state=state,
                session_before=record.session,
                session_after=session_after,
                how=how,
            )
        )

    def _remember(self, session: str | None) -> None:
        state.save(
            self.root,
            item=self.item,
            kind=self.agent.kind.value,
            session=session,
            task=self.task,
        )
