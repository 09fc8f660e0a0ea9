"""Sessions loop did not start are charged too: the Stop and SessionEnd hooks read the
session's own running total from its transcript and charge the item and task in focus."""

from __future__ import annotations

import json
from pathlib import Path

from driver.driver_project import FOUR, make_item
from helpers.hooks import SESSION, hook
from helpers.project import ok

from the_loop.ledger import store
from the_loop.ledger.tokens import Tokens


def cost_state(path: Path, input: int, output: int, read: int, write: int) -> None:
    """Append a ``cost-state`` line as Claude Code 2.1.328 writes it (a running total)."""
    counts = {
        "inputTokens": input,
        "outputTokens": output,
        "cacheReadInputTokens": read,
        "cacheCreationInputTokens": write,
    }
    line = {"type": "cost-state", "sessionId": SESSION, "modelUsage": {"claude-x": counts}}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


def test_turns_by_hand_are_charged_to_the_task_in_focus(tmp_path: Path) -> None:
    root = make_item(tmp_path / "p", FOUR)
    ok(root, "work-on", "7")
    ok(root, "task", "start", "7", "1")
    transcript = tmp_path / "t.jsonl"
    cost_state(transcript, 100, 10, 1000, 50)

    assert hook(root, "Stop", transcript_path=transcript).exit_code == 0
    cost_state(transcript, 250, 30, 3000, 50)
    assert hook(root, "SessionEnd", transcript_path=transcript, reason="other").exit_code == 0
    assert hook(root, "SessionEnd", transcript_path=transcript, reason="other").exit_code == 0

    runs = store.read_runs(root, "issue-7")
    assert [(r.task, r.kind) for r in runs] == [("1", "hook"), ("1", "hook")]
    assert [r.tokens for r in runs] == [Tokens(100, 10, 1000, 50), Tokens(150, 20, 2000, 0)]


def test_a_run_the_driver_started_is_left_to_the_driver(tmp_path: Path) -> None:
    root = make_item(tmp_path / "p", FOUR)
    ok(root, "work-on", "7")
    transcript = tmp_path / "t.jsonl"
    cost_state(transcript, 100, 10, 1000, 50)

    ran = hook(root, "Stop", transcript_path=transcript, env={"LOOP_TASK": "1"})

    assert ran.exit_code == 0
    assert store.read_runs(root) == []
