"""The checkpoint: the one operation every reset goes through.

In order: tick the task → append the log entry → mirror the phase → commit the
work in progress → prepare the reset record. Only then does the caller print
the reset directive.

Each step is recorded in a journal (``.the-loop/state/checkpoint.json``)
before and after it runs, and each is idempotent and checkable on disk, so a
checkpoint killed at any step is finished by the next command that changes
state (or by ``loop doctor``). When a step fails before the commit is made (a
pre-commit hook, a missing identity, a full disk, a read-only file),
everything is undone: the files it changed get their old bytes back from the
restore points taken before the first step (``the_loop.checkpoint.restore``),
and the result is checked; nothing is left half-done.
"""

from __future__ import annotations

import base64
import contextlib
import os
import secrets
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from the_loop.checkpoint import debris, resets
from the_loop.checkpoint import restore as restore_points
from the_loop.checkpoint.journal import STEPS, CommitSpec, Journal, Plan, journal_from_json
from the_loop.checkpoint.lock import project_lock
from the_loop.checkpoint.policy import Decision, Reset
from the_loop.config.state_folder import read_json, set_aside, state_dir, write_json
from the_loop.errors import DagError, GitError, LoopError, RefusedError, SpecError, StateError
from the_loop.git import repo as gitrepo
from the_loop.git.commit import commit_checkpoint
from the_loop.io import clock
from the_loop.log import execution_log as execlog
from the_loop.tasks import TaskState, set_state

__all__ = ["STEPS", "CommitSpec", "Journal", "Outcome", "Plan", "Recovery", "run"]

JOURNAL = "checkpoint.json"


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
        debris.sweep(root)  # temporary files of a command killed mid-write
        yield recover(root)


def run(root: Path, plan: PlanSource) -> Outcome | None:
    """Run a checkpoint under the project lock; returns its outcome or raises.

    ``plan`` may be a function: it is then called under the lock, after
    recovery, so the checkpoint is decided on fresh files (and two racing
    commands cannot both act on what they read before the lock). A function
    returning None means there is nothing to do any more; ``run`` returns None.
    """
    with locked(root):
        return run_locked(root, plan)


def run_locked(root: Path, plan: PlanSource) -> Outcome | None:
    """``run`` for a caller already inside ``locked(root)`` (one lock for a whole command)."""
    chosen = plan() if callable(plan) else plan
    if chosen is None:
        return None
    if chosen.commit is not None:
        _git_precheck(root)
    journal = Journal(chosen, head_before=gitrepo.head_sha(root) if chosen.commit else None)
    journal.restore = restore_points.take(root, chosen)
    try:
        _save(root, journal)
    except BaseException:
        restore_points.drop(journal.restore)
        raise
    _fault("journal")
    try:
        return _forward(root, journal)
    except Exception as exc:
        raise _failed(root, journal, exc) from exc


def _failed(root: Path, journal: Journal, exc: Exception) -> Exception:
    """Undo a checkpoint a step of which failed; the error to raise.

    Before the commit, every change is undone and the step's own error is
    raised. Once the commit exists nothing can be undone: the journal stays
    for the next command (or ``loop doctor --repair``) to finish.
    """
    plan = journal.plan
    if _committed(root, journal):
        what = exc.message if isinstance(exc, LoopError) else f"{type(exc).__name__}: {exc}"
        return StateError(
            f"checkpoint {plan.id} of {plan.item} is committed, but its last step failed: {what}",
            # the file the step could not use (a damaged reset record, say) stays named
            where=exc.where if isinstance(exc, LoopError) else None,
            hint="`loop doctor --repair` finishes it once the cause is fixed",
        )
    try:
        notes = _rollback(root, journal)
    except LoopError as undo:
        return StateError(
            f"checkpoint {plan.id} of {plan.item} failed ({_reason(exc)}), and undoing it "
            f"failed too: {undo.message}",
            where=undo.where,
            hint=undo.hint or "fix the cause, then `loop doctor --repair` finishes undoing it",
        )
    if isinstance(exc, LoopError):
        if notes:
            exc.details = (*exc.details, *notes)
        return exc
    return exc


def _reason(exc: Exception) -> str:
    return exc.message if isinstance(exc, LoopError) else f"{type(exc).__name__}: {exc}"


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


def _forward(root: Path, journal: Journal, *, recovering: bool = False) -> Outcome:
    plan = journal.plan
    warnings: list[str] = []
    if "tick" not in journal.done:
        _step_tick(plan)
        _mark(root, journal, "tick")
    if "log" not in journal.done:
        _step_log(root, journal, recovering=recovering)
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
    digest = str(journal.appended["digest"]) if journal.appended else ""
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
        tick_to = TaskState(plan.tick_to)
        set_state(Path(plan.tasks_path), plan.task_id, tick_to, as_read=plan.tick_at)
    _fault("tick")


def _step_log(root: Path, journal: Journal, *, recovering: bool) -> None:
    plan = journal.plan
    log = Path(plan.log_path)
    fresh = journal.appended is None
    if fresh:
        journal.appended = _appended_json(execlog.plan_append(log, plan.entry_text))
        _save(root, journal)
    planned = restore_points.appended_from(journal.appended or {})
    if recovering or not fresh:
        state = restore_points.log_state(log, planned, journal.restore.get("log"))
        if state == "present":
            _fault("log")
            return
        if state == "torn":  # exactly the old bytes plus the start of the entry
            os.truncate(log, planned.size_before)
        elif state == "moved":  # edited since: plan the entry again; never cut anything
            planned = execlog.plan_append(log, plan.entry_text)
            journal.appended = _appended_json(planned)
            _save(root, journal)
    if os.environ.get("LOOP_FAULT") == "torn-log":  # crash-test hook: half an append
        with log.open("ab") as handle:
            handle.write(planned.data[: len(planned.data) // 2])
        _fault("torn-log")
    execlog.apply_append(log, planned)
    _fault("log")


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
    # A command killed mid-write left temporary files: never commit them.
    debris.sweep(root, Path(plan.item_dir).parent)
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


def _committed(root: Path, journal: Journal) -> bool:
    """Whether the checkpoint's commit exists (the journal may not have recorded it yet)."""
    if "commit" in journal.done:
        return True
    commit = journal.plan.commit
    if commit is None:
        return False
    try:
        if gitrepo.find_checkpoint_commit(root, "Loop-Checkpoint", journal.plan.id) is not None:
            return True
        moved = journal.head_before != gitrepo.head_sha(root)
        return moved and _same_message_head(root, commit.message) is not None
    except GitError:
        return False


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
    digest = str(journal.appended["digest"]) if journal.appended else ""
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
    write_json(_journal_path(root), journal.to_json())


def _mark(root: Path, journal: Journal, step: str) -> None:
    journal.done.append(step)
    _save(root, journal)


def _clear(root: Path, journal: Journal) -> None:
    _journal_path(root).unlink(missing_ok=True)
    restore_points.drop(journal.restore)


def _load(root: Path) -> Journal | None:
    path = state_dir(root) / JOURNAL
    data = read_json(path)
    if data is None and not path.exists():
        return None
    return journal_from_json(data, path)  # a file holding `null` is damaged, not absent


def _appended_json(planned: execlog.Appended) -> dict[str, object]:
    return {
        "offset": planned.offset,
        "data": base64.b64encode(planned.data).decode("ascii"),
        "digest": planned.digest,
        "size_before": planned.size_before,
        "fast": planned.fast,
    }


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
        # Copies taken by a checkpoint killed before its journal was written.
        for stray in state_dir(root).glob("*.orig"):
            stray.unlink(missing_ok=True)
        return None
    plan = journal.plan
    remaining = tuple(s for s in STEPS if s not in journal.done)
    if journal.rolling_back:
        notes = _rollback(root, journal)
        return Recovery(plan.id, plan.item, "rolled back", remaining, "; ".join(notes))
    try:
        outcome = _forward(root, journal, recovering=True)
    except (DagError, SpecError) as exc:
        # The files moved on (a task renumbered, tasks.md rewritten): name the
        # stuck checkpoint and the way out, instead of wedging every command.
        raise StateError(
            f"checkpoint {plan.id} of {plan.item} was interrupted and cannot be finished: "
            f"{exc.message}",
            hint="`loop doctor --discard` undoes what it did (a file changed since is left "
            "as it is)",
        ) from exc
    except Exception as exc:
        if _committed(root, journal):
            raise _failed(root, journal, exc) from exc
        try:
            notes = _rollback(root, journal)
        except LoopError as undo:
            raise StateError(
                f"checkpoint {plan.id} of {plan.item} was interrupted; finishing it failed "
                f"({_reason(exc)}) and so did undoing it: {undo.message}",
                where=undo.where,
                hint=undo.hint or "fix the cause, then `loop doctor --repair`",
            ) from exc
        what = "its commit failed" if isinstance(exc, GitError) else "finishing it failed"
        detail = "; ".join([f"{what}: {_reason(exc)}", *notes])
        return Recovery(plan.id, plan.item, "rolled back", remaining, detail)
    return Recovery(plan.id, plan.item, "completed", remaining, outcome=outcome)


def _rollback(root: Path, journal: Journal, *, others: str = "keep") -> list[str]:
    """Undo every step of a checkpoint whose commit did not happen; notes for the user."""
    journal.rolling_back = True
    _save(root, journal)
    if journal.restore:
        notes = restore_points.undo(root, journal, others=others)
    else:
        notes = _legacy_rollback(journal)
    _clear(root, journal)
    return notes


def _legacy_rollback(journal: Journal) -> list[str]:
    """Undo a checkpoint journaled by an older loop (no restore points): line-local."""
    plan = journal.plan
    log = Path(plan.log_path)
    if journal.appended is not None and log.is_file():
        planned = restore_points.appended_from(journal.appended)
        state = restore_points.log_state(log, planned, None)
        if state in ("present", "torn"):
            execlog.remove_entry(log, planned)
    if plan.tasks_path and plan.task_id and plan.tick_from:
        with contextlib.suppress(DagError):
            set_state(Path(plan.tasks_path), plan.task_id, TaskState(plan.tick_from))
    return []


def _fault(step: str) -> None:
    """Crash-test hook: ``LOOP_FAULT=<step>`` kills the process right after ``step``.

    The recovery tests use it to prove that a checkpoint killed at any point is
    finished or undone by the next command; it is inert otherwise.
    """
    if os.environ.get("LOOP_FAULT") == step:
        os.kill(os.getpid(), signal.SIGKILL)


def discard(root: Path) -> tuple[Journal | None, list[str]]:
    """Drop an interrupted checkpoint: undo what it did unless it committed.

    A file changed since loop wrote it is left as it is (and named in the
    notes). A journal too damaged to read is set aside in the state folder.
    """
    path = state_dir(root) / JOURNAL
    try:
        journal = _load(root)
    except StateError:
        # What it did cannot be known; keep the journal and the file copies it took.
        kept = [set_aside(root, p) for p in (path, *sorted(state_dir(root).glob("*.orig")))]
        notes = [f"set aside: {p}" for p in kept if p is not None]
        if len(notes) > 1:
            notes.append(
                "the .orig files hold the work item's files as they were before that "
                "checkpoint: compare them with `git status` / `git diff`"
            )
        return None, notes
    if journal is None:
        return None, []
    if _committed(root, journal):
        _clear(root, journal)
        return journal, ["its commit was kept"]
    notes = _rollback(root, journal, others="leave")
    return journal, notes


def refuse_if_pending(root: Path) -> None:
    """For commands that cannot recover themselves: point at ``loop doctor``."""
    journal = _load(root)
    if journal is not None:
        raise RefusedError(
            f"checkpoint {journal.plan.id} of {journal.plan.item} was interrupted",
            hint="`loop doctor --repair` finishes it",
        )
