"""The Temporal executor: the coordinator's lanes run as workflows on workers anywhere.

It fills the same seam as the local executor (``lanes.attempt.Executor``): the
coordinator keeps the DAG, the leases, the merge queue and every checkpoint; this
executor only moves attempts. ``start`` pushes the integration branch (the base
must be on the shared remote) and starts the task's workflow, or attaches to it:
the workflow id is derived from the project and the task, so a task never runs
twice at once, and a coordinator that was stopped or killed finds its attempts
still running in the server when it runs again. A finished attempt's branch is
fetched from the remote before it is handed to the merge queue.

The client lives on an event loop of its own thread; every method is called from
the coordinator's thread and waits on that loop.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from typing import Any

from the_loop.driver.events import Event
from the_loop.driver.lanes.attempt import Attempt, AttemptResult
from the_loop.driver.lanes.lane import LaneSetup, worktree_path
from the_loop.driver.temporal.target import (
    Target,
    attempt_to_data,
    result_from_data,
    workflow_id,
)
from the_loop.driver.temporal.workflows import WORKFLOW
from the_loop.errors import LoopError
from the_loop.git import remote as git_remote
from the_loop.git import worktrees

_RECONNECT = 1.0  # seconds between tries while the server is away


class TemporalExecutor:
    """Attempts as Temporal workflows (see the module docstring)."""

    def __init__(self, setup: LaneSetup, *, target: Target, remote: str, branch: str) -> None:
        self.setup = setup
        self.root = setup.root
        self.target = target
        self.remote = remote
        self.branch = branch
        self.url = git_remote.remote_url(self.root, remote)
        # (attempt, the worker's result) or (attempt, why it failed for good)
        self._results: queue.Queue[tuple[Attempt, dict[str, Any] | str, float]] = queue.Queue()
        self._running: dict[str, Future[None]] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._client: Any = self._call(self._connect(), timeout=60)

    @classmethod
    def factory(cls, *, target: Target, remote: str, branch: str) -> Any:
        """What ``drive_parallel`` takes: a function of the lanes' setup."""
        return partial(cls, target=target, remote=remote, branch=branch)

    # ----------------------------------------------------------------- the seam

    def start(self, attempt: Attempt) -> None:
        """Push the base, then start (or attach to) the task's workflow."""
        git_remote.push(self.root, self.remote, attempt.base, self.branch, force=False)
        data = attempt_to_data(
            attempt,
            agent=self.setup.kind.value,
            timeout=float(self.setup.settings.timeout_seconds)
            * max(1, self.setup.settings.max_attempts),
            remote=self.remote,
        )
        future = asyncio.run_coroutine_threadsafe(self._attempt(attempt, data), self._loop)
        self._running[attempt.task] = future

    def wait(self, timeout: float) -> list[AttemptResult]:
        """Attempts finished since the last call (waits up to ``timeout`` for the first)."""
        finished = []
        try:
            finished.append(self._results.get(timeout=timeout))
        except queue.Empty:
            return []
        while True:
            try:
                finished.append(self._results.get_nowait())
            except queue.Empty:
                break
        found = []
        for attempt, raw, started in finished:
            self._running.pop(attempt.task, None)
            try:
                if isinstance(raw, str):
                    raise LoopError(raw)
                found.append(self._fetched(attempt, raw))
            except LoopError as exc:
                found.append(_failed(attempt, exc.message, started))
        return found

    def events(self) -> list[Event]:
        """Lane events stay on the workers; the coordinator reports starts and results."""
        return []

    def running(self) -> int:
        """Attempts started and not yet handed back."""
        return len(self._running)

    def stop(self) -> list[AttemptResult]:
        """Ctrl-C of the coordinator: the attempts go on in the server; a rerun reattaches."""
        for future in self._running.values():
            future.cancel()
        self._running.clear()
        self._loop.call_soon_threadsafe(self._loop.stop)
        return []

    # ----------------------------------------------------------------- the loop's side

    def _call(self, coro: Any, timeout: float) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _connect(self) -> Any:
        return await self.target.connect()

    async def _attempt(self, attempt: Attempt, data: dict[str, Any]) -> None:
        started = time.time()
        raw: dict[str, Any] | str
        try:
            raw = await self._outcome(attempt, data)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the attempt failed for good on every worker
            raw = f"on Temporal: {_said(exc)}"
        self._results.put((attempt, raw, started))

    async def _outcome(self, attempt: Attempt, data: dict[str, Any]) -> dict[str, Any]:
        """The workflow's result: started here, or the one already running or finished."""
        from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
        from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
        from temporalio.service import RPCError

        wid = workflow_id(self.url, attempt.item, attempt.task)
        while True:
            try:
                handle = self._client.get_workflow_handle(wid)
                reused = False
                try:
                    described = await handle.describe()
                    if described.status == WorkflowExecutionStatus.RUNNING:
                        reused = True
                    elif described.status == WorkflowExecutionStatus.COMPLETED:
                        earlier = await handle.result()
                        if int(earlier.get("attempt_number", 0)) >= attempt.attempt:
                            return dict(earlier)
                except RPCError as exc:
                    if "not found" not in str(exc).lower():
                        raise
                if not reused:
                    data = dict(data, attempt_number=attempt.attempt)
                    handle = await self._client.start_workflow(
                        WORKFLOW,
                        data,
                        id=wid,
                        task_queue=self.target.task_queue,
                        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                        result_type=dict,
                    )
                result = await handle.result()
                return dict(result, attempt_number=attempt.attempt)
            except WorkflowFailureError:
                raise
            except RPCError:
                await asyncio.sleep(_RECONNECT)  # the server is away: it keeps the run

    def _fetched(self, attempt: Attempt, raw: dict[str, Any]) -> AttemptResult:
        """The result, with its branch fetched into this clone for the merge queue."""
        result = result_from_data(attempt, raw)
        if raw.get("pushed") and result.head:
            path = worktree_path(self.root, attempt.item, attempt.task)
            if path.exists():
                worktrees.remove_worktree(self.root, path)
            head = git_remote.fetch_branch(self.root, self.remote, attempt.branch)
            if head != result.head:
                raise LoopError(
                    f"task {attempt.task}: the remote's {attempt.branch} is {head[:12]}, "
                    f"the worker reported {result.head[:12]}"
                )
        return result


def _failed(attempt: Attempt, detail: str, started: float) -> AttemptResult:
    return AttemptResult.without_work(attempt, "failed", detail, time.time() - started)


def _said(exc: BaseException) -> str:
    cause = exc.__cause__
    while cause is not None and cause.__cause__ is not None:
        cause = cause.__cause__
    return str(cause or exc) or type(exc).__name__


def integration_remote(root: Path, remote: str) -> str:
    """``remote`` checked: it must exist in the coordinator's clone."""
    url = git_remote.remote_url(root, remote)
    if url == remote and not Path(remote).exists():
        raise LoopError(
            f"--backend temporal: this clone has no remote {remote!r}",
            hint="the workers and this clone share work through a git remote: `git remote add …`",
        )
    return url
