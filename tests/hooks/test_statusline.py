"""``loop statusline`` and its wiring by ``loop install claude`` (issue 21, item 6).

The line is computed from the status-line JSON Claude Code sends on stdin: the
item, the task in progress, the tokens in use against both arms and the next
boundary's reset. Also here: hook fields past their bound are not stored.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import invoke
from helpers.hooks import hook, state
from helpers.project import ok

LOOP_BIN = "/opt/venv/bin/loop"


def status(root: Path, tokens: int | None, window: int = 200_000) -> str:
    usage = (
        None
        if tokens is None
        else {
            "input_tokens": 2,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": tokens - 2,
        }
    )
    payload = {
        "session_id": "s-1",
        "context_window": {"context_window_size": window, "current_usage": usage},
    }
    result = invoke(["-C", str(root), "statusline"], input=json.dumps(payload))
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") == 1
    return result.stdout.strip()


def test_the_line_shows_item_task_tokens_both_arms_and_the_next_reset(in_task: Path) -> None:
    line = status(in_task, 120_000)

    assert line == (
        "loop issue-7 · task 1 config key · 120k/200k tokens 60% "
        "(soft 200k/hard 280k, 75/90%) · after the task: compact"
    )


def test_past_a_threshold_the_line_says_so(in_task: Path) -> None:
    assert status(in_task, 290_000, 1_000_000).endswith(
        "(soft 200k/hard 280k, 75/90%) !! past hard: checkpoint now · after the task: compact"
    )
    assert "! past soft: checkpoint soon" in status(in_task, 160_000)


def test_right_after_a_compaction_the_count_is_unknown_not_zero(in_task: Path) -> None:
    assert "tokens unknown" in status(in_task, None)


def test_outside_a_loop_project_it_still_prints_one_line(tmp_path: Path) -> None:
    result = invoke(["-C", str(tmp_path), "statusline"], input="not json")
    assert result.exit_code == 0
    assert result.stdout == "loop: not a loop project\n"


def test_install_claude_wires_the_status_line_and_keeps_a_users_own(project: Path) -> None:
    settings = project / ".claude/settings.json"
    ok(project, "install", "claude", "--loop-command", LOOP_BIN)
    assert json.loads(settings.read_text())["statusLine"] == {
        "type": "command",
        "command": f"{LOOP_BIN} statusline",
    }
    ok(project, "install", "claude", "--uninstall")
    assert not settings.exists() or "statusLine" not in json.loads(settings.read_text())

    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"statusLine": {"type": "command", "command": "my-line"}}))
    ok(project, "install", "claude", "--loop-command", LOOP_BIN)
    assert json.loads(settings.read_text())["statusLine"]["command"] == "my-line"


def test_a_huge_session_id_from_a_hook_is_not_stored(project: Path) -> None:
    hook(project, "SessionStart", session="x" * 5_000_000, source="startup")

    folder = state(project) / "sessions"
    stored = list(folder.glob("*.json")) if folder.is_dir() else []
    assert all(path.stat().st_size < 10_000 for path in stored)
