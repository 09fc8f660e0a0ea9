"""The ledger with a command agent: what the program reports is what ``loop cost`` shows.

A command agent has no transcript; it reports each run's tokens by appending a JSON
line to ``$LOOP_USAGE_FILE``. The program here reports a different, known usage per
task; ``loop cost --json`` must give back exactly those numbers, and the dollars
must be tokens × the configured prices.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from driver.driver_project import (
    FOUR,
    agent_config,
    command_agent,
    events,
    loop_process,
    make_item,
)

from the_loop.ledger import store

pytestmark = pytest.mark.slow  # real loop and agent processes through a DAG

# Per task: (input, output, cacheRead, cacheWrite), written by the agent for its one run.
USAGE = {
    "1": (100, 10, 1000, 50),
    "2": (200, 20, 2000, 0),
    "3": (300, 30, 0, 70),
    "4": (7, 1, 5, 3),
}
PRICES = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}

REPORTS_USAGE = (
    f"usage = {repr(USAGE)}[task]\n"
    'with open(os.environ["LOOP_USAGE_FILE"], "a") as out:\n'
    '    out.write(json.dumps({"model": "fake-model", "input": usage[0], "output": usage[1], '
    '"cacheRead": usage[2], "cacheWrite": usage[3]}) + "\\n")\n'
    'pathlib.Path(f"done-{task}.txt").write_text("done\\n")\n'
    'print(f"made done-{task}.txt")'
)


def dollars(counts: tuple[int, int, int, int]) -> float:
    rates = (PRICES["input"], PRICES["output"], PRICES["cacheRead"], PRICES["cacheWrite"])
    return sum(n * rate for n, rate in zip(counts, rates, strict=True)) / 1_000_000


def project(tmp_path: Path, body: str, extra: str = "") -> Path:
    program, _ = command_agent(tmp_path / "bin", body)
    prices = f"  prices:\n    fake-model: {json.dumps(PRICES)}\n"
    config = agent_config("command", [program], extra=prices + extra)
    return make_item(tmp_path / "p", config=config)


def cost(root: Path) -> dict[str, object]:
    ran = loop_process(root, "cost", "7", "--json")
    assert ran.returncode == 0, ran.stderr
    data: dict[str, object] = json.loads(ran.stdout)
    return data


def test_cost_equals_what_the_agent_reported_per_task(tmp_path: Path) -> None:
    root = project(tmp_path, REPORTS_USAGE)

    ran = loop_process(root, "execute-tasks", "7", "--agent", "command", "--json")

    assert ran.returncode == 0, ran.stderr
    data = cost(root)
    rows = {row["task"]: row for row in data["tasks"]}  # type: ignore[index, union-attr]
    assert sorted(rows) == [t.id for t in FOUR]
    for task, counts in USAGE.items():
        work = rows[task]["work"]
        assert work["runs"] == 1
        assert [work["tokens"][k] for k in ("input", "output", "cacheRead", "cacheWrite")] == list(
            counts
        )
        assert work["dollars"] == round(dollars(counts), 6)
        assert rows[task]["compaction"]["runs"] == 0
    total = data["total"]
    assert total["tokens"]["total"] == sum(sum(c) for c in USAGE.values())  # type: ignore[index]
    assert total["dollars"] == round(sum(dollars(c) for c in USAGE.values()), 6)  # type: ignore[index]
    assert data["unpriced"] == []
    # The run's own summary carries the same numbers.
    summary = events(ran.stdout)[-1]
    assert summary["event"] == "done"
    assert summary["cost"]["total"] == data["total"]


def test_a_run_that_reports_nothing_is_unknown_not_zero(tmp_path: Path) -> None:
    root = project(tmp_path, 'pathlib.Path(f"done-{task}.txt").write_text("x")\nprint("ok")')

    assert loop_process(root, "execute-tasks", "7", "--agent", "command").returncode == 0

    data = cost(root)
    total = data["total"]
    assert total["runs"] == 4 and total["unknownRuns"] == 4  # type: ignore[index]
    text = loop_process(root, "cost", "7")
    assert text.returncode == 0
    assert "task 1" in text.stdout and "item: total" in text.stdout


def test_status_forecasts_the_rest_from_the_finished_tasks(tmp_path: Path) -> None:
    root = project(tmp_path, REPORTS_USAGE)

    ran = loop_process(root, "execute-tasks", "7", "--agent", "command", "--max-tasks", "2")

    assert ran.returncode == 0, ran.stderr
    status = loop_process(root, "status", "7", "--json")
    assert status.returncode == 0, status.stderr
    forecast = json.loads(status.stdout)["cost"]["forecast"]
    done = [t for t in ("1", "2", "3", "4") if (root / f"done-{t}.txt").exists()]
    mean = sum(sum(USAGE[t]) for t in done) / len(done)
    assert forecast == {
        "remainingTasks": 2,
        "measuredTasks": 2,
        "tokens": round(mean * 2),
        "dollars": round(sum(dollars(USAGE[t]) for t in done) / 2 * 2, 4),
    }
    assert "2 task(s) left" in loop_process(root, "status", "7").stdout


RETRIES_TASK_3 = (
    f"usage = {repr(USAGE)}[task]\n"
    'with open(os.environ["LOOP_USAGE_FILE"], "a") as out:\n'
    '    out.write(json.dumps({"model": "fake-model", "input": usage[0], "output": usage[1], '
    '"cacheRead": usage[2], "cacheWrite": usage[3]}) + "\\n")\n'
    'if task == "3" and len(mine) == 1:\n'
    '    sys.exit("the first run of task 3 fails")\n'
    'pathlib.Path(f"done-{task}.txt").write_text("done\\n")\n'
    "print(f\"made done-{task}.txt in lane {os.environ['LOOP_LANE']}\")"
)


def test_a_parallel_run_charges_every_lane_run_to_its_task_attempt_and_lane(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, RETRIES_TASK_3)

    ran = loop_process(
        root, "execute-tasks", "7", "--agent", "command", "--parallel", "2", "--json"
    )

    assert ran.returncode == 0, ran.stdout + ran.stderr
    records = store.read_runs(root, "issue-7")
    assert sorted((r.task, r.kind) for r in records) == [
        ("1", "task"),
        ("2", "task"),
        ("3", "retry"),
        ("3", "task"),
        ("4", "task"),
    ]
    assert {r.lane for r in records} <= {1, 2} and None not in {r.lane for r in records}
    assert {r.attempt for r in records} == {1}
    failed = [r for r in records if r.task == "3" and r.kind == "task"]
    assert [r.exit_code for r in failed] == [1]
    data = cost(root)
    rows = {row["task"]: row for row in data["tasks"]}  # type: ignore[index, union-attr]
    for task, counts in USAGE.items():
        runs = 2 if task == "3" else 1
        work = rows[task]["work"]
        assert work["runs"] == runs
        assert [work["tokens"][k] for k in ("input", "output", "cacheRead", "cacheWrite")] == [
            n * runs for n in counts
        ]
    summary = events(ran.stdout)[-1]
    assert summary["event"] == "done" and summary["cost"]["total"] == data["total"]
