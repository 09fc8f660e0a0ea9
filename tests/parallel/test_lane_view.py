"""What a parallel run shows: one live line per lane and the queue, lane tags, the final table."""

from __future__ import annotations

import io

import pytest

from the_loop.cli.progress import LaneView, lane_table
from the_loop.driver.events import Merged, Progress, RunSummary, TaskStarted


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _summary(table: tuple[dict[str, object], ...]) -> RunSummary:
    return RunSummary(
        item="issue-7",
        agent="command",
        status="done",
        reason="all 2 tasks done",
        tasks_done=("1", "2"),
        sessions=(),
        resets={},
        resets_aborted=0,
        runs=3,
        tokens_peak=None,
        seconds=4.0,
        open_reset=None,
        lanes=2,
        table=table,
    )


def test_the_live_block_has_a_line_per_lane_and_the_queue(
    capsys: pytest.CaptureFixture[str],
) -> None:
    live = _Terminal()
    view = LaneView(as_json=False, live=live, lanes=2)
    view(TaskStarted("3", "retry ledger", 1, 3, "new", None, lane=1))
    view(Progress("3", 1, "s-1", 1500, 65.0, "running", lane=1))
    drawn = live.getvalue().rsplit("\033[K", 1)[-1]
    assert "lane 1: task 3 · 1:05 · 1.5k tokens · running" in drawn
    assert "lane 2: idle" in drawn and "queue: empty" in drawn
    view(Merged("3", 1, 1, "landed", "landed as abc", "abc1234567", ("4",)))
    out = capsys.readouterr().out
    assert "[lane 1] task 3: retry ledger" in out
    assert "[lane 1] merge task 3: landed abc1234567 — landed as abc" in out
    assert "queue: 4" in live.getvalue().rsplit("\033[K", 1)[-1]


def test_json_events_carry_the_lane(capsys: pytest.CaptureFixture[str]) -> None:
    view = LaneView(as_json=True, live=None, lanes=2)
    view(TaskStarted("3", "retry ledger", 1, 3, "new", None, lane=2))
    view(Progress("3", 1, None, None, 1.0, "running", lane=2))  # ticks are not events
    assert capsys.readouterr().out.strip() == (
        '{"event": "task-started", "task": "3", "title": "retry ledger", "run": 1, '
        '"maxRuns": 3, "start": "new", "session": null, "lane": 2}'
    )


def test_the_final_table_names_lane_attempts_time_tokens_and_merge() -> None:
    table = (
        {"task": "1", "lane": 1, "attempts": 1, "seconds": 2.5, "tokens": 1200, "merge": "landed"},
        {"task": "2", "lane": 2, "attempts": 2, "seconds": 4.0, "tokens": None, "merge": "landed"},
    )
    lines = lane_table(_summary(table).table)
    assert lines[1].split() == ["task", "lane", "attempts", "time", "tokens", "merge"]
    assert lines[2].split() == ["1", "1", "1", "2.5s", "1.2k", "landed"]
    assert lines[3].split() == ["2", "2", "2", "4.0s", "?", "landed"]
