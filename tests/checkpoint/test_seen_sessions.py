"""Which session runs a command: --session, the harness's variable, the one live session."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.project import ok, project_copy, reset_records

from the_loop.checkpoint import seen_sessions

NOW = "2026-11-30T12:00:00Z"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOOP_NOW", NOW)
    folder = tmp_path / "p"
    (folder / ".the-loop").mkdir(parents=True)
    return folder


def test_explicit_beats_the_harness_variable(root: Path) -> None:
    env = {"CLAUDE_CODE_SESSION_ID": "from-claude"}
    assert seen_sessions.resolve_session(root, "given", env) == "given"
    assert seen_sessions.resolve_session(root, None, env) == "from-claude"
    assert seen_sessions.resolve_session(root, None, {"CODEX_THREAD_ID": "thread-1"}) == "thread-1"


def test_the_one_live_session_the_hooks_saw(root: Path) -> None:
    assert seen_sessions.resolve_session(root, None, {}) is None
    seen_sessions.seen(root, "s-1", event="SessionStart:startup", harness="claude")
    assert seen_sessions.resolve_session(root, None, {}) == "s-1"

    seen_sessions.seen(root, "s-2", event="SessionStart:startup", harness="codex")
    assert seen_sessions.resolve_session(root, None, {}) is None  # two live: no guess

    seen_sessions.ended(root, "s-2", reason="other")
    assert seen_sessions.resolve_session(root, None, {}) == "s-1"


def test_a_session_not_heard_from_for_hours_is_not_live(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen_sessions.seen(root, "s-1", event="PostToolUse")
    monkeypatch.setenv("LOOP_NOW", "2026-11-30T18:00:01Z")  # 6 h later
    assert seen_sessions.resolve_session(root, None, {}) is None


def test_records_keep_fields_a_newer_loop_wrote(root: Path) -> None:
    record = seen_sessions.seen(root, "s-1", event="SessionStart:startup")
    path = root / ".the-loop/state/sessions/s-1.json"
    path.write_text(path.read_text().replace('"id"', '"future": 1,\n  "id"'))

    seen_sessions.own_task(root, "s-1", "issue-7", "2")

    again = seen_sessions.load(root, "s-1")
    assert again is not None and again.extra == {"future": 1}
    assert again.tasks == ("issue-7#2",) and record.tasks == ()
    assert '"future": 1' in path.read_text()


def test_an_odd_session_id_is_never_a_path(root: Path) -> None:
    seen_sessions.seen(root, "../../escape", event="Stop")
    files = list((root / ".the-loop/state/sessions").iterdir())
    assert len(files) == 1 and files[0].parent.name == "sessions"
    assert seen_sessions.load(root, "../../escape") is not None


def test_old_records_are_pruned(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen_sessions.seen(root, "old", event="Stop")
    monkeypatch.setenv("LOOP_NOW", "2027-01-15T00:00:00Z")
    seen_sessions.seen(root, "new", event="Stop")
    assert seen_sessions.prune(root) == 1
    assert [r.id for r in seen_sessions.records(root)] == ["new"]


def test_a_checkpoint_run_inside_claude_code_carries_its_session(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    project = project_copy(tmp_path_factory, tmp_path / "project")
    ok(project, "execute-tasks", "7")
    env = {"CLAUDE_CODE_SESSION_ID": "claude-session-9"}

    ok(
        project,
        "task",
        "done",
        "7",
        "1",
        "--did",
        "the config key",
        "--next",
        "implement task 2: the retry ledger in ledger.py",
        env=env,
    )

    (record,) = reset_records(project)
    assert record["session"] == "claude-session-9"
    # and `reset confirm` needs no --session either
    ok(project, "reset", "confirm", "7", env=env)
    assert reset_records(project) == []


def test_reset_confirm_without_any_session_is_a_persons_word(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from helpers.project import run

    project = project_copy(tmp_path_factory, tmp_path / "project")
    refused = run(project, "reset", "confirm", "7")
    # Nothing is open here; with a reset open it would be acknowledged (issue 21).
    assert refused.exit_code == 1
    assert refused.stderr.startswith("error: issue-7 has no open reset to resolve")
