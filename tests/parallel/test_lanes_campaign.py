"""A fault campaign for parallel lanes (marker ``campaign``): random DAGs × random finish
orders × injected same-line conflicts × SIGKILLs of the driver at random moments, each
followed by a rerun. After the rerun, whatever happened: every task is ticked exactly
once with exactly one checkpoint commit, no task's change is missing from the integration
branch (nor doubled), and no lease, worktree or lane branch is left. Bounded in time: it
runs trials until its budget is spent (at least two)."""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path

import pytest
from driver.driver_project import loop_process, spawn_loop, task_commits
from helpers.project import ITEM_DIR, git
from lanes_project import WRITE_OWN, TaskSpec, agent_config, lane_agent, leftovers, make_item

pytestmark = [pytest.mark.campaign, pytest.mark.slow]

BUDGET = 100.0  # seconds of trials; each trial is one seed
TASKS = f"{ITEM_DIR}/tasks.md"

# Sleep as the plan says (the finish order), then: the tasks in the conflict set add
# their mark to line 2 of shared.txt (once: a rerun in the same tree must not double it).
BODY = (
    "plan = json.loads(pathlib.Path(PLAN).read_text())\n"
    "time.sleep(plan['sleep'].get(task, 0))\n"
    "if task in plan['conflict']:\n"
    "    path = pathlib.Path('shared.txt')\n"
    "    lines = path.read_text().splitlines()\n"
    "    if f' +task {task}' not in lines[1]:\n"
    "        lines[1] += f' +task {task}'\n"
    "    path.write_text('\\n'.join(lines) + '\\n')\n" + WRITE_OWN
)


def _dag(rng: random.Random) -> tuple[TaskSpec, ...]:
    count = rng.randint(4, 7)
    tasks = []
    for n in range(1, count + 1):
        depends = tuple(str(d) for d in range(1, n) if rng.random() < 0.25)
        tasks.append(TaskSpec(str(n), f"part {n}", depends, test=f"test -f out/t{n}.txt"))
    return tuple(tasks)


def _trial(tmp: Path, seed: int) -> None:
    rng = random.Random(seed)
    tasks = _dag(rng)
    ids = [t.id for t in tasks]
    plan = {
        "sleep": {t: round(rng.uniform(0, 0.8), 2) for t in ids},
        "conflict": rng.sample(ids, k=min(len(ids), rng.randint(2, 3))),
    }
    plan_file = tmp / "plan.json"
    plan_file.parent.mkdir(parents=True, exist_ok=True)
    plan_file.write_text(json.dumps(plan))
    program, _log = lane_agent(tmp / "agent", f"PLAN = {str(plan_file)!r}\n" + BODY)
    root = make_item(
        tmp / "p", tasks, config=agent_config("command", [str(program)], max_attempts=8)
    )
    (root / "shared.txt").write_text("one\ntwo\nthree\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shared file")
    lanes = str(rng.randint(2, 4))
    for _kill in range(rng.randint(1, 2)):
        run = spawn_loop(root, "execute-tasks", "7", "--agent", "command", "--parallel", lanes)
        time.sleep(rng.uniform(0.3, 5.0))
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=60)
    done = loop_process(root, "execute-tasks", "7", "--agent", "command", "--parallel", lanes)
    where = f"seed {seed}, plan {plan}, deps {[(t.id, t.depends) for t in tasks]}"
    assert done.returncode == 0, f"{where}\n{done.stdout}\n{done.stderr}"
    assert (root / TASKS).read_text().count("- [x]") == len(ids), where
    assert task_commits(root) == {t: 1 for t in ids}, where
    for t in ids:
        out = root / "out" / f"t{t}.txt"
        assert out.is_file() and out.read_text() == f"task {t}\n", f"task {t}: {where}"
    line = (root / "shared.txt").read_text().splitlines()[1]
    assert sorted(line.split(" +task ")[1:]) == sorted(plan["conflict"]), where
    assert leftovers(root) == {"worktrees": 0, "branches": [], "leases": []}, where
    assert git(root, "status", "--porcelain") == "", where


def test_random_dags_finish_orders_conflicts_and_sigkills(tmp_path: Path) -> None:
    started = time.monotonic()
    seed = random.SystemRandom().randrange(10**6)
    trials = 0
    while trials < 2 or time.monotonic() - started < BUDGET:
        _trial(tmp_path / f"t{trials}", seed + trials)
        trials += 1
