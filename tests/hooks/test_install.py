"""``loop install claude|codex``: merge, keep, back up, and take out exactly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import REPO_ROOT
from helpers.hooks import hook, state
from helpers.project import run

from the_loop.hooks.payload import CLAUDE_EVENTS, EVENTS

LOOP_BIN = "/opt/venv/bin/loop"  # any absolute path: install only writes it
# A settings file as a person writes it: their own hooks, permissions, odd spacing.
THEIRS = """{
    "permissions": { "allow": ["Bash(make test)"] },
    "hooks": {
        "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ],
        "PostToolUse": [
            { "matcher": "Edit", "hooks": [ { "type": "command", "command": "ruff format" } ] }
        ]
    },
    "model": "opus"
}
"""
SETTINGS = {"claude": Path(".claude/settings.json"), "codex": Path(".codex/hooks.json")}


def install(root: Path, *args: str) -> str:
    ran = run(root, "install", *args, "--loop-command", LOOP_BIN)
    assert ran.exit_code == 0, ran.output
    return ran.stdout


def uninstall(root: Path, harness: str) -> str:
    ran = run(root, "install", harness, "--uninstall")
    assert ran.exit_code == 0, ran.output
    return ran.stdout


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_install_then_uninstall_leaves_a_file_byte_identical(project: Path, harness: str) -> None:
    settings = project / SETTINGS[harness]
    settings.parent.mkdir()
    settings.write_text(THEIRS)

    install(project, harness)
    data = json.loads(settings.read_text())
    out = uninstall(project, harness)

    assert settings.read_bytes() == THEIRS.encode()
    assert f"restored {SETTINGS[harness]}  (byte for byte, from the backup)" in out
    assert not (state(project) / "install" / f"{harness}-settings.orig").exists()
    # and what install had written kept every entry of theirs, in place
    assert data["permissions"] == {"allow": ["Bash(make test)"]} and data["model"] == "opus"
    assert data["hooks"]["Stop"][0] == {
        "hooks": [{"type": "command", "command": "notify-send done"}]
    }
    assert data["hooks"]["PostToolUse"][0]["matcher"] == "Edit"


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_every_event_runs_loop_by_its_absolute_path(project: Path, harness: str) -> None:
    install(project, harness)

    hooks = json.loads((project / SETTINGS[harness]).read_text())["hooks"]
    events = CLAUDE_EVENTS if harness == "claude" else EVENTS
    assert set(hooks) == set(events)
    for event in events:
        (group,) = hooks[event]
        assert group["hooks"] == [
            {"type": "command", "command": f"{LOOP_BIN} hook {event} --harness {harness}"}
        ]
        assert group.get("matcher") == ("*" if event == "PostToolUse" else None)


def test_a_second_install_changes_nothing(project: Path) -> None:
    settings = project / SETTINGS["claude"]
    settings.parent.mkdir()
    settings.write_text(THEIRS)
    install(project, "claude")
    after_first = {p: p.read_bytes() for p in (project / ".claude").rglob("*") if p.is_file()}
    backup = (state(project) / "install" / "claude-settings.orig").read_bytes()

    out = install(project, "claude")

    assert {
        p: p.read_bytes() for p in (project / ".claude").rglob("*") if p.is_file()
    } == after_first
    assert (
        out.splitlines()[0] == "unchanged .claude/settings.json  (loop's hooks are already there)"
    )
    assert (
        (state(project) / "install" / "claude-settings.orig").read_bytes()
        == backup
        == THEIRS.encode()
    )


def test_a_file_loop_created_is_removed_again(project: Path) -> None:
    install(project, "claude")
    assert (project / ".claude/commands/work-on.md").read_bytes() == (
        REPO_ROOT / "commands/work-on.md"
    ).read_bytes()

    uninstall(project, "claude")

    assert not (project / ".claude").exists()


def test_an_edit_after_install_is_kept_by_uninstall(project: Path) -> None:
    settings = project / SETTINGS["claude"]
    settings.parent.mkdir()
    settings.write_text(THEIRS)
    install(project, "claude")
    data = json.loads(settings.read_text())
    data["env"] = {"FOO": "1"}  # the person edits the file afterwards
    settings.write_text(json.dumps(data, indent=4) + "\n")

    out = uninstall(project, "claude")

    assert "updated .claude/settings.json  (loop's hooks taken out; everything else kept)" in out
    assert json.loads(settings.read_text()) == {**json.loads(THEIRS), "env": {"FOO": "1"}}


def test_a_moved_loop_is_updated_in_place(project: Path) -> None:
    install(project, "codex")
    ran = run(project, "install", "codex", "--loop-command", "/new/venv/bin/loop")
    assert ran.exit_code == 0, ran.output

    commands = [
        entry["command"]
        for groups in json.loads((project / SETTINGS["codex"]).read_text())["hooks"].values()
        for group in groups
        for entry in group["hooks"]
    ]
    assert len(commands) == len(EVENTS)
    assert all(c.startswith("/new/venv/bin/loop hook ") for c in commands)
    uninstall(project, "codex")
    assert not (project / ".codex").exists()


def test_dry_run_writes_nothing_and_shows_the_result(project: Path) -> None:
    out = install(project, "claude", "--dry-run")

    assert not (project / ".claude").exists()
    assert not (state(project) / "install").exists()
    assert out.splitlines()[0].startswith("dry run: would be created .claude/settings.json")
    preview = out.split("the settings would read:\n", 1)[1]
    assert set(json.loads(preview)["hooks"]) == set(CLAUDE_EVENTS)


def test_a_slash_command_of_the_same_name_is_kept(project: Path) -> None:
    mine = project / ".claude/commands/work-on.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own work-on\n")

    out = install(project, "claude")
    uninstall(project, "claude")

    assert (
        "kept .claude/commands/work-on.md  (a command of yours has this name; not replaced)" in out
    )
    assert mine.read_text() == "my own work-on\n"
    assert not (project / ".claude/commands/execute-tasks.md").exists()


def test_settings_that_are_not_json_are_refused_untouched(project: Path) -> None:
    settings = project / SETTINGS["claude"]
    settings.parent.mkdir()
    settings.write_text("{ // a comment\n}\n")

    ran = run(project, "install", "claude", "--loop-command", LOOP_BIN)

    assert ran.exit_code == 1
    assert ran.stderr.startswith(f"error: {settings}: not valid JSON: ")
    assert settings.read_text() == "{ // a comment\n}\n"


def test_codex_install_says_what_codex_needs(project: Path) -> None:
    out = install(project, "codex")
    assert "note: Codex runs project hooks only in a trusted project" in out
    assert not (project / ".codex/commands").exists()


def test_doctor_shows_the_hooks_installed_and_firing(project: Path) -> None:
    assert "hooks" not in run(project, "doctor").stdout  # nothing installed: nothing said
    install(project, "claude")

    before = run(project, "doctor").stdout.splitlines()
    hook(project, "SessionStart", source="startup")
    after = run(project, "doctor")

    assert "hooks (claude): installed in .claude/settings.json for 7 events" in before
    assert f"hooks (claude): the hook command's program {LOOP_BIN} does not exist " in "\n".join(
        before
    )
    assert "hooks (claude): last fired: never" in before
    fired = [line for line in after.stdout.splitlines() if "last fired" in line]
    assert fired[0].startswith("hooks (claude): last fired: SessionStart 20")
    assert (
        "not yet: PostCompact, PostToolUse, PreCompact, SessionEnd, Stop, SubagentStart" in fired[0]
    )
    data = json.loads(run(project, "--json", "doctor").stdout)
    (claude,) = data["hooks"]
    assert claude["installed"] == sorted(CLAUDE_EVENTS) and "SessionStart" in claude["lastFired"]


def test_install_outside_a_loop_project_is_refused(git_repo: Path) -> None:
    ran = run(git_repo, "install", "claude", "--loop-command", LOOP_BIN)

    assert ran.exit_code == 1
    assert ran.stderr.startswith(f"error: {git_repo} is not a loop project (no .the-loop/)")
    assert not (git_repo / ".claude").exists() and not (git_repo / ".the-loop").exists()


def test_local_settings_for_claude_are_yours_alone(project: Path) -> None:
    out = install(project, "claude", "--local")

    local = project / ".claude/settings.local.json"
    assert set(json.loads(local.read_text())["hooks"]) == set(CLAUDE_EVENTS)
    assert not (project / ".claude/settings.json").exists()
    assert not (project / ".claude/commands").exists()  # they go with the shared install
    assert (
        "note: .claude/settings.local.json is not ignored by git: add it to .gitignore, "
        "or the next checkpoint commits it"
    ) in out
    doctor = run(project, "doctor").stdout
    assert "hooks (claude-local): installed in .claude/settings.local.json for 7 events" in doctor
    assert "hooks (claude):" not in doctor

    ran = run(project, "install", "claude", "--local", "--uninstall")
    assert ran.exit_code == 0, ran.output
    assert not (project / ".claude").exists()


def test_local_is_for_claude_only(project: Path) -> None:
    ran = run(project, "install", "codex", "--local", "--loop-command", LOOP_BIN)
    assert ran.exit_code == 2
    assert "--local is for Claude Code's settings.local.json; Codex has none" in ran.stderr


def test_without_loops_records_uninstall_only_takes_its_entries_out(project: Path) -> None:
    settings = project / SETTINGS["claude"]
    settings.parent.mkdir()
    settings.write_text(THEIRS)
    install(project, "claude")
    shutil.rmtree(state(project) / "install")  # a fresh clone: the settings came with git
    run(project, "install", "claude", "--loop-command", "/moved/bin/loop")

    out = uninstall(project, "claude")

    assert settings.exists(), out
    assert json.loads(settings.read_text()) == json.loads(THEIRS)
