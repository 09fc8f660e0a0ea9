"""Crash injection: kill a checkpoint at every step and prove the next command finishes it.

``LOOP_FAULT=<step>`` makes loop SIGKILL itself right after that step of a
checkpoint. Each test runs the checkpointing command as a separate process with
a fault, then checks two things: right after the crash no file is half-written
(tasks.md and execution-log.md are either as before or as after the step; only
``torn-log`` leaves half an entry, on purpose); and the next command that
changes state completes the checkpoint exactly once: the task ticked, one log
entry, one commit carrying ``Loop-Checkpoint: <id>``, the journal gone, no
completed task lost. Crashes inside ``git commit`` and during a rollback are
injected with git hooks and a patched copy of loop running in a child process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.project import (
    ITEM,
    LOG,
    NEXT,
    NOW,
    STATE,
    TASKS,
    commits,
    commits_with,
    entries_for,
    git,
    journal,
    ok,
    process,
    project_copy,
    reset_records,
    run,
    snapshot,
    task_states,
)

from the_loop.tasks import TaskState

FAULTS = ("journal", "tick", "log", "torn-log", "phase", "commit", "reset")
STEPS = ("tick", "log", "phase", "commit", "reset")
# The fault fires inside a step, before the journal marks it done.
DONE_AT_CRASH = {
    "journal": (),
    "tick": (),
    "log": ("tick",),
    "torn-log": ("tick",),
    "phase": ("tick", "log"),
    "commit": ("tick", "log", "phase"),
    "reset": ("tick", "log", "phase", "commit"),
}
# What the files look like when the process dies.
LOG_AT_CRASH = {
    "journal": "before",
    "tick": "before",
    "log": "complete",
    "torn-log": "torn",
    "phase": "complete",
    "commit": "complete",
    "reset": "complete",
}
DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)
NEXT_2 = "implement task 3: the give-up log line in poller.py"
DONE_2 = ("task", "done", "7", "2", "--did", "wrote the retry ledger", "--next", NEXT_2)
SUMMARY_1 = "task 1 done: config key"
CROSSING_SUBJECT = "chore(issue-7): checkpoint phase implementation"

# crash injection: ~55 child processes killed mid-checkpoint, 20-35 s on two busy CPUs
pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    """issue-7 in implementation, task 1 open, a clean tree, no open reset."""
    return project_copy(tmp_path_factory, tmp_path / "p")


@pytest.fixture
def fresh_project(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> Path:
    """issue-7 with approved specs, not yet in implementation."""
    return project_copy(tmp_path_factory, tmp_path / "p", enter=False)


@dataclass(frozen=True)
class Crash:
    """A checkpoint killed mid-way: what was there before, and right after."""

    id: str
    before: dict[str, bytes]
    after: dict[str, bytes]
    commits_before: int


def crash(root: Path, fault: str, args: Sequence[str] = DONE_1) -> Crash:
    """Run ``loop args`` with ``LOOP_FAULT=fault``; it must die by SIGKILL."""
    before = snapshot(root)
    commits_before = len(commits(root))
    killed = process(root, *args, env={"LOOP_FAULT": fault, "LOOP_NOW": NOW})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    # no reset directive may be printed before the checkpoint is complete
    assert "reset:" not in killed.stdout
    state = journal(root)
    assert state is not None, "a killed checkpoint must leave its journal"
    return Crash(str(state["plan"]["id"]), before, snapshot(root), commits_before)  # type: ignore[index]


def ticked(tasks: bytes, task_id: str = "1") -> bytes:
    """``tasks`` with task ``task_id``'s checkbox ticked (one character changed)."""
    old = f"- [ ] {task_id}. ".encode()
    assert tasks.count(old) == 1
    return tasks.replace(old, f"- [x] {task_id}. ".encode())


def assert_consistent_after_crash(root: Path, fault: str, crashed: Crash) -> None:
    """No half-written file: each is as before the step, or as after it."""
    state = journal(root)
    assert state is not None
    assert tuple(state["done"]) == DONE_AT_CRASH[fault]  # type: ignore[arg-type]
    assert state["rolling_back"] is False

    # tasks.md: parses, and changed by exactly the tick or not at all
    tasks_before, tasks_now = crashed.before["tasks"], (root / TASKS).read_bytes()
    if fault == "journal":
        assert tasks_now == tasks_before
        assert task_states(root)["1"] is TaskState.OPEN
    else:
        assert tasks_now == ticked(tasks_before)
        assert task_states(root)["1"] is TaskState.DONE

    # execution-log.md: parses, and holds 0 or 1 whole copies of the entry
    log_before, log_now = crashed.before["log"], (root / LOG).read_bytes()
    found = entries_for(root, SUMMARY_1)
    kind = LOG_AT_CRASH[fault]
    if kind == "before":
        assert log_now == log_before
        assert found == []
    elif kind == "complete":
        assert log_now.startswith(log_before)
        assert len(found) == 1
        assert found[0].next == NEXT
        assert (
            found[0].fields["wip"] == f"committed with this entry (Loop-Checkpoint: {crashed.id})"
        )
    else:  # torn: half an append is on disk; the next command must repair it
        assert log_now.startswith(log_before) and len(log_now) > len(log_before)
        assert len(found) == 1
        assert "wip" not in found[0].fields  # visibly incomplete

    with_trailer = commits_with(root, f"Loop-Checkpoint: {crashed.id}")
    assert len(with_trailer) == (1 if fault in ("commit", "reset") else 0)


def assert_completed(root: Path, crashed: Crash) -> None:
    """The interrupted checkpoint of task 1 is finished, exactly once."""
    assert task_states(root)["1"] is TaskState.DONE
    found = entries_for(root, SUMMARY_1)
    assert len(found) == 1
    (entry,) = found
    assert entry.next == NEXT
    assert entry.fields["did"] == "wrote the config key"
    assert entry.context == (
        "compact (about to): task 1 done (contextManagement.taskBoundary: compact)"
    )
    assert entry.fields["wip"] == f"committed with this entry (Loop-Checkpoint: {crashed.id})"
    # the repaired log continues what the crash left (a torn tail is completed, not doubled)
    log_now = (root / LOG).read_bytes()
    assert log_now.startswith(crashed.after["log"])
    assert log_now.count(b"### ") == crashed.before["log"].count(b"### ") + len(
        entries_for(root, "task ")
    )
    tagged = commits_with(root, f"Loop-Checkpoint: {crashed.id}")
    assert len(tagged) == 1
    assert tagged[0].startswith("chore(issue-7): checkpoint task 1\n")
    assert "Loop-Task: 1" in tagged[0].splitlines()
    assert journal(root) is None
    assert list((root / STATE).glob("*.log.orig")) == []
    # its reset is recorded once: still open, or closed as skipped when a later checkpoint
    # without a session id came first (issue 21: resets by hand do not pile up)
    history = root / STATE / "resets" / "history.jsonl"
    closed = (
        [json.loads(line) for line in history.read_text().splitlines()] if history.exists() else []
    )
    records = [r for r in [*reset_records(root), *closed] if r["checkpoint"] == crashed.id]
    assert len(records) == 1
    assert records[0]["mode"] == "compact"


# ------------------------------------------------------------------ task done, killed


@pytest.mark.parametrize("fault", FAULTS)
def test_crash_then_status_doctor_and_repair(project: Path, fault: str) -> None:
    crashed = crash(project, fault)
    assert_consistent_after_crash(project, fault, crashed)

    # status shows the interrupted checkpoint and repairs nothing
    status = run(project, "status", "7")
    assert status.exit_code == 0, status.output
    assert f"{crashed.id} was interrupted" in status.stdout
    assert "loop doctor --repair" in status.stdout
    shown = run(project, "--json", "status", "7")
    assert json.loads(shown.stdout)["interruptedCheckpoint"] == crashed.id
    assert snapshot(project) == crashed.after
    assert journal(project) is not None

    # doctor without --repair only reports
    doctor = run(project, "doctor")
    assert doctor.exit_code == 1
    done = ", ".join(DONE_AT_CRASH[fault]) or "nothing"
    assert (
        f"checkpoint {crashed.id} of {ITEM} was interrupted after: {done} "
        "→ run `loop doctor --repair`"
    ) in doctor.stdout.splitlines()
    assert snapshot(project) == crashed.after

    # doctor --repair finishes it; the reset it prepares is left open, never replayed
    repair = run(project, "doctor", "--repair")
    redone = ", ".join(s for s in STEPS if s not in DONE_AT_CRASH[fault])
    lines = repair.stdout.splitlines()
    assert lines[0] == f"checkpoint {crashed.id} of {ITEM}: completed (steps redone: {redone})"
    assert any(
        line.startswith(f"open reset: compact for {ITEM} after checkpoint {crashed.id} (prepared")
        for line in lines
    )
    assert repair.exit_code == 1  # the open reset still needs attention
    assert_completed(project, crashed)
    assert len(commits(project)) == crashed.commits_before + 1

    ok(project, "reset", "abort", "7")
    healthy = run(project, "doctor")
    assert healthy.exit_code == 0
    assert healthy.stdout == "ok: nothing needs attention\n"


@pytest.mark.parametrize("fault", FAULTS)
def test_crash_then_next_task_done_finishes_it_first(project: Path, fault: str) -> None:
    """Task 2 depends on 1: it is accepted only because the recovery ticks 1 first."""
    crashed = crash(project, fault)
    assert_consistent_after_crash(project, fault, crashed)

    nxt = run(project, *DONE_2)
    assert nxt.exit_code == 0, nxt.output

    assert_completed(project, crashed)
    states = task_states(project)
    assert (states["1"], states["2"], states["3"]) == (
        TaskState.DONE,
        TaskState.DONE,
        TaskState.OPEN,
    )
    assert len(entries_for(project, "task 2 done")) == 1
    history = commits(project)
    assert len(history) == crashed.commits_before + 2
    # order kept: the recovered checkpoint's commit, then task 2's
    assert history[0].startswith("chore(issue-7): checkpoint task 2\n")
    assert f"Loop-Checkpoint: {crashed.id}" in history[1].splitlines()
    log = (project / LOG).read_text()
    assert log.index(f"— {SUMMARY_1}") < log.index("— task 2 done")


@pytest.mark.parametrize("fault", FAULTS)
def test_crash_then_execute_tasks_finishes_or_reports_it(project: Path, fault: str) -> None:
    crashed = crash(project, fault)
    assert_consistent_after_crash(project, fault, crashed)
    tasks_at_crash = (project / TASKS).read_bytes()

    step = run(project, "execute-tasks", "7")

    if journal(project) is None:
        assert step.exit_code == 0, step.output
        assert_completed(project, crashed)
    else:  # reporting instead of finishing is allowed, if nothing else moves
        assert step.exit_code == 1
        assert crashed.id in step.output
        assert (project / TASKS).read_bytes() == tasks_at_crash


def test_crash_then_task_start_finishes_or_reports_it(project: Path) -> None:
    crashed = crash(project, "log")

    started = run(project, "task", "start", "7", "3")

    if journal(project) is None:
        assert started.exit_code == 0, started.output
        assert_completed(project, crashed)
    else:
        assert started.exit_code == 1
        assert crashed.id in started.output
        assert task_states(project)["3"] is TaskState.OPEN


def test_resume_after_a_torn_crash_says_the_checkpoint_was_interrupted(project: Path) -> None:
    crashed = crash(project, "torn-log")

    brief = run(project, "resume", "7")

    assert brief.exit_code == 0, brief.output
    assert crashed.id in brief.stdout or "interrupted" in brief.stdout
    assert (project / LOG).read_bytes() == crashed.after["log"]  # resume only reads


@pytest.mark.parametrize("fault", ("torn-log", "commit"))
def test_crash_then_same_task_done_again_lands_once(project: Path, fault: str) -> None:
    """The agent retries the killed command: the recovery lands it, the retry is refused."""
    crashed = crash(project, fault)

    again = run(project, *DONE_1)

    assert again.exit_code == 1
    assert "task 1 is already done" in again.stderr
    assert_completed(project, crashed)
    assert len(commits(project)) == crashed.commits_before + 1


MID_TASK = (
    "checkpoint",
    "7",
    "--mid-task",
    "--percent",
    "80",
    "--did",
    "half the ledger",
    "--next",
    "finish the retry ledger: the give-up branch in ledger.py",
)


@pytest.mark.parametrize("fault", ("torn-log", "commit"))
def test_crash_in_a_mid_task_checkpoint_never_ticks_the_task(project: Path, fault: str) -> None:
    ok(project, "execute-tasks", "7")  # hands out task 1
    crashed = crash(project, fault, MID_TASK)
    assert (project / TASKS).read_bytes() == crashed.before["tasks"]

    repair = run(project, "doctor", "--repair")

    assert repair.stdout.splitlines()[0].startswith(f"checkpoint {crashed.id} of {ITEM}: completed")
    assert (project / TASKS).read_bytes() == crashed.before["tasks"]
    assert task_states(project)["1"] is TaskState.IN_PROGRESS
    (entry,) = entries_for(project, "interim checkpoint during task 1")
    assert entry.next == "finish the retry ledger: the give-up branch in ledger.py"
    tagged = commits_with(project, f"Loop-Checkpoint: {crashed.id}")
    assert len(tagged) == 1
    assert tagged[0].startswith("chore(issue-7): checkpoint interim, task 1\n")
    assert journal(project) is None


def test_interrupted_checkpoint_of_a_renumbered_task_is_reported(project: Path) -> None:
    crashed = crash(project, "journal")
    text = (project / TASKS).read_text()
    (project / TASKS).write_text(text.replace("- [ ] 1. config key", "- [ ] 9. config key"))

    repair = run(project, "doctor", "--repair")

    assert journal(project) is None or crashed.id in repair.output


# ------------------------------------------------------------------ the commit fails on recovery


HOOK_FAILS = "#!/bin/sh\necho lint failed\nexit 1\n"


def install_hook(root: Path, name: str, script: str) -> Path:
    hook = root / ".git" / "hooks" / name
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(script)
    hook.chmod(0o755)
    return hook


@pytest.mark.parametrize("fault", ("journal", "tick", "log", "torn-log", "phase"))
def test_interrupted_checkpoint_whose_commit_now_fails_is_rolled_back(
    project: Path, fault: str
) -> None:
    crashed = crash(project, fault)
    install_hook(project, "pre-commit", HOOK_FAILS)

    repair = run(project, "doctor", "--repair")

    assert repair.exit_code == 0, repair.output  # nothing left: no journal, no reset
    first = repair.stdout.splitlines()[0]
    assert first.startswith(f"checkpoint {crashed.id} of {ITEM}: rolled back (steps redone: ")
    assert ": its commit failed: git commit failed" in first
    after = snapshot(project)
    for key in ("tasks", "log", "index", "head", "resets"):
        assert after[key] == crashed.before[key], key
    assert journal(project) is None
    assert list((project / STATE).glob("*.log.orig")) == []

    # nothing half-done is left behind: the same command now simply works
    (project / ".git/hooks/pre-commit").unlink()
    assert run(project, *DONE_1).exit_code == 0
    assert len(entries_for(project, SUMMARY_1)) == 1
    assert len(commits(project)) == crashed.commits_before + 1


# ------------------------------------------------------------------ killed inside git commit


KILL_LOOP_HOOK = """\
#!/bin/sh
# git runs this hook; git's parent is the loop process: kill it, the way a crash would
loop_pid=$(ps -o ppid= -p "$PPID" | tr -d ' ')
if grep -q the_loop "/proc/$loop_pid/cmdline" 2>/dev/null; then
    kill -9 "$loop_pid"
fi
"""


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
@pytest.mark.parametrize("trailers", (True, False), ids=("trailers", "no-trailers"))
def test_killed_after_git_committed_is_not_committed_twice(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path, trailers: bool
) -> None:
    """Killed by a post-commit hook: the commit exists, the journal does not know its sha."""
    config = "" if trailers else "checkpoint:\n  trailers: false\n"
    root = project_copy(tmp_path_factory, tmp_path / "p", config=config)
    commits_before = len(commits(root))
    install_hook(root, "post-commit", KILL_LOOP_HOOK)

    killed = process(root, *DONE_1)

    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    state = journal(root)
    assert state is not None
    assert tuple(state["done"]) == ("tick", "log", "phase")  # type: ignore[arg-type]
    assert len(commits(root)) == commits_before + 1  # git finished its commit

    (root / ".git/hooks/post-commit").unlink()
    repair = run(root, "doctor", "--repair")

    assert repair.stdout.splitlines()[0].endswith("completed (steps redone: commit, reset)")
    history = commits(root)
    assert len(history) == commits_before + 1
    assert sum(m.startswith("chore(issue-7): checkpoint task 1\n") for m in history) == 1
    assert journal(root) is None
    (record,) = [r for r in reset_records(root) if r["checkpoint"] == state["plan"]["id"]]  # type: ignore[index]
    assert record["commit"] == git(root, "rev-parse", "HEAD").strip()


# ------------------------------------------------------------------ killed during a rollback


# Runs loop in a child process with one function wrapped so that the process
# SIGKILLs itself at a chosen point of the rollback (LOOP_FAULT has no such point).
ROLLBACK_DRIVER = """\
import os, signal, sys
from the_loop.checkpoint import transaction as checkpoint
from the_loop.io import atomic

where = os.environ["KILL_IN_ROLLBACK"]
save = checkpoint._save
def _save(root, journal):
    save(root, journal)
    if journal.rolling_back:
        if where == "journal":
            os.kill(os.getpid(), signal.SIGKILL)
        write = atomic.write_bytes
        def write_bytes(path, data, **kwargs):
            write(path, data, **kwargs)
            if path.name == "execution-log.md":  # the log has its old bytes back
                os.kill(os.getpid(), signal.SIGKILL)
        atomic.write_bytes = write_bytes
checkpoint._save = _save

sys.argv = ["loop", *sys.argv[1:]]
from the_loop.cli import main
main()
"""


@pytest.mark.parametrize("where", ("journal", "log-undone"))
def test_crash_during_rollback_is_rolled_back_not_replayed(project: Path, where: str) -> None:
    before = snapshot(project)
    commits_before = len(commits(project))
    install_hook(project, "pre-commit", HOOK_FAILS)

    killed = process_with_driver(project, where)

    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    state = journal(project)
    assert state is not None and state["rolling_back"] is True
    plan_id = state["plan"]["id"]  # type: ignore[index]
    # consistent: the task is ticked still, the entry whole or already removed
    assert (project / TASKS).read_bytes() == ticked(before["tasks"])
    if where == "log-undone":
        assert (project / LOG).read_bytes() == before["log"]
    else:
        assert len(entries_for(project, SUMMARY_1)) == 1

    # the hook would pass now; the rollback must still be finished, not turned into a commit
    (project / ".git/hooks/pre-commit").unlink()
    repair = run(project, "doctor", "--repair")

    assert repair.exit_code == 0, repair.output
    assert repair.stdout.splitlines()[0].startswith(f"checkpoint {plan_id} of {ITEM}: rolled back")
    after = snapshot(project)
    for key in ("tasks", "log", "index", "head", "resets"):
        assert after[key] == before[key], key
    assert len(commits(project)) == commits_before
    assert journal(project) is None


def process_with_driver(root: Path, where: str) -> subprocess.CompletedProcess[str]:
    """Run ``loop task done 7 1`` through ``ROLLBACK_DRIVER``."""
    return subprocess.run(
        [sys.executable, "-c", ROLLBACK_DRIVER, "-C", str(root), *DONE_1],
        cwd=root,
        env={**os.environ, "KILL_IN_ROLLBACK": where},
        capture_output=True,
        text=True,
        timeout=60,
    )


# ------------------------------------------------------------------ a phase crossing, killed


def assert_crossed_once(root: Path, crash_id: str) -> None:
    entered = entries_for(root, "entered implementation")
    assert len(entered) == 1
    assert entered[0].fields["wip"] == f"committed with this entry (Loop-Checkpoint: {crash_id})"
    text = (root / LOG).read_text()
    assert "\nphase: implementation" in text.split("---", 2)[1]
    assert text.count("| implementation | 2026-11-30 |") == 1
    assert sum(m.startswith(CROSSING_SUBJECT + "\n") for m in commits(root)) == 1
    assert len(commits_with(root, f"Loop-Checkpoint: {crash_id}")) == 1
    assert journal(root) is None
    assert list((root / STATE).glob("*.log.orig")) == []


@pytest.mark.parametrize("fault", FAULTS)
def test_crash_in_phase_crossing_then_doctor_repair(fresh_project: Path, fault: str) -> None:
    crashed = crash(fresh_project, fault, ("execute-tasks", "7"))
    assert (fresh_project / TASKS).read_bytes() == crashed.before["tasks"]
    assert len(entries_for(fresh_project, "entered implementation")) <= 1

    repair = run(fresh_project, "doctor", "--repair")

    assert repair.stdout.splitlines()[0].startswith(f"checkpoint {crashed.id} of {ITEM}: completed")
    assert_crossed_once(fresh_project, crashed.id)


@pytest.mark.parametrize("fault", FAULTS)
def test_crash_in_phase_crossing_then_execute_tasks_again(fresh_project: Path, fault: str) -> None:
    crashed = crash(fresh_project, fault, ("execute-tasks", "7"))

    again = run(fresh_project, "execute-tasks", "7")

    assert again.exit_code == 0, again.output
    assert_crossed_once(fresh_project, crashed.id)
