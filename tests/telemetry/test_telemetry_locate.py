"""Finding a transcript by session id, and telling the harness from the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_lines import (
    SESSION,
    THREAD,
    claude_assistant,
    codex_token_count,
    write_lines,
)

from the_loop.errors import ExitCode, UsageError
from the_loop.telemetry import Harness, TranscriptNotFoundError, locate_transcript, read_context
from the_loop.telemetry import locate as locate_module
from the_loop.telemetry.locate import (
    claude_project_folders,
    detect_harness,
    find_claude_transcript,
    find_codex_rollout,
)


def claude_file(config: Path, folder: str, session: str = SESSION) -> Path:
    return write_lines(config / "projects" / folder / f"{session}.jsonl", [claude_assistant()])


def codex_file(home: Path, day: str, thread: str = THREAD, stamp: str = "T10-00-00") -> Path:
    name = f"rollout-{day.replace('/', '-')}{stamp}-{thread}.jsonl"
    return write_lines(home / "sessions" / day / name, [codex_token_count()])


def test_the_project_folder_is_the_cwd_with_slashes_as_dashes() -> None:
    assert claude_project_folders(Path("/tmp/cc/repo1")) == ["-tmp-cc-repo1"]
    # Other punctuation: the observed rule first, the wider one second.
    assert claude_project_folders(Path("/w/my_repo.v2")) == ["-w-my_repo.v2", "-w-my-repo-v2"]


def test_claude_session_under_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cwd = tmp_path / "work" / "repo"
    want = claude_file(home / ".claude", str(cwd).replace("/", "-"))
    env = {"HOME": str(home)}
    assert find_claude_transcript(SESSION, cwd=cwd, env=env) == want
    located = locate_transcript(transcript=None, session_id=SESSION, harness=None, cwd=cwd, env=env)
    assert (located.harness, located.path) == (Harness.CLAUDE, want)


def test_claude_config_dir_wins_over_home(tmp_path: Path) -> None:
    cwd = tmp_path / "repo"
    claude_file(tmp_path / "home" / ".claude", str(cwd).replace("/", "-"))
    want = claude_file(tmp_path / "cfg", str(cwd).replace("/", "-"))
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    assert find_claude_transcript(SESSION, cwd=cwd, env=env) == want


def test_a_session_started_elsewhere_is_found_in_any_project_folder(tmp_path: Path) -> None:
    want = claude_file(tmp_path / "cfg", "-somewhere-else")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    assert find_claude_transcript(SESSION, cwd=tmp_path / "repo", env=env) == want


def test_subagent_transcripts_are_not_the_session(tmp_path: Path) -> None:
    config = tmp_path / "cfg"
    write_lines(config / "projects" / "-p" / SESSION / "subagents" / "agent-1.jsonl", ["{}"])
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    assert find_claude_transcript(SESSION, cwd=tmp_path, env=env) is None


def test_codex_rollouts_are_searched_newest_day_first(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    plain = "5f0c3b8e-0000-4000-8000-000000000001"  # a v4 id: no day hint
    codex_file(home, "2025/12/31", plain)
    newest = codex_file(home, "2026/11/02", plain)
    codex_file(home, "2026/11/01", "5f0c3b8e-0000-4000-8000-000000000002")
    assert find_codex_rollout(plain, env={"CODEX_HOME": str(home)}) == newest


def test_the_codex_search_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "codex"
    plain = "5f0c3b8e-0000-4000-8000-000000000001"
    old = codex_file(home, "2026/01/01", plain)
    codex_file(home, "2026/11/01", "5f0c3b8e-0000-4000-8000-00000000000a")
    codex_file(home, "2026/11/02", "5f0c3b8e-0000-4000-8000-00000000000b")
    monkeypatch.setattr(locate_module, "MAX_DAY_FOLDERS", 2)
    assert find_codex_rollout(plain, env={"CODEX_HOME": str(home)}) is None
    monkeypatch.setattr(locate_module, "MAX_DAY_FOLDERS", 3)
    assert find_codex_rollout(plain, env={"CODEX_HOME": str(home)}) == old


def test_a_time_ordered_thread_id_names_its_own_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex"
    # 0x019a4f6e2c00 ms is 2025-11-04 UTC: found there even when the scan bound is 0.
    thread = "019a4f6e-2c00-7000-8000-000000000001"
    want = codex_file(home, "2025/11/04", thread)
    codex_file(home, "2026/11/02", "5f0c3b8e-0000-4000-8000-00000000000b")
    monkeypatch.setattr(locate_module, "MAX_DAY_FOLDERS", 0)
    assert find_codex_rollout(thread, env={"CODEX_HOME": str(home)}) == want


def test_codex_home_defaults_under_home(tmp_path: Path) -> None:
    want = codex_file(tmp_path / ".codex", "2026/11/02")
    env = {"HOME": str(tmp_path)}
    located = locate_transcript(
        transcript=None, session_id=THREAD, harness=None, cwd=tmp_path, env=env
    )
    assert (located.harness, located.path) == (Harness.CODEX, want)


def test_the_same_id_in_both_harnesses_needs_a_choice(tmp_path: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "CODEX_HOME": str(tmp_path / "cx")}
    claude_file(tmp_path / "cfg", "-x", THREAD)
    rollout = codex_file(tmp_path / "cx", "2026/11/02")
    with pytest.raises(UsageError, match="has a Claude Code transcript and a Codex rollout") as e:
        locate_transcript(transcript=None, session_id=THREAD, harness=None, cwd=tmp_path, env=env)
    assert "--harness" in (e.value.hint or "")
    chosen = locate_transcript(
        transcript=None, session_id=THREAD, harness=Harness.CODEX, cwd=tmp_path, env=env
    )
    assert chosen.path == rollout


def test_nothing_found_says_where_it_looked(tmp_path: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "CODEX_HOME": str(tmp_path / "cx")}
    with pytest.raises(TranscriptNotFoundError) as caught:
        locate_transcript(transcript=None, session_id=SESSION, harness=None, cwd=tmp_path, env=env)
    error = caught.value
    assert error.exit_code is ExitCode.FAILURE
    text = error.render()
    assert f"no transcript found for session {SESSION}" in text
    assert str(tmp_path / "cfg" / "projects") in text
    assert str(tmp_path / "cx" / "sessions") in text
    assert "--transcript PATH" in text


@pytest.mark.parametrize("bad", ["../etc/passwd", "a/b", "", "-rf", "x" * 200])
def test_a_session_id_cannot_name_a_path(tmp_path: Path, bad: str) -> None:
    with pytest.raises(UsageError):
        locate_transcript(transcript=None, session_id=bad, harness=None, cwd=tmp_path, env={})


def test_one_of_transcript_or_session_is_required(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        locate_transcript(transcript=None, session_id=None, harness=None, cwd=tmp_path, env={})
    with pytest.raises(UsageError):
        locate_transcript(transcript=tmp_path, session_id="x", harness=None, cwd=tmp_path, env={})


def test_a_missing_transcript_path_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(TranscriptNotFoundError, match="no transcript at"):
        locate_transcript(
            transcript=tmp_path / "gone.jsonl", session_id=None, harness=None, cwd=tmp_path, env={}
        )


def test_the_harness_is_told_by_name_or_content(tmp_path: Path) -> None:
    rollout = write_lines(tmp_path / "rollout-x.jsonl", ["{}"])
    codex = write_lines(tmp_path / "a.jsonl", [codex_token_count(), "garbage"])
    claude = write_lines(tmp_path / "b.jsonl", [claude_assistant()])
    silent = write_lines(tmp_path / "c.jsonl", ["not json", "[1, 2]"])
    assert detect_harness(rollout) is Harness.CODEX
    assert detect_harness(codex) is Harness.CODEX
    assert detect_harness(claude) is Harness.CLAUDE
    assert detect_harness(silent) is None


def test_an_unidentified_file_is_read_as_claude_and_says_so(tmp_path: Path) -> None:
    silent = write_lines(tmp_path / "c.jsonl", ["not json"])
    reading = read_context(transcript=silent, cwd=tmp_path, env={})
    assert reading.harness is Harness.CLAUDE
    assert any("read as Claude Code" in note for note in reading.notes)


def test_an_unreadable_transcript_is_not_found(tmp_path: Path) -> None:
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    with pytest.raises(TranscriptNotFoundError, match="it is a folder"):
        read_context(transcript=folder, cwd=tmp_path, env={})
