"""PostToolUse: the window's fill, read from the transcript after every tool call.

The transcripts are written in Claude Code's shape with model
claude-sonnet-4-5-20250929 (a 200,000-token window), so with the default
thresholds 150,000 tokens is 75 % (soft) and 180,000 is 90 % (hard).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.hooks import FIXTURES, LOOP, SESSION, claude_transcript, hook, session_record
from helpers.project import ok, reset_records

COMMAND = (
    f"{LOOP} checkpoint issue-7 --mid-task --task 1 --did '<what is done so far>' "
    "--next '<the concrete next step>'"
)


def tool_use(
    root: Path, transcript: Path, harness: str = "claude"
) -> tuple[str | None, str | None]:
    ran = hook(root, "PostToolUse", harness=harness, transcript_path=transcript, tool_name="Bash")
    assert (ran.exit_code, ran.stderr) == (0, "")
    return ran.context, ran.block


def test_below_the_soft_threshold_nothing_is_said(in_task: Path, tmp_path: Path) -> None:
    transcript = claude_transcript(tmp_path / "t.jsonl", 100_000)
    assert tool_use(in_task, transcript) == (None, None)


def test_past_the_soft_threshold_a_checkpoint_is_due_said_once(
    in_task: Path, tmp_path: Path
) -> None:
    transcript = claude_transcript(tmp_path / "t.jsonl", 160_000)

    context, block = tool_use(in_task, transcript)

    assert block is None
    assert context == (
        "loop: the context window is at 80 % (160,000 tokens of 200,000), past the soft "
        "threshold. A mid-task checkpoint of issue-7 is due at the next safe point (a test "
        f"passing, a file finished): `{COMMAND}`. Its directive then asks for a compaction "
        "(Claude Code: /compact)."
    )
    assert tool_use(in_task, transcript) == (None, None)  # said once, not after every call
    # the effective policy stays remembered next to the announcement
    record = session_record(in_task)
    assert record["announced"] == "selective_drop"
    assert record["policy"]["value"]["pressure"]["soft_tokens"] == 200_000


def test_at_the_hard_threshold_work_is_blocked_with_the_command(
    in_task: Path, tmp_path: Path
) -> None:
    transcript = claude_transcript(tmp_path / "t.jsonl", 190_000)

    for _ in range(2):  # every tool call, until the checkpoint is taken
        context, block = tool_use(in_task, transcript)
        assert context is None
        assert block == (
            "loop: the context window is at 95 % (190,000 tokens of 200,000), at or past the "
            "hard threshold. Work on issue-7 stops until an interim checkpoint is taken: "
            f"`{COMMAND}` (fill in the two texts). Then the context is compacted "
            "(Claude Code: /compact)."
        )


def test_once_the_checkpoint_is_taken_the_compaction_is_what_is_due(
    in_task: Path, tmp_path: Path
) -> None:
    transcript = claude_transcript(tmp_path / "t.jsonl", 190_000)
    tool_use(in_task, transcript)  # records the session and its transcript
    # the agent runs the command it was given; the reading comes from the transcript
    ran = ok(
        in_task,
        "--json",
        "checkpoint",
        "7",
        "--mid-task",
        "--did",
        "half the key",
        "--next",
        "finish the config key: the schema default",
        "--session",
        SESSION,
    )
    assert '"reset": "compact"' in ran.stdout
    (record,) = reset_records(in_task)

    _, block = tool_use(in_task, transcript)

    assert block == (
        "loop: the context window is at 95 % (190,000 tokens of 200,000), at or past the "
        f"hard threshold. Checkpoint {record['checkpoint']} of issue-7 is taken; what is due "
        "now is the compaction (Claude Code: /compact), so the turn ends here."
    )


def test_a_compaction_re_arms_the_announcement(in_task: Path, tmp_path: Path) -> None:
    transcript = claude_transcript(tmp_path / "t.jsonl", 160_000)
    assert tool_use(in_task, transcript)[0] is not None
    assert session_record(in_task)["announced"] == "selective_drop"

    hook(in_task, "PostCompact", trigger="auto")

    assert session_record(in_task)["announced"] is None
    assert tool_use(in_task, transcript)[0] is not None


def test_falling_below_the_threshold_re_arms_it_too(in_task: Path, tmp_path: Path) -> None:
    high = claude_transcript(tmp_path / "high.jsonl", 160_000)
    low = claude_transcript(tmp_path / "low.jsonl", 20_000)
    assert tool_use(in_task, high)[0] is not None
    assert tool_use(in_task, low) == (None, None)
    assert tool_use(in_task, high)[0] is not None


def test_an_unknown_count_is_not_a_reason_to_speak(in_task: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "empty.jsonl"
    transcript.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n')
    assert tool_use(in_task, transcript) == (None, None)
    assert tool_use(in_task, tmp_path / "missing.jsonl") == (None, None)


def test_the_items_thresholds_apply_and_a_config_change_is_seen(
    in_task: Path, tmp_path: Path
) -> None:
    transcript = claude_transcript(tmp_path / "t.jsonl", 60_000)  # 30 %: nothing by default
    assert tool_use(in_task, transcript) == (None, None)
    config = in_task / ".the-loop/config.yaml"
    config.write_text(
        config.read_text()
        + "contextManagement:\n  pressure:\n    softTokens: 50000\n    hardTokens: 100000\n"
    )

    context, _ = tool_use(in_task, transcript)

    assert context is not None and context.startswith(
        "loop: the context window is at 30 % (60,000 tokens of 200,000), past the soft threshold."
    )


def test_context_management_off_means_no_pressure_talk(in_task: Path, tmp_path: Path) -> None:
    config = in_task / ".the-loop/config.yaml"
    config.write_text(config.read_text() + "contextManagement:\n  enabled: false\n")
    transcript = claude_transcript(tmp_path / "t.jsonl", 190_000)
    assert tool_use(in_task, transcript) == (None, None)


def test_a_real_codex_rollout_is_read(in_task: Path, tmp_path: Path) -> None:
    # Recorded with Codex 0.169.0: 12,440 tokens in use (total_tokens) of a 258,400 window.
    rollout = shutil.copy(FIXTURES / "codex-tool-use.jsonl", tmp_path / "rollout.jsonl")
    assert tool_use(in_task, Path(rollout), harness="codex") == (None, None)
    config = in_task / ".the-loop/config.yaml"
    config.write_text(
        config.read_text()
        + "contextManagement:\n  pressure:\n    softTokens: 10000\n    hardTokens: 12000\n"
    )

    _, block = tool_use(in_task, Path(rollout), harness="codex")

    assert block is not None
    assert block.startswith("loop: the context window is at 5 % (12,440 tokens of 258,400)")
    assert block.endswith("(Codex compacts by itself when its window is full).")


@pytest.mark.parametrize("tokens", [160_000, 190_000])
def test_with_no_item_in_progress_it_says_so_once(
    project: Path, tmp_path: Path, tokens: int
) -> None:
    log = project / "docs/specs/issue-7/execution-log.md"
    log.write_text(log.read_text().replace("phase: implementation", "phase: complete", 1))
    transcript = claude_transcript(tmp_path / "t.jsonl", tokens)

    context, block = tool_use(project, transcript)

    assert block is None
    assert context is not None and context.endswith("No loop work item is in progress here.")
    assert tool_use(project, transcript) == (None, None)
