"""The local executor: each attempt on a thread of this process, its agent a child process.

Lane threads never touch the project lock, the DAG or a checkpoint: they run
the agent and the test in their worktree and hand back a result. Their events
go through a queue, so the coordinator's thread is the only one that prints.
"""

from __future__ import annotations

import queue
import threading
import time

from the_loop.driver.events import Event
from the_loop.driver.lanes.attempt import Attempt, AttemptResult
from the_loop.driver.lanes.lane import LaneSetup, run_attempt
from the_loop.errors import LoopError


class LocalExecutor:
    """Runs attempts in threads (see the module docstring)."""

    def __init__(self, setup: LaneSetup) -> None:
        self.setup = setup
        self._stop = threading.Event()
        self._results: queue.Queue[AttemptResult] = queue.Queue()
        self._events: queue.Queue[Event] = queue.Queue()
        self._threads: dict[str, threading.Thread] = {}

    def start(self, attempt: Attempt) -> None:
        """Run ``attempt`` on a thread of its own."""
        thread = threading.Thread(
            target=self._run, args=(attempt,), name=f"lane-{attempt.lane}", daemon=True
        )
        self._threads[attempt.task] = thread
        thread.start()

    def _run(self, attempt: Attempt) -> None:
        started = time.monotonic()
        try:
            result = run_attempt(attempt, self.setup, self._stop, self._events.put)
        except LoopError as exc:
            result = _broken(attempt, exc.render(), started)
        except Exception as exc:  # a lane's bug must not hang the run: it fails that task
            result = _broken(attempt, f"{type(exc).__name__}: {exc}", started)
        self._results.put(result)

    def wait(self, timeout: float) -> list[AttemptResult]:
        """Results finished since the last call; waits up to ``timeout`` for the first."""
        found: list[AttemptResult] = []
        try:
            found.append(self._results.get(timeout=timeout))
        except queue.Empty:
            return []
        while True:
            try:
                found.append(self._results.get_nowait())
            except queue.Empty:
                break
        for result in found:
            thread = self._threads.pop(result.attempt.task, None)
            if thread is not None:
                thread.join(timeout=5)
        return found

    def events(self) -> list[Event]:
        """Events from the lanes since the last call."""
        found: list[Event] = []
        while True:
            try:
                found.append(self._events.get_nowait())
            except queue.Empty:
                return found

    def running(self) -> int:
        """Attempts not yet handed back by ``wait``."""
        return len(self._threads)

    def stop(self) -> list[AttemptResult]:
        """Stop every lane: each stops its agent's process group and commits its work."""
        self._stop.set()
        results: list[AttemptResult] = []
        deadline = time.monotonic() + 30
        while self._threads and time.monotonic() < deadline:
            results += self.wait(0.25)
        return results


def _broken(attempt: Attempt, reason: str, started: float) -> AttemptResult:
    return AttemptResult.without_work(attempt, "broken", reason, time.monotonic() - started)
