"""Issue 12, "truthful by hand": each problem a person following `loop` ran into.

Every test here failed on the code before the fix: a hand tick nobody noticed,
filler accepted as a Next:, template placeholders approved, a test run before
a refusal that takes milliseconds, a shell command that could never verify,
two resets for one boundary, a log saying "cleared" before (and after an
aborted) reset, a graph with a cycle exiting 0, a hint pointing at a refused
command, colour despite NO_COLOR, snake_case beside camelCase, a help text
without its environment variable, and approve re-spacing a comment.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_tree
from helpers.project import (
    LOG,
    NEXT,
    RESETS,
    TASKS,
    Spec,
    commits,
    entries,
    entries_for,
    git,
    ok,
    project_copy,
    reset_records,
    run,
    snapshot,
    task_states,
)

from the_loop.checkpoint.lock import project_lock
from the_loop.log.execution_log import read_log
from the_loop.tasks import TaskState

ITEM_DIR = TASKS.parent


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    """issue-7 in implementation: tasks 1 and 3 ready, 2 after 1; a clean tree."""
    return project_copy(tmp_path_factory, tmp_path / "p")


def done(task: str, *extra: str, nxt: str = NEXT, did: str = "did the work") -> tuple[str, ...]:
    return ("task", "done", "7", task, "--did", did, "--next", nxt, *extra)


def tick_by_hand(root: Path, task: str) -> int:
    """Tick ``task`` the way sed would; return its line."""
    path = root / TASKS
    lines = path.read_text().split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith(f"- [ ] {task}."))
    lines[index] = lines[index].replace("- [ ]", "- [x]", 1)
    path.write_text("\n".join(lines))
    return index + 1


def check_json(root: Path) -> tuple[int, list[dict[str, object]]]:
    result = run(root, "check", "7", "--json")
    return result.exit_code, json.loads(result.stdout)["findings"]


# ------------------------------------------------------------------ 1. evidence for every tick


def test_a_hand_tick_fails_check_and_shows_in_status(project: Path) -> None:
    line = tick_by_hand(project, "1")

    code, findings = check_json(project)

    assert code == 1
    (tick,) = [f for f in findings if f["code"] == "tick.no-checkpoint"]
    assert (tick["level"], Path(str(tick["path"])).name, tick["line"]) == (
        "error",
        "tasks.md",
        line,
    )
    assert (
        "loop task done issue-7 1 --adopt --did '<what was done>' --next '<the next step>'"
        in str(tick["hint"])
    )
    assert "; 1 ticked without a checkpoint" in run(project, "next", "7").stdout
    status = run(project, "status", "7")
    assert f"  tick       task 1 ticked without a checkpoint  ({TASKS}:{line}) → " in status.stdout
    data = json.loads(run(project, "status", "7", "--json").stdout)
    assert data["ticksWithoutCheckpoint"] == [
        {
            "task": "1",
            "problem": "no-checkpoint",
            "path": str(TASKS),
            "line": line,
            "checkpoint": None,
            "logLine": None,
            "command": "loop task done issue-7 1 --adopt "
            "--did '<what was done>' --next '<the next step>'",
        }
    ]


def test_a_hand_ticked_item_cannot_go_to_review(project: Path) -> None:
    for task in ("1", "2", "3"):
        tick_by_hand(project, task)

    refused = run(project, "execute-tasks", "7")
    worked = run(project, "work-on", "7")

    assert refused.exit_code == 1
    assert "task 1 is ticked without a checkpoint (2 more like it)" in refused.stderr
    assert worked.exit_code == 0
    assert "record it after the fact" in worked.stdout
    assert "phase: implementation" in (project / LOG).read_text()
    assert run(project, "finish", "7", "--by", "@x").exit_code == 1


def test_done_on_a_hand_ticked_task_points_at_adopt(project: Path) -> None:
    tick_by_hand(project, "1")

    refused = run(project, *done("1"))

    assert refused.exit_code == 1
    assert "task 1 is ticked, but no checkpoint records it (ticked by hand?)" in refused.stderr
    assert (
        "loop task done issue-7 1 --adopt --did '<what was done>' --next '<the next step>'  #"
        in refused.stderr
    )


def test_adopt_records_the_checkpoint_without_ticking_again(project: Path) -> None:
    tick_by_hand(project, "1")
    ticked = (project / TASKS).read_bytes()

    adopted = run(project, *done("1", "--adopt", did="config key, ticked in the editor"))

    assert adopted.exit_code == 0, adopted.output
    assert (project / TASKS).read_bytes() == ticked  # no second tick, no other byte
    (entry,) = entries_for(project, "task 1 done")
    assert entry.summary == "task 1 done: config key (adopted: it was ticked by hand)"
    assert "Loop-Task: 1" in commits(project)[0].splitlines()
    assert [f for f in check_json(project)[1] if str(f["code"]).startswith("tick.")] == []
    again = run(project, *done("1", "--adopt"))
    assert again.exit_code == 1
    assert again.stderr.startswith("error: task 1 is already checkpointed (")
    assert "); there is nothing to adopt\n" in again.stderr
    assert run(project, *done("3", "--adopt")).exit_code == 1  # not ticked at all


def test_a_checkpoint_squashed_away_is_reported(project: Path) -> None:
    ok(project, *done("1"))
    # The work stays, the commit carrying its Loop-Checkpoint trailer does not.
    git(project, "reset", "--soft", "HEAD~1")
    git(project, "commit", "-qm", "squashed: everything so far")

    code, findings = check_json(project)

    assert code == 0  # a warning: the work may well be in the new commit
    (gone,) = [f for f in findings if f["code"] == "tick.commit-gone"]
    assert "no commit on this branch carries it any more: it was rebased, squashed or reset" in (
        str(gone["message"])
    )
    assert "--adopt" in str(gone["hint"])


def test_a_cached_check_sees_a_checkpoint_squashed_away(project: Path) -> None:
    ok(project, *done("1"))
    assert [f for f in check_json(project)[1] if f["code"] == "tick.commit-gone"] == []
    # The item's files are unchanged; only history moved. The parse cache keeps the
    # first answer under the files' content, so history must be part of its key.
    git(project, "reset", "--soft", "HEAD~1")
    git(project, "commit", "-qm", "squashed: everything so far")

    assert [f["code"] for f in check_json(project)[1] if f["code"] == "tick.commit-gone"] == [
        "tick.commit-gone"
    ]
    status = json.loads(run(project, "status", "7", "--json").stdout)
    assert [p["problem"] for p in status["ticksWithoutCheckpoint"]] == ["commit-gone"]


def test_without_trailers_no_commit_is_looked_up(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "p", config="checkpoint:\n  trailers: false\n")
    ok(root, *done("1"))

    assert "Loop-Checkpoint" not in commits(root)[0]
    assert [f for f in check_json(root)[1] if str(f["code"]).startswith("tick.")] == []


def test_a_rebase_that_keeps_the_message_keeps_the_evidence(project: Path) -> None:
    ok(project, *done("1"))
    message = commits(project)[0]
    git(project, "reset", "--soft", "HEAD~1")
    git(project, "commit", "-q", "-m", message)  # a new sha, the same trailers

    assert [f for f in check_json(project)[1] if str(f["code"]).startswith("tick.")] == []


# ------------------------------------------------------------------ 2. a Next: that can be acted on


@pytest.mark.parametrize(
    ("vague", "why"),
    [
        ("tbd tbd tbd", "it is filler: no task, file or command"),
        ("carry on with the work", "it is filler: no task, file or command"),
        ("refactor the flux capacitor", "it names no task of issue-7, no file that exists"),
        ("write src/ledger.py", "it names no task of issue-7, no file that exists"),
    ],
)
def test_a_next_naming_nothing_is_refused_with_a_proposal(
    project: Path, vague: str, why: str
) -> None:
    before = snapshot(project)

    refused = run(project, *done("1", nxt=vague))

    assert refused.exit_code == 2
    lines = refused.stderr.splitlines()
    assert lines[0] == (
        f"error: --next must name a concrete next step a fresh session can act on, got {vague!r}"
    )
    assert lines[1].startswith(f"  {why}")
    proposal = "implement task 3: give-up log line (loop execute-tasks issue-7 hands it out)"
    assert lines[2] == f"hint: e.g. --next '{proposal}'"
    assert snapshot(project) == before
    ok(project, *done("1", nxt=proposal))  # the proposal itself is accepted


@pytest.mark.parametrize(
    "concrete",
    [
        "implement task 3",
        "T2 after this",
        "the retry ledger, then its test",  # task 2's title
        "update README.md with the new flag",  # a file that exists
        "run `git status` and commit the rest",  # a command that exists
        "hand out the next one with loop execute-tasks",
    ],
)
def test_a_next_naming_a_task_file_or_command_is_accepted(project: Path, concrete: str) -> None:
    ok(project, *done("1", nxt=concrete))


@pytest.mark.parametrize("empty", ["", "  ", "tbd", "-", "…"])
def test_an_empty_did_is_refused(project: Path, empty: str) -> None:
    refused = run(project, *done("1", did=empty))

    assert refused.exit_code == 2
    assert refused.stderr.startswith(f"error: --did must say what was done, got {empty!r}")


def test_a_mid_task_checkpoint_refuses_filler_too(project: Path) -> None:
    ok(project, "execute-tasks", "7")
    refused = run(
        project,
        "checkpoint",
        "7",
        "--mid-task",
        "--percent",
        "80",
        "--did",
        "half of it",
        "--next",
        "keep going with the rest",
    )
    assert refused.exit_code == 2
    assert "hint: e.g. --next 'implement task 1: config key" in refused.stderr


# ------------------------------------------------------------------ 3. placeholders


@pytest.fixture
def fresh(loop, git_repo: Path) -> Path:  # type: ignore[no-untyped-def]
    assert loop("init", "--defaults", cwd=git_repo).exit_code == 0
    assert loop("new", "Retry budget", "--id", "5", cwd=git_repo).exit_code == 0
    return git_repo


def test_requirements_full_of_template_placeholders_cannot_be_approved(fresh: Path) -> None:
    check = run(fresh, "check", "5", "--json")
    refused = run(fresh, "approve", "5", "requirements", "--by", "@ann")

    codes = [f["code"] for f in json.loads(check.stdout)["findings"]]
    # a fresh draft's slots are the work left: warnings, so `check` stays green after `loop new`
    assert check.exit_code == 0
    assert codes.count("artifact.placeholder") == 8  # <first requirement>, <role>, …
    assert run(fresh, "check", "5", "--strict").exit_code == 1
    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[0] == (
        "error: docs/specs/issue-5/requirements.md:19:10: requirements.md still has the "
        "template's placeholder <first requirement> and 7 more; an unfinished artifact cannot "
        "be locked"
    ) or refused.stderr.splitlines()[0].endswith(
        "requirements.md:19:10: requirements.md still has the template's placeholder "
        "<first requirement> and 7 more; an unfinished artifact cannot be locked"
    )


def test_design_and_tasks_templates_are_refused_by_check_and_approve_alike(fresh: Path) -> None:
    from helpers import DESIGN, REQUIREMENTS

    item = fresh / "docs/specs/issue-5"
    (item / "requirements.md").write_text(REQUIREMENTS.format(item="issue-5", title="x"))
    ok(fresh, "approve", "5", "requirements", "--by", "@ann")
    ok(fresh, "work-on", "5")  # writes design.md from its template
    assert run(fresh, "approve", "5", "design", "--by", "@bo").exit_code == 1
    (item / "design.md").write_text(DESIGN.format(item="issue-5", title="x"))
    ok(fresh, "approve", "5", "design", "--by", "@bo")
    ok(fresh, "work-on", "5")  # writes tasks.md from its template

    check = run(fresh, "check", "5", "--json")
    refused = run(fresh, "approve", "5", "tasks", "--by", "@cy")

    places = [
        (f["line"], f["message"].rsplit(" ", 1)[-1])
        for f in json.loads(check.stdout)["findings"]
        if f["code"] == "artifact.placeholder"
    ]
    assert check.exit_code == 0  # drafts: warnings
    assert (18, "summary>") in places  # `- [ ] 1. <task summary>`
    assert (22, "task>") in places  # _Test:_ `<command that proves the task>`
    assert refused.exit_code == 1
    assert "tasks.md still has the template's placeholder" in refused.stderr


# ------------------------------------------------------------------ 4. what a checkpoint committed


def test_the_checkpoint_json_carries_the_committed_files(project: Path) -> None:
    data = json.loads(run(project, "--json", *done("1")).stdout)

    assert isinstance(data["checkpoint"]["committedFiles"], list)


def test_the_committed_files_are_what_git_committed(project: Path) -> None:
    (project / "ledger.py").write_text("BUDGET = 3\n")
    data = json.loads(run(project, "--json", *done("1")).stdout)

    shown = git(project, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(data["checkpoint"]["committedFiles"]) == sorted(shown)


# ------------------------------------------------------------------ 5. quick checks before the test


MARKER_TASKS = (
    Spec("1", "config key", test="touch ran-1.marker"),
    Spec("2", "retry ledger", ("1",), test="touch ran-2.marker"),
    Spec("3", "give-up log line", test="touch ran-3.marker"),
)


@pytest.fixture
def marked(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p", tasks=MARKER_TASKS)


def _stale_with_a_new_test(root: Path) -> None:
    text = (root / TASKS).read_text()
    (root / TASKS).write_text(text.replace("touch ran-1.marker", "touch ran-1.marker evil.marker"))


@pytest.mark.parametrize(
    ("setup", "task", "nxt", "code", "says"),
    [
        (None, "1", "tbd tbd tbd", 2, "--next must name a concrete next step"),
        (_stale_with_a_new_test, "1", NEXT, 1, "tasks.md is stale"),
        (None, "2", NEXT, 1, "task 2 depends on 1, not done yet"),
        (lambda root: ok(root, *done("1")), "1", NEXT, 1, "task 1 is already done"),
    ],
    ids=["vague-next", "edited-unapproved-test", "open-dependency", "already-done"],
)
def test_verify_runs_no_test_before_a_quick_refusal(
    marked: Path,
    setup,
    task: str,
    nxt: str,
    code: int,
    says: str,  # type: ignore[no-untyped-def]
) -> None:
    if setup is not None:
        setup(marked)
    for marker in marked.glob("*.marker"):
        marker.unlink()

    refused = run(marked, *done(task, "--verify", nxt=nxt))

    assert refused.exit_code == code
    assert says in refused.stderr
    assert "running:" not in refused.stderr
    assert list(marked.glob("*.marker")) == []  # nothing ran, the edited command least of all


def test_verify_waits_for_no_test_while_another_command_holds_the_lock(
    marked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOP_LOCK_TIMEOUT", "0.2")
    with project_lock(marked):
        refused = run(marked, *done("1", "--verify"))

    assert refused.exit_code == 1
    assert "another loop command holds this project's lock" in refused.stderr
    assert not (marked / "ran-1.marker").exists()


def test_verify_says_what_it_runs(marked: Path) -> None:
    passed = run(marked, *done("1", "--verify"))

    assert passed.exit_code == 0, passed.output
    assert passed.stderr == "running: touch ran-1.marker\n"  # not a terminal: one line
    assert (marked / "ran-1.marker").exists()


def test_verify_shows_a_live_elapsed_time_on_a_terminal(tmp_path: Path) -> None:
    """stderr on a pseudo-terminal: the line is redrawn in place, then replaced by the result."""
    from the_loop.cli.progress import showing_run

    script = tmp_path / "show.py"
    script.write_text(
        "import time\n"
        "from the_loop.cli.progress import showing_run\n"
        "with showing_run('sleep 0.6'):\n"
        "    time.sleep(0.6)\n"
    )
    assert showing_run  # the module under test imports cleanly here too
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=dict(os.environ),
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 1024)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    child.wait(timeout=30)
    os.close(leader)
    text = seen.decode()
    assert text.count("\r\x1b[Krunning: sleep 0.6  ") >= 2  # redrawn while it runs
    assert "\r\x1b[Kran: sleep 0.6  (" in text


@pytest.mark.parametrize(
    ("command", "features"),
    [
        ("cd tests && true", "&&, cd"),
        ("FOO=1 true", "FOO=…"),
        ("true | cat", "|"),
        ("ls tests/*.py", "glob"),
    ],
)
def test_a_test_command_written_for_a_shell_is_found_by_check(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    command: str,
    features: str,
) -> None:
    tasks = (Spec("1", "config key", test=command), Spec("2", "ledger", ("1",)))
    root = project_copy(tmp_path_factory, tmp_path / "p", tasks=tasks)

    code, findings = check_json(root)
    refused = run(root, *done("1", "--verify"))

    (finding,) = [f for f in findings if f["code"] == "tasks.test-needs-shell"]
    assert code == 0  # a warning: the command is fine with a shell
    assert finding["message"] == (
        f"task 1's test `{command}` needs a shell ({features}), but loop runs it without one: "
        "`loop task done --verify` would fail"
    )
    assert "`testing.shell: true`" in str(finding["hint"]) and "sh -c" in str(finding["hint"])
    assert refused.exit_code == 1
    assert f"needs a shell ({features}); nothing was run" in refused.stderr


def test_testing_shell_runs_the_command_through_sh(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    tasks = (Spec("1", "config key", test="false || touch through-sh.marker"),)
    root = project_copy(
        tmp_path_factory, tmp_path / "p", tasks=tasks, config="testing:\n  shell: true\n"
    )

    passed = run(root, *done("1", "--verify", nxt="update README.md"))

    assert passed.exit_code == 0, passed.output
    assert (root / "through-sh.marker").exists()
    assert [f for f in check_json(root)[1] if f["code"] == "tasks.test-needs-shell"] == []


def test_an_explicit_sh_c_needs_no_setting(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    tasks = (Spec("1", "config key", test="sh -c 'cd . && touch explicit.marker'"),)
    root = project_copy(tmp_path_factory, tmp_path / "p", tasks=tasks)

    assert [f for f in check_json(root)[1] if f["code"] == "tasks.test-needs-shell"] == []
    ok(root, *done("1", "--verify", nxt="update README.md"))
    assert (root / "explicit.marker").exists()


# ------------------------------------------------------------------ 6. one reset per boundary


def test_the_last_task_checkpoint_is_the_one_reset_for_both_boundaries(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOP_NOW", "2026-11-30T12:00Z")  # the transition row carries the day
    ok(project, *done("1"))
    ok(project, *done("3"))

    last = json.loads(
        run(project, "--json", *done("2", nxt="review it with `loop work-on 7`")).stdout
    )
    step = json.loads(run(project, "--json", "execute-tasks", "7").stdout)

    assert (last["reset"], last["phase"]) == ("clear", "needs-review")
    assert last["reason"] == (
        "task 2 done (contextManagement.taskBoundary: compact); phase boundary implementation "
        "→ needs-review (contextManagement.phaseBoundary: clear): one reset for both"
    )
    assert step["step"] == "complete"
    assert step["reset"] is None
    assert step["crossing"] is None
    assert "phase: needs-review" in (project / LOG).read_text()
    assert "| needs-review | 2026-11-30 |  | all tasks done |" in (project / LOG).read_text()


def test_the_log_says_what_is_about_to_happen_and_corrects_an_abort(project: Path) -> None:
    ok(project, *done("1"))
    (entry,) = entries_for(project, "task 1 done")
    assert (
        entry.context == "compact (about to): task 1 done (contextManagement.taskBoundary: compact)"
    )

    aborted = run(project, "reset", "abort", "7", "--reason", "the harness crashed")

    assert aborted.exit_code == 0, aborted.output
    last = entries(project)[-1]
    assert last.summary.startswith("correction: the compact announced by checkpoint ")
    assert last.context == "not reset: the compact was aborted (the harness crashed)"
    assert last.next == NEXT  # the resume anchor is carried forward
    assert "Next: " + NEXT in run(project, "resume", "7").stdout


def test_a_second_checkpoint_from_the_same_session_corrects_an_unperformed_clear(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    root = project_copy(
        tmp_path_factory, tmp_path / "p", config="contextManagement:\n  taskBoundary: clear\n"
    )
    first = json.loads(run(root, "--json", *done("1", "--session", "A")).stdout)

    second = json.loads(run(root, "--json", *done("3", "--session", "A")).stdout)

    assert second["settledResets"] == [
        {
            "checkpoint": first["checkpoint"]["id"],
            "mode": "clear",
            "state": "skipped",
            "why": "session A took another checkpoint without clearing",
        }
    ]
    (entry,) = entries_for(root, "task 3 done")
    assert entry.fields["corrections"] == (
        f"the clear announced by checkpoint {first['checkpoint']['id']} did not happen: "
        "session A took another checkpoint without clearing"
    )
    assert [r["checkpoint"] for r in reset_records(root)] == [second["checkpoint"]["id"]]
    history = (root / RESETS / "history.jsonl").read_text()
    assert '"state": "skipped"' in history


def test_another_sessions_reset_is_left_alone(project: Path) -> None:
    ok(project, *done("1", "--session", "A"))
    ok(project, *done("3", "--session", "B"))

    assert sorted(r["session"] for r in reset_records(project)) == ["A", "B"]


# ------------------------------------------------------------------ 7. graph errors and hints


@pytest.mark.parametrize(
    ("deps", "says"),
    [
        ({"1": "3", "2": "1", "3": "2"}, "cycle"),
        ({"1": "none", "2": "9", "3": "none"}, "9"),
    ],
    ids=["cycle", "missing-dependency"],
)
def test_graph_names_its_errors_and_exits_1(
    tmp_path: Path, deps: dict[str, str], says: str
) -> None:
    lines = ["---", "type: tasks", "status: draft", "---", ""]
    for task, dep in deps.items():
        lines += [f"- [ ] {task}. task {task}", f"  - _Depends on:_ {dep}"]
    write_tree(tmp_path, {"docs/specs/issue-7/tasks.md": "\n".join(lines) + "\n"})

    for args in (("graph", "7"), ("graph", "7", "--json")):
        result = run(tmp_path, *args)
        assert result.exit_code == 1, result.output
    drawn = run(tmp_path, "graph", "7")
    assert "error: the task graph of issue-7 has 1 error(s)" in drawn.stderr
    assert says in drawn.stderr
    assert "hint: `loop check issue-7` lists every finding" in drawn.stderr
    data = json.loads(run(tmp_path, "graph", "7", "--json").stdout)
    assert [e["level"] for e in data["errors"]] == ["error"]


def test_hints_name_the_first_step_that_will_succeed(project: Path) -> None:
    requirements = project / ITEM_DIR / "requirements.md"
    requirements.write_text(requirements.read_text().replace("up to the budget", "up to 3 times"))

    refused = run(project, *done("1"))
    code, findings = check_json(project)

    hint = refused.stderr.splitlines()[-1]
    assert hint.startswith("hint: first: requirements.md is stale")
    assert "(`loop approve issue-7 requirements --by @you`)" in hint
    design = next(
        f for f in findings if f["code"] == "lock.stale" and "design.md" in str(f["path"])
    )
    assert str(design["hint"]).startswith("first `loop approve issue-7 requirements --by @you`")
    # …and that first step does succeed, where the old hint's approval was refused
    assert run(project, "approve", "7", "tasks", "--by", "@a").exit_code == 1
    ok(project, "approve", "7", "requirements", "--by", "@a")


# ------------------------------------------------------------------ 8. conventions


def _coloured(args: list[str], env: dict[str, str]) -> str:
    from the_loop.cli import cli

    result = CliRunner().invoke(cli, args, env=env, color=True, catch_exceptions=False)
    return result.stdout


def test_no_color_and_the_no_color_flag_turn_colour_off(project: Path) -> None:
    args = ["-C", str(project), "status", "7"]

    assert "\x1b[" in _coloured(args, {})  # a terminal gets colour…
    assert "\x1b[" not in _coloured(args, {"NO_COLOR": "1"})  # …unless NO_COLOR is set
    assert "\x1b[" not in _coloured(["--no-color", *args], {})
    assert "\x1b[" in _coloured(args, {"NO_COLOR": ""})  # empty means unset


def test_open_resets_in_status_json_are_camel_case(project: Path) -> None:
    ok(project, *done("1"))

    (record,) = json.loads(run(project, "status", "7", "--json").stdout)["openResets"]

    assert "entryDigest" in record and "confirmedSession" in record
    assert not [key for key in record if "_" in key]


def test_every_option_read_from_the_environment_says_so_in_its_help() -> None:
    import click

    from the_loop.cli import COMMANDS, cli

    def walk(command: click.Command, path: list[str]) -> list[tuple[str, str]]:
        found = []
        for param in command.params:
            if isinstance(param, click.Option) and param.envvar:
                names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar)
                for name in names:
                    if name not in (param.help or ""):
                        found.append((" ".join(path), name))
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for sub in command.list_commands(ctx):
                child = command.get_command(ctx, sub)
                assert child is not None
                found += walk(child, [*path, sub])
        return found

    assert walk(cli, ["loop"]) == []
    assert "reset" in COMMANDS
    help_text = run(Path("."), "reset", "confirm", "--help").stdout
    assert "LOOP_SESSION_ID" in help_text


def test_approve_keeps_the_space_before_a_comment(fresh: Path) -> None:
    from helpers import REQUIREMENTS

    path = fresh / "docs/specs/issue-5/requirements.md"
    text = REQUIREMENTS.format(item="issue-5", title="x").replace(
        "status: draft\n", "status: draft  # draft | in-review | approved\n"
    )
    path.write_text(text)

    ok(fresh, "approve", "5", "requirements", "--by", "@ann")

    assert "status: approved  # draft | in-review | approved\n" in path.read_text()


def test_states_of_tasks_are_untouched_by_reports(project: Path) -> None:
    """A guard for this file: reports above never write (status, check, graph)."""
    before = snapshot(project)
    for args in (("status", "7"), ("check", "7"), ("graph", "7")):
        run(project, *args)
    assert snapshot(project) == before
    assert task_states(project)["1"] is TaskState.OPEN
    assert read_log(project / LOG).entries
