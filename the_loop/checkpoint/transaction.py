"""The checkpoint: the one operation every reset goes through.

In order: tick the task → append the log entry → mirror the phase → commit the
work in progress → prepare the reset record. Only then does the caller print
the reset directive.

Each step is recorded in a journal (``.the-loop/state/checkpoint.json``)
before and after it runs, and each is idempotent and checkable on disk, so a
checkpoint killed at any step is finished by the next command that changes
state (or by ``loop doctor``). When the commit itself fails (a pre-commit hook,
a missing identity), everything is undone: the tick, the entry and the phase
mirror; nothing is left half-done.
"""

from __future__ import annotations

import base64
import contextlib
import os
import secrets
import shutil
import signal
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from the_loop.checkpoint import resets
from the_loop.checkpoint.lock import project_lock
from the_loop.checkpoint.policy import Decision, Reset
from the_loop.checkpoint.state_dir import read_json, state_dir, write_json
from the_loop.errors import DagError, GitError, RefusedError, SpecError, StateError
from the_loop.git import repo as gitrepo
from the_loop.git.commit import DEFAULT_MAX_FILE_BYTES, commit_checkpoint
from the_loop.git.runner import DEFAULT_TIMEOUT
from the_loop.io import atomic, clock
from the_loop.log import execution_log as execlog
from the_loop.spec.front_matter import parse_front_matter
from the_loop.tasks import TaskState, read_tasks, set_state

JOURNAL = "checkpoint.json"
STEPS = ("tick", "log", "phase", "commit", "reset")


@dataclass(frozen=True)
class CommitSpec:
    """The commit that ends the checkpoint."""

    message: str
    stage: str  # all | tracked | paths
    paths: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT  # seconds for git commit and the user's hooks
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES


@dataclass(frozen=True)
class Plan:
    """Everything a checkpoint will do, decided before anything is written."""

    id: str
    item: str
    item_dir: str
    log_path: str
    entry_text: str
    summary: str
    reset: str
    reset_reason: str
    tasks_path: str | None = None
    task_id: str | None = None
    tick_from: str | None = None  # the checkbox state before the tick
    tick_to: str | None = None
    phase: str | None = None
    log_status: str | None = None
    transition: tuple[str, str, str] | None = None
    commit: CommitSpec | None = None
    session: str | None = None
    wip: str = ""
    # Open resets this checkpoint settles, as resets.Supersession fields (the
    # journal is JSON): closed in the reset step, before the new one is prepared.
    supersedes: tuple[tuple[str, str, str, str, str], ...] = ()


@dataclass
class Journal:
    """A plan in progress: which steps are done and how to check or undo them."""

    plan: Plan
    done: list[str] = field(default_factory=list)
    appended: dict[str, Any] | None = None
    log_backup: str | None = None
    head_before: str | None = None
    commit_sha: str | None = None
    committed_files: list[str] = field(default_factory=list)
    rolling_back: bool = False


@dataclass(frozen=True)
class Outcome:
    """What a finished checkpoint produced (for the directive and ``--json``)."""

    id: str
    item: str
    reset: Decision
    commit: str | None
    commit_status: str
    entry_digest: str
    entry_text: str
    task: str | None
    phase: str | None
    warnings: tuple[str, ...] = ()
    record: resets.ResetRecord | None = None
    ticked: bool = False
    committed_files: tuple[str, ...] = ()  # repository-relative paths in the commit
    settled: tuple[resets.Supersession, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "reset": self.reset.reset.value,
            "reason": self.reset.reason,
            "checkpoint": {
                "id": self.id,
                "commit": self.commit,
                "commitStatus": self.commit_status,
                "entry": self.entry_digest,
                "committedFiles": list(self.committed_files),
            },
            "item": self.item,
            "task": self.task,
            "phase": self.phase,
            "warnings": list(self.warnings),
            "settledResets": [
                {"checkpoint": s.checkpoint, "mode": s.mode, "state": s.state, "why": s.why}
                for s in self.settled
            ],
        }


def new_id() -> str:
    """A checkpoint id: sortable by time, unique by a random suffix."""
    stamp = clock.utc_now().strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


def wip_text(
    root: Path, commit_enabled: bool, checkpoint_id: str, log: Path | None = None
) -> tuple[str, bool]:
    """The log entry's WIP line, and whether a commit will be made."""
    if not commit_enabled:
        return "WIP noted: not committed (checkpoint.commit is false)", False
    if gitrepo.find_repo_root(root) is None:
        return "WIP noted: not a git repository", False
    if log is not None and gitrepo.is_ignored(root, log):
        # The entry cannot be in the commit; commit the rest only if there is a rest.
        if gitrepo.repo_status(root).dirty:
            return (
                f"committed with this entry (Loop-Checkpoint: {checkpoint_id}); "
                f"{log.name} itself is ignored by git",
                True,
            )
        return f"WIP noted: nothing to commit ({log.name} is ignored by git)", False
    return f"committed with this entry (Loop-Checkpoint: {checkpoint_id})", True


# ---------------------------------------------------------------- running


PlanSource = Plan | Callable[[], Plan | None]


@contextlib.contextmanager
def locked(root: Path) -> Iterator[Recovery | None]:
    """Hold the project lock, after finishing any interrupted checkpoint.

    Every command that changes state runs inside this, so an interruption is
    repaired by whatever command comes next.
    """
    with project_lock(root):
        yield recover(root)


def run(root: Path, plan: PlanSource) -> Outcome | None:
    """Run a checkpoint under the project lock; returns its outcome or raises.

    ``plan`` may be a function: it is then called under the lock, after
    recovery, so the checkpoint is decided on fresh files (and two racing
    commands cannot both act on what they read before the lock). A function
    returning None means there is nothing to do any more; ``run`` returns None.
    """
    with locked(root):
        chosen = plan() if callable(plan) else plan
        if chosen is None:
            return None
        if chosen.commit is not None:
            _git_precheck(root)
        journal = Journal(chosen, head_before=gitrepo.head_sha(root) if chosen.commit else None)
        _save(root, journal)
        _fault("journal")
        try:
            return _forward(root, journal)
        except GitError:
            _rollback(root, journal)
            raise


def _git_precheck(root: Path) -> None:
    operation = gitrepo.operation(root)  # marker files: no git process
    if operation and operation != "bisect":  # a bisect only gets a warning
        raise GitError(
            f"a git {operation} is in progress; a checkpoint commit now would mix "
            "unrelated changes into it",
            hint=f"finish or abort the {operation} (git {operation} --continue / "
            "--abort), then run the command again",
        )
    # identity is checked by the commit step itself, before it stages anything;
    # a refusal there rolls the tick and the entry back like any failed commit


def _forward(root: Path, journal: Journal) -> Outcome:
    plan = journal.plan
    warnings: list[str] = []
    if "tick" not in journal.done:
        _step_tick(plan)
        _mark(root, journal, "tick")
    if "log" not in journal.done:
        _step_log(root, journal)
        _mark(root, journal, "log")
    if "phase" not in journal.done:
        _step_phase(root, journal)
        _mark(root, journal, "phase")
    commit_status = "skipped"
    if "commit" not in journal.done:
        commit_status, warnings = _step_commit(root, journal)
        _mark(root, journal, "commit")
    record = None
    if "reset" not in journal.done:
        record = _step_reset(root, journal)
        _mark(root, journal, "reset")
    _clear(root, journal)
    digest = journal.appended["digest"] if journal.appended else ""
    return Outcome(
        id=plan.id,
        item=plan.item,
        reset=Decision(Reset(plan.reset), plan.reset_reason),
        commit=journal.commit_sha,
        commit_status=commit_status,
        entry_digest=digest,
        entry_text=plan.entry_text,
        task=plan.task_id,
        phase=plan.phase,
        warnings=tuple(warnings),
        record=record,
        ticked=plan.tick_to is not None,
        committed_files=tuple(journal.committed_files),
        settled=tuple(resets.Supersession(*row) for row in plan.supersedes),
    )


def _step_tick(plan: Plan) -> None:
    if plan.tasks_path and plan.task_id and plan.tick_to:
        set_state(Path(plan.tasks_path), plan.task_id, TaskState(plan.tick_to))
    _fault("tick")


def _step_log(root: Path, journal: Journal) -> None:
    plan = journal.plan
    log = Path(plan.log_path)
    if journal.appended is None:
        if plan.phase is not None and _phase_changes_log(plan):
            journal.log_backup = _backup(root, plan.id, log)
        planned = execlog.plan_append(log, plan.entry_text)
        journal.appended = _appended_json(planned)
        _save(root, journal)
    planned = _appended_from(journal.appended)
    state = execlog.entry_state(log, planned)
    if state == "torn":
        os.truncate(log, planned.size_before)
        state = "absent"
    if state == "absent":
        if os.environ.get("LOOP_FAULT") == "torn-log":  # crash-test hook: half an append
            with log.open("ab") as handle:
                handle.write(planned.data[: len(planned.data) // 2])
            _fault("torn-log")
        execlog.apply_append(log, planned)
    _fault("log")


def _phase_changes_log(plan: Plan) -> bool:

    head = Path(plan.log_path).read_bytes()[:65536].decode("utf-8", errors="replace")
    front = parse_front_matter(head, Path(plan.log_path))
    return (
        front.get("phase") != plan.phase
        or plan.transition is not None
        or (plan.log_status is not None and front.get("status") != plan.log_status)
    )


def _step_phase(root: Path, journal: Journal) -> None:
    plan = journal.plan
    if plan.phase is not None:
        execlog.sync_phase(
            Path(plan.log_path), plan.phase, status=plan.log_status, transition=plan.transition
        )
    _fault("phase")


def _step_commit(root: Path, journal: Journal) -> tuple[str, list[str]]:
    plan = journal.plan
    if plan.commit is None:
        return "skipped", []
    if journal.head_before != gitrepo.head_sha(root):
        # HEAD moved since the plan was saved: this is a recovery, and the
        # interrupted run may have committed already (the fresh path never looks)
        existing = gitrepo.find_checkpoint_commit(root, "Loop-Checkpoint", plan.id)
        existing = existing or _same_message_head(root, plan.commit.message)
        if existing is not None:
            journal.commit_sha = existing
            return "committed", []
    outcome = commit_checkpoint(
        root,
        message=plan.commit.message,
        stage=plan.commit.stage,
        paths=[Path(p) for p in plan.commit.paths],
        timeout=plan.commit.timeout,
        max_file_bytes=plan.commit.max_file_bytes,
    )
    journal.commit_sha = outcome.sha
    journal.committed_files = list(outcome.files)
    _fault("commit")
    return outcome.status, list(outcome.warnings)


def _same_message_head(root: Path, message: str) -> str | None:
    head = gitrepo.head_sha(root)
    if head is None:
        return None
    return head if gitrepo.commit_message(root, head).strip() == message.strip() else None


def _step_reset(root: Path, journal: Journal) -> resets.ResetRecord | None:
    plan = journal.plan
    for row in plan.supersedes:
        resets.settle(root, resets.Supersession(*row))
    # Whatever else this session still owes (another item's reset) did not happen.
    resets.skip_superseded(root, plan.session, plan.id)
    if plan.reset == Reset.NONE.value:
        return None
    digest = journal.appended["digest"] if journal.appended else ""
    record = resets.prepare(
        root,
        item=plan.item,
        mode=plan.reset,
        reason=plan.reset_reason,
        checkpoint=plan.id,
        commit=journal.commit_sha,
        entry_digest=digest,
        session=plan.session,
    )
    _fault("reset")
    return record


# ---------------------------------------------------------------- journal


def _journal_path(root: Path) -> Path:
    return state_dir(root, create=True) / JOURNAL


def _save(root: Path, journal: Journal) -> None:
    data = asdict(journal)
    write_json(_journal_path(root), data)


def _mark(root: Path, journal: Journal, step: str) -> None:
    journal.done.append(step)
    _save(root, journal)


def _clear(root: Path, journal: Journal) -> None:
    _journal_path(root).unlink(missing_ok=True)
    if journal.log_backup:
        Path(journal.log_backup).unlink(missing_ok=True)


def _load(root: Path) -> Journal | None:
    data = read_json(state_dir(root) / JOURNAL)
    if data is None:
        return None
    try:
        plan_data = dict(data["plan"])
        commit = plan_data.get("commit")
        plan_data["commit"] = (
            CommitSpec(
                commit["message"],
                commit["stage"],
                tuple(commit["paths"]),
                float(commit.get("timeout", DEFAULT_TIMEOUT)),
                int(commit.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)),
            )
            if commit
            else None
        )
        if plan_data.get("transition"):
            plan_data["transition"] = tuple(plan_data["transition"])
        plan_data["supersedes"] = tuple(tuple(row) for row in plan_data.get("supersedes", ()))
        plan = Plan(**plan_data)
        rest = {k: v for k, v in data.items() if k != "plan"}
        return Journal(plan, **rest)
    except (KeyError, TypeError) as exc:
        raise StateError(
            f"the checkpoint journal is damaged: {exc}",
            hint="`loop doctor` shows it",
        ) from exc


def _appended_json(planned: execlog.Appended) -> dict[str, Any]:
    data = asdict(planned)
    data["data"] = base64.b64encode(planned.data).decode("ascii")
    return data


def _appended_from(data: dict[str, Any]) -> execlog.Appended:
    return execlog.Appended(
        offset=data["offset"],
        data=base64.b64decode(data["data"]),
        digest=data["digest"],
        size_before=data["size_before"],
        fast=data["fast"],
    )


def _backup(root: Path, checkpoint_id: str, log: Path) -> str:
    target = state_dir(root, create=True) / f"{checkpoint_id}.log.orig"
    shutil.copyfile(log, target)
    return str(target)


def pending(root: Path) -> Journal | None:
    """The interrupted checkpoint, if any (read without the lock; for reports)."""
    return _load(root)


# ---------------------------------------------------------------- recovery


@dataclass(frozen=True)
class Recovery:
    """What ``recover`` found and did."""

    checkpoint: str
    item: str
    action: str  # completed | rolled back
    steps: tuple[str, ...]
    detail: str = ""
    outcome: Outcome | None = None


# What recovery did during this process, for the CLI to report once the command ends.
_RECOVERED: list[Recovery] = []


def recovered_here() -> list[Recovery]:
    """Recoveries performed by this process so far (and forget them)."""
    done = list(_RECOVERED)
    _RECOVERED.clear()
    return done


def recover(root: Path) -> Recovery | None:
    """Finish (or, if it was being undone, undo) an interrupted checkpoint.

    Must be called with the project lock held.
    """
    found = _recover(root)
    if found is not None:
        _RECOVERED.append(found)
    return found


def _recover(root: Path) -> Recovery | None:
    journal = _load(root)
    if journal is None:
        return None
    plan = journal.plan
    remaining = tuple(s for s in STEPS if s not in journal.done)
    if journal.rolling_back:
        _rollback(root, journal)
        return Recovery(plan.id, plan.item, "rolled back", remaining)
    try:
        outcome = _forward(root, journal)
    except GitError as exc:
        _rollback(root, journal)
        detail = f"its commit failed: {exc.message}"
        return Recovery(plan.id, plan.item, "rolled back", remaining, detail)
    except (DagError, SpecError) as exc:
        # The files moved on (a task renumbered, tasks.md rewritten): name the
        # stuck checkpoint and the way out, instead of wedging every command.
        raise StateError(
            f"checkpoint {plan.id} of {plan.item} was interrupted and cannot be finished: "
            f"{exc.message}",
            hint="`loop doctor --discard` drops it (the steps it already did stay)",
        ) from exc
    return Recovery(plan.id, plan.item, "completed", remaining, outcome=outcome)


def _rollback(root: Path, journal: Journal) -> None:
    """Undo every step of a checkpoint whose commit did not happen."""
    journal.rolling_back = True
    _save(root, journal)
    plan = journal.plan
    log = Path(plan.log_path)
    if journal.log_backup and Path(journal.log_backup).is_file():
        atomic.write_bytes(log, Path(journal.log_backup).read_bytes())
    elif journal.appended is not None:
        planned = _appended_from(journal.appended)
        if execlog.entry_state(log, planned) != "absent":
            execlog.remove_entry(log, planned)
    if plan.tasks_path and plan.task_id and plan.tick_from:
        tasks_path = Path(plan.tasks_path)
        if any(t.id == plan.task_id for t in read_tasks(tasks_path).tasks):
            set_state(tasks_path, plan.task_id, TaskState(plan.tick_from))
    _clear(root, journal)


def _fault(step: str) -> None:
    """Crash-test hook: ``LOOP_FAULT=<step>`` kills the process right after ``step``.

    The recovery tests use it to prove that a checkpoint killed at any point is
    finished or undone by the next command; it is inert otherwise.
    """
    if os.environ.get("LOOP_FAULT") == step:
        os.kill(os.getpid(), signal.SIGKILL)


def discard(root: Path) -> Journal | None:
    """Drop an interrupted checkpoint's journal (what it already did stays)."""
    journal = _load(root)
    if journal is not None:
        _clear(root, journal)
    return journal


def refuse_if_pending(root: Path) -> None:
    """For commands that cannot recover themselves: point at ``loop doctor``."""
    journal = _load(root)
    if journal is not None:
        raise RefusedError(
            f"checkpoint {journal.plan.id} of {journal.plan.item} was interrupted",
            hint="`loop doctor --repair` finishes it",
        )
