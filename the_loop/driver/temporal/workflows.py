"""The workflow: one per task attempt, and nothing in it but the call of its activity.

Workflow code is replayed by Temporal on any worker, so it stays trivial and
deterministic: it takes the attempt's plain description and runs the one activity
that does the work (``loop.run_attempt``) with a heartbeat timeout. A worker that dies
stops heartbeating; the server then hands the same activity to another worker. What an
attempt *produced* is never in Temporal: it is a branch pushed to the shared remote.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

WORKFLOW = "loop.TaskAttempt"
ACTIVITY = "loop.run_attempt"


@workflow.defn(name=WORKFLOW)
class TaskAttempt:
    """Run one task attempt on whichever worker takes it."""

    @workflow.run
    async def run(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The attempt's result, as the worker that finished it returned it."""
        return await workflow.execute_activity(
            ACTIVITY,
            spec,
            start_to_close_timeout=timedelta(seconds=float(spec["timeout_seconds"])),
            heartbeat_timeout=timedelta(seconds=float(spec["heartbeat_seconds"])),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=1),
                maximum_interval=timedelta(seconds=5),
                # a lost worker is retried elsewhere; an agent that failed returns its
                # outcome instead of raising, so these retries are for lost machines only
                maximum_attempts=int(spec["worker_retries"]),
            ),
            result_type=dict,
        )
