"""``loop board`` in headless Chromium while a driven run of twelve tasks goes on.

The agents are command agents that wait for a gate file per task, so the test decides
when the run moves: the page must show every task, the running ones as running (in
their lanes, for a ``--parallel 4`` run: three waves of four), the states changing as
tasks finish and merge, and totals equal to ``loop cost --json``. Screenshots of the
page are kept in the test's folder (their paths are printed).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from board_project import TWELVE, twelve
from browser import data_value, dump_dom, screenshot, task_lanes, task_states
from driver.driver_project import (
    agent_config,
    command_agent,
    loop_process,
    make_item,
    spawn_loop,
    wait_for,
)
from parallel.lanes_project import twelve as parallel_twelve

from the_loop.checkpoint import run_state
from the_loop.ledger import store

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PRICE = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}


def gated_agent(folder: Path, gate: Path) -> Path:
    body = (
        f"gate = pathlib.Path({str(gate)!r})\n"
        'while not (gate / task).exists() and not (gate / "all").exists():\n'
        "    time.sleep(0.05)\n"
        "n = int(task)\n"
        'with open(os.environ["LOOP_USAGE_FILE"], "a") as out:\n'
        '    out.write(json.dumps({"model": "fake-model", "input": 100 * n, "output": 7 * n,'
        ' "cacheRead": 1000 * n, "cacheWrite": 10}) + "\\n")\n'
        'pathlib.Path(f"done-{task}.txt").write_text("done\\n")\n'
        'print(f"task {task} done")\n'
    )
    program, _ = command_agent(folder, body)
    return program


def running_task(root: Path) -> str | None:
    live = store.live_run(root, "issue-7")
    return str(live["task"]) if live else None


def start_board(root: Path) -> tuple[subprocess.Popen[str], str]:
    board = subprocess.Popen(
        [sys.executable, "-m", "the_loop", "-C", str(root), "board"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert board.stdout is not None
    line = board.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:\d+/", line)
    assert found, line
    return board, found.group(0)


def test_the_board_follows_a_driven_run(chromium: str, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    program = gated_agent(tmp_path / "bin", gate)
    prices = f"  prices:\n    fake-model: {json.dumps(PRICE)}\n"
    root = twelve(tmp_path / "p", config=agent_config("command", [program], extra=prices))
    board, url = start_board(root)
    driver = spawn_loop(root, "execute-tasks", "7", "--agent", "command")
    profile = tmp_path / "chromium-profile"
    try:
        wait_for(lambda: running_task(root) is not None, what="the first agent run")
        first = running_task(root)
        page = dump_dom(url, profile)
        states = task_states(page)
        assert sorted(states) == sorted(t.id for t in TWELVE)  # every task is on the page
        assert states[str(first)] == "running"
        assert page.count('class="task ') == len(TWELVE)  # one node per task in the DAG
        shot = screenshot(url, tmp_path / "board-running.png", profile)
        print(f"\nboard screenshot (mid-run): {shot}")

        (gate / str(first)).touch()
        wait_for(lambda: running_task(root) not in (None, first), what="the next task")
        second = running_task(root)
        states = task_states(dump_dom(url, profile))
        assert states[str(first)] == "done" and states[str(second)] == "running"

        (gate / "all").touch()
        _, err = driver.communicate(timeout=240)
        assert driver.returncode == 0, err
        page = dump_dom(url, profile)
        final = screenshot(url, tmp_path / "board-done.png", profile)
        print(f"board screenshot (final): {final}")
    finally:
        (gate / "all").touch()
        if driver.poll() is None:
            driver.kill()
        driver.communicate(timeout=30)
        board.terminate()
        board.communicate(timeout=10)

    assert set(task_states(page).values()) == {"done"}
    cost = json.loads(loop_process(root, "cost", "7", "--json").stdout)
    assert int(data_value(page, "total-tokens", "tokens")) == cost["total"]["tokens"]["total"]
    assert float(data_value(page, "total-dollars", "dollars")) == cost["total"]["dollars"]
    assert "No agent is running" in page


# ---------------------------------------------------------------- a parallel run


def parallel_agent(folder: Path, gate: Path) -> Path:
    """A command agent for a lane: waits for its gate, reports usage, writes its task's file."""
    body = (
        f"gate = pathlib.Path({str(gate)!r})\n"
        'while not (gate / task).exists() and not (gate / "all").exists():\n'
        "    time.sleep(0.05)\n"
        "n = int(task)\n"
        'with open(os.environ["LOOP_USAGE_FILE"], "a") as out:\n'
        '    out.write(json.dumps({"model": "fake-model", "input": 1000 * n, "output": 70 * n,'
        ' "cacheRead": 5000 * n, "cacheWrite": 100}) + "\\n")\n'
        'pathlib.Path("out").mkdir(exist_ok=True)\n'
        'pathlib.Path(f"out/t{task}.txt").write_text(f"task {task}\\n")\n'
        "print(f\"task {task} done in lane {os.environ['LOOP_LANE']}\")\n"
    )
    program, _ = command_agent(folder, body)
    return program


def run_tasks(root: Path) -> dict[str, str]:
    """Task id -> the parallel runner's state for it, from its run state."""
    data = run_state.load(root, "issue-7") or {}
    return {task: row.get("state", "") for task, row in (data.get("tasks") or {}).items()}


def test_the_board_follows_a_parallel_run(chromium: str, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    program = parallel_agent(tmp_path / "bin", gate)
    prices = f"  prices:\n    fake-model: {json.dumps(PRICE)}\n"
    tasks = parallel_twelve()
    root = make_item(tmp_path / "p", tasks, config=agent_config("command", [program], extra=prices))
    board, url = start_board(root)
    driver = spawn_loop(root, "execute-tasks", "7", "--agent", "command", "--parallel", "4")
    profile = tmp_path / "chromium-profile"
    seen: list[dict[str, str]] = []
    try:
        wait_for(
            lambda: (
                sorted(t for t, s in run_tasks(root).items() if s == "running")
                == ["1", "2", "3", "4"]
            ),
            what="the first wave running in four lanes",
        )
        page = dump_dom(url, profile)
        states, lanes = task_states(page), task_lanes(page)
        seen.append(states)
        assert sorted(states) == sorted(t.id for t in tasks)  # every task is on the page
        assert page.count('class="task ') == len(tasks)  # one node per task in the DAG
        assert {t: states[t] for t in "1234"} == dict.fromkeys("1234", "running")
        assert sorted(lanes[t] for t in "1234") == [1, 2, 3, 4]  # four lanes at once
        assert page.count('class="lane"') == 4
        assert {states[str(n)] for n in range(5, 13)} == {"open"}  # waiting on the first wave

        # Tasks 1 and 2 finish: they merge, and 5 and 6 start in the lanes they freed.
        (gate / "1").touch()
        (gate / "2").touch()
        wait_for(
            lambda: (
                {k: run_tasks(root).get(k) for k in "1256"}
                == {"1": "merged", "2": "merged", "5": "running", "6": "running"}
            ),
            what="tasks 1 and 2 merged, 5 and 6 running",
        )
        page = dump_dom(url, profile)
        states, lanes = task_states(page), task_lanes(page)
        seen.append(states)
        assert states["1"] == states["2"] == "merged"
        assert [states[t] for t in "3456"] == ["running"] * 4
        assert len({lanes[t] for t in "3456"}) == 4
        assert {states[str(n)] for n in range(7, 13)} == {"open"}
        shot = screenshot(url, tmp_path / "board-parallel.png", profile, size="1400,1680")
        print(f"\nboard screenshot (parallel, mid-run): {shot}")

        (gate / "all").touch()
        _, err = driver.communicate(timeout=240)
        assert driver.returncode == 0, err
        page = dump_dom(url, profile)
        seen.append(task_states(page))
        final = screenshot(url, tmp_path / "board-parallel-done.png", profile, size="1400,1680")
        print(f"board screenshot (parallel, final): {final}")
    finally:
        (gate / "all").touch()
        if driver.poll() is None:
            driver.kill()
        driver.communicate(timeout=30)
        board.terminate()
        board.communicate(timeout=10)

    assert set(seen[-1].values()) == {"done"}  # the run ended: tasks.md says done
    assert "No agent is running" in page
    # Every lane's agent run is in the ledger, attributed to its task, attempt and lane.
    records = store.read_runs(root, "issue-7")
    assert sorted(r.task or "" for r in records) == sorted(t.id for t in tasks)
    assert {r.lane for r in records} == {1, 2, 3, 4} and {r.attempt for r in records} == {1}
    for record in records:
        n = int(record.task or 0)
        assert record.tokens.input == 1000 * n and record.tokens.output == 70 * n
    cost = json.loads(loop_process(root, "cost", "7", "--json").stdout)
    assert int(data_value(page, "total-tokens", "tokens")) == cost["total"]["tokens"]["total"]
    assert float(data_value(page, "total-dollars", "dollars")) == cost["total"]["dollars"]
    assert cost["total"]["tokens"]["total"] == sum(
        1000 * n + 70 * n + 5000 * n + 100 for n in range(1, 13)
    )
