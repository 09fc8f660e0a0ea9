"""``loop worker --backend temporal --repo CLONE``: run task attempts handed out by the server.

Each attempt runs exactly as a local lane's (``lanes.lane.run_attempt``): a worktree
of this machine's clone on ``loop/<item>/<task>``, made from the base commit the
coordinator named, the configured agent in it, the task's test, one commit. Around
that, the worker only moves commits: it fetches the shared remote first (the base
must be there) and pushes the attempt's branch after. Nothing else it does is
durable; git on the remote is.

While an attempt runs the activity heartbeats every few seconds with the lane's
progress. When the server says the attempt was cancelled, or heartbeats stop getting
through and the server has given the attempt to another worker, or this worker is
asked to stop, the lane is told to stop: its agent's process group is ended, so no
orphan keeps editing. Ctrl-C drains: running attempts get a grace period to finish,
then are handed back (the server retries them on another worker).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import signal
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from the_loop.config.loader import load_config
from the_loop.driver.agent_choice import choose_kind
from the_loop.driver.events import Event
from the_loop.driver.lanes.attempt import AttemptResult
from the_loop.driver.lanes.lane import LaneSetup, run_attempt, worktree_path
from the_loop.driver.run import agent_environment
from the_loop.driver.temporal.target import Target, attempt_from_data, result_to_data
from the_loop.driver.temporal.workflows import ACTIVITY, TaskAttempt
from the_loop.git import remote as git_remote
from the_loop.git import worktrees

_BEAT = 2.0  # seconds between heartbeats (the timeout is HEARTBEAT_SECONDS)


@dataclass(frozen=True)
class WorkerOptions:
    """What ``loop worker`` was asked for."""

    clone: Path
    target: Target
    lanes: int = 1  # attempts this worker runs at once
    grace_seconds: float = 30.0  # Ctrl-C: how long running attempts may take to finish
    name: str = ""


class Attempts:
    """The activity: one attempt in this worker's clone (see the module docstring)."""

    def __init__(self, options: WorkerOptions, say: Callable[[str], None]) -> None:
        self.clone = options.clone
        self.name = options.name or f"{socket.gethostname()}:{os.getpid()}"
        self.say = say
        self._git = threading.Lock()  # fetches and pushes of one clone, one at a time

    @activity.defn(name=ACTIVITY)
    def run(self, data: dict[str, Any]) -> dict[str, Any]:
        """Run the attempt ``data`` describes; its branch is on the remote when this returns."""
        attempt = attempt_from_data(data)
        remote = str(data["remote"])
        self.say(
            f"{self.name}: task {attempt.task} attempt {attempt.attempt} (lane {attempt.lane})"
        )
        with self._git:
            git_remote.fetch(self.clone, remote)
            self._clear(attempt.item, attempt.task, attempt.branch)
        setup = self._setup(str(data["agent"]))
        stop = threading.Event()
        result = self._supervised(lambda: run_attempt(attempt, setup, stop, _ignore), stop)
        pushed = False
        if result.head is not None and result.head != attempt.base:
            with self._git:
                git_remote.push(self.clone, remote, result.head, attempt.branch)
            pushed = True
        with self._git:
            self._clear(attempt.item, attempt.task, attempt.branch)
        self.say(f"{self.name}: task {attempt.task} {result.outcome}")
        return result_to_data(result, worker=self.name, pushed=pushed)

    def _setup(self, agent: str) -> LaneSetup:
        config = load_config(self.clone)
        settings = config.agent
        return LaneSetup(
            root=self.clone,
            kind=choose_kind(settings, agent),
            settings=settings,
            env=agent_environment(os.environ),
            pressure=config.context.pressure,
            setup=str((config.data.get("parallel") or {}).get("setup") or ""),
        )

    def _supervised(
        self, work: Callable[[], AttemptResult], stop: threading.Event
    ) -> AttemptResult:
        """Run ``work`` on a thread; heartbeat meanwhile; stop it when the attempt is taken away."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["result"] = work()
            except BaseException as exc:  # handed to the activity thread below
                box["error"] = exc

        thread = threading.Thread(target=contextvars.copy_context().run, args=(target,))
        thread.start()
        beats = 0
        while thread.is_alive():
            thread.join(timeout=_BEAT)
            beats += 1
            activity.heartbeat({"worker": self.name, "beats": beats})
            if activity.is_cancelled() or activity.is_worker_shutdown():
                stop.set()  # the lane stops its agent's process group and commits
        if activity.is_cancelled() or activity.is_worker_shutdown():
            # handed back: the server gives the attempt to another worker
            raise ApplicationError(f"{self.name} stopped before the attempt finished")
        if "error" in box:
            raise box["error"]
        result: AttemptResult = box["result"]
        return result

    def _clear(self, item: str, task: str, branch: str) -> None:
        """No worktree or branch of an earlier attempt of this task in this clone."""
        path = worktree_path(self.clone, item, task)
        if path.exists():
            worktrees.remove_worktree(self.clone, path)
        worktrees.prune_worktrees(self.clone)
        if worktrees.branch_head(self.clone, branch) is not None:
            worktrees.delete_branch(self.clone, branch)


def _ignore(_event: Event) -> None:
    """Lane events stay on the worker (the coordinator sees heartbeats and the result)."""


def serve(options: WorkerOptions, say: Callable[[str], None]) -> None:
    """Take attempts from the task queue until Ctrl-C or SIGTERM (then drain)."""
    asyncio.run(_serve(options, say))


async def _serve(options: WorkerOptions, say: Callable[[str], None]) -> None:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    client = await options.target.connect()
    attempts = Attempts(options, say)
    with ThreadPoolExecutor(max_workers=options.lanes) as pool:
        worker = Worker(
            client,
            task_queue=options.target.task_queue,
            workflows=[TaskAttempt],
            activities=[attempts.run],
            activity_executor=pool,
            max_concurrent_activities=options.lanes,
            graceful_shutdown_timeout=timedelta(seconds=options.grace_seconds),
        )
        say(
            f"worker {attempts.name}: {options.lanes} lane(s) on {options.target.task_queue} "
            f"at {options.target.address}, clone {options.clone}"
        )
        async with worker:
            await stopping.wait()
            say(f"worker {attempts.name}: draining (up to {options.grace_seconds:g} s)")
