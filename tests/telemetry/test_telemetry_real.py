"""Readings from real transcripts and rollouts (tests/fixtures/harness/, see its README).

The files were written by the pinned Claude Code 2.1.328 and Codex 0.169.0 against fake
APIs that reported fixed usage. The expected numbers below are the fakes' numbers as the
README lists them, not values read back by the code under test. Ids come from the hook
payload files, because re-recording changes them.

"Just compacted" and "before compaction" states are real files cut at a real moment: the
lines a hook would have seen at that point of the session.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from the_loop.telemetry import (
    Harness,
    ReadingState,
    WindowSource,
    read_claude_transcript,
    read_codex_rollout,
)
from the_loop.telemetry.locate import (
    claude_project_folders,
    detect_harness,
    find_claude_transcript,
    find_codex_rollout,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "harness"
Run = Callable[..., subprocess.CompletedProcess[str]]


def records(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines()]


def cut_after(name: str, tmp_path: Path, is_last: Callable[[dict[str, Any]], bool]) -> Path:
    """The fixture's lines up to and including the first line ``is_last`` picks."""
    lines = (FIXTURES / name).read_text().splitlines(keepends=True)
    for index, line in enumerate(lines):
        if is_last(json.loads(line)):
            target = tmp_path / name
            target.write_text("".join(lines[: index + 1]))
            return target
    raise AssertionError(f"{name}: no line to cut after")


def hook_sessions(name: str, scenario: str) -> set[str]:
    """Session ids the hooks of one recorded scenario saw (its cwd ends in ``scenario``)."""
    return {p["session_id"] for p in records(name) if p["cwd"].endswith("/" + scenario)}


def kind(record: dict[str, Any]) -> tuple[Any, Any]:
    payload = record.get("payload")
    inner = payload.get("type") if isinstance(payload, dict) else None
    return record.get("type"), inner or record.get("subtype")


def is_summary(record: dict[str, Any]) -> bool:
    return record.get("isCompactSummary") is True


def is_boundary(record: dict[str, Any]) -> bool:
    return kind(record) == ("system", "compact_boundary")


def before_boundary(name: str, tmp_path: Path) -> Path:
    """The transcript as it stood just before compaction began."""
    lines = (FIXTURES / name).read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if is_boundary(json.loads(line)))
    target = tmp_path / name
    target.write_text("".join(lines[:first]))
    return target


# --- Claude Code -------------------------------------------------------------------------


def test_claude_tool_use_ends_at_the_last_replys_usage() -> None:
    reading = read_claude_transcript(FIXTURES / "claude-tool-use.jsonl")
    assert reading.state is ReadingState.KNOWN
    assert reading.tokens_in_use == 5 + 400 + 20100 == 20505
    assert reading.model == "claude-opus-5-5"
    assert (reading.window, reading.window_source) == (1_000_000, WindowSource.MODEL)
    assert hook_sessions("claude-hooks.jsonl", "claude-tool") == {reading.session_id}


def test_claude_a_reply_on_two_block_lines_counts_once(tmp_path: Path) -> None:
    # msg_fake_0000 is written as a text line and a tool_use line with the same usage.
    path = cut_after(
        "claude-tool-use.jsonl",
        tmp_path,
        lambda r: r.get("type") == "assistant" and r.get("apiBlockIndex") == 1,
    )
    assert read_claude_transcript(path).tokens_in_use == 8 + 2100 + 18000


def test_claude_the_headless_results_window_is_preferred() -> None:
    reading = read_claude_transcript(
        FIXTURES / "claude-tool-use.jsonl", result_windows={"claude-opus-5-5": 1_000_000}
    )
    assert (reading.window, reading.window_source) == (1_000_000, WindowSource.RESULT)


@pytest.mark.parametrize(
    ("name", "before", "after", "pre", "post"),
    [
        ("claude-compact.jsonl", 3 + 6000 + 0, 4 + 800 + 5000, 6028, 2589),
        ("claude-auto-compact.jsonl", 2 + 150000 + 40000, 6 + 1200 + 9000, 190075, 2712),
    ],
)
def test_claude_compaction_across_a_session(
    tmp_path: Path, name: str, before: int, after: int, pre: int, post: int
) -> None:
    assert read_claude_transcript(before_boundary(name, tmp_path)).tokens_in_use == before

    compacted = read_claude_transcript(cut_after(name, tmp_path, is_summary))
    assert compacted.state is ReadingState.JUST_COMPACTED
    assert compacted.tokens_in_use is None and compacted.percent is None
    assert (compacted.pre_tokens, compacted.post_tokens) == (pre, post)

    final = read_claude_transcript(FIXTURES / name)
    assert (final.state, final.tokens_in_use) == (ReadingState.KNOWN, after)


def test_claude_the_project_folder_rule_matches_the_real_paths() -> None:
    for payload in records("claude-hooks.jsonl"):
        transcript = Path(payload["transcript_path"])
        assert transcript.parent.name == claude_project_folders(Path(payload["cwd"]))[0]
        assert transcript.name == f"{payload['session_id']}.jsonl"
        assert transcript.parent.parent.name == "projects"


def test_claude_a_session_is_found_where_the_cli_put_it(tmp_path: Path) -> None:
    payload = records("claude-hooks.jsonl")[0]
    written = Path(payload["transcript_path"])  # …/claude-home/.claude/projects/<folder>/<id>
    home = tmp_path / "home"
    target = home / ".claude" / "projects" / written.parent.name / written.name
    target.parent.mkdir(parents=True)
    target.write_bytes((FIXTURES / "claude-tool-use.jsonl").read_bytes())
    found = find_claude_transcript(
        payload["session_id"], cwd=Path(payload["cwd"]), env={"HOME": str(home)}
    )
    assert found == target


# --- Codex -------------------------------------------------------------------------------


def test_codex_tool_use_ends_at_the_last_token_count() -> None:
    reading = read_codex_rollout(FIXTURES / "codex-tool-use.jsonl")
    assert reading.state is ReadingState.KNOWN
    assert reading.tokens_in_use == 12400 + 40  # total_tokens of the last response
    assert dict(reading.breakdown)["input_tokens"] == 12400
    assert (reading.window, reading.window_source) == (258_400, WindowSource.ROLLOUT)
    assert reading.model == "gpt-5.5"
    assert hook_sessions("codex-hooks.jsonl", "codex-tool") == {reading.session_id}


def test_codex_compaction_across_a_thread(tmp_path: Path) -> None:
    counts = [r for r in records("codex-compact.jsonl") if kind(r) == ("event_msg", "token_count")]
    assert len(counts) == 5  # as the README lists them

    def after_count(n: int) -> Path:
        seen = iter(range(1, 100))
        return cut_after(
            "codex-compact.jsonl",
            tmp_path,
            lambda r: kind(r) == ("event_msg", "token_count") and next(seen) == n,
        )

    assert read_codex_rollout(after_count(1)).tokens_in_use == 9000 + 20

    at_compacted = cut_after("codex-compact.jsonl", tmp_path, lambda r: r["type"] == "compacted")
    reading = read_codex_rollout(at_compacted)
    assert reading.state is ReadingState.JUST_COMPACTED
    assert (reading.pre_tokens, reading.post_tokens) == (9100 + 200, None)

    # Codex's own post-compaction count: zero in, zero out, total 6884. Not a measurement.
    reading = read_codex_rollout(after_count(4))
    assert reading.state is ReadingState.JUST_COMPACTED
    assert reading.tokens_in_use is None
    assert (reading.pre_tokens, reading.post_tokens) == (9300, 6884)

    final = read_codex_rollout(FIXTURES / "codex-compact.jsonl")
    assert (final.state, final.tokens_in_use) == (ReadingState.KNOWN, 3000 + 15)
    assert hook_sessions("codex-hooks.jsonl", "codex-compact") == {final.session_id}


def test_codex_a_thread_is_found_where_the_cli_put_it(tmp_path: Path) -> None:
    payload = records("codex-hooks.jsonl")[0]
    written = Path(payload["transcript_path"])  # …/.codex/sessions/YYYY/MM/DD/rollout-…-<id>
    day = written.parts[-4:-1]
    home = tmp_path / "codex"
    target = home / "sessions" / Path(*day) / written.name
    target.parent.mkdir(parents=True)
    target.write_bytes((FIXTURES / "codex-tool-use.jsonl").read_bytes())
    assert written.name.endswith(f"-{payload['session_id']}.jsonl")
    assert find_codex_rollout(payload["session_id"], env={"CODEX_HOME": str(home)}) == target


# --- both, through the CLI ---------------------------------------------------------------


def test_the_harness_is_recognised_from_real_content() -> None:
    for name in ("claude-tool-use.jsonl", "claude-compact.jsonl", "claude-auto-compact.jsonl"):
        assert detect_harness(FIXTURES / name) is Harness.CLAUDE
    for name in ("codex-tool-use.jsonl", "codex-compact.jsonl"):
        assert detect_harness(FIXTURES / name) is Harness.CODEX


@pytest.mark.parametrize(
    ("name", "harness", "tokens", "window"),
    [
        ("claude-auto-compact.jsonl", "claude", 10206, 1_000_000),
        ("codex-compact.jsonl", "codex", 3015, 258_400),
    ],
)
def test_loop_context_on_real_files(
    loop_process: Run, tmp_path: Path, name: str, harness: str, tokens: int, window: int
) -> None:
    done = loop_process("context", "--transcript", str(FIXTURES / name), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["harness"], data["state"]) == (harness, "known")
    assert (data["tokensInUse"], data["window"]) == (tokens, window)
    assert data["pressure"]["verdict"] == "no_op"
