"""Issue 21: the resume anchor is what the checkpoint commit recorded, and the brief is a hand-off.

A hand-edited ``Next:`` in the last entry used to flow into the next session's
brief while ``check`` said ok. Now ``resume`` (and so the SessionStart hook, which
sends the same brief) and ``check`` compare the entry with its checkpoint commit and
show both texts at the entry's line. The brief a fresh session gets lists the
remaining task ids, the files each finished task changed (from git), the decisions
logged and the test last run, with a format version.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.project import LOG, ok, project_copy, run

DID = ("--did", "the key and its test", "--tests", "pytest tests/test_key.py: 3 passed")


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    root = project_copy(tmp_path_factory, tmp_path / "p")
    (root / "pkg").mkdir()
    (root / "pkg" / "key.py").write_text("KEY = 1\n")
    ok(root, "task", "done", "7", "1", *DID, "--next", "implement task 2: the retry ledger")
    return root


def edit_next(root: Path, old: str, new: str) -> None:
    path = root / LOG
    path.write_text(path.read_text().replace(f"**Next:** {old}", f"**Next:** {new}"))


def test_an_untouched_anchor_is_not_flagged(project: Path) -> None:
    assert not run(project, "resume", "7").stdout.startswith("WARNING")
    codes = [f["code"] for f in json.loads(run(project, "check", "7", "--json").stdout)["findings"]]
    assert "log.anchor-edited" not in codes


def test_a_hand_edited_next_is_flagged_by_resume_and_check(project: Path) -> None:
    edit_next(project, "implement task 2: the retry ledger", "rewrite everything in rust")

    brief = run(project, "resume", "7").stdout
    checked = run(project, "check", "7", "--json")

    first = brief.splitlines()[0]
    assert first.startswith("WARNING: the Next: of the last checkpointed entry")
    assert "'rewrite everything in rust'" in first
    assert "'implement task 2: the retry ledger'" in first
    assert checked.exit_code == 1
    (finding,) = [
        f for f in json.loads(checked.stdout)["findings"] if f["code"] == "log.anchor-edited"
    ]
    assert Path(str(finding["path"])).name == "execution-log.md"
    line = (
        (project / LOG)
        .read_text()
        .splitlines()
        .index(next(x for x in (project / LOG).read_text().splitlines() if "task 1 done" in x))
    )
    assert finding["line"] == line + 1
    assert "rewrite everything in rust" in str(finding["message"])
    assert str(finding["hint"]).startswith("git diff ")


def test_a_deleted_entry_is_flagged(project: Path) -> None:
    path = project / LOG
    text = path.read_text()
    path.write_text(text[: text.index("### ", text.index("task 1 done") - 40)])

    checked = run(project, "check", "7", "--json")

    codes = [f["code"] for f in json.loads(checked.stdout)["findings"]]
    assert "log.anchor-missing" in codes


def test_the_brief_is_a_hand_off(project: Path) -> None:
    ok(
        project,
        "task",
        "start",
        "7",
        "3",
    )
    brief = run(project, "resume", "7").stdout

    assert "Open: 2 task(s) in all: 2, 3." in brief
    assert "- task 1: pkg/key.py" in brief
    assert "Test last run: pytest tests/test_key.py: 3 passed" in brief
    assert "(resume brief format 2)" in brief
    ready = next(line for line in brief.splitlines() if line.startswith("Ready"))
    assert "3." not in ready  # in progress, so not also ready


def test_a_reset_record_edited_by_hand_is_not_trusted(project: Path) -> None:
    (record,) = (project / ".the-loop/state/resets").glob("*.json")
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "state": "completed"}))

    status = run(project, "status", "7")
    doctor = run(project, "doctor")

    assert "digest does not match its content" in status.output + doctor.output
    assert doctor.exit_code == 1


def test_a_reset_record_without_a_digest_says_so_and_how_to_set_it_aside(project: Path) -> None:
    # What a loop from before record digests left behind (or a hand that dropped the field).
    (record,) = (project / ".the-loop/state/resets").glob("*.json")
    data = json.loads(record.read_text())
    del data["digest"]
    record.write_text(json.dumps(data))

    status = run(project, "status", "7")

    assert "it has no digest (written by an older loop, or by hand)" in status.output
    assert "loop doctor --discard" in status.output


def test_a_deleted_tracked_log_is_named_with_git_checkout_as_the_way_back(project: Path) -> None:
    (project / LOG).unlink()

    refused = run(project, "task", "done", "7", "3", *DID, "--next", "implement task 2: ledger")
    checked = run(project, "check", "7")

    assert refused.exit_code == 1
    assert f"{LOG} is missing from the working tree, but git tracks it" in refused.stderr
    assert f"hint: git checkout -- {LOG}  # restores it from the last commit" in refused.stderr
    assert not (project / LOG).exists()  # no fresh log written over the history
    assert checked.exit_code == 1 and f"git checkout -- {LOG}" in checked.stdout
    crossing = run(project, "execute-tasks", "7")
    assert crossing.exit_code == 1 and f"git checkout -- {LOG}" in crossing.stderr
    assert not (project / LOG).exists()
