"""``loop task``, ``loop checkpoint``, ``loop pressure``, ``loop reset``, ``loop doctor``,
``loop log`` and ``loop resume`` through the CLI, on a real project in a real repo.

Exit code first, then the message; user-facing lines are pinned exactly. A
refused command must leave every file as it was.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from helpers.project import (
    ITEM,
    ITEM_DIR,
    LOG,
    NEXT,
    NOW,
    RESETS,
    TASKS,
    Spec,
    commits,
    entries_for,
    git,
    journal,
    ok,
    project_copy,
    reset_records,
    run,
    snapshot,
    task_states,
)

from the_loop.io.templating import render
from the_loop.log.execution_log import read_log
from the_loop.tasks import TaskState

DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)

# Test commands that tell the runner's behaviour apart.
VERIFY_TASKS = (
    Spec("1", "passes", test="true"),
    Spec("2", "needs one", ("1",), test="true"),
    Spec("3", "fails without a shell", test="false || true"),  # a shell would pass it
    Spec("4", "missing program", test="no-such-command-xyz --flag"),
    Spec("5", "no test", test=None),
    Spec("6", "too slow", test="sleep 5"),
    Spec("7", "runs in the project root", test="test -f docs/specs/issue-7/tasks.md"),
)
VERIFY_CONFIG = "checkpoint:\n  testTimeoutSeconds: 1\n"


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    """issue-7 in implementation: 1 and 3 ready, 2 depends on 1; a clean tree."""
    return project_copy(tmp_path_factory, tmp_path / "p")


@pytest.fixture
def verify_project(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p", tasks=VERIFY_TASKS, config=VERIFY_CONFIG)


def configured(
    tmp_path: Path, factory: pytest.TempPathFactory, config: str, **kwargs: object
) -> Path:
    return project_copy(factory, tmp_path / "p", config=config, **kwargs)


def done(task: str, *extra: str, did: str = "did the work", nxt: str = NEXT) -> tuple[str, ...]:
    return ("task", "done", "7", task, "--did", did, "--next", nxt, *extra)


def assert_unchanged(root: Path, before: dict[str, bytes]) -> None:
    after = snapshot(root)
    for key in ("tasks", "log", "index", "head", "resets"):
        assert after[key] == before[key], f"{key} changed"
    assert journal(root) is None


def first_error(stderr: str) -> str:
    """The first stderr line without ``error: `` and the ``path:line: `` prefix."""
    line = stderr.splitlines()[0]
    assert line.startswith("error: "), stderr
    return line.removeprefix("error: ")


def last_resolved(root: Path) -> dict[str, object]:
    """The last line of the resolved-resets history."""
    lines = (root / RESETS / "history.jsonl").read_text().splitlines()
    return dict(json.loads(lines[-1]))


def whole_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root``, .git and loop's state included."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# ------------------------------------------------------------------ loop task start


def test_start_refuses_while_a_dependency_is_open_and_names_it(project: Path) -> None:
    before = snapshot(project)
    depends_line = (project / TASKS).read_text().splitlines().index("  - _Depends on:_ 1") + 1

    refused = run(project, "task", "start", "7", "2")

    assert refused.exit_code == 1
    assert first_error(refused.stderr).endswith(
        f"{TASKS.name}:{depends_line}: task 2 depends on 1, not done yet"
    )
    assert refused.stderr.splitlines()[1] == (
        "hint: finish 1 first (`loop next issue-7` shows what is ready)"
    )
    assert_unchanged(project, before)


def test_start_marks_the_task_in_progress_by_one_character(project: Path) -> None:
    before = (project / TASKS).read_bytes()

    started = run(project, "task", "start", "7", "1")

    assert started.exit_code == 0, started.output
    assert started.stdout == "started task 1: config key\n"
    assert (project / TASKS).read_bytes() == before.replace(b"- [ ] 1. ", b"- [-] 1. ")
    assert task_states(project)["1"] is TaskState.IN_PROGRESS


def test_start_refuses_a_done_task(project: Path) -> None:
    ok(project, *DONE_1)

    refused = run(project, "task", "start", "7", "1")

    assert refused.exit_code == 1
    assert refused.stderr == "error: task 1 is already done\n"


# ------------------------------------------------------------------ loop task done: refusals


def test_done_refuses_a_task_whose_dependency_is_open(project: Path) -> None:
    before = snapshot(project)

    refused = run(project, *done("2"))

    assert refused.exit_code == 1
    assert first_error(refused.stderr).endswith("task 2 depends on 1, not done yet")
    assert_unchanged(project, before)


def test_done_refuses_a_task_already_done(project: Path) -> None:
    ok(project, *DONE_1)
    before = snapshot(project)

    refused = run(project, *DONE_1)

    assert refused.exit_code == 1
    assert refused.stderr.splitlines() == [
        "error: task 1 is already done",
        "hint: `loop next issue-7` shows what is left",
    ]
    assert_unchanged(project, before)
    assert len(entries_for(project, "task 1 done")) == 1


def test_done_refuses_an_unknown_task(project: Path) -> None:
    before = snapshot(project)

    refused = run(project, *done("99"))

    assert refused.exit_code == 1
    assert first_error(refused.stderr).endswith("tasks.md: issue-7 has no task '99'")
    assert refused.stderr.splitlines()[1] == "hint: tasks: 1, 2, 3"
    assert_unchanged(project, before)


def test_done_refuses_a_task_list_that_is_not_approved(project: Path) -> None:
    text = (project / TASKS).read_text()
    (project / TASKS).write_text(text.replace("status: approved", "status: draft", 1))
    before = snapshot(project)

    refused = run(project, *DONE_1)

    assert refused.exit_code == 1
    assert first_error(refused.stderr).endswith(
        "tasks.md: tasks.md is draft: tasks run only against a locked task list"
    )
    assert refused.stderr.splitlines()[1] == (
        "hint: first: finish tasks.md (draft), then ask for review "
        "(`loop approve issue-7 tasks --by @you`), then `loop execute-tasks issue-7`"
    )
    assert_unchanged(project, before)


def test_done_refuses_a_task_list_edited_since_approval(project: Path) -> None:
    text = (project / TASKS).read_text()
    (project / TASKS).write_text(text.replace("1. config key", "1. config key, renamed"))
    before = snapshot(project)

    refused = run(project, *DONE_1)

    assert refused.exit_code == 1
    assert "tasks.md is stale: tasks run only against a locked task list" in refused.stderr
    assert_unchanged(project, before)


@pytest.mark.parametrize(
    "vague", ["continue", "tbd", "TBD.", "refactor", "next task", "  keep going  ", "do it"]
)
def test_done_refuses_a_vague_next_with_exit_2(project: Path, vague: str) -> None:
    before = snapshot(project)

    refused = run(project, *done("1", nxt=vague))

    assert refused.exit_code == 2
    assert refused.stderr.splitlines()[0] == (
        f"error: --next must name a concrete next step a fresh session can act on, got {vague!r}"
    )
    assert_unchanged(project, before)


# ------------------------------------------------------------------ loop task done --verify


def test_verify_with_a_passing_test_records_it_in_the_entry(verify_project: Path) -> None:
    passed = run(verify_project, *done("1", "--verify"))

    assert passed.exit_code == 0, passed.output
    (entry,) = entries_for(verify_project, "task 1 done")
    assert entry.fields["tests"] == "`true` exited 0 (pass)"


def test_verify_result_is_added_to_the_reported_tests(verify_project: Path) -> None:
    passed = run(verify_project, *done("1", "--verify", "--tests", "pytest -q: 3 passed"))

    assert passed.exit_code == 0, passed.output
    (entry,) = entries_for(verify_project, "task 1 done")
    assert entry.fields["tests"] == "pytest -q: 3 passed; verified: `true` exited 0 (pass)"


def test_without_verify_the_entry_says_what_was_reported(verify_project: Path) -> None:
    ok(verify_project, *done("1"))
    ok(verify_project, *done("3", "--tests", "manual check: ok"))

    assert entries_for(verify_project, "task 1 done")[0].fields["tests"] == (
        "not run (no --tests given)"
    )
    assert entries_for(verify_project, "task 3 done")[0].fields["tests"] == "manual check: ok"


def test_verify_runs_in_the_project_root(verify_project: Path) -> None:
    passed = run(verify_project, *done("7", "--verify"))

    assert passed.exit_code == 0, passed.output


@pytest.mark.parametrize(
    ("task", "error", "details"),
    [
        (
            "4",
            "task 4 is not done: its test failed: `no-such-command-xyz --flag` exited 127 (fail)",
            ["  no-such-command-xyz: command not found"],
        ),
        ("6", "task 6 is not done: its test failed: `sleep 5` timed out", []),
    ],
    ids=["missing-command", "timeout"],
)
def test_verify_with_a_failing_test_changes_nothing(
    verify_project: Path, task: str, error: str, details: list[str]
) -> None:
    before = snapshot(verify_project)

    refused = run(verify_project, *done(task, "--verify"))

    assert refused.exit_code == 1
    command = {"4": "no-such-command-xyz --flag", "6": "sleep 5"}[task]
    assert refused.stderr.splitlines() == [
        f"running: {command}",  # not a terminal: the command, once, as it starts
        f"error: {error}",
        *details,
        "hint: fix it and run `loop task done` again; nothing was changed",
    ]
    assert_unchanged(verify_project, before)
    assert task_states(verify_project)[task] is TaskState.OPEN


def test_verify_without_a_test_command_is_refused(verify_project: Path) -> None:
    before = snapshot(verify_project)

    refused = run(verify_project, *done("5", "--verify"))

    assert refused.exit_code == 1
    assert first_error(refused.stderr).endswith("task 5 names no test command to verify")
    assert_unchanged(verify_project, before)


def test_verify_tests_in_config_runs_the_test_without_the_flag(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    root = configured(
        tmp_path,
        tmp_path_factory,
        VERIFY_CONFIG + "  verifyTests: true\n",
        tasks=VERIFY_TASKS,
    )
    before = snapshot(root)

    refused = run(root, *done("4"))

    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[0] == "running: no-such-command-xyz --flag"
    assert refused.stderr.splitlines()[1].startswith("error: task 4 is not done: its test failed")
    assert_unchanged(root, before)
    ok(root, *done("1"))
    assert entries_for(root, "task 1 done")[0].fields["tests"] == "`true` exited 0 (pass)"


# ------------------------------------------------------------------ the directive


def test_json_output_of_task_done(project: Path) -> None:
    result = run(project, "--json", *DONE_1)

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # nothing but the JSON on stdout
    assert set(data) == {
        "reset",
        "reason",
        "checkpoint",
        "item",
        "task",
        "phase",
        "warnings",
        "settledResets",
    }
    assert set(data["checkpoint"]) == {"id", "commit", "commitStatus", "entry", "committedFiles"}
    assert data["reset"] == "compact"
    assert data["reason"] == "task 1 done (contextManagement.taskBoundary: compact)"
    assert (data["item"], data["task"], data["phase"], data["warnings"]) == (
        ITEM,
        "1",
        "implementation",
        [],
    )
    ck = data["checkpoint"]
    assert ck["commitStatus"] == "committed"
    assert ck["committedFiles"] == [f"{ITEM_DIR}/execution-log.md", f"{ITEM_DIR}/tasks.md"]
    assert ck["commit"] == git(project, "rev-parse", "HEAD").strip()
    assert f"Loop-Checkpoint: {ck['id']}" in commits(project)[0].splitlines()
    # the entry digest is the sha256 of the entry exactly as it sits at the end of the log
    log = (project / LOG).read_text()
    entry_text = log[log.rindex("\n### ") + 1 :]
    assert ck["entry"] == hashlib.sha256(entry_text.encode()).hexdigest()
    (record,) = [r for r in reset_records(project) if r["checkpoint"] == ck["id"]]
    assert (record["state"], record["entry_digest"], record["commit"]) == (
        "dispatched",
        ck["entry"],
        ck["commit"],
    )


@pytest.mark.parametrize(
    ("boundary", "reset", "context", "directive"),
    [
        (
            "clear",
            "clear",
            "clear (about to)",
            [
                "reset: clear — task 1 done (contextManagement.taskBoundary: clear)",
                "  clear the context now: end this session and start a fresh one "
                "(Claude Code: /clear; Codex: /new)",
                "  then, from the new session: loop reset confirm issue-7 --session <id>",
                "  then: loop execute-tasks issue-7",
            ],
        ),
        (
            "compact",
            "compact",
            "compact (about to)",
            [
                "reset: compact — task 1 done (contextManagement.taskBoundary: compact)",
                "  compact the context now (Claude Code and Codex: /compact), keeping the "
                "design constraints and conventions, dropping finished work",
                "  then, from the same session: loop reset confirm issue-7 --session <id>",
                "  then: loop execute-tasks issue-7",
            ],
        ),
        (
            "off",
            "none",
            "none",
            [
                "reset: none — task 1 done (contextManagement.taskBoundary: off)",
                "  no reset: carry on in this session",
                "  then: loop execute-tasks issue-7",
            ],
        ),
    ],
)
def test_task_boundary_directive(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    boundary: str,
    reset: str,
    context: str,
    directive: list[str],
) -> None:
    root = configured(
        tmp_path, tmp_path_factory, f"contextManagement:\n  taskBoundary: {boundary}\n"
    )

    result = run(root, *DONE_1)

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("checkpoint ")
    assert lines[1] == f"  committed files: {ITEM_DIR}/execution-log.md, {ITEM_DIR}/tasks.md"
    assert lines[2:] == directive
    (entry,) = entries_for(root, "task 1 done")
    assert entry.context == (f"{context}: task 1 done (contextManagement.taskBoundary: {boundary})")
    records = reset_records(root)
    assert [r["mode"] for r in records] == ([] if reset == "none" else [reset])


def test_context_management_disabled_means_no_reset(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    root = configured(tmp_path, tmp_path_factory, "contextManagement:\n  enabled: false\n")

    result = run(root, "--json", *DONE_1)

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["reset"] == "none"
    assert data["reason"] == (
        "task 1 done; contextManagement.enabled is false, so the harness manages its own window"
    )
    assert data["checkpoint"]["commitStatus"] == "committed"  # still a checkpoint
    assert reset_records(root) == []


# ------------------------------------------------------------------ loop checkpoint --mid-task


@pytest.fixture
def in_task(project: Path) -> Path:
    """Task 1 handed out by execute-tasks (in progress)."""
    ok(project, "execute-tasks", "7")
    assert task_states(project)["1"] is TaskState.IN_PROGRESS
    return project


def mid(*reading: str) -> tuple[str, ...]:
    return (
        "checkpoint",
        "7",
        "--mid-task",
        *reading,
        "--did",
        "half the ledger",
        "--next",
        "finish the retry ledger: the give-up branch in ledger.py",
    )


NO_TOKENS = "gap: no token count: the tokens arm could not be applied (a gap, not zero)"
NO_WINDOW = "gap: no window size or percent: the percent arm could not be applied"


@pytest.mark.parametrize(
    ("reading", "pressure", "gap", "reset", "why"),
    [
        (
            ("--percent", "80"),
            "pressure: selective_drop  (tokens arm: n/a, percent arm: selective_drop)",
            NO_TOKENS,
            "compact",
            "pressure verdict selective_drop (contextManagement.midTask: compact; "
            "never clear mid-task)",
        ),
        (
            ("--percent", "95"),
            "pressure: full_clear  (tokens arm: n/a, percent arm: full_clear)",
            NO_TOKENS,
            "compact",
            "pressure verdict full_clear (contextManagement.midTask: compact; "
            "never clear mid-task)",
        ),
        (
            ("--percent", "10"),
            "pressure: no_op  (tokens arm: n/a, percent arm: no_op)",
            NO_TOKENS,
            "none",
            "pressure verdict no_op",
        ),
        (
            ("--tokens", "250000"),
            "pressure: selective_drop  (tokens arm: selective_drop, percent arm: n/a)",
            NO_WINDOW,
            "compact",
            "pressure verdict selective_drop (contextManagement.midTask: compact; "
            "never clear mid-task)",
        ),
    ],
    ids=["80-percent", "95-percent", "10-percent", "tokens-no-window"],
)
def test_mid_task_checkpoint(
    in_task: Path,
    reading: tuple[str, ...],
    pressure: str,
    gap: str,
    reset: str,
    why: str,
) -> None:
    tasks_before = (in_task / TASKS).read_bytes()
    commits_before = len(commits(in_task))

    result = run(in_task, *mid(*reading))

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:2] == [pressure, gap]
    assert lines[2].startswith("checkpoint ")
    assert lines[3] == f"  committed files: {ITEM_DIR}/execution-log.md, {ITEM_DIR}/tasks.md"
    assert lines[4] == f"reset: {reset} — mid-task in task 1; {why}"
    assert lines[-1] == "  then: carry on with the task"
    # the task is not ticked; the entry and the commit are made all the same
    assert (in_task / TASKS).read_bytes() == tasks_before
    assert task_states(in_task)["1"] is TaskState.IN_PROGRESS
    (entry,) = entries_for(in_task, "interim checkpoint during task 1")
    assert entry.next == "finish the retry ledger: the give-up branch in ledger.py"
    assert (entry.context or "").startswith(
        "compact (about to): " if reset == "compact" else "none: "
    )
    assert len(commits(in_task)) == commits_before + 1
    message = commits(in_task)[0]
    assert message.startswith("chore(issue-7): checkpoint interim, task 1\n")
    assert f"Loop-Reset: {reset}" in message.splitlines()
    assert "Loop-Task: 1" in message.splitlines()


def test_mid_task_json_carries_the_pressure_reading(in_task: Path) -> None:
    result = run(in_task, "--json", *mid("--percent", "74.01"))

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["reset"] == "compact"  # 74.01 % rounds up to 75 %
    assert data["pressure"] == {
        "verdict": "selective_drop",
        "tokenArm": None,
        "percentArm": "selective_drop",
        "tokens": None,
        "percent": 75,
        "gaps": [NO_TOKENS.removeprefix("gap: ")],
    }


def test_mid_task_off_never_resets(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    root = configured(tmp_path, tmp_path_factory, "contextManagement:\n  midTask: off\n")
    ok(root, "execute-tasks", "7")

    result = run(root, "--json", *mid("--percent", "99"))

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["reset"] == "none"
    assert data["reason"] == (
        "mid-task in task 1; pressure verdict full_clear, but contextManagement.midTask is off"
    )


def test_checkpoint_without_mid_task_is_a_usage_error(in_task: Path) -> None:
    before = snapshot(in_task)
    args = [a for a in mid("--percent", "80") if a != "--mid-task"]

    refused = run(in_task, *args)

    assert refused.exit_code == 2
    assert refused.stderr.splitlines() == [
        "error: only --mid-task checkpoints are taken with `loop checkpoint`",
        "hint: a finished task is checkpointed by `loop task done`",
    ]
    assert_unchanged(in_task, before)


@pytest.mark.parametrize(
    ("reading", "error"),
    [
        (("--percent", "120"), "--percent must be between 0 and 100, got 120"),
        (("--percent", "-1"), "--percent must be between 0 and 100, got -1"),
        (("--tokens", "-5"), "--tokens must not be negative, got -5"),
        (("--tokens", "10", "--window", "5"), "--tokens (10) exceeds --window (5)"),
    ],
)
def test_mid_task_with_an_impossible_reading_changes_nothing(
    in_task: Path, reading: tuple[str, ...], error: str
) -> None:
    before = snapshot(in_task)

    refused = run(in_task, *mid(*reading))

    assert refused.exit_code == 2
    assert refused.stderr.splitlines()[0] == f"error: {error}"
    assert_unchanged(in_task, before)


# ------------------------------------------------------------------ loop pressure


def test_pressure_reports_and_writes_nothing(project: Path) -> None:
    before = whole_tree(project)

    result = run(project, "pressure", "--percent", "90")

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "full_clear  (tokens arm: n/a, percent arm: full_clear)",
        NO_TOKENS,
    ]
    assert whole_tree(project) == before


@pytest.mark.parametrize(
    ("reading", "verdict"),
    [
        (("--tokens", "199999"), "no_op"),
        (("--tokens", "200000"), "selective_drop"),
        (("--tokens", "279999"), "selective_drop"),
        (("--tokens", "280000"), "full_clear"),
        (("--percent", "74"), "no_op"),
        (("--percent", "74.01"), "selective_drop"),
        (("--percent", "75"), "selective_drop"),
        (("--percent", "89"), "selective_drop"),
        (("--percent", "89.2"), "full_clear"),
        (("--percent", "90"), "full_clear"),
        # the stricter arm wins, in both directions
        (("--tokens", "280000", "--window", "1000000"), "full_clear"),
        (("--tokens", "100000", "--window", "110000"), "full_clear"),
    ],
)
def test_pressure_edges(project: Path, reading: tuple[str, ...], verdict: str) -> None:
    result = run(project, "--json", "pressure", *reading)

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["verdict"] == verdict


# ------------------------------------------------------------------ loop reset, loop doctor


def test_compact_is_confirmed_only_from_the_same_session(project: Path) -> None:
    ok(project, *DONE_1, "--session", "s1")
    (record,) = reset_records(project)
    assert (record["mode"], record["session"]) == ("compact", "s1")

    refused = run(project, "reset", "confirm", "7", "--session", "s2")

    assert refused.exit_code == 1
    assert refused.stderr.splitlines() == [
        "error: a compaction keeps the session, but 's2' is not the checkpoint's session 's1'",
        "hint: confirm from the compacted session, or `loop reset abort` if it was cleared",
    ]
    assert len(reset_records(project)) == 1  # still open

    confirmed = run(project, "reset", "confirm", "7", "--session", "s1")

    assert confirmed.exit_code == 0, confirmed.output
    assert confirmed.stdout == f"confirmed compact after checkpoint {record['checkpoint']}\n"
    assert reset_records(project) == []
    last = last_resolved(project)
    assert (last["state"], last["confirmed_session"]) == ("completed", "s1")


def test_clear_is_confirmed_only_from_a_new_session(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    root = configured(tmp_path, tmp_path_factory, "contextManagement:\n  taskBoundary: clear\n")
    ok(root, *DONE_1, env={"LOOP_SESSION_ID": "s1"})  # the session id may come from the env

    refused = run(root, "reset", "confirm", "7", "--session", "s1")

    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[0] == (
        "error: a clear starts a new session, but 's1' is the session that took the checkpoint"
    )
    confirmed = run(root, "reset", "confirm", "7", env={"LOOP_SESSION_ID": "s2"})
    assert confirmed.exit_code == 0, confirmed.output
    assert confirmed.stdout.startswith("confirmed clear after checkpoint ")
    assert reset_records(root) == []


def test_confirm_without_a_recorded_session_is_marked_unverified(project: Path) -> None:
    ok(project, *DONE_1)
    (record,) = reset_records(project)

    confirmed = run(project, "reset", "confirm", "7", "--session", "anything")

    assert confirmed.exit_code == 0
    assert confirmed.stdout == (
        f"confirmed compact after checkpoint {record['checkpoint']} "
        "(unverified: no session id was recorded at the checkpoint)\n"
    )


def test_abort_resolves_the_reset_and_it_is_never_replayed(project: Path) -> None:
    ok(project, *DONE_1, "--session", "s1")
    (record,) = reset_records(project)

    aborted = run(project, "reset", "abort", "7", "--reason", "the harness crashed")

    assert aborted.exit_code == 0
    assert aborted.stdout == f"aborted compact after checkpoint {record['checkpoint']}\n"
    assert reset_records(project) == []
    nothing = run(project, "reset", "confirm", "7", "--session", "s1")
    assert nothing.exit_code == 1
    assert nothing.stderr.splitlines()[0] == "error: issue-7 has no open reset to resolve"
    last = last_resolved(project)
    assert (last["state"], last["note"]) == ("aborted", "the harness crashed")


def test_confirm_picks_the_named_checkpoint(project: Path) -> None:
    first = json.loads(run(project, "--json", *DONE_1, "--session", "s1").stdout)
    third = json.loads(run(project, "--json", *done("3"), "--session", "s3").stdout)

    pick = ("--checkpoint", first["checkpoint"]["id"])
    confirmed = run(project, "reset", "confirm", "7", "--session", "s1", *pick)

    assert confirmed.exit_code == 0, confirmed.output
    assert [r["checkpoint"] for r in reset_records(project)] == [third["checkpoint"]["id"]]


def test_doctor_lists_an_open_reset_and_is_healthy_once_it_is_resolved(project: Path) -> None:
    healthy = run(project, "doctor")
    assert healthy.exit_code == 0
    assert healthy.stdout == "ok: nothing needs attention\n"

    ok(project, *DONE_1, "--session", "s1")
    (record,) = reset_records(project)
    sick = run(project, "doctor")

    assert sick.exit_code == 1
    lines = sick.stdout.splitlines()
    assert lines[0].startswith(
        f"open reset: compact for issue-7 after checkpoint {record['checkpoint']} (dispatched "
    )
    assert lines[0].endswith(
        "→ `loop reset confirm issue-7 --session <id>` or `loop reset abort issue-7`"
    )
    assert lines[-1] == "needs attention"
    status = run(project, "status", "7")
    assert f"compact after checkpoint {record['checkpoint']} not confirmed" in status.stdout

    ok(project, "reset", "confirm", "7", "--session", "s1")
    assert run(project, "doctor").exit_code == 0


# ------------------------------------------------------------------ loop log, loop resume


def test_log_last_two(project: Path) -> None:
    ok(project, *DONE_1, env={"LOOP_NOW": NOW})
    ok(project, *done("3", did="wrote the give-up line"), env={"LOOP_NOW": NOW})

    shown = run(project, "log", "7", "--last", "2")

    assert shown.exit_code == 0, shown.output
    headings = [line for line in shown.stdout.splitlines() if not line.startswith(" ")]
    assert headings == [
        f"{NOW} — task 1 done: config key",
        f"{NOW} — task 3 done: give-up log line",
    ]
    assert "  did: wrote the give-up line" in shown.stdout.splitlines()
    as_json = json.loads(run(project, "--json", "log", "7", "--last", "2").stdout)
    assert [e["summary"] for e in as_json] == [
        "task 1 done: config key",
        "task 3 done: give-up log line",
    ]
    every = json.loads(run(project, "--json", "log", "7", "--last", "0").stdout)
    assert [e["summary"] for e in every] == [
        "entered implementation",
        "task 1 done: config key",
        "task 3 done: give-up log line",
    ]


def _entry(i: int) -> str:
    return render(
        "log-entry.md.j2",
        stamp=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}Z",
        summary=f"checkpoint number {i}",
        phase="implementation",
        did=f"step {i} of a long implementation, with enough words to be a real entry",
        tests="pytest -q: 412 passed",
        next=f"resume at step {i + 1}: the retry ledger, entry {i}",
        context="compacted — task boundary (contextManagement.taskBoundary: compact)",
        blockers="none",
        wip="committed with this entry (Loop-Checkpoint: x)",
    )


@pytest.mark.slow
def test_resume_brief_is_bounded_whatever_the_length_of_the_log(project: Path) -> None:
    ok(project, *DONE_1)
    with (project / LOG).open("a", encoding="utf-8") as handle:
        for i in range(5000):
            handle.write("\n" + _entry(i))
    assert len(read_log(project / LOG).entries) == 5002
    ok(project, *done("3", nxt="implement task 2: the retry ledger, in poller/ledger.py"))

    brief = run(project, "resume", "7")

    assert brief.exit_code == 0, brief.output
    assert "Next: implement task 2: the retry ledger, in poller/ledger.py" in brief.stdout
    assert "entry 4999" not in brief.stdout
    assert len(brief.stdout) < 8000
    data = json.loads(run(project, "--json", "resume", "7").stdout)
    assert data["next"] == "implement task 2: the retry ledger, in poller/ledger.py"
    tail = json.loads(run(project, "--json", "log", "7", "--last", "2").stdout)
    assert [e["summary"] for e in tail] == [
        "checkpoint number 4999",
        "task 3 done: give-up log line",
    ]


def test_resume_names_the_last_next_and_the_ready_tasks(project: Path) -> None:
    ok(project, *DONE_1)

    brief = run(project, "resume", "7")

    assert brief.exit_code == 0, brief.output
    assert f"- Next: {NEXT}" in brief.stdout.splitlines()
    assert "2. retry ledger" in brief.stdout
    assert "3. give-up log line" in brief.stdout
    assert str(TASKS) in brief.stdout
