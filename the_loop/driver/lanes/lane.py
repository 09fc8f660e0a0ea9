"""One task attempt in its own worktree: the agent's runs, the task's test, one commit.

1. **The worktree**: ``loop/<item>/<task>`` checked out under the state folder,
   made from the attempt's base commit, or reused with the work an earlier run
   committed on it. Untracked files ``.worktreeinclude`` names are copied in and
   ``parallel.setup`` runs once, in a new worktree.
2. **Recovered work**: a branch that already holds committed work whose test
   passes comes back ``ready`` without an agent run.
3. **The agent**: a new session (a task boundary in a lane is a clear by
   construction), cwd the worktree. After each run the task's test runs in the
   worktree; an unfinished task is resumed in the same session with the test's
   output, up to ``agent.maxAttempts`` runs. Under window pressure the lane first
   commits the work so far on the branch (the interim checkpoint) and compacts
   the session, as a serial run does.
4. **The commit**: the work folded into one commit on the base; edits to the
   files only loop writes (``tasks.md``, the execution log) are dropped with a
   warning.

Stopped (Ctrl-C), the agent's process group is stopped and the work so far is
committed on the branch (``interrupted``), so a rerun picks it up.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from the_loop.checkpoint.policy import Verdict, pressure_verdict
from the_loop.config.settings import AgentSettings, Pressure
from the_loop.driver import transcripts
from the_loop.driver.agent_choice import make_agent
from the_loop.driver.agents import Agent, AgentKind, AgentReply, Invocation, Start, one_line
from the_loop.driver.events import AgentFinished, Event, Progress
from the_loop.driver.lanes.attempt import Attempt, AttemptResult, TestSpec
from the_loop.driver.process import run_process
from the_loop.driver.prompts import compaction_focus, continue_prompt
from the_loop.driver.run_ledger import USAGE_VARIABLE, OpenRun, RunEnd, RunLedger
from the_loop.errors import LoopError
from the_loop.git import worktrees
from the_loop.io.processes import Completed
from the_loop.ledger.prices import Prices
from the_loop.ledger.tokens import Tokens, usage_to_json
from the_loop.workflow.task_tests import TestRun, Verification, run_test


class Stopped(Exception):
    """Raised inside a lane's agent run when the coordinator stops every lane."""


@dataclass(frozen=True)
class LaneSetup:
    """What every lane of one run shares."""

    root: Path  # the main checkout (the integration branch)
    kind: AgentKind
    settings: AgentSettings
    env: Mapping[str, str]
    pressure: Pressure
    setup: str = ""  # parallel.setup
    loop_owned: tuple[str, ...] = ()  # repository-relative paths only loop writes
    prices: Prices | None = None  # agent.prices (the ledger's live estimate)


def worktree_path(root: Path, item: str, task: str) -> Path:
    """Where the lane of ``task`` works: under the (never committed) state folder."""
    from the_loop.config.state_folder import state_dir

    return state_dir(root) / "worktrees" / item / task


def run_test_in(spec: TestSpec, cwd: Path) -> Verification:
    """The task's test, run in ``cwd`` (a lane's worktree)."""
    return run_test(TestRun("", spec.argv, spec.shown, cwd, spec.timeout))


class _Lane:
    def __init__(
        self,
        attempt: Attempt,
        setup: LaneSetup,
        stop: threading.Event,
        emit: Callable[[Event], None],
    ) -> None:
        self.attempt = attempt
        self.setup = setup
        self.stop = stop
        self.emit = emit
        self.path = worktree_path(setup.root, attempt.item, attempt.task)
        self.agent: Agent = make_agent(setup.settings, setup.kind, setup.env)
        self.started = time.monotonic()
        self.session: str | None = None
        self.sessions: list[str] = []
        self.runs = 0
        self.tokens: int | None = None
        self.failures: list[str] = []
        self.warnings: list[str] = []
        self.message = ""
        self.ledger = RunLedger(
            root=setup.root,
            item=attempt.item,
            agent=self.agent,
            env=setup.env,
            prices=setup.prices or {},
            cwd=self.path,
            lane=attempt.lane,
        )
        self.charged: list[dict[str, object]] = []
        self.totals: dict[str, dict[str, Tokens]] = {}  # session -> total charged so far
        self.run_kind = "task"  # "retry" after a failed run

    # ---------------------------------------------------------------- the attempt

    def run(self) -> AttemptResult:
        try:
            fresh = self._worktree()
            recovered = self._recovered(fresh)
            if recovered is not None:
                return recovered
            return self._agent_runs(fresh)
        except Stopped:
            return self._commit("interrupted", "stopped by Ctrl-C; the work so far is committed")

    def _worktree(self) -> bool:
        """Make (or reuse) the worktree; True when it is new and starts at the base."""
        attempt = self.attempt
        if self.path.exists() and (self.path / ".git").exists():
            worktrees.settle(self.path)  # a rebase the queue of a killed run left half-done
            return False
        if self.path.exists():  # a folder git no longer knows: start it again
            worktrees.prune_worktrees(self.setup.root)
            worktrees.remove_worktree(self.setup.root, self.path)
        head = worktrees.add_worktree(self.setup.root, self.path, attempt.branch, attempt.base)
        worktrees.copy_included(self.setup.root, self.path)
        if self.setup.setup:
            done = subprocess.run(
                ["sh", "-c", self.setup.setup],
                cwd=self.path,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
                raise LoopError(
                    f"parallel.setup `{self.setup.setup}` exited {done.returncode} in "
                    f"{self.path}: " + " / ".join(tail)
                )
            worktrees.record_setup_files(self.path)
        return head == attempt.base

    def _recovered(self, fresh: bool) -> AttemptResult | None:
        """An earlier run's committed work on the branch, when its test passes now."""
        attempt = self.attempt
        if fresh or attempt.test is None:
            return None
        head = worktrees.head_of(self.path)
        if head == attempt.base or worktrees.is_ancestor(self.setup.root, head, attempt.base):
            return None
        if not run_test_in(attempt.test, self.path).passed:
            return None
        return self._commit("ready", "an earlier run's committed work passes the test", True)

    def _agent_runs(self, fresh: bool) -> AttemptResult:
        attempt = self.attempt
        max_runs = self.setup.settings.max_attempts
        prompt = attempt.brief if fresh else _earlier_work() + attempt.brief
        start = Start.NEW
        while True:
            self.runs += 1
            finished, error = self._turn(start, prompt)
            if error is not None:
                self.failures.append(f"run {self.runs}: {error}")
                self._finished(finished, "failed", error)
                self.run_kind = "retry"
                if self.runs >= max_runs:
                    return self._commit("failed", f"the agent failed {self.runs} run(s): {error}")
                start = Start.RESUME if self.session else Start.NEW
                prompt = _continue(attempt, error=error) if self.session else attempt.brief
                continue
            self.run_kind = "task"
            verification = run_test_in(attempt.test, self.path) if attempt.test else None
            if verification is None or verification.passed:
                detail = verification.summary() if verification else "no _Test:_; a clean run"
                self._finished(finished, "done", detail)
                return self._commit("ready", detail)
            why = verification.summary()
            self._finished(finished, "unfinished", why)
            if self.runs >= max_runs:
                return self._commit("failed", f"still unfinished after {self.runs} run(s): {why}")
            start = self._under_pressure()
            prompt = _continue(attempt, verification=verification)

    def _turn(self, start: Start, prompt: str) -> tuple[Completed, str | None]:
        """One agent run in the worktree; (what it did, why it failed or None)."""
        session = self.agent.new_session_id() if start is Start.NEW else self.session
        finished, reply = self._run(self.agent.turn(start, session, prompt), session)
        if reply.session is not None:
            self.session = reply.session
        elif start is Start.NEW:
            self.session = session
        if self.session and self.session not in self.sessions:
            self.sessions.append(self.session)
        self.message = reply.message or self.message
        reading = transcripts.reading(
            self.agent, self.session, cwd=self.path, env=self.setup.env, windows=reply.windows
        )
        tokens = reading.tokens_in_use if reading is not None else None
        tokens = tokens if tokens is not None else reply.tokens
        if tokens is not None:
            self.tokens = tokens
        self._window = reading.window if reading is not None else None
        if finished.timed_out:
            return finished, f"timed out after {self.setup.settings.timeout_seconds}s"
        error = reply.error
        if error is None and finished.returncode != 0:
            error = f"exited {finished.returncode}"
        if error is not None and finished.stderr.strip() and not reply.message:
            error += f" — {one_line(finished.stderr.strip().splitlines()[-1], 200)}"
        return finished, error

    def _run(self, invocation: Invocation, session: str | None) -> tuple[Completed, AgentReply]:
        attempt = self.attempt
        env = dict(self.setup.env)
        env.update(
            {
                "LOOP_ITEM": attempt.item,
                "LOOP_TASK": attempt.task,
                "LOOP_LANE": str(attempt.lane),
                "LOOP_BRANCH": attempt.branch,
                "LOOP_WORKTREE": str(self.path),
            }
        )
        if session:
            env["LOOP_SESSION_ID"] = session
        else:
            env.pop("LOOP_SESSION_ID", None)
        env.update(invocation.env)
        for name in invocation.unset:
            env.pop(name, None)
        live: list[int | None] = [None]

        def on_line(line: str) -> None:
            tokens = self.agent.live_tokens(line)
            if tokens is not None:
                live[0] = tokens

        def on_tick(elapsed: float) -> None:
            if self.stop.is_set():
                raise Stopped  # run_process stops the agent's process group on the way out
            self.emit(
                Progress(
                    task=attempt.task,
                    run=self.runs,
                    session=session,
                    tokens=live[0] if live[0] is not None else self.tokens,
                    seconds=round(time.monotonic() - self.started, 1),
                    doing="running" if invocation.purpose == "turn" else "compacting",
                    lane=attempt.lane,
                )
            )

        if self.stop.is_set():
            raise Stopped
        charge = self.ledger.open(session, announce=False)
        if session is not None and session in self.totals:
            charge.baseline = self.totals[session]  # this lane's runs are not appended yet
        env[USAGE_VARIABLE] = str(charge.usage_file)
        try:
            finished = run_process(
                invocation,
                cwd=self.path,
                env=env,
                timeout=float(self.setup.settings.timeout_seconds),
                on_line=on_line,
                on_tick=on_tick,
            )
        except Stopped:
            charge.usage_file.unlink(missing_ok=True)
            raise
        reply = self.agent.reply(finished.stdout, finished.returncode, session)
        self._charge(charge, invocation, finished, reply.session or session)
        return finished, reply

    def _charge(
        self, charge: OpenRun, invocation: Invocation, finished: Completed, session: str | None
    ) -> None:
        """The run's ledger record, kept for the coordinator to append."""
        end = RunEnd(session, self.attempt.task, self.attempt.attempt, self.run_kind)
        record, total = self.ledger.charge(charge, invocation, finished, end)
        if session is not None and total is not None:
            self.totals[session] = total
        self.charged.append(
            {
                "record": record.to_json(),
                "total": usage_to_json(total) if total is not None else None,
            }
        )

    def _under_pressure(self) -> Start:
        """Mid-task pressure: commit the work so far on the branch, then compact."""
        tokens = self.tokens
        if tokens is None or self.session is None:
            return Start.RESUME if self.session else Start.NEW
        window = self._window if self._window is not None and self._window >= tokens else None
        reading = pressure_verdict(self.setup.pressure, tokens=tokens, window=window)
        if reading.verdict is None or reading.verdict is Verdict.NO_OP:
            return Start.RESUME
        attempt = self.attempt
        worktrees.squash_work(
            self.path,
            attempt.base,
            f"interim({attempt.item}): task {attempt.task}, {tokens} tokens in use "
            f"({reading.verdict.value}); compacting\n\nLoop-Item: {attempt.item}\n"
            f"Loop-Task: {attempt.task}\nLoop-Reset: compact\n",
            loop_owned=self.setup.loop_owned,
        )
        separate = self.agent.compaction(self.session, compaction_focus(None))
        if separate is None:
            return Start.COMPACT  # the turn carries it (a command agent)
        self._run(separate, self.session)
        return Start.RESUME

    def _commit(self, outcome: str, detail: str, recovered: bool = False) -> AttemptResult:
        attempt = self.attempt
        head: str | None = None
        dropped: tuple[str, ...] = ()
        if self.path.exists():
            subject = "work" if outcome == "ready" else outcome
            sha, dropped = worktrees.squash_work(
                self.path,
                attempt.base,
                f"lane({attempt.item}): task {attempt.task} {subject}, attempt "
                f"{attempt.attempt} in lane {attempt.lane}\n\n"
                f"Loop-Item: {attempt.item}\nLoop-Task: {attempt.task}\n",
                loop_owned=self.setup.loop_owned,
            )
            head = sha or worktrees.head_of(self.path)
        warnings = list(self.warnings)
        if dropped:
            warnings.append(
                f"task {attempt.task}: dropped the agent's edits to {', '.join(dropped)} "
                "(loop alone writes them, on the integration branch)"
            )
        return AttemptResult(
            attempt=attempt,
            outcome=outcome,
            head=head,
            detail=detail,
            message=self.message,
            runs=self.runs,
            failures=tuple(self.failures),
            tokens=self.tokens,
            seconds=round(time.monotonic() - self.started, 3),
            session=self.session,
            sessions=tuple(self.sessions),
            dropped=dropped,
            recovered=recovered,
            finished_at=time.time(),
            cwd=str(self.path),
            warnings=tuple(warnings),
            charged=tuple(self.charged),
        )

    def _finished(self, finished: Completed, outcome: str, detail: str) -> None:
        self.emit(
            AgentFinished(
                task=self.attempt.task,
                run=self.runs,
                session=self.session,
                exit_code=finished.returncode,
                seconds=round(finished.seconds, 3),
                tokens=self.tokens,
                window=self._window,
                outcome=outcome,
                detail=detail,
                lane=self.attempt.lane,
            )
        )

    _window: int | None = None


def run_attempt(
    attempt: Attempt,
    setup: LaneSetup,
    stop: threading.Event,
    emit: Callable[[Event], None],
) -> AttemptResult:
    """Run one attempt in its worktree (see the module docstring)."""
    return _Lane(attempt, setup, stop, emit).run()


def _earlier_work() -> str:
    return (
        "An earlier run of this task committed work on this branch (it is in your tree); "
        "continue it rather than starting over.\n\n"
    )


# A lane's agent never checkpoints: the merge queue does, on the integration branch.
_LANE_CLOSING = "When the test passes, stop: loop commits, merges and checkpoints the task."


def _continue(
    attempt: Attempt, *, verification: Verification | None = None, error: str | None = None
) -> str:
    return continue_prompt(
        attempt.task,
        attempt.title,
        verification=verification,
        error=error,
        closing=_LANE_CLOSING,
    )


def lane_preface(attempt: Attempt, path: Path) -> str:
    """What an agent in a lane is told before its brief."""
    lines = [
        f"You work in lane {attempt.lane} of a parallel run, in your own git worktree "
        f"({path}) on branch {attempt.branch}, started from {attempt.base[:12]}.",
        "- Work in this worktree only; other lanes work on other tasks at the same time.",
        "- loop alone writes tasks.md and the execution log, on the integration branch: do "
        "not edit them and do not run `loop task done` or `loop checkpoint` (edits to them "
        "are dropped from this branch).",
        "- When the task's test passes, stop: loop commits your work, rebases it onto the "
        "integration branch, runs the test again and checkpoints the task there.",
    ]
    if attempt.eviction:
        lines += ["", "An earlier attempt of this task was evicted by the merge queue:", ""]
        lines += [attempt.eviction, ""]
        lines.append("Redo the work on top of the current integration head (your tree).")
    return "\n".join(lines) + "\n\n"
