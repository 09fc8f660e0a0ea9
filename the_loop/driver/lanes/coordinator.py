"""The coordinator of ``execute-tasks --agent … --parallel N``.

It alone reads the DAG, takes leases, merges and checkpoints; lanes (through an
executor) only run agents in their worktrees. The loop:

1. **Prepare**: the integration branch is the one checked out; an interrupted
   checkpoint is finished, a landing a killed run left half-done is put back,
   and what a finished task left (its lease, branch, worktree) is removed.
   Entering implementation is the same phase crossing a serial run takes.
2. **Fill the lanes**: while a lane is free, the next ready task in ``next``
   order that no busy task overlaps (``scheduler``) gets a lease, a brief and an
   attempt from the integration head.
3. **Queue** every finished branch; **land** them one at a time
   (``merge_queue``). An evicted task goes back to the ready set with the reason
   in its next brief; after ``agent.maxAttempts`` attempts it fails the run,
   which lets the other lanes finish and land, then ends (exit 1).
4. **Ctrl-C**: every lane stops its agent and commits its work on its branch
   (the interim checkpoint), leases are given back, exit 130. A rerun (after
   Ctrl-C or a SIGKILL) reuses the branches: committed work that passes its test
   goes straight to the queue.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from the_loop.checkpoint import leases, resets
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.lock import project_lock
from the_loop.checkpoint.run_state import RunState
from the_loop.checkpoint.run_state import load as load_state
from the_loop.driver.agent_choice import choose_kind, make_agent
from the_loop.driver.checkpoints import stop_note
from the_loop.driver.events import (
    CheckpointTaken,
    Event,
    Listener,
    Merged,
    Progress,
    RunSummary,
    TaskFailed,
    TaskStarted,
)
from the_loop.driver.interrupts import sheltered, stop_on_sigterm
from the_loop.driver.lanes.attempt import Attempt, AttemptResult, Executor, TestSpec
from the_loop.driver.lanes.lane import LaneSetup, lane_preface, worktree_path
from the_loop.driver.lanes.local import LocalExecutor
from the_loop.driver.lanes.merge_queue import MergeQueue
from the_loop.driver.lanes.scheduler import pick, predicted_paths
from the_loop.driver.run import DriveOptions, agent_environment
from the_loop.errors import GitError, LoopError, RefusedError, UsageError
from the_loop.git import worktrees
from the_loop.ledger import store as ledger_store
from the_loop.ledger.prices import prices_from
from the_loop.ledger.records import RunRecord
from the_loop.ledger.report import cost_report
from the_loop.ledger.tokens import usage_from_json
from the_loop.spec.project import ItemContext
from the_loop.tasks import Task, TaskState, test_command
from the_loop.workflow.briefs import brief
from the_loop.workflow.item_report import ItemReport, fresh_report
from the_loop.workflow.next_action import Action
from the_loop.workflow.task_tests import plan_test

_WAIT = 0.2  # seconds between looks at the lanes
_HEARTBEAT = 5.0  # seconds between lease renewals
_BY_CONSTRUCTION = (
    "parallel lanes: the next task runs in a new agent session in its own worktree "
    "(a clear by construction)"
)

ExecutorFactory = Callable[[LaneSetup], Executor]


@dataclass
class _Row:
    """One task's line of the final table."""

    task: str
    lane: int = 0
    attempts: int = 0
    seconds: float = 0.0
    tokens: int | None = None
    merge: str = ""
    sessions: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "task": self.task,
            "lane": self.lane,
            "attempts": self.attempts,
            "seconds": round(self.seconds, 3),
            "tokens": self.tokens,
            "merge": self.merge,
        }


def drive_parallel(
    ctx: ItemContext,
    options: DriveOptions,
    listener: Listener,
    *,
    parallel: int,
    executor: ExecutorFactory = LocalExecutor,
) -> RunSummary:
    """Run the item's task DAG in up to ``parallel`` lanes (see the module docstring)."""
    return _Coordinator(ctx, options, listener, parallel, executor).run()


class _Coordinator:
    def __init__(
        self,
        ctx: ItemContext,
        options: DriveOptions,
        listener: Listener,
        parallel: int,
        executor: ExecutorFactory,
    ) -> None:
        if options.until is not None:
            raise UsageError("--until goes with a serial run (leave out --parallel)")
        self.ctx = ctx
        self.root = ctx.project.root
        self.item = ctx.item.id
        self.options = options
        self.listener = listener
        self.parallel = parallel
        self.settings = ctx.config.agent
        self.kind = choose_kind(self.settings, options.agent)
        self.env = agent_environment(options.env)
        make_agent(self.settings, self.kind, self.env)  # refuses a missing program up front
        self.rerun = (
            f"loop execute-tasks {self.item} --agent {self.kind.value} --parallel {parallel}"
        )
        self.run_id = uuid.uuid4().hex[:12]
        self.started = time.monotonic()
        branch = worktrees.current_branch(self.root)
        if branch is None:
            raise GitError(
                "a parallel run needs a branch checked out to merge into; HEAD is detached",
                hint="`git switch <branch>`, then run it again",
            )
        self.branch = branch
        parallel_cfg: dict[str, Any] = dict(ctx.config.data.get("parallel") or {})
        owned = tuple(
            worktrees.relative_to_top(self.root, ctx.item.artifacts[name].path)
            for name in ("tasks", "execution-log")
        )
        self.prices = prices_from(ctx.config)
        self.setup = LaneSetup(
            root=self.root,
            kind=self.kind,
            settings=self.settings,
            env=self.env,
            pressure=ctx.config.context.pressure,
            setup=str(parallel_cfg.get("setup") or ""),
            loop_owned=owned,
            prices=self.prices,
        )
        self.executor = executor(self.setup)
        self.state = RunState(
            self.root,
            self.item,
            run=self.run_id,
            parallel=parallel,
            agent=self.kind.value,
            branch=branch,
        )
        self.queue = MergeQueue(
            ctx,
            self.state,
            agent=self.kind.value,
            rerun=self.rerun,
            merge_check=str(parallel_cfg.get("mergeCheck") or ""),
        )
        self.lanes: dict[int, Attempt] = {}  # lane -> its attempt (running or queued)
        self.at_work: dict[int, dict[str, Any]] = {}  # lane -> since, session, live tokens
        self.held: dict[str, leases.Lease] = {}
        self.rows: dict[str, _Row] = {}
        self.evictions: dict[str, list[str]] = {}
        self.context: dict[str, str] = {}
        self.failed: dict[str, str] = {}
        self.done: list[str] = []
        self.sessions: list[str] = []
        self.runs = 0
        self.tokens_peak: int | None = None
        self.last_beat = time.monotonic()
        self.landed: list[Attempt] = []  # landed tasks whose worktree and branch are to go

    # ---------------------------------------------------------------- the run

    def run(self) -> RunSummary:
        try:
            with stop_on_sigterm():
                status, reason = self._loop()
        except KeyboardInterrupt:
            status, reason = self._interrupted()
        except LoopError as exc:
            self._stop_lanes()
            status, reason = "failed", exc.render()
        finally:
            self._tidy_quietly()
            self._release_all()
            self.state.save(active=False, lanes=[], queue=self.queue.ids(), now=True)
        summary = RunSummary(
            item=self.item,
            agent=self.kind.value,
            status=status,
            reason=reason,
            tasks_done=tuple(self.done),
            sessions=tuple(self.sessions),
            resets={},
            resets_aborted=0,
            runs=self.runs,
            tokens_peak=self.tokens_peak,
            seconds=round(time.monotonic() - self.started, 3),
            open_reset=None,
            lanes=self.parallel,
            table=tuple(row.to_json() for row in self.rows.values()),
            cost=cost_report(
                self.item, ledger_store.read_runs(self.root, self.item), self.prices
            ).to_json(),
        )
        self.listener(summary)
        return summary

    def _loop(self) -> tuple[str, str]:
        self._prepare()
        while True:
            self._forward_events()
            report = fresh_report(self.ctx)
            done, total = report.counts
            if total and done == total and not self.lanes:
                self._tidy(every=True)
                return "done", f"all {total} tasks done"
            if not self.failed and not self._limit_reached():
                self._fill(report)
            if not self.lanes:
                if self.failed:
                    return "failed", "; ".join(self.failed.values())
                if self._limit_reached():
                    return "stopped", f"{len(self.done)} task(s) done (--max-tasks)"
                raise LoopError(
                    f"no task of {self.item} is ready and none is running",
                    hint=f"`loop next {self.item}` and `loop check {self.item}` say why",
                )
            # With a branch to land, look at the lanes without waiting for one.
            for result in self.executor.wait(0 if self.queue.waiting else _WAIT):
                self._finished(result)
            self._heartbeat()
            if self.queue.waiting:
                self._land_one()
            elif self.landed:
                self._tidy()
            self.state.flush()

    def _limit_reached(self) -> bool:
        limit = self.options.max_tasks
        return limit is not None and len(self.done) >= limit

    # ---------------------------------------------------------------- preparing

    def _prepare(self) -> None:
        with checkpoint.locked(self.root):
            pass  # finishes a checkpoint a killed run left half-done
        self._put_back_landing()
        report = fresh_report(self.ctx)
        self._sweep_finished(report)
        self._close_open_resets()
        if report.phase.recorded not in ("implementation", "needs-review", "complete"):
            from the_loop.workflow.phase_crossing import cross

            with sheltered():
                crossing = cross(
                    report,
                    "implementation",
                    next_step=f"implement the ready tasks in parallel lanes (`{self.rerun}`)",
                )
            if crossing is not None and crossing.outcome is not None:
                self._checkpointed(crossing.outcome, None, "phase", None)

    def _close_open_resets(self) -> None:
        """Resets left open by earlier checkpoints: every lane starts a new session anyway."""
        with project_lock(self.root):
            for record in resets.open_resets(self.root, self.item):
                resets.close(self.root, record, "completed", note=_BY_CONSTRUCTION)

    def _put_back_landing(self) -> None:
        """A killed run's landing whose checkpoint never happened: the files go back."""
        saved = load_state(self.root, self.item)
        landing = (saved or {}).get("landing")
        if not landing:
            return
        report = fresh_report(self.ctx)
        task = report.dag.task(landing["task"]) if report.dag else None
        if task is not None and task.state is TaskState.DONE:
            return
        if worktrees.landed_paths(self.root):
            worktrees.unland(self.root, landing["commit"])

    def _sweep_finished(self, report: ItemReport) -> None:
        """Leases, branches and worktrees of tasks already done (a run killed after a landing)."""
        if report.dag is None:
            return
        done = (
            {t.id for t in report.tasks.tasks if t.state is TaskState.DONE}
            if report.tasks
            else set()
        )
        for name in worktrees.task_branches(self.root, self.item):
            task = name.rsplit("/", 1)[1]
            if task in done:
                worktrees.remove_worktree(self.root, worktree_path(self.root, self.item, task))
                worktrees.delete_branch(self.root, name)
        with project_lock(self.root):
            for lease in leases.leases(self.root, self.item):
                if lease.task in done and not (lease.live() and lease.run != self.run_id):
                    leases.release_locked(self.root, lease)
        worktrees.prune_worktrees(self.root)

    # ---------------------------------------------------------------- lanes

    def _busy(self, report: ItemReport) -> dict[str, frozenset[str]]:
        """The tasks running or queued, with the files their text names."""
        assert report.dag is not None
        return {a.task: predicted_paths(report.dag.task(a.task)) for a in self.lanes.values()}

    def _task(self, task_id: str) -> Task:
        report = fresh_report(self.ctx)
        assert report.dag is not None
        return report.dag.task(task_id)

    def _fill(self, report: ItemReport) -> None:
        if report.dag is None:
            return
        skip = set(self.failed) | {t.id for t in _tasks(report) if t.state is TaskState.DONE}
        while len(self.lanes) < self.parallel:
            task_id, _held = pick(report.dag, self._busy(report), skip)
            if task_id is None:
                return
            if not self._start(report, report.dag.task(task_id)):
                skip.add(task_id)

    def _start(self, report: ItemReport, task: Task) -> bool:
        lane = min(set(range(1, self.parallel + 1)) - set(self.lanes))
        row = self.rows.setdefault(task.id, _Row(task.id))
        attempt_no = row.attempts + 1
        try:
            taken = leases.acquire(
                self.root, self.item, task.id, run=self.run_id, lane=lane, attempt=attempt_no
            )
        except RefusedError as exc:
            self.failed[task.id] = exc.message
            return False
        self.held[task.id] = taken.lease
        if taken.reclaimed is not None:
            dead = taken.reclaimed
            self.listener(
                Merged(
                    task.id,
                    lane,
                    attempt_no,
                    "warning",
                    f"reclaimed the lease of task {task.id} from a run that died "
                    f"(pid {dead.pid} on {dead.host}, lane {dead.lane})",
                )
            )
        test = None
        if test_command(task) is not None:
            planned = plan_test(report, task)
            test = TestSpec(planned.argv, planned.shown, planned.timeout)
        branch = worktrees.task_branch(self.item, task.id)
        attempt = Attempt(
            item=self.item,
            task=task.id,
            title=task.title,
            attempt=attempt_no,
            lane=lane,
            base=worktrees.head_of(self.root),
            branch=branch,
            brief="",
            eviction=self.context.get(task.id),
            test=test,
        )
        action = Action(
            "implement",
            f"implement task {task.id}: {task.title}",
            f"loop execute-tasks {self.item}",
            "implementation",
            task=task.id,
        )
        path = worktree_path(self.root, self.item, task.id)
        text = lane_preface(attempt, path) + brief(report, action)
        attempt = dataclasses.replace(attempt, brief=text)
        row.attempts = attempt_no
        row.lane = lane
        self.lanes[lane] = attempt
        self.at_work[lane] = {"since": time.time()}
        self.executor.start(attempt)
        self.state.task(task.id, state="running", lane=lane, attempts=attempt_no)
        self._save()  # written at the end of this turn of the loop: a fraction of a second
        self.listener(
            TaskStarted(
                task=task.id,
                title=task.title,
                run=attempt_no,
                max_runs=self.settings.max_attempts,
                start="new",
                session=None,
                lane=lane,
            )
        )
        return True

    def _finished(self, result: AttemptResult) -> None:
        attempt = result.attempt
        self._charge(result)
        row = self.rows[attempt.task]
        row.seconds += result.seconds
        if result.tokens is not None:
            row.tokens = (row.tokens or 0) + result.tokens
            self.tokens_peak = max(self.tokens_peak or 0, result.tokens)
        self.runs += result.runs
        for session in result.sessions:
            if session not in self.sessions:
                self.sessions.append(session)
        for warning in result.warnings:
            self.listener(Merged(attempt.task, attempt.lane, attempt.attempt, "warning", warning))
        if result.outcome == "ready":
            self.queue.push(result)
            self.state.task(attempt.task, state="queued", tokens=row.tokens)
            self._save()
            return
        self._drop_lane(attempt)
        if result.outcome == "broken" and attempt.attempt < self.settings.max_attempts:
            # The lane failed, not the agent: a fresh worktree from the new head next time.
            self.evictions.setdefault(attempt.task, []).append(
                f"attempt {attempt.attempt} broke: {result.detail}"
            )
            self._cleanup(attempt, delete_branch=False)
            self.state.task(attempt.task, state="evicted", merge=result.detail)
            self.listener(
                Merged(attempt.task, attempt.lane, attempt.attempt, "evicted", result.detail)
            )
            return
        self._give_up(attempt.task, attempt, result.detail, result.runs)

    def _land_one(self) -> None:
        result = self.queue.waiting[0]
        attempt = result.attempt
        self.state.task(attempt.task, state="merging")
        self._save()
        task = self._task(attempt.task)
        _result, verdict = self.queue.land_next(task, tuple(self.evictions.get(task.id, ())))
        self._drop_lane(attempt)
        row = self.rows[attempt.task]
        if verdict.result == "landed":
            outcome = verdict.outcome
            assert outcome is not None
            row.merge = "landed" + (
                f" after {row.attempts - 1} eviction(s)" if row.attempts > 1 else ""
            )
            self._checkpointed(outcome, attempt.task, "task", attempt.lane)
            self._close_reset(outcome)
            self.landed.append(attempt)  # removed once nothing waits to land (_tidy)
            self.done.append(attempt.task)
            self.state.task(attempt.task, state="merged", merge=row.merge, seconds=row.seconds)
            self._save()
            self.listener(
                Merged(
                    attempt.task,
                    attempt.lane,
                    attempt.attempt,
                    "landed",
                    verdict.detail,
                    outcome.commit,
                    tuple(self.queue.ids()),
                )
            )
            return
        self.evictions.setdefault(attempt.task, []).append(
            f"attempt {attempt.attempt} evicted: {verdict.detail}"
        )
        self.context[attempt.task] = verdict.context
        self._cleanup(attempt, delete_branch=True)
        self.listener(
            Merged(
                attempt.task,
                attempt.lane,
                attempt.attempt,
                "evicted",
                verdict.detail,
                None,
                tuple(self.queue.ids()),
            )
        )
        if attempt.attempt >= self.settings.max_attempts:
            reason = (
                f"task {attempt.task} was evicted {attempt.attempt} time(s) "
                f"(agent.maxAttempts): {verdict.detail}"
            )
            self._give_up(attempt.task, attempt, reason, 0)
            return
        row.merge = "evicted"
        self.state.task(attempt.task, state="evicted", merge=verdict.detail)
        self._save()

    def _give_up(self, task_id: str, attempt: Attempt, reason: str, runs: int) -> None:
        self.failed[task_id] = reason
        self.rows[task_id].merge = "failed"
        self.state.task(task_id, state="failed", merge=reason)
        lease = self.held.pop(task_id, None)
        if lease is not None:
            leases.release(self.root, lease)
        worktrees.remove_worktree(self.root, worktree_path(self.root, self.item, task_id))
        with sheltered():
            outcome = stop_note(
                fresh_report(self.ctx).ctx,
                self._task(task_id),
                reason=reason,
                did=f"{attempt.attempt} attempt(s) of task {task_id} in parallel lanes; its "
                f"last work is kept on branch {attempt.branch}",
                session=None,
                rerun=self.rerun,
            )
        if outcome is not None:
            self._checkpointed(outcome, task_id, "stop", attempt.lane)
        self.listener(TaskFailed(task=task_id, runs=runs, reason=reason, lane=attempt.lane))
        self._save()

    def _drop_lane(self, attempt: Attempt) -> None:
        if self.lanes.get(attempt.lane) == attempt:
            del self.lanes[attempt.lane]
            self.at_work.pop(attempt.lane, None)

    def _cleanup(self, attempt: Attempt, *, delete_branch: bool) -> None:
        worktrees.remove_worktree(self.root, worktree_path(self.root, self.item, attempt.task))
        if delete_branch:
            worktrees.delete_branch(self.root, attempt.branch)
        lease = self.held.pop(attempt.task, None)
        if lease is not None:
            leases.release(self.root, lease)

    def _tidy(self, *, every: bool = False) -> None:
        """Remove a landed task's worktree, branch, lease and reset record (all: ``every``).

        Done while nothing waits in the queue: the next landing (and the lanes its
        dependents wait for) comes first. A run killed before leaves them for the next
        run's sweep (``_sweep_finished``).
        """
        while self.landed:
            attempt = self.landed.pop(0)
            self._cleanup(attempt, delete_branch=True)
            if not every:
                return

    def _close_reset(self, outcome: checkpoint.Outcome) -> None:
        record = outcome.record
        if record is None:
            return
        with project_lock(self.root):
            if any(r.id == record.id for r in resets.open_resets(self.root, self.item)):
                resets.close(self.root, record, "completed", note=_BY_CONSTRUCTION)

    # ---------------------------------------------------------------- stopping

    def _interrupted(self) -> tuple[str, str]:
        results = self._stop_lanes()
        for result in results:
            attempt = result.attempt
            self.rows[attempt.task].merge = "interrupted"
            self.state.task(attempt.task, state="interrupted")
            self.listener(
                CheckpointTaken(
                    task=attempt.task,
                    kind="interim",
                    by="loop",
                    checkpoint=f"branch {attempt.branch}",
                    commit=result.head,
                    reset="none",
                    reason="stopped by Ctrl-C: the agent's work so far is committed on its "
                    "task branch; a rerun picks it up",
                    lane=attempt.lane,
                )
            )
        for result in self.queue.waiting:
            self.state.task(result.attempt.task, state="interrupted")
        return "interrupted", "stopped by Ctrl-C" + (
            f" with {len(results)} lane(s) running" if results else ""
        )

    def _stop_lanes(self) -> list[AttemptResult]:
        results = self.executor.stop()
        for result in results:
            self._charge(result)
            self._drop_lane(result.attempt)
        return results

    def _charge(self, result: AttemptResult) -> None:
        """Append the ledger records of an attempt's agent runs (this thread alone writes)."""
        for charged in result.charged:
            raw, total = charged.get("record"), charged.get("total")
            record = RunRecord.from_json(raw) if isinstance(raw, dict) else None
            if record is not None:
                cursor = usage_from_json(total) if isinstance(total, dict) else None
                ledger_store.append(self.root, record, total=cursor)

    def _tidy_quietly(self) -> None:
        """Whatever landed and is not tidied yet (a failing run ends here too)."""
        try:
            self._tidy(every=True)
        except LoopError:
            pass  # the next run's sweep removes what is left

    def _release_all(self) -> None:
        held = list(self.held.values())
        self.held.clear()
        if held:
            with project_lock(self.root):
                for lease in held:
                    leases.release_locked(self.root, lease)

    # ---------------------------------------------------------------- reporting

    def _heartbeat(self) -> None:
        if time.monotonic() - self.last_beat < _HEARTBEAT or not self.held:
            return
        self.last_beat = time.monotonic()
        renewed = leases.heartbeat(self.root, list(self.held.values()))
        self.held = {lease.task: lease for lease in renewed}
        self._save()

    def _forward_events(self) -> None:
        moved = False
        for event in self.executor.events():
            if isinstance(event, Progress) and event.lane in self.at_work:
                seen = self.at_work[event.lane]
                now = {"session": event.session, "tokens": event.tokens}
                moved = moved or any(seen.get(k) != v for k, v in now.items())
                seen.update(now)
            self.listener(event)
        if moved:
            self._save()  # the run state's lanes show each agent's session and window

    def _save(self) -> None:
        lanes = [
            {
                "lane": lane,
                "task": attempt.task,
                "attempt": attempt.attempt,
                "state": self.state.data["tasks"].get(attempt.task, {}).get("state", "running"),
                "tokens": self.at_work.get(lane, {}).get("tokens")
                or self.rows[attempt.task].tokens,
                "branch": attempt.branch,
                "worktree": str(worktree_path(self.root, self.item, attempt.task)),
                "session": self.at_work.get(lane, {}).get("session"),
                "since": self.at_work.get(lane, {}).get("since"),
            }
            for lane, attempt in sorted(self.lanes.items())
        ]
        self.state.save(lanes=lanes, queue=self.queue.ids())

    def _checkpointed(
        self, outcome: checkpoint.Outcome, task: str | None, kind: str, lane: int | None
    ) -> None:
        self.listener(CheckpointTaken.of(outcome, task, kind, lane))
        if kind == "phase":
            self._close_reset(outcome)

    def emit(self, event: Event) -> None:
        """Hand an event to the listener (the CLI's printer)."""
        self.listener(event)


def _tasks(report: ItemReport) -> tuple[Task, ...]:
    return report.tasks.tasks if report.tasks is not None else ()
