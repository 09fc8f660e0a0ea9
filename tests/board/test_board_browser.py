"""``loop board`` in headless Chromium while a driven run of twelve tasks goes on.

The agents are command agents that wait for a gate file per task, so the test decides
when the run moves: the page must show every task, the running one as running, the
states changing as tasks finish, and totals equal to ``loop cost --json``. A screenshot
of the page mid-run is kept in the test's folder (its path is printed).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from board_project import TWELVE, twelve
from browser import data_value, dump_dom, screenshot, task_states
from driver.driver_project import agent_config, command_agent, loop_process, spawn_loop, wait_for

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
