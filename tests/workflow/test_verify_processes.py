"""``task done --verify`` bounds the test it runs, children included (issue 14, defect 12).

A test that timed out used to leave its own children running; a test that
started a background job made loop wait the whole timeout (900 s by default)
on the job's inherited pipe. The test now runs in its own session: at the
timeout its whole process group is stopped, and loop stops reading once the
test command itself has exited.
"""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import pytest
from helpers import processes_naming
from helpers.project import Spec, entries_for, project_copy, run, task_states

from the_loop.tasks import TaskState

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")


def unique_sleep() -> str:
    """A ``sleep`` argument no other process on the machine uses."""
    return f"59.{random.randint(10**8, 10**9 - 1)}"


def verify_project(
    tmp_path: Path, factory: pytest.TempPathFactory, test: str, timeout: int
) -> Path:
    return project_copy(
        factory,
        tmp_path / "p",
        tasks=(Spec("1", "the task", test=test),),
        config=f"checkpoint:\n  testTimeoutSeconds: {timeout}\n",
    )


REVIEW = "review the work: `loop work-on issue-7`"  # the only task: review comes next
DONE = ("task", "done", "7", "1", "--verify", "--did", "x", "--next", REVIEW)


def test_a_background_job_does_not_make_loop_wait(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    seconds = unique_sleep()
    root = verify_project(tmp_path, tmp_path_factory, f"sh -c 'sleep {seconds} & echo ok'", 60)

    started = time.monotonic()
    result = run(root, *DONE)
    elapsed = time.monotonic() - started

    assert result.exit_code == 0, result.output
    assert elapsed < 20, f"loop waited {elapsed:.0f}s on a background job's pipe"
    (entry,) = entries_for(root, "task 1 done")
    assert entry.fields["tests"] == "`sh -c 'sleep " + seconds + " & echo ok'` exited 0 (pass)"
    for pid in processes_naming(f"sleep {seconds}"):  # the test's own leftover
        os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_timed_out_test_is_stopped_with_its_children(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    seconds = unique_sleep()
    root = verify_project(
        tmp_path, tmp_path_factory, f"sh -c 'sleep {seconds} & sleep {seconds}; wait'", 1
    )

    started = time.monotonic()
    result = run(root, *DONE)
    elapsed = time.monotonic() - started

    assert result.exit_code == 1
    assert "timed out" in result.stderr
    assert elapsed < 15
    # SIGKILL is delivered at once but a process takes a moment to exit: poll briefly
    for _ in range(50):
        if not processes_naming(f"sleep {seconds}"):
            break
        time.sleep(0.1)
    assert processes_naming(f"sleep {seconds}") == [], "the test's children outlived it"
    assert task_states(root)["1"] is TaskState.OPEN
