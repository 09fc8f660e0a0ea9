"""``loop execute-tasks ID --agent …``: run the task DAG with a headless agent.

The loop, until the DAG is done, a task fails for good, or the user stops it:

1. **Enter**: the same step guide mode takes (``workflow.execute_tasks``):
   cross into implementation with a checkpoint; its phaseBoundary reset is
   performed by the first agent turn.
2. **Each ready task** (the same ``next``): its brief is the prompt. The reset
   left by the previous checkpoint is performed first (``sessions``): a new
   session after a clear, the session compacted and resumed after a compact,
   resumed as it is otherwise.
3. **After the run**: a task the agent checkpointed itself (``loop task
   done``) is accepted. Otherwise its ``_Test:_`` runs; when it passes, loop
   checkpoints the task (``checkpoints.finish_task``).
4. **Unfinished**: the window is read from the session's transcript; under
   pressure an interim checkpoint (a WIP commit) and a compaction come first;
   either way the session resumes with ``continue task N``.
5. **Failures** (non-zero exit, API error, timeout): a retry after a backoff.
   ``agent.maxAttempts`` bounds the runs of one task; past it the run stops
   with the task open and the reason in the log (exit 1). Ctrl-C stops the
   agent, takes an interim checkpoint and ends with 130; a rerun resumes.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from the_loop.checkpoint.policy import Verdict, pressure_verdict
from the_loop.checkpoint.resets import ResetRecord, mark_dispatched
from the_loop.checkpoint.transaction import Outcome
from the_loop.driver import state
from the_loop.driver.agent_choice import choose_kind, make_agent
from the_loop.driver.agents import Start
from the_loop.driver.budget import Allowance, allowance, budget_from, claude_flags
from the_loop.driver.checkpoints import finish_task, interim, stop_note
from the_loop.driver.claude import ClaudeAgent
from the_loop.driver.events import (
    AgentFinished,
    CheckpointTaken,
    Listener,
    Progress,
    RetryWait,
    RunSummary,
    TaskFailed,
    TaskStarted,
)
from the_loop.driver.interrupts import sheltered, stop_on_sigterm
from the_loop.driver.overlay import claude_overlay
from the_loop.driver.prompts import compaction_focus, continue_prompt, interrupted_preface
from the_loop.driver.run_ledger import RunLedger
from the_loop.driver.sessions import SessionKeeper, Turn
from the_loop.errors import DagError, LoopError, RefusedError, UsageError
from the_loop.hooks.commands import entry_point
from the_loop.ledger import store as ledger_store
from the_loop.ledger.prices import dollars, prices_from
from the_loop.ledger.report import Tally, cost_report
from the_loop.spec.project import ItemContext
from the_loop.tasks import Task, TaskState, test_command
from the_loop.workflow.execute_tasks import ExecuteStep, execute_step
from the_loop.workflow.item_report import ItemReport, fresh_report
from the_loop.workflow.task_tests import TestRun, Verification, plan_test, run_test

_MAX_CROSSINGS = 3  # entering a phase twice in one run means something else moves it


@dataclass(frozen=True)
class DriveOptions:
    """What the command line asked for."""

    agent: str | None = None  # claude | codex | command; None: agent.kind
    max_tasks: int | None = None
    until: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # the agent's environment


def drive(ctx: ItemContext, options: DriveOptions, listener: Listener) -> RunSummary:
    """Run the item's task DAG with a headless agent (see the module docstring)."""
    return _Driver(ctx, options, listener).run()


def agent_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with this ``loop`` on PATH, so an agent can run ``loop task done``."""
    result = dict(env)
    own = Path(sys.executable).parent
    if shutil.which("loop", path=result.get("PATH")) is None and (own / "loop").is_file():
        result["PATH"] = str(own) + (":" + result["PATH"] if result.get("PATH") else "")
    return result


class _Driver:
    def __init__(self, ctx: ItemContext, options: DriveOptions, listener: Listener) -> None:
        self.ctx = ctx
        self.options = options
        self.listener = listener
        self.root = ctx.project.root
        self.item = ctx.item.id
        self.settings = ctx.config.agent
        self.kind = choose_kind(self.settings, options.agent)
        self.env = agent_environment(options.env)
        self.agent = make_agent(self.settings, self.kind, self.env)
        if isinstance(self.agent, ClaudeAgent):
            # loop's hooks and a harness threshold above loop's, for this run only.
            self.agent.overlay = claude_overlay(
                self.root, self.item, ctx.config.context, entry_point()
            )
        self.rerun = f"loop execute-tasks {self.item} --agent {self.kind.value}"
        self.keeper = SessionKeeper(
            ctx=ctx,
            agent=self.agent,
            env=self.env,
            timeout=float(self.settings.timeout_seconds),
            listener=listener,
        )
        self.prices = prices_from(ctx.config)
        self.budget = budget_from(ctx.config)
        self.keeper.ledger = RunLedger(
            root=self.root, item=self.item, agent=self.agent, env=self.env, prices=self.prices
        )
        self.keeper.budget = self.budget
        self.done: list[str] = []
        self.active: Task | None = None
        self.active_runs = 0
        self.failure = ""
        self.started = time.monotonic()

    # ---------------------------------------------------------------- the run

    def run(self) -> RunSummary:
        self._check_until()
        self.keeper.resume_from(state.load(self.root, self.item))
        try:
            with stop_on_sigterm():
                status, reason = self._loop()
        except KeyboardInterrupt:
            status, reason = self._interrupted()
        except LoopError as exc:
            status, reason = "failed", exc.render()
        summary = RunSummary(
            item=self.item,
            agent=self.kind.value,
            status=status,
            reason=reason,
            tasks_done=tuple(self.done),
            sessions=tuple(self.keeper.sessions),
            resets=dict(self.keeper.performed),
            resets_aborted=self.keeper.aborted,
            runs=self.keeper.runs,
            tokens_peak=self.keeper.tokens_peak,
            seconds=round(time.monotonic() - self.started, 3),
            open_reset=_describe(self.keeper.open_pending()),
            cost=cost_report(
                self.item, ledger_store.read_runs(self.root, self.item), self.prices
            ).to_json(),
        )
        self.listener(summary)
        return summary

    def _check_until(self) -> None:
        until = self.options.until
        if until is None:
            return
        report = fresh_report(self.ctx)
        try:
            if report.dag is None:
                raise DagError(f"{self.item} has no tasks.md")
            report.dag.task(until)
        except DagError as exc:
            raise UsageError(f"--until {until}: {exc.message}", hint=exc.hint) from None

    def _loop(self) -> tuple[str, str]:
        crossings = 0
        while True:
            report = fresh_report(self.ctx)
            done, total = report.counts
            if total and done == total:
                return self._finish(total)
            stop = self._stop_asked(report)
            if stop:
                return "stopped", stop
            started = {t.id for t in _tasks(report) if t.state is TaskState.IN_PROGRESS}
            with sheltered():
                step = execute_step(_fresh(self.ctx), session=self.keeper.session)
            self._crossed(step)
            if step.kind != "task" or step.action.task is None or step.brief is None:
                crossings += 1
                if crossings > _MAX_CROSSINGS:
                    raise LoopError(f"{self.item} keeps crossing phases; nothing to run")
                continue
            assert step.report.dag is not None
            task = step.report.dag.task(step.action.task)
            brief = step.brief
            if task.id in started:
                brief = interrupted_preface(task) + brief
            if not self._run_task(task, brief):
                return "failed", self.failure
            self.done.append(task.id)

    def _stop_asked(self, report: ItemReport) -> str | None:
        until = self.options.until
        if until is not None and report.dag is not None:
            if report.dag.task(until).state is TaskState.DONE:
                return f"task {until} is done (--until)"
        limit = self.options.max_tasks
        if limit is not None and len(self.done) >= limit:
            return f"{len(self.done)} task(s) done (--max-tasks {limit})"
        return None

    def _finish(self, total: int) -> tuple[str, str]:
        if fresh_report(self.ctx).phase.recorded not in ("needs-review", "complete"):
            # A task's reset with no task after it; once in review, an open reset is the
            # crossing's, and it belongs to the session that does the review.
            self.keeper.leave_pending(
                "not performed: the run ended after its last task; no agent turn follows in it"
            )
        with sheltered():
            step = execute_step(_fresh(self.ctx), session=self.keeper.session)
        outcome = self._crossed(step)
        if outcome is not None and outcome.record is not None:
            self.keeper.pending = mark_dispatched(self.root, outcome.record)
        state.forget(self.root, self.item)
        return "done", f"all {total} tasks done"

    def _crossed(self, step: ExecuteStep) -> Outcome | None:
        crossing = step.crossing
        if crossing is None or crossing.outcome is None:
            return None
        outcome = crossing.outcome
        self._checkpoint(outcome, None, kind="phase")
        if crossing.to_phase == "implementation":
            self.keeper.adopt(outcome.record)
        return outcome

    # ---------------------------------------------------------------- one task

    def _run_task(self, task: Task, brief: str) -> bool:
        max_runs = self.settings.max_attempts
        prompt = brief
        failures: list[str] = []
        refused: dict[str, None] = {}
        self.active = task
        self.active_runs = 0
        try:
            # Checked before the agent runs: a test that cannot run as written would
            # leave every run of the task unverifiable.
            test = self._plan_test(task)
        except RefusedError as exc:
            return self._give_up(task, 0, exc.render())
        retry = False
        while True:
            self.active_runs += 1
            runs = self.active_runs
            allowed = self._allowance(task)
            spent = allowed.exhausted()
            if spent is not None:
                return self._over_budget(task, runs - 1, f"not started: {spent}", None)
            self._limit(task, runs, allowed, retry=retry)
            before = self.keeper.open_ids()
            start = self.keeper.next_start()
            self.listener(
                TaskStarted(
                    task=task.id,
                    title=task.title,
                    run=runs,
                    max_runs=max_runs,
                    start=start.value,
                    session=None if start is Start.NEW else self.keeper.session,
                )
            )
            turn = self.keeper.turn(
                prompt,
                task=task.id,
                focus=compaction_focus(self._last_next()),
                progress=self._progress(task, runs),
            )
            # Every tool refused in any run of the task: a resumed session rarely asks again.
            refused.update(dict.fromkeys(turn.reply.denied))
            current = self._current(task)
            if current.state is TaskState.DONE:
                unrecorded = self._hand_tick(task)
                if unrecorded is not None:
                    self._finished(task, runs, turn, "failed", unrecorded)
                    return self._give_up(task, runs, unrecorded)
                self._agent_checkpointed(task, runs, turn, before)
                return True
            if turn.stopped is not None:
                self._finished(task, runs, turn, "stopped", turn.stopped)
                return self._over_budget(task, runs, turn.stopped, turn)
            error = turn.error
            retry = error is not None
            if error is not None:
                failures.append(f"run {runs}: {error}")
                self._finished(task, runs, turn, "failed", error)
                if not turn.reply.retryable:
                    reason = (
                        f"the agent failed run {runs} of task {task.id}, not retried (the API "
                        f"refused the request itself; running again would fail alike): {error}"
                        + _denied(refused)
                    )
                    return self._give_up(task, runs, reason)
                if runs >= max_runs:
                    reason = f"the agent failed {runs} run(s) of task {task.id}: " + "; ".join(
                        failures
                    )
                    return self._give_up(task, runs, reason + _denied(refused))
                self._backoff(task, runs, len(failures), error)
                # A session that got going continues; one that never started gets the brief.
                prompt = (
                    continue_prompt(task.id, task.title, next_step=self._last_next(), error=error)
                    if turn.reply.session is not None
                    else brief
                )
                continue
            verification = run_test(test) if test is not None else None
            if verification is None or verification.passed:
                self._finished(task, runs, turn, "done", _tested(verification))
                self._finish_task(task, runs, turn, failures, verification)
                return True
            why = verification.summary() + _denied(refused)
            self._finished(task, runs, turn, "unfinished", why)
            if runs >= max_runs:
                reason = f"task {task.id} is still unfinished after {runs} run(s): {why}"
                return self._give_up(task, runs, reason)
            self._under_pressure(task, turn, verification)
            prompt = continue_prompt(
                task.id, task.title, next_step=self._last_next(), verification=verification
            )

    # ---------------------------------------------------------------- budgets

    def _allowance(self, task: Task) -> Allowance:
        """What the task's next run may spend: ``agent.budget`` less the ledger's records."""
        if not self.budget.watched:
            return Allowance(None, None)
        records = ledger_store.read_runs(self.root, self.item)
        task_tally, item_tally = Tally(), Tally()
        for record in records:
            item_tally = item_tally.plus(record)
            if record.task == task.id:
                task_tally = task_tally.plus(record)
        return allowance(
            self.budget,
            task_spent=(task_tally.tokens.total, dollars(task_tally.usage, self.prices)),
            item_spent=(item_tally.tokens.total, dollars(item_tally.usage, self.prices)),
        )

    def _limit(self, task: Task, runs: int, allowed: Allowance, *, retry: bool) -> None:
        """Tell the keeper (and the ledger) what this run is, and pass the harness's limits."""
        self.keeper.attempt = runs
        self.keeper.run_kind = "retry" if retry else "task"
        self.keeper.allowed = allowed
        if isinstance(self.agent, ClaudeAgent):
            self.agent.limits = claude_flags(self.budget, allowed)

    def _over_budget(self, task: Task, runs: int, reason: str, turn: Turn | None) -> bool:
        """Past a budget: an interim checkpoint with the reason; the task stays open."""
        did = (
            f"task {task.id} stopped by its budget after {runs} run(s): {reason}; "
            "the task is still open and its work so far is committed here"
        )
        with sheltered():
            outcome = interim(
                self.ctx,
                task,
                did=did,
                reading=turn.reading if turn is not None else None,
                session=self.keeper.session,
                rerun=self.rerun,
            )
        self._checkpoint(outcome, task.id, kind="interim")
        self.keeper.adopt(outcome.record)
        reason = f"task {task.id} is over its budget: {reason} (agent.budget)"
        self.listener(TaskFailed(task=task.id, runs=runs, reason=reason))
        self.failure = reason
        self.active = None
        return False

    def _plan_test(self, task: Task) -> TestRun | None:
        """The task's ``_Test:_`` ready to run, None when it names none; refused if unrunnable."""
        if test_command(task) is None:
            return None
        return plan_test(fresh_report(self.ctx), task)

    def _hand_tick(self, task: Task) -> str | None:
        """Why a tick the agent left is no checkpoint: no ``task N done`` entry, or no commit.

        "Done by the agent" means its own ``loop task done``; a box ticked by hand
        (sed, an editor) logged and committed nothing, and is the same stop as a
        hand tick found on any other task.
        """
        report = fresh_report(self.ctx)
        problem = next((p for p in report.tick_problems if p.task.id == task.id), None)
        if problem is None:
            return None
        return (
            f"task {task.id} is ticked without a checkpoint: the agent ticked tasks.md by "
            f"hand (no log entry and commit of its own loop task done); record it with "
            f"{problem.command}, or untick it and rerun {self.rerun}"
        )

    def _current(self, task: Task) -> Task:
        report = fresh_report(self.ctx)
        assert report.dag is not None
        return report.dag.task(task.id)

    def _agent_checkpointed(self, task: Task, runs: int, turn: Turn, before: set[str]) -> None:
        self._finished(task, runs, turn, "done-by-agent", "the agent ran `loop task done`")
        self.keeper.adopt_new(before)
        record = self.keeper.pending
        self.listener(
            CheckpointTaken(
                task=task.id,
                kind="task",
                by="agent",
                checkpoint=record.checkpoint if record else "",
                commit=record.commit if record else None,
                reset=record.mode if record else "none",
                reason=record.reason if record else "no reset record (the reset is none)",
            )
        )
        self.active = None

    def _finish_task(
        self,
        task: Task,
        runs: int,
        turn: Turn,
        failures: list[str],
        verification: Verification | None,
    ) -> None:
        with sheltered():
            outcome = finish_task(
                self.ctx,
                task,
                message=turn.reply.message,
                agent=self.kind.value,
                runs=runs,
                failures=tuple(failures),
                verification=verification,
                session=self.keeper.session,
                rerun=self.rerun,
            )
            self.active = None
        self._checkpoint(outcome, task.id, kind="task")
        self.keeper.adopt(outcome.record)

    def _under_pressure(self, task: Task, turn: Turn, verification: Verification) -> None:
        """Interim checkpoint (and its compaction) when the window is under pressure."""
        tokens = turn.tokens
        if tokens is None:
            return  # a missing count is a gap, never zero: no checkpoint on a guess
        window = turn.reading.window if turn.reading is not None else None
        reading = pressure_verdict(
            self.ctx.config.context.pressure,
            tokens=tokens,
            window=window if window is not None and window >= tokens else None,
        )
        if reading.verdict is None or reading.verdict is Verdict.NO_OP:
            return
        did = (
            f"task {task.id} unfinished after run {self.active_runs} "
            f"({tokens} tokens in use, verdict {reading.verdict.value}); "
            f"the agent said: {turn.reply.message or 'nothing'}"
        )
        with sheltered():
            outcome = interim(
                self.ctx,
                task,
                did=did,
                reading=turn.reading,
                session=self.keeper.session,
                rerun=self.rerun,
                tests=verification.summary(),
            )
        self._checkpoint(outcome, task.id, kind="interim")
        self.keeper.adopt(outcome.record)

    def _give_up(self, task: Task, runs: int, reason: str) -> bool:
        did = f"{runs} {self.kind.value} run(s) on task {task.id}; the task is still open"
        with sheltered():
            outcome = stop_note(
                self.ctx,
                task,
                reason=reason,
                did=did,
                session=self.keeper.session,
                rerun=self.rerun,
            )
        if outcome is not None:
            self._checkpoint(outcome, task.id, kind="stop")
        self.listener(TaskFailed(task=task.id, runs=runs, reason=reason))
        self.failure = reason
        self.active = None
        return False

    def _interrupted(self) -> tuple[str, str]:
        task = self.active
        if task is None:
            return "interrupted", "stopped by Ctrl-C"
        if self._current(task).state is not TaskState.DONE:
            did = (
                f"stopped by Ctrl-C during task {task.id} after {self.active_runs} run(s); "
                "the agent's processes were stopped and its work so far is committed here"
            )
            with sheltered():
                outcome = interim(
                    self.ctx,
                    task,
                    did=did,
                    reading=None,
                    session=self.keeper.session,
                    rerun=self.rerun,
                )
            self._checkpoint(outcome, task.id, kind="interim")
        return "interrupted", f"stopped by Ctrl-C during task {task.id}"

    # ---------------------------------------------------------------- reporting

    def _checkpoint(self, outcome: Outcome, task: str | None, *, kind: str) -> None:
        self.listener(CheckpointTaken.of(outcome, task, kind))

    def _finished(self, task: Task, runs: int, turn: Turn, outcome: str, detail: str) -> None:
        self.listener(
            AgentFinished(
                task=task.id,
                run=runs,
                session=turn.session,
                exit_code=turn.finished.returncode,
                seconds=round(turn.finished.seconds, 3),
                tokens=turn.tokens,
                window=turn.reading.window if turn.reading is not None else None,
                outcome=outcome,
                detail=detail,
            )
        )

    def _progress(self, task: Task, run: int) -> Callable[[str, int | None, float], None]:
        def tick(doing: str, tokens: int | None, seconds: float) -> None:
            self.listener(
                Progress(
                    task=task.id,
                    run=run,
                    session=self.keeper.session,
                    tokens=tokens,
                    seconds=round(seconds, 1),
                    doing=doing,
                )
            )

        return tick

    def _last_next(self) -> str | None:
        entry = fresh_report(self.ctx).last_entry
        return entry.next if entry is not None else None

    def _backoff(self, task: Task, run: int, failures: int, why: str) -> None:
        delay = self.settings.backoff_seconds * 2 ** (failures - 1)
        if delay > 0:
            # Said before the wait: a run that goes quiet for 30 s looks hung.
            self.listener(RetryWait(task=task.id, run=run, seconds=float(delay), why=why))
            time.sleep(delay)


def _fresh(ctx: ItemContext) -> ItemContext:
    """The item as it is on disk now (an ``ItemContext`` holds the files it was opened with)."""
    return fresh_report(ctx).ctx


def _tasks(report: ItemReport) -> tuple[Task, ...]:
    return report.tasks.tasks if report.tasks is not None else ()


def _denied(denied: Mapping[str, None]) -> str:
    """Tools the agent was refused, and where to allow them (Claude Code)."""
    if not denied:
        return ""
    return f"; tools refused: {', '.join(denied)} (allow them in agent.claude.allowedTools)"


def _tested(verification: Verification | None) -> str:
    if verification is None:
        return "no _Test:_ command; the run ended cleanly"
    return verification.summary()


def _describe(record: ResetRecord | None) -> str | None:
    """A reset left for whoever works on the item next, in words."""
    if record is None:
        return None
    return f"{record.mode} after checkpoint {record.checkpoint}: {record.reason}"
