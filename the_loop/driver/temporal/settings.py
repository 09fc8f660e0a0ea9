"""``--backend temporal``: the server, the shared remote, and how the run ends.

Flags win over config (``parallel.temporal``: ``address``, ``namespace``,
``taskQueue``, ``remote``, ``tls``); a Temporal Cloud API key comes from the
environment (``TEMPORAL_API_KEY``), never from a file in the repository. This
module imports no ``temporalio``, so a missing extra is a clear error, not an
import failure.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from typing import Any

from the_loop.config.settings import Config
from the_loop.driver.events import Listener, RunSummary
from the_loop.driver.lanes.coordinator import drive_parallel
from the_loop.driver.run import DriveOptions
from the_loop.driver.temporal.target import Target
from the_loop.errors import UsageError
from the_loop.git import remote as git_remote
from the_loop.git import worktrees
from the_loop.spec.project import ItemContext

DEFAULTS = {
    "address": "127.0.0.1:7233",
    "namespace": "default",
    "taskQueue": "loop",
    "remote": "origin",
}


@dataclass(frozen=True)
class RemoteBackend:
    """Where the lanes of a ``--backend temporal`` run go."""

    address: str
    namespace: str
    task_queue: str
    remote: str
    tls: bool = False


def require_extra() -> None:
    """A usage error naming the install command when ``temporalio`` is not installed."""
    if importlib.util.find_spec("temporalio") is None:
        raise UsageError(
            "the Temporal backend needs the temporal extra",
            hint="pip install 'loop-engine[temporal]'",
        )


def backend_settings(
    config: Config | None,
    address: str | None,
    namespace: str | None,
    task_queue: str | None,
    remote: str | None = None,
) -> RemoteBackend:
    """Flags over ``parallel.temporal`` over the defaults."""
    data: dict[str, Any] = {}
    if config is not None:
        data = dict((config.data.get("parallel") or {}).get("temporal") or {})
    return RemoteBackend(
        address=address or str(data.get("address") or DEFAULTS["address"]),
        namespace=namespace or str(data.get("namespace") or DEFAULTS["namespace"]),
        task_queue=task_queue or str(data.get("taskQueue") or DEFAULTS["taskQueue"]),
        remote=remote or str(data.get("remote") or DEFAULTS["remote"]),
        tls=bool(data.get("tls", False)),
    )


def remote_backend(
    config: Config,
    address: str | None,
    namespace: str | None,
    task_queue: str | None,
    parallel: int,
) -> RemoteBackend:
    """The backend of ``execute-tasks --backend temporal``, checked before anything starts."""
    require_extra()
    if parallel < 2:
        raise UsageError("--backend temporal runs lanes: give --parallel N (N ≥ 2)")
    return backend_settings(config, address, namespace, task_queue)


def target_of(backend: RemoteBackend) -> Any:
    """The ``Target`` (the module that imports ``temporalio`` is loaded here)."""

    return Target(
        address=backend.address,
        namespace=backend.namespace,
        task_queue=backend.task_queue,
        tls=backend.tls,
        api_key=os.environ.get("TEMPORAL_API_KEY") or None,
    )


def drive_on_temporal(
    ctx: ItemContext,
    options: DriveOptions,
    listener: Listener,
    *,
    parallel: int,
    backend: RemoteBackend,
) -> RunSummary:
    """The parallel coordinator with its lanes on Temporal workers."""
    from the_loop.driver.temporal.executor import TemporalExecutor, integration_remote

    root = ctx.project.root
    integration_remote(root, backend.remote)
    branch = worktrees.current_branch(root)
    if branch is None:
        raise UsageError("a parallel run needs a branch checked out; HEAD is detached")
    factory = TemporalExecutor.factory(
        target=target_of(backend), remote=backend.remote, branch=branch
    )
    summary = drive_parallel(ctx, options, listener, parallel=parallel, executor=factory)
    # what landed is durable once it is on the remote: the workers' next bases come from it
    head = worktrees.head_of(root)
    git_remote.push(root, backend.remote, head, branch, force=False)
    return summary


def exit_at_once(code: int) -> None:
    """Leave with ``code`` now that the run's output is written.

    The SDK's native threads can abort the interpreter while it shuts down, after
    the work is done, which would replace the run's exit status with a signal's;
    so a Temporal process flushes its output and ends here.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
