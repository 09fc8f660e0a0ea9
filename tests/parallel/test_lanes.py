"""``execute-tasks --agent command --parallel N`` end to end: a real loop, real git, real agents."""

from __future__ import annotations

import json
from pathlib import Path

from driver.driver_project import events, loop_process, task_commits
from helpers.project import ITEM_DIR, git
from lanes_project import agent_runs, checkpoint_files, lane_project, leftovers, twelve

TASKS = f"{ITEM_DIR}/tasks.md"
LOG = f"{ITEM_DIR}/execution-log.md"


def test_twelve_tasks_in_four_lanes_land_one_commit_each(tmp_path: Path) -> None:
    root = lane_project(tmp_path / "p", twelve())
    done = loop_process(root, "execute-tasks", "7", "--agent", "command", "--parallel", "4", "--json")
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
