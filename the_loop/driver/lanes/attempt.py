"""The executor seam: one task attempt in, its result out.

A task attempt is everything a lane needs to work on one task, wherever it
runs: the item and task, the attempt number, the commit to start from, the
branch to work on, the brief, and why an earlier attempt was evicted. Its result
is the branch and its head commit, an outcome, tokens, time and the session. The
coordinator never hands an executor the DAG, a lease or a checkpoint: it reads
results and merges them through its queue. A local executor runs attempts in
threads on this machine (``local``); an executor on other machines would make its
worktree from a shared remote and push the branch it returns.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

from the_loop.driver.events import Event


@dataclass(frozen=True)
class TestSpec:
    """A task's ``_Test:_`` as a lane runs it: in the lane's own worktree."""

    argv: tuple[str, ...]
    shown: str
    timeout: int


@dataclass(frozen=True)
class Attempt:
    """One run of a task in a lane (see the module docstring)."""

    item: str
    task: str
    title: str
    attempt: int  # 1 for the first, +1 after each eviction
    lane: int
    base: str  # the integration head the branch starts from
    branch: str
    brief: str
    eviction: str | None = None  # why the last attempt was evicted, and its output
    test: TestSpec | None = None


@dataclass(frozen=True)
class AttemptResult:
    """What an attempt came back with.

    ``outcome``: ``ready`` (its test passed in the lane; ``head`` is the one commit
    of its work on ``base``, or ``base`` when it changed nothing), ``failed`` (every
    run failed or left the test failing; ``detail`` says why), ``interrupted``
    (stopped by Ctrl-C; ``head`` holds its work so far, committed on the branch),
    ``broken`` (the lane itself failed: a git error, a setup that failed; the attempt
    counts, and the task is tried again from a new worktree).
    """

    attempt: Attempt
    outcome: str
    head: str | None
    detail: str
    message: str = ""  # the agent's last words
    runs: int = 0
    failures: tuple[str, ...] = ()
    tokens: int | None = None
    seconds: float = 0.0
    session: str | None = None
    sessions: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()  # loop-owned paths whose edits were dropped
    recovered: bool = False  # an earlier run's committed work, accepted without an agent
    finished_at: float = 0.0  # epoch seconds: the queue's order
    cwd: str = ""  # where the agent ran
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def without_work(
        cls, attempt: Attempt, outcome: str, detail: str, seconds: float
    ) -> AttemptResult:
        """An attempt that came back with no branch head (it broke or failed for good)."""
        return cls(
            attempt=attempt,
            outcome=outcome,
            head=None,
            detail=detail,
            seconds=round(seconds, 3),
            finished_at=time.time(),
        )

    # The ledger records of its agent runs as JSON (``{"record", "total"}``: the session
    # total to move its cursor to), plain data that crosses any executor (Temporal's too);
    # the coordinator's thread appends them (a lane writes no shared file).
    charged: tuple[dict[str, object], ...] = ()


class Executor(Protocol):
    """Where attempts run. Every method is called from the coordinator's thread."""

    def start(self, attempt: Attempt) -> None:
        """Begin ``attempt``; its result comes back from ``wait``."""

    def wait(self, timeout: float) -> list[AttemptResult]:
        """Results finished since the last call (waits up to ``timeout`` for one)."""

    def events(self) -> list[Event]:
        """Events the attempts produced since the last call (progress, agent runs)."""

    def running(self) -> int:
        """Attempts started and not yet returned by ``wait``."""

    def stop(self) -> list[AttemptResult]:
        """Stop every attempt (agents' process groups), each committing its work so far."""
