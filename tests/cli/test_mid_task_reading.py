"""``loop checkpoint --mid-task`` with no numbers: the reading comes from the session.

The session's transcript is found through the hooks' record or by the
session id under the harness's folders; without one the verdict names the gap
and the reset takes the safe side (compaction, never a clear).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.hooks import SESSION, claude_transcript, hook
from helpers.project import ok, project_copy, reset_records

ARGS = ("--did", "half the key", "--next", "finish the config key: the schema default")
NO_TOKENS = "no token count: the tokens arm could not be applied (a gap, not zero)"
NO_WINDOW = "no window size or percent: the percent arm could not be applied"


@pytest.fixture
def in_task(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = project_copy(tmp_path_factory, tmp_path / "project")
    ok(root, "execute-tasks", "7")
    return root


def mid(root: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, object]:
    ran = ok(root, "--json", "checkpoint", "7", "--mid-task", *ARGS, *extra, env=env)
    data: dict[str, object] = json.loads(ran.stdout)
    return data


def test_no_reading_at_all_is_a_named_gap_and_a_compaction(in_task: Path) -> None:
    data = mid(in_task)

    assert data["reset"] == "compact"
    assert data["reason"] == (
        "mid-task in task 1; no pressure reading (a gap, not a low reading), so compaction "
        "to be safe (contextManagement.midTask: compact; never clear mid-task)"
    )
    pressure = data["pressure"]
    assert isinstance(pressure, dict)
    assert pressure["verdict"] is None
    assert pressure["gaps"] == [
        NO_TOKENS,
        NO_WINDOW,
        "no session id, so no transcript to read a reading from",
    ]
    assert [r["mode"] for r in reset_records(in_task)] == ["compact"]


def test_the_text_directive_names_the_gap(in_task: Path) -> None:
    out = ok(in_task, "checkpoint", "7", "--mid-task", *ARGS).stdout.splitlines()
    assert out[0] == "pressure: unknown  (tokens arm: n/a, percent arm: n/a)"
    assert "gap: no session id, so no transcript to read a reading from" in out
    assert any(
        line.startswith("reset: compact — mid-task in task 1; no pressure reading") for line in out
    )


def test_the_reading_comes_from_the_transcript_the_hooks_recorded(
    in_task: Path, tmp_path: Path
) -> None:
    transcript = claude_transcript(tmp_path / "t.jsonl", 120_000)  # 60 % of 200,000
    hook(in_task, "SessionStart", source="startup", transcript_path=transcript)

    data = mid(in_task, "--session", SESSION)

    assert data["reset"] == "none"
    assert data["pressure"] == {
        "verdict": "no_op",
        "tokenArm": "no_op",
        "percentArm": "no_op",
        "tokens": 120_000,
        "percent": 60,
        "gaps": [],
    }


def test_the_transcript_is_found_by_session_id_without_the_hooks(
    in_task: Path, tmp_path: Path
) -> None:
    config = tmp_path / "claude-config"
    folder = config / "projects" / str(in_task).replace("/", "-")
    claude_transcript(folder / f"{SESSION}.jsonl", 190_000)  # 95 %
    env = {"CLAUDE_CONFIG_DIR": str(config), "CLAUDE_CODE_SESSION_ID": SESSION}

    data = mid(in_task, env=env)

    assert data["reset"] == "compact"
    pressure = data["pressure"]
    assert isinstance(pressure, dict)
    assert (pressure["verdict"], pressure["tokens"], pressure["percent"]) == (
        "full_clear",
        190_000,
        95,
    )
    assert reset_records(in_task)[0]["session"] == SESSION


def test_a_session_without_a_transcript_is_a_gap(in_task: Path, tmp_path: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "none"), "CODEX_HOME": str(tmp_path / "none")}
    data = mid(in_task, "--session", "no-such-session", env=env)

    assert data["reset"] == "compact"
    pressure = data["pressure"]
    assert isinstance(pressure, dict)
    (gap,) = pressure["gaps"][2:]
    assert gap.startswith("no reading for session no-such-session: ")


def test_a_percent_given_by_hand_never_silences_the_token_arm(
    in_task: Path, tmp_path: Path
) -> None:
    # 290k tokens of a 1M window is 29 %: the percent arm says no_op, the token arm
    # (hardTokens 280,000) says full_clear, and the stricter one wins.
    transcript = claude_transcript(
        tmp_path / "t.jsonl", 290_000, model="claude-sonnet-4-5-20250929[1m]"
    )
    hook(in_task, "SessionStart", source="startup", transcript_path=transcript)

    data = mid(in_task, "--percent", "29", "--session", SESSION)

    assert data["reset"] == "compact"
    assert data["pressure"] == {
        "verdict": "full_clear",
        "tokenArm": "full_clear",
        "percentArm": "no_op",
        "tokens": 290_000,
        "percent": 29,
        "gaps": [],
    }


def test_a_percent_given_without_a_session_keeps_the_token_gap(in_task: Path) -> None:
    data = mid(in_task, "--percent", "29")

    assert data["reset"] == "none"
    pressure = data["pressure"]
    assert isinstance(pressure, dict)
    assert (pressure["verdict"], pressure["gaps"]) == ("no_op", [NO_TOKENS])
