"""``loop context`` end to end: the real CLI in a subprocess, on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from transcript_lines import (
    SESSION,
    THREAD,
    claude_assistant,
    claude_user,
    codex_token_count,
    codex_turn_context,
    compact_boundary,
    write_lines,
)

Run = Callable[..., subprocess.CompletedProcess[str]]
SUM = 2 + 5139 + 9631


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def loop_context(
    run: Run, project: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run("context", *args, cwd=project, env={"NO_COLOR": "1", **(env or {})})


def test_a_known_reading_and_its_verdict(loop_process: Run, project: Path) -> None:
    path = write_lines(project / "t.jsonl", [claude_user(), claude_assistant()])
    done = loop_context(loop_process, project, "--transcript", "t.jsonl")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"claude {SESSION}: {SUM:,} tokens in use of 1,000,000 "
        f"(1.5%, window from the model id claude-opus-5-5)  [{path}:2]",
        "pressure: no_op  (tokens arm: no_op, percent arm: no_op)",
    ]
    assert done.stderr == ""


def test_json_has_the_reading_and_the_policys_verdict(loop_process: Run, project: Path) -> None:
    line = claude_assistant(input_tokens=150_000, cache_creation=0, cache_read=10_000)
    write_lines(project / "t.jsonl", [line])
    done = loop_context(loop_process, project, "--transcript", "t.jsonl", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["state"] == "known"
    assert data["tokensInUse"] == 160_000
    assert data["window"] == 1_000_000 and data["windowSource"] == "model"
    assert data["pressure"]["verdict"] == "no_op"
    assert data["pressure"]["tokens"] == 160_000
    assert data["pressure"]["percent"] == 16


def test_the_projects_thresholds_decide_the_verdict(loop_process: Run, project: Path) -> None:
    (project / ".the-loop").mkdir()
    (project / ".the-loop" / "config.yaml").write_text(
        'version: "0.1.0"\n'
        "contextManagement:\n  pressure:\n    softTokens: 10000\n    hardTokens: 20000\n"
    )
    write_lines(project / "t.jsonl", [claude_assistant()])
    done = loop_context(loop_process, project, "--transcript", "t.jsonl", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pressure"]["verdict"] == "selective_drop"


def test_a_count_above_the_window_is_a_full_window(loop_process: Run, project: Path) -> None:
    line = claude_assistant(model="claude-sonnet-4-5-20250929", input_tokens=250_000)
    write_lines(project / "t.jsonl", [line])
    done = loop_context(loop_process, project, "--transcript", "t.jsonl", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["percent"] > 100
    assert data["pressure"]["verdict"] == "full_clear"
    assert data["pressure"]["percent"] == 100


def test_just_compacted_is_unknown_with_the_size_before(loop_process: Run, project: Path) -> None:
    path = write_lines(project / "t.jsonl", [claude_assistant(), compact_boundary(155025)])
    done = loop_context(loop_process, project, "--transcript", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"claude {SESSION}: tokens in use unknown — compacted since the last usage record; "
        f"the next reply gives a fresh count (155,025 tokens before compaction)  [{path}:2]",
    ]
    data = json.loads(
        loop_context(loop_process, project, "--transcript", str(path), "--json").stdout
    )
    assert (data["state"], data["tokensInUse"], data["preTokens"]) == (
        "just-compacted",
        None,
        155025,
    )
    assert data["pressure"] is None


def test_a_garbled_file_is_unknown_not_a_traceback(loop_process: Run, project: Path) -> None:
    path = project / "t.jsonl"
    path.write_bytes(b'\xff\xfe{"usage": [[[[\n{"type":"assistant","message":{"usage":\n\x00\x00')
    done = loop_context(loop_process, project, "--transcript", "t.jsonl", "--harness", "claude")
    assert done.returncode == 0, done.stderr
    assert "tokens in use unknown — no assistant usage record in the transcript yet" in done.stdout
    assert "Traceback" not in done.stderr


def test_a_session_is_found_under_home(loop_process: Run, project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = str(project.resolve()).replace("/", "-")
    write_lines(home / ".claude" / "projects" / folder / f"{SESSION}.jsonl", [claude_assistant()])
    done = loop_context(
        loop_process, project, "--session", SESSION, "--json", env={"HOME": str(home)}
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["harness"], data["sessionId"], data["tokensInUse"]) == ("claude", SESSION, SUM)


def test_a_codex_thread_is_found_under_codex_home(
    loop_process: Run, project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "codex"
    name = f"rollout-2026-11-02T10-00-00-{THREAD}.jsonl"
    write_lines(
        home / "sessions" / "2026" / "11" / "02" / name,
        [codex_turn_context(), codex_token_count(total=200_000)],
    )
    done = loop_context(loop_process, project, "--session", THREAD, env={"CODEX_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith(
        f"codex {THREAD}: 200,000 tokens in use of 258,400 (77.4%, window from the rollout)"
    )
    assert (
        second
        == "pressure: selective_drop  (tokens arm: selective_drop, percent arm: selective_drop)"
    )


def test_nothing_located_exits_1_and_says_where_it_looked(
    loop_process: Run, project: Path, tmp_path: Path
) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "CODEX_HOME": str(tmp_path / "cx")}
    done = loop_context(loop_process, project, "--session", SESSION, env=env)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == f"error: no transcript found for session {SESSION}"
    assert str(tmp_path / "cfg" / "projects") in done.stderr
    assert lines[-1].startswith("hint: pass --transcript PATH")


def test_a_missing_transcript_exits_1(loop_process: Run, project: Path) -> None:
    done = loop_context(loop_process, project, "--transcript", "gone.jsonl")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == f"error: no transcript at {project / 'gone.jsonl'}"


def test_neither_transcript_nor_session_is_a_usage_error(loop_process: Run, project: Path) -> None:
    done = loop_context(loop_process, project)
    assert done.returncode == 2
    # no live session either (no harness variable, no project whose hooks saw one)
    assert done.stderr.startswith("error: no live session found: say which session to read\n")
    assert "give --transcript PATH (a hook's transcript_path) or --session ID" in done.stderr


def test_the_console_script_runs_too(project: Path) -> None:
    script = Path(sys.executable).parent / "loop"
    if not script.exists():
        pytest.skip(f"no console script beside {sys.executable}")
    write_lines(project / "t.jsonl", [claude_assistant()])
    done = subprocess.run(
        [str(script), "--json", "context", "--transcript", "t.jsonl"],
        cwd=project,
        env={**os.environ, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tokensInUse"] == SUM


def test_a_200_mb_transcript_through_the_cli(loop_process: Run, project: Path) -> None:
    path = project / f"{SESSION}.jsonl"
    tail = ("\n" + claude_assistant(input_tokens=42) + "\n" + claude_user() * 1 + "\n").encode()
    with path.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024 - len(tail))
        handle.seek(0, 2)
        handle.write(tail)
    done = loop_context(loop_process, project, "--transcript", str(path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["tokensInUse"] == 42 + 5139 + 9631
    assert data["bytesRead"] <= 64 * 1024  # one block
