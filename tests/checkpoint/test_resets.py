"""Unit tests for ``the_loop.checkpoint.resets``: the reset transaction in a real state folder.

prepared → dispatched → completed (or aborted). A compaction completes only on
the checkpoint's own session, a clear only on a new one; nothing is replayed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from the_loop.checkpoint import resets
from the_loop.config.state_folder import resets_exist, state_dir
from the_loop.errors import RefusedError, StateError

DIGEST = "a" * 64


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project root; the clock is pinned so records carry known stamps."""
    monkeypatch.setenv("LOOP_NOW", "2026-07-24T12:00:30Z")
    project = tmp_path / "project"
    project.mkdir()
    return project


def folder(root: Path) -> Path:
    return state_dir(root) / "resets"


def history(root: Path) -> list[dict[str, object]]:
    path = folder(root) / "history.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def prepare(
    root: Path,
    checkpoint: str,
    *,
    item: str = "issue-5",
    mode: str = "compact",
    session: str | None = "sess-1",
    commit: str | None = "0123abc",
) -> resets.ResetRecord:
    return resets.prepare(
        root,
        item=item,
        mode=mode,
        reason=f"{mode} after task 2",
        checkpoint=checkpoint,
        commit=commit,
        entry_digest=DIGEST,
        session=session,
    )


# --- prepare and dispatch ----------------------------------------------------------


def test_prepare_writes_an_open_record_in_an_ignored_state_folder(root: Path) -> None:
    record = prepare(root, "20260724T120030Z-aaaaaa")
    assert record == resets.ResetRecord(
        id="20260724T120030Z-aaaaaa",
        item="issue-5",
        mode="compact",
        reason="compact after task 2",
        checkpoint="20260724T120030Z-aaaaaa",
        commit="0123abc",
        entry_digest=DIGEST,
        session="sess-1",
        state="prepared",
        created="2026-07-24T12:00:30Z",
        updated="2026-07-24T12:00:30Z",
    )
    assert record.open
    on_disk = json.loads((folder(root) / "20260724T120030Z-aaaaaa.json").read_text())
    assert on_disk == record.to_state()  # stored as written; --json shows camelCase
    assert (state_dir(root) / ".gitignore").read_text() == (
        "# loop's runtime state: never commit\n*\n"
    )
    assert resets.open_resets(root) == [record]
    assert resets.open_resets(root, "issue-5") == [record]
    assert resets.open_resets(root, "issue-6") == []


def test_no_state_folder_means_no_open_resets(root: Path) -> None:
    assert resets.open_resets(root) == []
    assert not state_dir(root).exists()
    assert not resets_exist(root)  # status's cheap test before it loads this module


def test_the_cheap_test_finds_the_records_where_they_are_written(root: Path) -> None:
    prepare(root, "20260724T120030Z-aaaaaa")
    assert resets_exist(root)


def test_mark_dispatched(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = prepare(root, "cp-1")
    monkeypatch.setenv("LOOP_NOW", "2026-07-24T12:01:00Z")
    dispatched = resets.mark_dispatched(root, record)
    assert dispatched.state == "dispatched"
    assert dispatched.open
    assert dispatched.created == "2026-07-24T12:00:30Z"
    assert dispatched.updated == "2026-07-24T12:01:00Z"
    assert resets.open_resets(root) == [dispatched]


# --- confirm ---------------------------------------------------------------------


def test_compact_completes_on_the_same_session(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resets.mark_dispatched(root, prepare(root, "cp-1", mode="compact", session="sess-1"))
    monkeypatch.setenv("LOOP_NOW", "2026-07-24T12:05:00Z")
    closed = resets.confirm(root, "issue-5", "sess-1")
    assert closed.state == "completed"
    assert not closed.open
    assert closed.confirmed_session == "sess-1"
    assert closed.note is None
    assert closed.updated == "2026-07-24T12:05:00Z"
    assert resets.open_resets(root) == []
    assert not (folder(root) / "cp-1.json").exists()
    assert history(root) == [closed.to_state()]


def test_compact_refuses_a_different_session(root: Path) -> None:
    resets.mark_dispatched(root, prepare(root, "cp-1", mode="compact", session="sess-1"))
    with pytest.raises(RefusedError) as caught:
        resets.confirm(root, "issue-5", "sess-2")
    assert caught.value.message == (
        "a compaction keeps the session, but 'sess-2' is not the checkpoint's session 'sess-1'"
    )
    # refused: still open, nothing written to the history
    assert [r.state for r in resets.open_resets(root)] == ["dispatched"]
    assert history(root) == []


def test_clear_completes_on_a_new_session(root: Path) -> None:
    resets.mark_dispatched(root, prepare(root, "cp-1", mode="clear", session="sess-1"))
    closed = resets.confirm(root, "issue-5", "sess-2")
    assert closed.state == "completed"
    assert closed.confirmed_session == "sess-2"
    assert closed.session == "sess-1"
    assert resets.open_resets(root) == []


def test_clear_refuses_the_same_session(root: Path) -> None:
    resets.mark_dispatched(root, prepare(root, "cp-1", mode="clear", session="sess-1"))
    with pytest.raises(RefusedError) as caught:
        resets.confirm(root, "issue-5", "sess-1")
    assert caught.value.message == (
        "a clear starts a new session, but 'sess-1' is the session that took the checkpoint"
    )
    assert caught.value.hint == "confirm from the fresh session after the clear"
    assert len(resets.open_resets(root)) == 1


@pytest.mark.parametrize("mode", ["compact", "clear"])
def test_unknown_session_at_prepare_is_confirmed_unverified(root: Path, mode: str) -> None:
    resets.mark_dispatched(root, prepare(root, "cp-1", mode=mode, session=None))
    closed = resets.confirm(root, "issue-5", "any-session")
    assert closed.state == "completed"
    assert closed.confirmed_session == "any-session"
    assert closed.note == "unverified: no session id was recorded at the checkpoint"


def test_a_prepared_but_not_dispatched_reset_can_be_confirmed(root: Path) -> None:
    prepare(root, "cp-1", mode="compact", session="sess-1")
    assert resets.confirm(root, "issue-5", "sess-1").state == "completed"


# --- abort, and nothing to resolve -----------------------------------------------------


def test_abort(root: Path) -> None:
    resets.mark_dispatched(root, prepare(root, "cp-1"))
    aborted = resets.abort(root, "issue-5")
    assert aborted.state == "aborted"
    assert aborted.note == "aborted by request"
    assert aborted.confirmed_session is None
    assert resets.open_resets(root) == []
    assert history(root) == [aborted.to_state()]


def test_abort_with_a_reason(root: Path) -> None:
    prepare(root, "cp-1")
    assert resets.abort(root, "issue-5", reason="harness crashed").note == "harness crashed"


def test_confirm_with_nothing_open_is_refused(root: Path) -> None:
    with pytest.raises(RefusedError) as caught:
        resets.confirm(root, "issue-5", "sess-1")
    assert caught.value.message == "issue-5 has no open reset to resolve"


def test_confirm_after_it_was_resolved_is_refused(root: Path) -> None:
    prepare(root, "cp-1")
    resets.confirm(root, "issue-5", "sess-1")
    with pytest.raises(RefusedError, match="issue-5 has no open reset to resolve"):
        resets.confirm(root, "issue-5", "sess-1")
    with pytest.raises(RefusedError):
        resets.abort(root, "issue-5")
    assert len(history(root)) == 1


def test_unknown_checkpoint_is_refused_by_name(root: Path) -> None:
    prepare(root, "cp-1")
    with pytest.raises(RefusedError) as caught:
        resets.confirm(root, "issue-5", "sess-1", checkpoint="cp-9")
    assert caught.value.message == "issue-5 has no open reset from checkpoint cp-9 to resolve"
    assert len(resets.open_resets(root)) == 1


# --- several open resets -------------------------------------------------------------


def three_resets(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[resets.ResetRecord]:
    """Three open resets of issue-5, a minute apart, ids sortable like checkpoint ids."""
    made = []
    for minute, cp in [(0, "20260724T120000Z-ccc111"), (1, "20260724T120100Z-aaa222")]:
        monkeypatch.setenv("LOOP_NOW", f"2026-07-24T12:0{minute}:00Z")
        made.append(resets.mark_dispatched(root, prepare(root, cp)))
    # the same minute as the second one: the id (its seconds) decides
    monkeypatch.setenv("LOOP_NOW", "2026-07-24T12:01:40Z")
    made.append(prepare(root, "20260724T120140Z-000333"))
    return made


def test_open_resets_are_oldest_first(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = three_resets(root, monkeypatch)
    assert [r.checkpoint for r in resets.open_resets(root, "issue-5")] == [
        r.checkpoint for r in made
    ]


def test_confirm_picks_the_latest(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = three_resets(root, monkeypatch)
    closed = resets.confirm(root, "issue-5", "sess-1")
    assert closed.checkpoint == made[2].checkpoint
    assert [r.checkpoint for r in resets.open_resets(root)] == [
        made[0].checkpoint,
        made[1].checkpoint,
    ]
    assert resets.confirm(root, "issue-5", "sess-1").checkpoint == made[1].checkpoint


def test_checkpoint_selects_one(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = three_resets(root, monkeypatch)
    closed = resets.confirm(root, "issue-5", "sess-1", checkpoint=made[0].checkpoint)
    assert closed.checkpoint == made[0].checkpoint
    aborted = resets.abort(root, "issue-5", checkpoint=made[1].checkpoint)
    assert aborted.checkpoint == made[1].checkpoint
    assert [r.checkpoint for r in resets.open_resets(root)] == [made[2].checkpoint]


def test_open_resets_of_two_items_are_independent(root: Path) -> None:
    prepare(root, "cp-a", item="issue-5", mode="compact", session="s5")
    prepare(root, "cp-b", item="issue-6", mode="clear", session="s6")
    assert [r.item for r in resets.open_resets(root)] == ["issue-5", "issue-6"]
    closed = resets.confirm(root, "issue-6", "s-new")
    assert (closed.item, closed.checkpoint) == ("issue-6", "cp-b")
    assert [r.checkpoint for r in resets.open_resets(root, "issue-5")] == ["cp-a"]
    assert resets.open_resets(root, "issue-6") == []
    with pytest.raises(RefusedError, match="issue-6 has no open reset"):
        resets.abort(root, "issue-6")
    with pytest.raises(RefusedError, match="from checkpoint cp-a"):
        resets.confirm(root, "issue-6", "s6", checkpoint="cp-a")
    assert resets.abort(root, "issue-5").checkpoint == "cp-a"


def test_history_has_one_line_per_resolved_record(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = three_resets(root, monkeypatch)
    with pytest.raises(RefusedError):
        resets.confirm(root, "issue-5", "other", checkpoint=made[0].checkpoint)
    first = resets.confirm(root, "issue-5", "sess-1", checkpoint=made[0].checkpoint)
    second = resets.abort(root, "issue-5", checkpoint=made[1].checkpoint)
    third = resets.confirm(root, "issue-5", "sess-1")
    lines = (folder(root) / "history.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    assert [json.loads(line) for line in lines] == [
        first.to_state(),
        second.to_state(),
        third.to_state(),
    ]
    assert [json.loads(line)["state"] for line in lines] == ["completed", "aborted", "completed"]
    # the history is not a record: it never shows up as an open reset
    assert resets.open_resets(root) == []
    assert sorted(p.name for p in folder(root).iterdir()) == ["history.jsonl"]


# --- damaged records -------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "",
        '{"id": "cp-x", "item": "issue-5"}',  # fields missing
        '["a", "list"]',
        '{"id": "cp-x", "unknown": 1}',
    ],
)
def test_damaged_record_is_a_state_error_naming_the_file(root: Path, content: str) -> None:
    prepare(root, "cp-good")
    bad = folder(root) / "cp-bad.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(StateError) as caught:
        resets.open_resets(root)
    assert "cp-bad.json" in caught.value.render()
    with pytest.raises(StateError):
        resets.confirm(root, "issue-5", "sess-1")
    # the damaged file is left for the user to inspect
    assert bad.read_text(encoding="utf-8") == content
