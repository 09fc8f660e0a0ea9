"""The merge queue: task branches land on the integration branch one at a time.

Branches are queued as their lanes finish (finish time, ties by task id). For
each, in the coordinator's thread, serially:

1. **rebase** the branch onto the integration head, in its worktree; a conflict
   evicts the task (the rebase is aborted, nothing is resolved by guessing);
2. **check**: the task's ``_Test:_`` and ``parallel.mergeCheck`` run in the
   rebased worktree; a failure evicts the task;
3. **land**: the integration checkout moves to the rebased tree (a fast-forward
   of its files) and the usual checkpoint follows on the integration branch:
   tick, log entry with Next:/Context:, phase, commit with trailers. The task's
   work and its tick are one commit; the lane's branch and worktree are removed.

A checkpoint that cannot be made (a hook refuses the commit) puts the files back
and evicts the task with the hook's output. An evicted task goes back to the
ready set and starts again from the new head with the reason in its brief.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from the_loop.checkpoint.run_state import RunState
from the_loop.checkpoint.transaction import Outcome
from the_loop.driver.checkpoints import finish_task
from the_loop.driver.interrupts import sheltered
from the_loop.driver.lanes.attempt import AttemptResult
from the_loop.driver.lanes.lane import run_test_in, worktree_path
from the_loop.errors import LoopError
from the_loop.git import worktrees
from the_loop.spec.project import ItemContext
from the_loop.tasks import Task
from the_loop.workflow.item_report import fresh_report
from the_loop.workflow.task_tests import Verification

_OUTPUT_LINES = 30


@dataclass(frozen=True)
class Verdict:
    """What the queue did with one branch."""

    result: str  # landed | evicted
    detail: str  # one line
    context: str = ""  # for the next attempt's brief: the conflict, the failing output
    outcome: Outcome | None = None


def queue_order(result: AttemptResult) -> tuple[float, tuple[int, ...] | str]:
    """Finish time, ties by task id."""
    from the_loop.dag.analysis import id_sort_key

    return (result.finished_at, id_sort_key(result.attempt.task))  # type: ignore[return-value]


class MergeQueue:
    """Serial landings on the integration branch (see the module docstring)."""

    def __init__(
        self,
        ctx: ItemContext,
        state: RunState,
        *,
        agent: str,
        rerun: str,
        merge_check: str = "",
    ) -> None:
        self.ctx = ctx
        self.root = ctx.project.root
        self.state = state
        self.agent = agent
        self.rerun = rerun
        self.merge_check = merge_check
        self.waiting: list[AttemptResult] = []

    def push(self, result: AttemptResult) -> None:
        """Queue a finished branch."""
        self.waiting.append(result)
        self.waiting.sort(key=queue_order)

    def ids(self) -> list[str]:
        """Tasks waiting, in merge order."""
        return [r.attempt.task for r in self.waiting]

    def land_next(self, task: Task, earlier: tuple[str, ...]) -> tuple[AttemptResult, Verdict]:
        """Rebase, check and land the first branch in the queue."""
        result = self.waiting.pop(0)
        return result, self._land(result, task, earlier)

    def _land(self, result: AttemptResult, task: Task, earlier: tuple[str, ...]) -> Verdict:
        attempt = result.attempt
        path = worktree_path(self.root, attempt.item, attempt.task)
        if not path.exists():
            # An executor elsewhere pushed the branch: check it out here to rebase it.
            worktrees.add_worktree(self.root, path, attempt.branch, attempt.base)
        head = worktrees.head_of(self.root)
        rebased = worktrees.rebase_onto(path, head)
        if not rebased.ok or rebased.head is None:
            paths = ", ".join(rebased.conflicts) or "see git's output"
            diff = _diff(path, head)
            return Verdict(
                "evicted",
                f"conflict with the integration head {head[:12]} in {paths}",
                f"Rebasing onto {head[:12]} conflicted in: {paths}.\n\n"
                f"git said:\n```\n{_tail(rebased.detail)}\n```\n\n"
                f"Your earlier change (now discarded) was:\n```diff\n{diff}\n```",
            )
        verification = run_test_in(attempt.test, path) if attempt.test else None
        if verification is not None and not verification.passed:
            return _failed_check(verification, f"after the rebase onto {head[:12]}")
        if self.merge_check:
            check = _merge_check(self.merge_check, path)
            if not check.passed:
                return _failed_check(check, "parallel.mergeCheck")
        return self._checkpoint(result, task, rebased.head, verification, earlier)

    def _checkpoint(
        self,
        result: AttemptResult,
        task: Task,
        commit: str,
        verification: Verification | None,
        earlier: tuple[str, ...],
    ) -> Verdict:
        attempt = result.attempt
        with sheltered():
            self.state.save(landing={"task": attempt.task, "commit": commit}, now=True)
            worktrees.land(self.root, commit)
            try:
                outcome = finish_task(
                    fresh_report(self.ctx).ctx,
                    task,
                    message=_did(result),
                    agent=self.agent,
                    runs=result.runs,
                    failures=earlier,
                    verification=verification,
                    session=result.session,
                    rerun=self.rerun,
                )
            except LoopError as exc:
                worktrees.unland(self.root, commit)
                self.state.save(landing=None, now=True)
                return Verdict(
                    "evicted",
                    f"its checkpoint could not be made: {exc.message}",
                    f"The checkpoint commit on the integration branch failed:\n```\n"
                    f"{_tail(exc.render())}\n```",
                )
            # A stale landing of a task that is done is ignored by a rerun: no need to hurry.
            self.state.save(landing=None)
        return Verdict("landed", f"landed as {outcome.commit or 'no commit'}", outcome=outcome)


def _did(result: AttemptResult) -> str:
    said = result.message.strip() or f"the agent finished task {result.attempt.task}"
    where = f"lane {result.attempt.lane}, attempt {result.attempt.attempt}"
    if result.recovered:
        where += ", recovered from an earlier run's branch"
    return f"{said} [{where}; merged by the queue]"


def _failed_check(verification: Verification, when: str) -> Verdict:
    output = "\n".join(verification.output.strip().splitlines()[-_OUTPUT_LINES:])
    return Verdict(
        "evicted",
        f"{verification.summary()} {when}",
        f"The check {verification.summary()} {when}:\n```\n{output}\n```",
    )


def _merge_check(command: str, cwd: Path) -> Verification:
    done = subprocess.run(
        ["sh", "-c", command], cwd=cwd, capture_output=True, text=True, check=False
    )
    return Verification(
        ("sh", "-c", command), done.returncode, done.stdout + done.stderr, shown=command
    )


def _diff(path: Path, head: str) -> str:
    return _tail(worktrees.diff_since(path, head), 60)


def _tail(text: str, lines: int = _OUTPUT_LINES) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
