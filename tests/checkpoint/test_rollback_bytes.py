"""A checkpoint that fails is undone byte for byte, whatever changed the files meanwhile.

Issue 14, defects 1 and 5. A pre-commit hook may rewrite execution-log.md and
then fail; a log or tasks.md may be read-only, or the disk full. The undo must
put back the exact bytes each file had before the checkpoint (never cut the
log at an old size), keep whatever a hook wrote aside instead of throwing it
away, and leave no tick without its entry. ``loop doctor`` must work through
all of it without an internal error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.faults import fault_site, run_faulty
from helpers.project import (
    JOURNAL,
    LOG,
    NEXT,
    STATE,
    TASKS,
    commits,
    entries_for,
    journal,
    ok,
    process,
    project_copy,
    run,
    snapshot,
    task_states,
)

from the_loop.tasks import TaskState

DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)
SUMMARY_1 = "task 1 done: config key"


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def hook(root: Path, name: str, script: str) -> None:
    path = root / ".git" / "hooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script)
    path.chmod(0o755)


def assert_as_before(root: Path, before: dict[str, bytes]) -> None:
    after = snapshot(root)
    for key in ("tasks", "log", "index", "head", "resets"):
        assert after[key] == before[key], f"{key} changed"
    assert journal(root) is None
    assert list((root / STATE).glob("*.orig")) == []


# A formatter-style hook: it edits text that is already committed, earlier in the
# file than the new entry, then fails. Cutting the log at its old size would eat
# the end of the last committed entry.
EDITING_HOOK = f"""#!/bin/sh
sed -i 's/^# Execution Log: retries$/# Execution Log: retries (formatted)/' {LOG}
echo 'log reformatted; please commit again' >&2
exit 1
"""


def test_hook_that_edits_the_log_then_fails_loses_no_committed_text(project: Path) -> None:
    before = snapshot(project)
    hook(project, "pre-commit", EDITING_HOOK)

    failed = run(project, *DONE_1)

    assert failed.exit_code == 1, failed.output
    assert_as_before(project, before)
    kept = list((project / STATE / "kept").glob("*.execution-log.md"))
    assert len(kept) == 1, "the hook's version of the log is kept, not thrown away"
    assert b"retries (formatted)" in kept[0].read_bytes()
    assert "execution-log.md had been changed after loop wrote it" in failed.stderr
    assert task_states(project)["1"] is TaskState.OPEN
    doctor = run(project, "doctor")
    assert doctor.exit_code == 0  # a kept copy is information, not a problem
    assert f"kept: {kept[0]}, a version written during a checkpoint that was undone" in (
        doctor.stdout
    )


def test_hook_that_truncates_the_log_then_fails_is_restored(project: Path) -> None:
    before = snapshot(project)
    hook(project, "pre-commit", f"#!/bin/sh\n: > {LOG}\nexit 1\n")

    failed = run(project, *DONE_1)

    assert failed.exit_code == 1
    assert_as_before(project, before)


def test_hook_that_edits_tasks_md_then_fails_is_restored(project: Path) -> None:
    before = snapshot(project)
    hook(project, "pre-commit", f"#!/bin/sh\nprintf 'trailing\\n' >> {TASKS}\nexit 1\n")

    failed = run(project, *DONE_1)

    assert failed.exit_code == 1
    assert_as_before(project, before)
    (kept,) = (project / STATE / "kept").glob("*.tasks.md")
    assert kept.read_bytes().endswith(b"trailing\n")


def test_after_the_failed_hook_the_same_command_simply_works(project: Path) -> None:
    hook(project, "pre-commit", EDITING_HOOK)
    assert run(project, *DONE_1).exit_code == 1
    (project / ".git/hooks/pre-commit").unlink()
    commits_before = len(commits(project))

    ok(project, *DONE_1)

    assert len(entries_for(project, SUMMARY_1)) == 1
    assert len(commits(project)) == commits_before + 1


@pytest.mark.parametrize("name", ("log", "tasks"))
def test_a_read_only_file_refuses_the_checkpoint_and_changes_nothing(
    project: Path, name: str
) -> None:
    path = project / (LOG if name == "log" else TASKS)
    path.chmod(0o444)
    before = snapshot(project)

    refused = run(project, *DONE_1)

    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[0] == (
        f"error: {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}: "
        f"{path.name} is read-only; loop does not replace a file you made read-only"
    )
    assert "Traceback" not in refused.output
    assert_as_before(project, before)
    assert oct(path.stat().st_mode & 0o777) == "0o444"


def test_doctor_never_fails_internally_while_a_file_stays_unwritable(project: Path) -> None:
    """Killed after the tick; then the log becomes read-only: repair and discard are clear."""
    killed = process(project, *DONE_1, env={"LOOP_FAULT": "tick"})
    assert killed.returncode < 0
    (project / LOG).chmod(0o444)

    repair = run(project, "doctor", "--repair")

    assert repair.exit_code == 0, repair.output  # nothing is left to attend to
    assert "Traceback" not in repair.output and "internal error" not in repair.output
    first = repair.stdout.splitlines()[0]
    assert first.endswith(
        "rolled back (steps redone: tick, log, phase, commit, reset): finishing it failed: "
        "execution-log.md is read-only; loop does not replace a file you made read-only"
    ), first
    assert task_states(project)["1"] is TaskState.OPEN  # rolled back, not half-done
    assert journal(project) is None


def test_doctor_repair_that_cannot_undo_either_says_so_without_failing(project: Path) -> None:
    killed = process(project, *DONE_1, env={"LOOP_FAULT": "tick"})
    assert killed.returncode < 0
    (project / LOG).chmod(0o444)
    (project / TASKS).chmod(0o444)  # the tick cannot be undone now

    repair = run(project, "doctor", "--repair")

    assert repair.exit_code == 1, repair.output
    assert "internal error" not in repair.output
    assert repair.stdout.startswith("could not repair: ")
    assert "tasks.md is read-only" in repair.stdout
    assert journal(project) is not None  # still recorded: nothing is forgotten
    (project / TASKS).chmod(0o644)
    assert run(project, "doctor", "--repair").exit_code == 0
    assert task_states(project)["1"] is TaskState.OPEN


def test_doctor_discard_undoes_the_tick_of_an_uncommitted_checkpoint(project: Path) -> None:
    before = snapshot(project)
    killed = process(project, *DONE_1, env={"LOOP_FAULT": "log"})
    assert killed.returncode < 0
    assert task_states(project)["1"] is TaskState.DONE

    discarded = run(project, "doctor", "--discard")

    assert discarded.exit_code == 0, discarded.output
    assert discarded.stdout.splitlines()[0].endswith("discarded (steps it had done: tick)")
    assert_as_before(project, before)


def test_doctor_discard_leaves_a_file_changed_since_alone(project: Path) -> None:
    killed = process(project, *DONE_1, env={"LOOP_FAULT": "log"})
    assert killed.returncode < 0
    edited = (project / LOG).read_bytes() + b"\nhand-written note\n"
    (project / LOG).write_bytes(edited)

    discarded = run(project, "doctor", "--discard")

    assert discarded.exit_code == 0, discarded.output
    assert "execution-log.md was changed after loop wrote it; left as it is" in discarded.stdout
    assert (project / LOG).read_bytes() == edited
    assert task_states(project)["1"] is TaskState.OPEN  # tasks.md was loop's alone: undone


def test_doctor_discard_keeps_what_was_committed(project: Path) -> None:
    killed = process(project, *DONE_1, env={"LOOP_FAULT": "commit"})
    assert killed.returncode < 0
    commits_before = len(commits(project))

    discarded = run(project, "doctor", "--discard")

    assert discarded.exit_code == 0, discarded.output
    assert "its commit was kept" in discarded.stdout
    assert len(commits(project)) == commits_before
    assert task_states(project)["1"] is TaskState.DONE
    assert len(entries_for(project, SUMMARY_1)) == 1
    assert journal(project) is None


def test_a_human_edit_after_a_crash_is_never_cut(project: Path) -> None:
    """Killed mid-append; a person then edits the log above the entry: the recovery
    re-plans the entry instead of truncating at the old size."""
    killed = process(project, *DONE_1, env={"LOOP_FAULT": "torn-log"})
    assert killed.returncode < 0
    text = (project / LOG).read_bytes()
    edited = text.replace(b"# Execution Log: retries", b"# Execution Log: retries, edited by hand")
    (project / LOG).write_bytes(edited)

    repair = run(project, "doctor", "--repair")

    assert repair.stdout.splitlines()[0].startswith("checkpoint ")
    now = (project / LOG).read_bytes()
    assert now.startswith(edited[: edited.index(b"### 2026-11-30T12:00Z")])
    assert b"edited by hand" in now
    assert len(entries_for(project, SUMMARY_1)) >= 1
    assert journal(project) is None


def test_restore_points_are_removed_after_a_good_checkpoint(project: Path) -> None:
    ok(project, *DONE_1)

    assert list((project / STATE).glob("*.orig")) == []
    assert not (project / STATE / "kept").exists()


def test_a_stray_restore_copy_without_a_journal_is_cleaned_by_the_next_command(
    project: Path,
) -> None:
    stray = project / STATE / "20260101T000000Z-abcdef.log.orig"
    stray.write_bytes(b"old")
    assert "stray file from an old checkpoint" in run(project, "doctor").stdout

    ok(project, "task", "start", "7", "3")

    assert not stray.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_an_unwritable_item_folder_is_a_clear_error(project: Path) -> None:
    folder = (project / TASKS).parent
    before = snapshot(project)
    folder.chmod(0o555)
    try:
        refused = run(project, *DONE_1)
    finally:
        folder.chmod(0o755)

    assert refused.exit_code == 1
    assert "permission denied" in refused.stderr
    assert_as_before(project, before)


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("EFBIG", "the file would exceed the file-size limit"),
        ("ENOSPC", "no space left on the device"),
        ("short", "no space left on the device"),  # a full disk takes half the append
    ],
)
def test_a_failed_append_undoes_the_tick_and_says_why(
    project: Path, tmp_path: Path, fault: str, reason: str
) -> None:
    before = snapshot(project)

    ran = run_faulty(
        project,
        *DONE_1,
        site=fault_site(tmp_path / "site"),
        match=r"/issue-7/execution-log\.md$",
        fault=fault,
        ops="open" if fault != "short" else "write",
    )

    assert ran.fired
    assert ran.returncode == 1, ran.output
    assert ran.stderr.splitlines()[0].endswith(
        f"execution-log.md: cannot write execution-log.md: {reason}; it was not changed"
    )
    assert_as_before(project, before)
    assert task_states(project)["1"] is TaskState.OPEN
    assert run(project, "doctor").exit_code == 0


def test_a_journal_from_an_older_loop_is_still_undone(project: Path) -> None:
    """Journals written before restore points existed have no copies: undone line-locally."""
    before = snapshot(project)
    killed = process(project, *DONE_1, env={"LOOP_FAULT": "log"})
    assert killed.returncode < 0
    state = json.loads((project / JOURNAL).read_text())
    for point in state.pop("restore").values():
        Path(point["backup"]).unlink()
    (project / JOURNAL).write_text(json.dumps(state))
    hook(project, "pre-commit", "#!/bin/sh\nexit 1\n")

    repair = run(project, "doctor", "--repair")

    assert repair.exit_code == 0, repair.output
    assert "rolled back" in repair.stdout
    assert_as_before(project, before)


def test_discard_works_even_when_the_restore_copies_are_gone(project: Path) -> None:
    killed = process(project, *DONE_1, env={"LOOP_FAULT": "log"})
    assert killed.returncode < 0
    for copy in (project / STATE).glob("*.orig"):
        copy.unlink()
    hook(project, "pre-commit", "#!/bin/sh\nexit 1\n")

    stuck = run(project, "task", "start", "7", "3")
    assert stuck.exit_code == 1
    assert "is missing or damaged" in stuck.stderr
    assert "loop doctor --discard" in stuck.stderr

    discarded = run(project, "doctor", "--discard")

    assert discarded.exit_code == 0, discarded.output
    assert "its copy from before the checkpoint is gone; left as it is" in discarded.stdout
    assert journal(project) is None
    assert run(project, "task", "start", "7", "3").exit_code == 0
