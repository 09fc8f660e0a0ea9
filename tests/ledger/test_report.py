"""The ledger's parts without agents: records on disk, sums per task, prices, the forecast."""

from __future__ import annotations

from pathlib import Path

from the_loop.ledger import store
from the_loop.ledger.cost_text import cost_table
from the_loop.ledger.forecast import forecast
from the_loop.ledger.harness_usage import codex_usage
from the_loop.ledger.prices import Price, dollars
from the_loop.ledger.records import RunRecord
from the_loop.ledger.report import cost_report
from the_loop.ledger.tokens import Tokens


def record(task: str | None, kind: str = "task", model: str = "m", n: int = 1000) -> RunRecord:
    usage = {model: Tokens(input=n, output=n // 10, cache_read=n * 2, cache_write=0)}
    return RunRecord("issue-7", task, 1, kind, "command", "s", "2026-01-01T00:00:00Z", 1.5, usage)


def test_records_round_trip_and_a_torn_line_is_skipped(tmp_path: Path) -> None:
    (tmp_path / ".the-loop").mkdir()
    store.append(tmp_path, record("1"), total={"m": Tokens(5, 5, 5, 5)})
    store.append(tmp_path, record("2", kind="compaction"))
    with (store.folder(tmp_path) / store.RUNS).open("ab") as handle:
        handle.write(b'{"item": "issue-7", "kind": "ta')  # a crash mid-append

    assert store.read_runs(tmp_path) == [record("1"), record("2", kind="compaction")]
    assert store.cursor(tmp_path, "s") == {"m": Tokens(5, 5, 5, 5)}
    assert store.cursor(tmp_path, "other") is None


def test_sums_per_task_with_compaction_apart_and_dollars_from_prices() -> None:
    prices = {"m": Price(input=3, output=15, cache_read=0.3)}
    runs = [record("2"), record("10"), record("2", kind="compaction", n=500), record("2", "retry")]

    report = cost_report("issue-7", runs, prices)

    assert [row.task for row in report.tasks] == ["2", "10"]  # id order, not text order
    two = report.task("2")
    assert two is not None and two.work.runs == 2 and two.compaction.runs == 1
    assert two.compaction.tokens == Tokens(500, 50, 1000, 0)
    assert report.total.tokens.total == 3 * 3100 + 1550
    data = report.to_json()
    expected = (1000 * 3 + 100 * 15 + 2000 * 0.3) / 1e6
    assert data["tasks"][0]["work"]["dollars"] == round(2 * expected, 6)  # type: ignore[index]
    assert "item: total" in cost_table(data)


def test_a_model_without_a_price_has_no_dollars_not_zero() -> None:
    usage = {"m": Tokens(10, 1), "unknown-model": Tokens(5)}
    assert dollars(usage, {"m": Price(input=1)}) is None
    report = cost_report("issue-7", [record("1", model="x")], {})
    assert report.to_json()["unpriced"] == ["x"]


def test_codex_counts_become_disjoint() -> None:
    total = {"input_tokens": 1500, "cached_input_tokens": 1000, "output_tokens": 30}
    assert codex_usage(total, "gpt") == {"gpt": Tokens(input=500, output=30, cache_read=1000)}


def test_forecast_is_the_mean_of_finished_tasks_times_what_is_left() -> None:
    report = cost_report("issue-7", [record("1", n=1000), record("2", n=3000)], {})

    found = forecast(report, ["1", "2", "3"], remaining=4)

    assert found.measured_tasks == 2
    assert found.tokens == round((3100 + 9300) / 2 * 4)
    assert forecast(cost_report("issue-7", [], {}), ["1"], 3).tokens is None
