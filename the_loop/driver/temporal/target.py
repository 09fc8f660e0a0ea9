"""Where the Temporal server is, and the plain values that cross it.

An attempt crosses the server as JSON: :func:`attempt_to_data` and
:func:`result_from_data` turn the lanes' frozen values into plain dicts and back,
so the workflow code never imports loop.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

from the_loop.driver.lanes.attempt import Attempt, AttemptResult, TestSpec

DEFAULT_ADDRESS = "127.0.0.1:7233"
DEFAULT_NAMESPACE = "default"
DEFAULT_TASK_QUEUE = "loop"
HEARTBEAT_SECONDS = 10.0  # a worker silent this long is taken for dead; its attempt moves
WORKER_RETRIES = 5  # machines an attempt may be handed to before it fails


@dataclass(frozen=True)
class Target:
    """A Temporal server, namespace and task queue (config ``parallel.temporal`` or flags)."""

    address: str = DEFAULT_ADDRESS
    namespace: str = DEFAULT_NAMESPACE
    task_queue: str = DEFAULT_TASK_QUEUE
    tls: bool = False
    api_key: str | None = None  # Temporal Cloud; read from the environment, never config

    async def connect(self) -> Any:
        """A connected ``temporalio`` client."""
        from temporalio.client import Client  # the optional extra, only for this backend

        return await Client.connect(
            self.address,
            namespace=self.namespace,
            tls=self.tls,
            api_key=self.api_key,
        )


def workflow_id(remote: str, item: str, task: str) -> str:
    """One id per task of one project, so a task never runs twice at once.

    The project is told apart by its shared remote (two clones of one project are
    one project; two projects on one namespace are not).
    """
    digest = hashlib.sha256(remote.strip().rstrip("/").encode()).hexdigest()[:12]
    return f"loop-{digest}-{item}-{task}"


def attempt_to_data(attempt: Attempt, *, agent: str, timeout: float, remote: str) -> dict[str, Any]:
    """The attempt as the workflow carries it."""
    data = dataclasses.asdict(attempt)
    data.update(
        agent=agent,
        remote=remote,
        timeout_seconds=timeout,
        heartbeat_seconds=HEARTBEAT_SECONDS,
        worker_retries=WORKER_RETRIES,
    )
    return data


def attempt_from_data(data: dict[str, Any]) -> Attempt:
    """The attempt a worker is handed."""
    test = data.get("test")
    fields = {f.name for f in dataclasses.fields(Attempt)}
    values = {k: v for k, v in data.items() if k in fields and k != "test"}
    return Attempt(
        **values,
        test=TestSpec(tuple(test["argv"]), test["shown"], int(test["timeout"])) if test else None,
    )


def result_to_data(result: AttemptResult, *, worker: str, pushed: bool) -> dict[str, Any]:
    """A finished attempt, as the worker returns it."""
    data = dataclasses.asdict(result)
    data.pop("attempt")
    data.update(worker=worker, pushed=pushed, attempt_number=result.attempt.attempt)
    return data


def result_from_data(attempt: Attempt, data: dict[str, Any]) -> AttemptResult:
    """A worker's result, for the coordinator's merge queue."""
    fields = {f.name for f in dataclasses.fields(AttemptResult)}
    values: dict[str, Any] = {k: v for k, v in data.items() if k in fields and k != "attempt"}
    values.setdefault("outcome", "failed")
    values.setdefault("head", None)
    values.setdefault("detail", "")
    for name in ("failures", "sessions", "dropped", "warnings"):
        values[name] = tuple(values.get(name) or ())
    return AttemptResult(attempt=attempt, **values)
