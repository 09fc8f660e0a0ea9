"""``loop execute-tasks ID --agent command``: the driver with a program of our own as the agent.

The agent is a real process (a small Python program, see ``driver_project``) started by
a real ``loop`` process in a real git repository. It logs each run: the task, the
session id loop gave it and how the session started (LOOP_SESSION_START).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from driver_project import (
    FOUR,
    MAKE_FILE,
    TaskSpec,
    agent_config,
    alive,
    command_agent,
    events,
    kill,
    loop_process,
    make_item,
    reset_history,
    runs,
    schema_errors,
    spawn_loop,
    task_commits,
    wait_for,
)
from helpers.project import LOG, RESETS, entries, git, task_states

from the_loop.tasks import TaskState

# Each test drives real loop and agent processes through a DAG: the full run, not the quick one.
pytestmark = pytest.mark.slow

ALL_DONE = {t.id: TaskState.DONE for t in FOUR}


def project(
    tmp_path: Path,
    body: str = MAKE_FILE,
    *,
    task_boundary: str = "clear",
    max_attempts: int = 3,
    timeout: int = 60,
) -> tuple[Path, Path]:
    """A project whose agent is a command agent running ``body``; its run log."""
    program, log = command_agent(tmp_path / "bin", body)
    config = agent_config(
        "command",
        [program],
        task_boundary=task_boundary,
        max_attempts=max_attempts,
        timeout=timeout,
    )
    return make_item(tmp_path / "p", config=config), log


def test_clear_gives_each_task_a_new_session_and_confirms_every_reset(tmp_path: Path) -> None:
    root, log = project(tmp_path, task_boundary="clear")

    ran = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert ran.returncode == 0, ran.stderr
    assert task_states(root) == ALL_DONE
    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    done = runs(log)
    assert [r["task"] for r in done] == ["1", "2", "3", "4"]  # 2 waits for 1, 4 for 2 and 3
    assert len({r["session"] for r in done}) == 4
    assert {r["start"] for r in done} == {"new"}
    history = reset_history(root)
    task_resets = [h for h in history if h["state"] == "completed" and h["session"]]
    # The resets after tasks 1-3: each completed by the next task's new session, verified.
    assert [(h["session"], h["confirmed_session"]) for h in task_resets] == [
        (done[i]["session"], done[i + 1]["session"]) for i in range(3)
    ]
    assert all("unverified" not in h["note"] for h in task_resets)
    # Entering implementation had no session yet: the first session completes it, unverified.
    assert history[0]["mode"] == "clear" and history[0]["state"] == "completed"
    assert history[0]["note"].startswith("unverified")
    assert history[0]["confirmed_session"] == done[0]["session"]
    # Task 4's checkpoint also entered needs-review: its reset (one for both boundaries)
    # is left open for the session that does the review.
    (open_record,) = [json.loads(p.read_text()) for p in (root / RESETS).glob("*.json")]
    assert (open_record["mode"], open_record["state"]) == ("clear", "dispatched")
    assert open_record["session"] == done[3]["session"]
    summary = events(ran.stdout)[-1]
    assert summary["event"] == "done" and summary["status"] == "done"
    assert summary["tasksDone"] == ["1", "2", "3", "4"]
    assert summary["sessions"] == [r["session"] for r in done]
    assert summary["resets"] == {"clear": 4}
    assert "needs-review" in summary["openReset"]


def test_compact_keeps_one_session_and_asks_it_to_compact_between_tasks(
    tmp_path: Path,
) -> None:
    root, log = project(tmp_path, task_boundary="compact")

    ran = loop_process(root, "execute-tasks", "7", "--agent", "command")

    assert ran.returncode == 0, ran.stderr
    assert task_states(root) == ALL_DONE
    done = runs(log)
    assert len({r["session"] for r in done}) == 1
    assert [r["start"] for r in done] == ["new", "compact", "compact", "compact"]
    compacts = [h for h in reset_history(root) if h["mode"] == "compact"]
    assert [h["state"] for h in compacts] == ["completed"] * 3
    assert all(h["confirmed_session"] == done[0]["session"] for h in compacts)
    assert "LOOP_SESSION_START=compact" in compacts[0]["note"]


def test_off_resumes_one_session_without_resets(tmp_path: Path) -> None:
    root, log = project(tmp_path, task_boundary="off")

    ran = loop_process(root, "execute-tasks", "7", "--agent", "command")

    assert ran.returncode == 0, ran.stderr
    done = runs(log)
    assert [r["start"] for r in done] == ["new", "resume", "resume", "resume"]
    assert len({r["session"] for r in done}) == 1
    # Only the phase crossings leave reset records: the first is performed, the last is open.
    assert [h["mode"] for h in reset_history(root)] == ["clear"]
    open_records = [json.loads(p.read_text()) for p in (root / RESETS).glob("*.json")]
    assert [(r["mode"], r["state"]) for r in open_records] == [("clear", "dispatched")]


def test_each_task_gets_its_brief_and_the_item_moves_to_review(tmp_path: Path) -> None:
    root, log = project(tmp_path)

    ran = loop_process(root, "execute-tasks", "7", "--agent")

    assert ran.returncode == 0, ran.stderr
    first = runs(log)[0]
    assert first["item"] == "issue-7"
    assert first["prompt"].startswith("# issue-7 task 1: config key")
    assert "loop task done issue-7 1" in first["prompt"]
    last = entries(root)[-1]
    assert last.summary == "task 4 done: docs; entered needs-review"
    assert last.next == "all tasks done: review the work (`loop work-on issue-7` prints the brief)"
    task_one = [e for e in entries(root) if e.summary.startswith("task 1 done")][0]
    assert task_one.fields["did"].startswith("made done-1.txt for task 1 (command, 1 run;")
    assert task_one.next == (
        "implement task 2: retry ledger (`loop execute-tasks issue-7 --agent command` runs it)"
    )
    assert "`test -f done-1.txt` exited 0 (pass)" in task_one.fields["tests"]
    assert "summary: done — all 4 tasks done" in ran.stdout


# An agent body that does the task and then runs loop's checkpoint itself.
CHECKPOINTS_ITSELF = (
    'pathlib.Path(f"done-{task}.txt").write_text("done\\n")\n'
    'subprocess.run(["loop", "task", "done", "7", task, "--did", f"agent did {task}",'
    ' "--next", "run `loop next 7` for the next ready task", "--tests", "by hand"],'
    " check=True, capture_output=True)\n"
)


def test_a_task_the_agent_checkpointed_itself_is_accepted(tmp_path: Path) -> None:
    body = CHECKPOINTS_ITSELF
    root, log = project(tmp_path, body, task_boundary="clear")

    ran = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert ran.returncode == 0, ran.stderr
    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}  # nothing checkpointed twice
    dids = [e.fields["did"] for e in entries(root) if " done: " in e.summary]
    assert dids == ["agent did 1", "agent did 2", "agent did 3", "agent did 4"]
    finished = [e for e in events(ran.stdout) if e["event"] == "agent-finished"]
    assert {e["outcome"] for e in finished} == {"done-by-agent"}
    # The agent's own checkpoints carried its LOOP_SESSION_ID, so each clear is verified.
    done = runs(log)
    task_resets = [h for h in reset_history(root) if h["session"] and h["state"] == "completed"]
    assert [(h["session"], h["confirmed_session"]) for h in task_resets] == [
        (done[i]["session"], done[i + 1]["session"]) for i in range(3)
    ]


def test_an_agent_that_checkpoints_itself_gets_loops_compaction_done(tmp_path: Path) -> None:
    # Issue 21: the agent's own `task done` in the compacting turn used to close the
    # compaction loop had just requested as "not seen" (skipped).
    body = CHECKPOINTS_ITSELF
    root, log = project(tmp_path, body, task_boundary="compact")

    ran = loop_process(root, "execute-tasks", "7", "--agent")

    assert ran.returncode == 0, ran.stderr
    assert [r["start"] for r in runs(log)] == ["new", "compact", "compact", "compact"]
    compacts = [h for h in reset_history(root) if h["mode"] == "compact"]
    assert [h["state"] for h in compacts] == ["completed"] * 3, compacts
    assert all("LOOP_SESSION_START=compact" in h["note"] for h in compacts)
    assert "was not seen to happen" not in (root / LOG).read_text()


def test_an_unfinished_run_is_resumed_with_continue(tmp_path: Path) -> None:
    body = (
        "if len(mine) == 1:\n"
        '    print("half of it: the rest next time")\n'
        "else:\n"
        '    pathlib.Path(f"done-{task}.txt").write_text("done\\n")\n'
        '    print("finished")\n'
    )
    tasks = (TaskSpec("1", "config key", test="test -f done-1.txt"),)
    program, log = command_agent(tmp_path / "bin", body)
    root = make_item(tmp_path / "p", tasks, config=agent_config("command", [program]))

    ran = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert ran.returncode == 0, ran.stderr
    first, second = runs(log)
    assert (first["start"], second["start"]) == ("new", "resume")
    assert first["session"] == second["session"]
    assert second["prompt"].startswith("continue task 1: config key\n")
    assert "`test -f done-1.txt` exited 1 (fail)" in second["prompt"]
    outcomes = [e["outcome"] for e in events(ran.stdout) if e["event"] == "agent-finished"]
    assert outcomes == ["unfinished", "done"]
    # A command agent reports no token count: a gap, so no interim checkpoint on a guess.
    assert not [e for e in entries(root) if e.summary.startswith("interim")]


def test_an_agent_that_always_fails_stops_the_run_with_the_task_open(tmp_path: Path) -> None:
    root, log = project(tmp_path, 'print("no luck", file=sys.stderr)\nsys.exit(3)', max_attempts=3)

    ran = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert ran.returncode == 1
    assert len(runs(log)) == 3
    assert task_states(root)["1"] is not TaskState.DONE
    stop = entries(root)[-1]
    assert stop.summary.startswith("run stopped during task 1: the agent failed 3 run(s)")
    assert "run 3: exited 3 — no luck" in stop.fields["blockers"]
    assert stop.next.startswith("continue task 1: config key")
    assert git(root, "status", "--porcelain") == ""  # the entry is committed
    failed = [e for e in events(ran.stdout) if e["event"] == "task-failed"]
    assert [(e["task"], e["runs"]) for e in failed] == [("1", 3)]
    assert events(ran.stdout)[-1]["status"] == "failed"


def test_a_run_past_its_timeout_is_stopped_with_its_children(tmp_path: Path) -> None:
    body = (
        'child = subprocess.Popen(["sleep", "60"])\n'
        'pathlib.Path("child.pid").write_text(str(child.pid))\n'
        "time.sleep(60)\n"
    )
    root, log = project(tmp_path, body, max_attempts=1, timeout=1)

    ran = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert ran.returncode == 1
    (run,) = runs(log)
    assert not alive(run["pid"])
    assert not alive(int((root / "child.pid").read_text()))
    (finished,) = [e for e in events(ran.stdout) if e["event"] == "agent-finished"]
    assert finished["outcome"] == "failed" and "timed out after 1s" in finished["detail"]


def test_sigkill_mid_task_then_a_rerun_finishes_without_redoing_work(tmp_path: Path) -> None:
    body = (
        'if task == "2" and not pathlib.Path("killed-once").exists():\n'
        '    pathlib.Path("killed-once").write_text("")\n'
        "    time.sleep(60)\n"
        'pathlib.Path(f"done-{task}.txt").write_text("done\\n")\n'
    )
    root, log = project(tmp_path, body, task_boundary="compact")
    driver = spawn_loop(root, "execute-tasks", "7", "--agent")
    wait_for(lambda: (root / "killed-once").exists(), what="task 2 to start")

    kill(driver.pid, signal.SIGKILL)
    driver.communicate(timeout=30)
    stuck = runs(log)[-1]
    wait_for(lambda: not alive(stuck["pid"]), timeout=10, what="the orphaned agent to die")

    before = task_commits(root)
    rerun = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert before == {"1": 1}
    assert rerun.returncode == 0, rerun.stderr
    assert task_states(root) == ALL_DONE
    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    second = runs(log)[2:]
    assert [r["task"] for r in second] == ["2", "3", "4"]  # task 1 is not run again
    # The rerun resumes the session the killed run was driving; task 2 was in progress.
    assert second[0]["session"] == stuck["session"]
    assert "An earlier run stopped during task 2" in second[0]["prompt"]


def test_ctrl_c_stops_the_agent_checkpoints_and_a_rerun_resumes(tmp_path: Path) -> None:
    body = (
        'if task == "2" and len(mine) == 1:\n'
        '    pathlib.Path("half.txt").write_text("work in progress\\n")\n'
        "    time.sleep(60)\n"
        'pathlib.Path(f"done-{task}.txt").write_text("done\\n")\n'
    )
    root, log = project(tmp_path, body, task_boundary="compact")
    driver = spawn_loop(root, "execute-tasks", "7", "--agent")
    wait_for(lambda: (root / "half.txt").exists(), what="task 2 to start")

    kill(driver.pid, signal.SIGINT)
    out, err = driver.communicate(timeout=30)

    assert driver.returncode == 130, err
    stuck = runs(log)[-1]
    assert not alive(stuck["pid"])
    interim = entries(root)[-1]
    assert interim.summary == "interim checkpoint during task 2"
    assert interim.fields["did"].startswith("stopped by Ctrl-C during task 2")
    assert git(root, "show", "--stat", "HEAD").count("half.txt") == 1  # the WIP is committed
    assert "summary: interrupted" in out

    rerun = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert rerun.returncode == 0, rerun.stderr
    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    resumed = runs(log)[len(runs(log)) - 3]
    assert (resumed["task"], resumed["session"]) == ("2", stuck["session"])
    assert "continue task 2" in resumed["prompt"]  # the interim entry's Next: is in the brief


def test_max_tasks_stops_early_and_the_rerun_performs_the_open_reset(tmp_path: Path) -> None:
    root, log = project(tmp_path, task_boundary="clear")

    first = loop_process(root, "execute-tasks", "7", "--agent", "--max-tasks", "1", "--json")

    assert first.returncode == 0, first.stderr
    assert events(first.stdout)[-1]["status"] == "stopped"
    assert events(first.stdout)[-1]["openReset"].startswith("clear after checkpoint")
    (record,) = [json.loads(p.read_text()) for p in (root / RESETS).glob("*.json")]
    assert record["state"] == "dispatched"

    second = loop_process(root, "execute-tasks", "7", "--agent", "--until", "3")

    assert second.returncode == 0, second.stderr
    assert "task 3 is done (--until)" in second.stdout
    done = runs(log)
    assert [r["task"] for r in done] == ["1", "2", "3"]
    confirmed = [h for h in reset_history(root) if h["checkpoint"] == record["checkpoint"]]
    assert confirmed[0]["confirmed_session"] == done[1]["session"] != done[0]["session"]


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    root, log = project(tmp_path)
    head = git(root, "rev-parse", "HEAD")

    ran = loop_process(root, "execute-tasks", "7", "--agent", "--dry-run", "--json")

    assert ran.returncode == 0, ran.stderr
    plan = json.loads(ran.stdout)
    assert (plan["agent"], plan["task"], plan["start"]) == ("command", "1", "new")
    assert plan["crossing"]["to"] == "implementation"
    assert plan["brief"].startswith("# issue-7 task 1: config key")
    assert git(root, "rev-parse", "HEAD") == head
    assert runs(log) == []
    assert not (root / LOG).exists()


def test_max_tasks_needs_agent(tmp_path: Path) -> None:
    root, _ = project(tmp_path)

    ran = loop_process(root, "execute-tasks", "7", "--max-tasks", "1")

    assert ran.returncode == 2
    assert "--max-tasks and --until go with --agent" in ran.stderr


def test_a_rerun_of_a_finished_dag_runs_nothing_and_leaves_the_review_reset(
    tmp_path: Path,
) -> None:
    root, log = project(tmp_path)
    assert loop_process(root, "execute-tasks", "7", "--agent").returncode == 0
    head = git(root, "rev-parse", "HEAD")

    again = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert again.returncode == 0, again.stderr
    assert len(runs(log)) == 4
    assert git(root, "rev-parse", "HEAD") == head
    summary = events(again.stdout)[-1]
    assert (summary["status"], summary["tasksDone"]) == ("done", [])
    assert "implementation → needs-review" in summary["openReset"]
    (record,) = [json.loads(p.read_text()) for p in (root / RESETS).glob("*.json")]
    assert record["state"] == "dispatched"


def test_every_json_line_keeps_to_the_output_schema(tmp_path: Path) -> None:
    good, _ = project(tmp_path / "good", task_boundary="compact")
    bad, _ = project(tmp_path / "bad", "sys.exit(3)", max_attempts=1)

    plan = loop_process(good, "execute-tasks", "7", "--agent", "--dry-run", "--json")
    ran = loop_process(good, "execute-tasks", "7", "--agent", "--json")
    failed = loop_process(bad, "execute-tasks", "7", "--agent", "--json")

    outputs = [json.loads(plan.stdout), *events(ran.stdout), *events(failed.stdout)]
    kinds = {o.get("event", "plan") for o in outputs}
    assert kinds == {
        "plan", "task-started", "reset", "agent-finished", "checkpoint", "task-failed", "done"
    }  # fmt: skip
    assert {json.dumps(o)[:60]: schema_errors(o) for o in outputs if schema_errors(o)} == {}
