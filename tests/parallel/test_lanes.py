"""``execute-tasks --agent command --parallel N`` end to end: a real loop, real git, real agents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from driver.driver_project import events, loop_process, schema_errors, task_commits
from helpers.project import ITEM_DIR, git
from lanes_project import (
    WRITE_OWN,
    TaskSpec,
    agent_runs,
    checkpoint_files,
    lane_project,
    leftovers,
    twelve,
)

pytestmark = pytest.mark.slow  # real loop runs end to end: ten seconds and more

TASKS = f"{ITEM_DIR}/tasks.md"
LOG = f"{ITEM_DIR}/execution-log.md"


def test_twelve_tasks_in_four_lanes_land_one_commit_each(tmp_path: Path) -> None:
    root = lane_project(tmp_path / "p", twelve())
    done = loop_process(
        root, "execute-tasks", "7", "--agent", "command", "--parallel", "4", "--json"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    text = (root / TASKS).read_text()
    assert text.count("- [x]") == 12
    assert task_commits(root) == {str(n): 1 for n in range(1, 13)}
    files = checkpoint_files(root)
    for n in range(1, 13):
        assert files[str(n)] == [",".join(sorted([f"out/t{n}.txt", TASKS, LOG]))]
    log = (root / LOG).read_text()
    assert sum(f"— task {n} done" in log for n in range(1, 13)) == 12
    assert leftovers(root) == {"worktrees": 0, "branches": [], "leases": []}
    assert git(root, "status", "--porcelain") == ""
    # each agent ran in its own worktree, on its task's branch, in a session of its own
    ran = agent_runs(tmp_path / "agent" / "runs.jsonl")
    assert sorted(int(r["task"]) for r in ran) == list(range(1, 13))
    assert all(r["cwd"].endswith(f"worktrees/issue-7/{r['task']}") for r in ran)
    assert all(r["branch"] == f"loop/issue-7/{r['task']}" for r in ran)
    assert len({r["session"] for r in ran}) == 12
    assert {r["lane"] for r in ran} <= {"1", "2", "3", "4"} and len({r["lane"] for r in ran}) > 1
    seen = events(done.stdout)
    assert [error for e in seen for error in schema_errors(e)] == []
    merges = [e for e in seen if e["event"] == "merge" and e["result"] == "landed"]
    assert len(merges) == 12
    started = [e for e in seen if e["event"] == "task-started"]
    assert all(e["lane"] in (1, 2, 3, 4) for e in started)
    summary = seen[-1]
    assert summary["event"] == "done" and summary["status"] == "done"
    assert [row["merge"] for row in summary["table"]] == ["landed"] * 12
    state = json.loads((root / ".the-loop/state/runs/issue-7.json").read_text())
    assert state["active"] is False
    assert {row["state"] for row in state["tasks"].values()} == {"merged"}


# Both tasks edit line 2 of shared.txt, keeping what is there: the second to land
# conflicts with the first, is evicted, and reruns on top of it.
SAME_LINE = (
    "import time\n"
    "path = pathlib.Path('shared.txt')\n"
    "lines = path.read_text().splitlines()\n"
    "lines[1] = lines[1] + f' +task {task}'\n"
    "path.write_text('\\n'.join(lines) + '\\n')\n" + WRITE_OWN
)


def test_a_same_line_conflict_evicts_one_task_which_reruns_from_the_new_head(
    tmp_path: Path,
) -> None:
    tasks = (
        TaskSpec("1", "first edit", test="test -f out/t1.txt"),
        TaskSpec("2", "second edit", test="test -f out/t2.txt"),
    )
    root = lane_project(tmp_path / "p", tasks, SAME_LINE)
    (root / "shared.txt").write_text("one\ntwo\nthree\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shared file")
    done = loop_process(
        root, "execute-tasks", "7", "--agent", "command", "--parallel", "2", "--json"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = events(done.stdout)
    evicted = [e for e in seen if e["event"] == "merge" and e["result"] == "evicted"]
    assert len(evicted) == 1 and "conflict" in evicted[0]["detail"]
    loser = evicted[0]["task"]
    winner = "1" if loser == "2" else "2"
    # nothing is lost: the line holds both edits, the winner's first
    assert (root / "shared.txt").read_text() == f"one\ntwo +task {winner} +task {loser}\nthree\n"
    assert task_commits(root) == {"1": 1, "2": 1}
    ran = [r for r in agent_runs(tmp_path / "agent" / "runs.jsonl") if r["task"] == loser]
    assert [r["evicted"] for r in ran] == [False, True]
    log = (root / LOG).read_text()
    assert "attempt 1 evicted: conflict with the integration head" in log
    table = {row["task"]: row for row in seen[-1]["table"]}
    assert table[loser]["attempts"] == 2 and table[loser]["merge"].startswith("landed after 1")
    assert leftovers(root) == {"worktrees": 0, "branches": [], "leases": []}


def test_setup_runs_in_each_worktree_and_a_failing_merge_check_stops_the_task(
    tmp_path: Path,
) -> None:
    tasks = (
        TaskSpec("1", "kept", test="test -f out/t1.txt"),
        TaskSpec("2", "refused by the suite", test="test -f out/t2.txt"),
    )
    body = "assert pathlib.Path('setup-ran').exists(), 'parallel.setup did not run'\n" + WRITE_OWN
    extra = 'parallel:\n  setup: "touch setup-ran"\n  mergeCheck: "test ! -f out/t2.txt"\n'
    root = lane_project(tmp_path / "p", tasks, body, max_attempts=2, extra=extra)
    done = loop_process(
        root, "execute-tasks", "7", "--agent", "command", "--parallel", "2", "--json"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    seen = events(done.stdout)
    verdicts = [(e["task"], e["result"]) for e in seen if e["event"] == "merge"]
    assert ("1", "landed") in verdicts
    assert [v for v in verdicts if v[0] == "2"] == [("2", "evicted"), ("2", "evicted")]
    failed = [e for e in seen if e["event"] == "task-failed"]
    assert [e["task"] for e in failed] == ["2"]
    assert "evicted 2 time(s) (agent.maxAttempts)" in failed[0]["reason"]
    assert "parallel.mergeCheck" in failed[0]["reason"]
    assert task_commits(root) == {"1": 1}
    assert "refused by the suite" not in git(root, "log", "--format=%s")
    # the stop entry names the task and why; the branch is gone, nothing else is left
    assert "run stopped during task 2" in (root / LOG).read_text()
    assert leftovers(root) == {"worktrees": 0, "branches": [], "leases": []}
    assert not (root / "setup-ran").exists()  # made in the worktrees, never merged


# Each task deletes the file the other's test needs: no textual conflict, so the
# rebase is clean, and only the task's test run after the rebase sees the break.
DELETES_THE_OTHERS = (
    "other = '2' if task == '1' else '1'\n"
    "pathlib.Path(f'lib{other}.txt').unlink(missing_ok=True)\n" + WRITE_OWN
)


def test_a_branch_whose_test_fails_after_a_clean_rebase_is_evicted_not_landed(
    tmp_path: Path,
) -> None:
    tasks = (
        TaskSpec("1", "drop lib2", test="cat out/t1.txt lib1.txt"),
        TaskSpec("2", "drop lib1", test="cat out/t2.txt lib2.txt"),
    )
    root = lane_project(tmp_path / "p", tasks, DELETES_THE_OTHERS, max_attempts=1)
    (root / "lib1.txt").write_text("one\n")
    (root / "lib2.txt").write_text("two\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "both libs")
    done = loop_process(
        root, "execute-tasks", "7", "--agent", "command", "--parallel", "2", "--json"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    seen = events(done.stdout)
    verdicts = [e for e in seen if e["event"] == "merge"]
    landed = [e["task"] for e in verdicts if e["result"] == "landed"]
    evicted = [e for e in verdicts if e["result"] == "evicted"]
    assert len(landed) == 1 and [e["task"] for e in evicted] == ["2" if landed == ["1"] else "1"]
    assert "after the rebase onto" in evicted[0]["detail"], evicted[0]
    assert task_commits(root) == {landed[0]: 1}
    assert git(root, "status", "--porcelain") == ""
