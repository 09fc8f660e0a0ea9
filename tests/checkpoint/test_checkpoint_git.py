"""The checkpoint's commit, through ``loop task done``, in every git situation.

Each test starts from a real project in implementation (see
``test_checkpoint_support.make_project``), puts the repository in one state
(no repository, no commits, detached HEAD, a merge or rebase stopped on a
conflict, a failing hook, no identity) and pins what the checkpoint does:
the exact WIP line, the exact commit message and trailers, what is staged, and,
when it refuses, that nothing at all changed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.project import (
    LOG,
    NEXT,
    STATE,
    TASKS,
    commits,
    entries_for,
    git,
    init_git,
    journal,
    project_copy,
    reset_records,
    run,
    snapshot,
    task_states,
)

from the_loop.git.repo import IDENTITY_HINT
from the_loop.tasks import TaskState

DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)
SUMMARY_1 = "task 1 done: config key"
CHECKPOINT_LINE = re.compile(r"^checkpoint (?P<id>\d{8}T\d{6}Z-[0-9a-f]{6}): (?P<rest>.*)$")


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    """issue-7 in implementation in a git repository with a clean tree."""
    return project_copy(tmp_path_factory, tmp_path / "p")


@pytest.fixture
def no_repo(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    """issue-7 in implementation in a folder that is not a git repository."""
    return project_copy(tmp_path_factory, tmp_path / "p", repo=False)


def checkpoint_id(stdout: str) -> tuple[str, str]:
    """The id and the rest of the ``checkpoint <id>: …`` line."""
    match = CHECKPOINT_LINE.match(stdout.splitlines()[0])
    assert match, stdout
    return match["id"], match["rest"]


def the_entry(root: Path) -> dict[str, str]:
    (entry,) = entries_for(root, SUMMARY_1)
    return dict(entry.fields)


def assert_nothing_changed(root: Path, before: dict[str, bytes]) -> None:
    """Byte for byte: tasks.md, the log, the index, HEAD, the reset records; no journal."""
    after = snapshot(root)
    for key in ("tasks", "log", "index", "head", "resets"):
        assert after[key] == before[key], f"{key} changed"
    assert journal(root) is None
    assert list((root / STATE).glob("*.log.orig")) == []


# ------------------------------------------------------------------ where no commit is made


def test_not_a_repository_notes_it_in_the_entry(no_repo: Path) -> None:
    done = run(no_repo, *DONE_1)

    assert done.exit_code == 0, done.output
    assert done.stderr == ""
    _, rest = checkpoint_id(done.stdout)
    assert rest == (
        "task 1 ticked, log entry written, phase implementation, "
        "not committed (see the entry's WIP line)"
    )
    assert the_entry(no_repo)["wip"] == "WIP noted: not a git repository"
    assert task_states(no_repo)["1"] is TaskState.DONE
    assert not (no_repo / ".git").exists()


def test_not_a_repository_in_json(no_repo: Path) -> None:
    done = run(no_repo, "--json", *DONE_1)

    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["checkpoint"]["commit"] is None
    assert data["checkpoint"]["commitStatus"] == "skipped"


def test_commit_false_notes_it_and_leaves_the_work_uncommitted(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "p", config="checkpoint:\n  commit: false\n")
    head = git(root, "rev-parse", "HEAD")

    done = run(root, *DONE_1)

    assert done.exit_code == 0, done.output
    assert the_entry(root)["wip"] == "WIP noted: not committed (checkpoint.commit is false)"
    assert task_states(root)["1"] is TaskState.DONE
    assert git(root, "rev-parse", "HEAD") == head
    assert sorted(git(root, "status", "--porcelain").splitlines()) == [
        " M docs/specs/issue-7/execution-log.md",
        " M docs/specs/issue-7/tasks.md",
    ]


# ------------------------------------------------------------------ where a commit is made


def test_repository_without_commits_gets_its_first_commit_from_the_checkpoint(
    no_repo: Path,
) -> None:
    init_git(no_repo, commit=False)

    done = run(no_repo, *DONE_1)

    assert done.exit_code == 0, done.output
    ck, _ = checkpoint_id(done.stdout)
    history = commits(no_repo)
    assert len(history) == 1
    assert history[0].startswith("chore(issue-7): checkpoint task 1\n")
    assert f"Loop-Checkpoint: {ck}" in history[0].splitlines()
    assert the_entry(no_repo)["wip"] == f"committed with this entry (Loop-Checkpoint: {ck})"
    tree = git(no_repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert {str(TASKS), str(LOG), ".the-loop/config.yaml"} <= set(tree)
    assert not any(name.startswith(".the-loop/state") for name in tree)
    assert git(no_repo, "status", "--porcelain") == ""


def test_detached_head_commits_and_warns(project: Path) -> None:
    main = git(project, "rev-parse", "main").strip()
    git(project, "checkout", "-q", "--detach")

    done = run(project, *DONE_1)

    assert done.exit_code == 0, done.output
    head = git(project, "rev-parse", "HEAD").strip()
    assert head != main
    assert git(project, "rev-parse", "main").strip() == main  # no branch moved
    assert (
        f"warning: HEAD is detached: checkpoint commit {head[:12]} is on no branch; "
        "keep it with `git switch -c <name>` before checking out anything else"
    ) in done.stdout.splitlines()
    assert git(project, "log", "-1", "--format=%s") == "chore(issue-7): checkpoint task 1\n"


def test_bisect_in_progress_commits_with_a_warning(project: Path) -> None:
    git(project, "bisect", "start")

    done = run(project, "--json", *DONE_1)

    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["checkpoint"]["commitStatus"] == "committed"
    assert data["warnings"] == [
        "a bisect is in progress: the checkpoint commit sits on the commit under test and is "
        "not part of the bisect; keep it on a branch before `git bisect reset`"
    ]


def test_commit_message_subject_summary_and_trailers(project: Path) -> None:
    git(project, "config", "user.name", "Repo Person")
    git(project, "config", "user.email", "repo@example.invalid")

    done = run(project, *DONE_1)

    assert done.exit_code == 0, done.output
    ck, rest = checkpoint_id(done.stdout)
    sha = git(project, "rev-parse", "HEAD").strip()
    assert rest == (f"task 1 ticked, log entry written, phase implementation, committed {sha[:10]}")
    assert git(project, "log", "-1", "--format=%B") == (
        "chore(issue-7): checkpoint task 1\n"
        "\n"
        "task 1 done: config key\n"
        "\n"
        "Loop-Item: issue-7\n"
        "Loop-Task: 1\n"
        "Loop-Phase: implementation\n"
        "Loop-Reset: compact\n"
        f"Loop-Checkpoint: {ck}\n"
        "\n"
    )
    # git itself reads them as trailers
    assert git(project, "log", "-1", "--format=%(trailers:only,unfold)").strip().splitlines() == [
        "Loop-Item: issue-7",
        "Loop-Task: 1",
        "Loop-Phase: implementation",
        "Loop-Reset: compact",
        f"Loop-Checkpoint: {ck}",
    ]
    # the user's identity, as git resolves it (repository config over global)
    assert git(project, "log", "-1", "--format=%an <%ae>|%cn <%ce>") == (
        "Repo Person <repo@example.invalid>|Repo Person <repo@example.invalid>\n"
    )
    # the reset record is bound to that commit and to the entry
    (record,) = [r for r in reset_records(project) if r["checkpoint"] == ck]
    assert record["commit"] == sha
    assert record["state"] == "dispatched"


def test_trailers_false_removes_them(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "p", config="checkpoint:\n  trailers: false\n")

    done = run(root, *DONE_1)

    assert done.exit_code == 0, done.output
    assert git(root, "log", "-1", "--format=%B") == (
        "chore(issue-7): checkpoint task 1\n\ntask 1 done: config key\n\n"
    )
    assert git(root, "log", "-1", "--format=%(trailers)") == "\n"


@pytest.mark.parametrize(
    ("stage", "committed", "left"),
    [
        ("all", {"README.md", "notes.txt"}, []),
        ("tracked", {"README.md"}, ["?? notes.txt"]),
        ("item", set(), [" M README.md", "?? notes.txt"]),
    ],
)
def test_stage_setting_decides_what_the_commit_holds(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    stage: str,
    committed: set[str],
    left: list[str],
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "p", config=f"checkpoint:\n  stage: {stage}\n")
    (root / "README.md").write_text("# sample project, edited by hand\n")
    (root / "notes.txt").write_text("unrelated\n")

    done = run(root, *DONE_1)

    assert done.exit_code == 0, done.output
    files = set(git(root, "show", "--name-only", "--format=", "HEAD").split())
    assert files == {str(TASKS), str(LOG), *committed}
    assert sorted(git(root, "status", "--porcelain").splitlines()) == left


def test_nothing_to_commit_is_not_recorded_as_committed(no_repo: Path) -> None:
    init_git(no_repo, commit=False)
    (no_repo / ".gitignore").write_text("docs/\n")
    git(no_repo, "add", "-A")
    git(no_repo, "commit", "-q", "-m", "everything but the specs")

    done = run(no_repo, "--json", *DONE_1)

    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["checkpoint"]["commitStatus"] == "skipped"
    assert data["checkpoint"]["commit"] is None
    assert commits(no_repo) == ["everything but the specs\n"]
    assert the_entry(no_repo)["wip"] == (
        "WIP noted: nothing to commit (execution-log.md is ignored by git)"
    )


# ------------------------------------------------------------------ refused: nothing changes


def _conflicting_branches(root: Path) -> None:
    git(root, "checkout", "-q", "-b", "other")
    (root / "README.md").write_text("other side\n")
    git(root, "commit", "-q", "-am", "other side")
    git(root, "checkout", "-q", "main")
    (root / "README.md").write_text("main side\n")
    git(root, "commit", "-q", "-am", "main side")


def _stop_merge(root: Path) -> None:
    _conflicting_branches(root)
    git(root, "merge", "other", check=False)
    assert (root / ".git/MERGE_HEAD").exists()


def _stop_rebase(root: Path) -> None:
    _conflicting_branches(root)
    git(root, "checkout", "-q", "other")
    git(root, "rebase", "main", check=False)
    assert (root / ".git/rebase-merge").is_dir()


def _stop_cherry_pick(root: Path) -> None:
    _conflicting_branches(root)
    git(root, "cherry-pick", "other", check=False)
    assert (root / ".git/CHERRY_PICK_HEAD").exists()


def _stop_revert(root: Path) -> None:
    (root / "README.md").write_text("first\n")
    git(root, "commit", "-q", "-am", "first")
    first = git(root, "rev-parse", "HEAD").strip()
    (root / "README.md").write_text("second\n")
    git(root, "commit", "-q", "-am", "second")
    git(root, "revert", "--no-edit", first, check=False)
    assert (root / ".git/REVERT_HEAD").exists()


_ABORT = {
    "merge": ("merge", "--abort"),
    "rebase": ("rebase", "--abort"),
    "cherry-pick": ("cherry-pick", "--abort"),
    "revert": ("revert", "--abort"),
}


@pytest.mark.parametrize(
    ("operation", "stop"),
    [
        ("merge", _stop_merge),
        ("rebase", _stop_rebase),
        ("cherry-pick", _stop_cherry_pick),
        ("revert", _stop_revert),
    ],
)
def test_operation_in_progress_is_refused_and_nothing_changes(
    project: Path, operation: str, stop: object
) -> None:
    stop(project)  # type: ignore[operator]
    before = snapshot(project)

    refused = run(project, *DONE_1)

    assert refused.exit_code == 1
    assert refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"error: a git {operation} is in progress; a checkpoint commit now would mix "
        "unrelated changes into it",
        f"hint: finish or abort the {operation} (git {operation} --continue / --abort), "
        "then run the command again",
    ]
    assert_nothing_changed(project, before)

    # once the operation is over, the same command goes through
    git(project, *_ABORT[operation])
    assert run(project, *DONE_1).exit_code == 0
    assert len(entries_for(project, SUMMARY_1)) == 1


def test_failing_pre_commit_hook_shows_its_output_and_undoes_everything(project: Path) -> None:
    (project / "staged.txt").write_text("staged by the user\n")
    git(project, "add", "staged.txt")
    (project / "README.md").write_text("edited, not staged\n")
    hook = project / ".git/hooks/pre-commit"
    hook.write_text("#!/bin/sh\necho lint failed\nexit 1\n")
    hook.chmod(0o755)
    before = snapshot(project)

    refused = run(project, *DONE_1)

    assert refused.exit_code == 1
    lines = refused.stderr.splitlines()
    assert lines[0] == (
        f"error: {project}: git commit failed, so nothing was committed and the index is as it "
        "was before the checkpoint (exit 1)"
    )
    assert "  lint failed" in lines
    assert lines[-1] == (
        "hint: a hook or commit signing refused the commit; fix what it reports and "
        "checkpoint again (loop never skips hooks)"
    )
    assert "reset:" not in refused.stdout  # no directive without a checkpoint
    assert_nothing_changed(project, before)
    assert git(project, "diff", "--cached", "--name-only") == "staged.txt\n"
    assert git(project, "diff", "--name-only") == "README.md\n"

    hook.unlink()
    assert run(project, *DONE_1).exit_code == 0
    assert len(entries_for(project, SUMMARY_1)) == 1


def test_missing_identity_is_a_clear_error_and_nothing_changes(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.delenv("EMAIL", raising=False)
    before = snapshot(project)

    refused = run(project, *DONE_1)

    assert refused.exit_code == 1
    lines = refused.stderr.splitlines()
    assert lines[0].endswith(": git does not know who you are, so it cannot record a commit author")
    assert lines[-1] == f"hint: {IDENTITY_HINT}"
    assert_nothing_changed(project, before)


# --------------------------------------------------------------------------- cost and bounds


def _git_wrapper(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A ``git`` first on PATH that logs each call and runs the real git."""
    import os
    import shutil

    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "wrapper-bin"
    bin_dir.mkdir()
    calls = tmp_path / "git-calls.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, calls


def test_task_done_starts_at_most_six_git_processes(project: Path, tmp_path: Path) -> None:
    """The checkpoint's git cost, counted by a wrapper on PATH (loop runs as its own process)."""
    from helpers.project import process

    (project / "src.txt").write_text("the work of task 1\n")
    env, calls = _git_wrapper(tmp_path)

    done = process(project, *DONE_1, env=env)

    assert done.returncode == 0, done.stderr
    lines = calls.read_text().splitlines()
    assert len(lines) <= 6, "\n".join(lines)
    assert sum("commit --quiet" in line for line in lines) == 1
    assert not any(line.startswith("log") for line in lines)  # no history scan on a fresh run
    assert "src.txt" in git(project, "show", "--name-only", "--format=", "HEAD")


def test_task_done_loads_neither_the_transcript_readers_nor_the_test_runner(
    project: Path,
) -> None:
    """What a plain task done imports: the telemetry readers and the task-test runner
    serve other paths (import costs, not time). Its templates render with Jinja."""
    from helpers.project import process

    (project / "src.txt").write_text("the work of task 1\n")

    done = process(project, *DONE_1, "--session", "s-1", env={"PYTHONPROFILEIMPORTTIME": "1"})

    assert done.returncode == 0, done.stderr
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "the_loop.checkpoint.transaction" in imported  # the profile did list the imports
    assert "jinja2" in imported  # the one renderer, whatever the templates hold
    unwanted = ("the_loop.telemetry", "the_loop.workflow.task_tests")
    assert not [name for name in imported if name.startswith(unwanted)]
    assert "the_loop.checkpoint.seen_sessions" not in imported  # --session given: no lookup


@pytest.mark.slow
def test_a_hanging_hook_is_stopped_and_the_checkpoint_rolled_back(project: Path) -> None:
    """checkpoint.hookTimeoutSeconds bounds git commit and its hooks; the lock is released."""
    import time

    from helpers.project import process

    config = project / ".the-loop/config.yaml"
    config.write_text(config.read_text() + "checkpoint:\n  hookTimeoutSeconds: 2\n")
    git(project, "commit", "-qam", "hook timeout for the test")
    pid_file = project.parent / "hook-child.pid"
    hook = project / ".git/hooks/pre-commit"
    # the hook starts a child that would outlive it, then hangs
    hook.write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {pid_file}\nsleep 60\n")
    hook.chmod(0o755)
    before = snapshot(project)

    refused = process(project, *DONE_1, timeout=30)

    assert refused.returncode == 1, refused.stderr
    assert "`git commit` did not finish within 2 s and was stopped" in refused.stderr
    assert_nothing_changed(project, before)
    hook.unlink()
    assert run(project, *DONE_1).exit_code == 0  # the lock was released
    child = Path("/proc") / pid_file.read_text().strip()
    for _ in range(50):  # the killed child is reaped by init shortly after
        try:
            if (child / "stat").read_text().split()[2] == "Z":
                break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the hook's child outlived the timeout")
