"""How the harness runs loop, and how loop spells itself in the commands it names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from the_loop.hooks.commands import entry_point, hook_command, loop_words, mid_task_command


def script(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "loop"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_a_console_script_is_named_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = script(tmp_path / "venv" / "bin")
    monkeypatch.chdir(tmp_path)
    assert entry_point("venv/bin/loop", "/usr/bin/python3") == [str(loop)]


def test_python_dash_m_keeps_the_interpreter_path_unresolved(tmp_path: Path) -> None:
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)  # a venv's python is a symlink: keep its own path
    assert entry_point("/src/the_loop/__main__.py", str(python)) == [str(python), "-m", "the_loop"]


def test_plain_loop_when_it_is_the_same_program_on_path(tmp_path: Path) -> None:
    loop = script(tmp_path / "bin")
    assert loop_words({"PATH": str(loop.parent)}, str(loop)) == "loop"
    other = script(tmp_path / "other")
    assert loop_words({"PATH": str(other.parent)}, str(loop)) == str(loop)
    assert loop_words({"PATH": ""}, str(loop)) == str(loop)


def test_paths_with_spaces_are_quoted_for_the_shell(tmp_path: Path) -> None:
    entry = [str(tmp_path / "my venv" / "bin" / "loop")]
    command = hook_command(entry, "PreCompact", "codex")
    assert command == f"'{entry[0]}' hook PreCompact --harness codex"
    assert mid_task_command("loop", "issue-7", None) == (
        "loop checkpoint issue-7 --mid-task --did '<what is done so far>' "
        "--next '<the concrete next step>'"
    )


def test_the_real_console_script_installs_its_own_path(project: Path) -> None:
    loop = Path(sys.executable).parent / "loop"
    done = subprocess.run(
        [str(loop), "--json", "install", "claude", "--dry-run"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
    )
    preview = json.loads(json.loads(done.stdout)["preview"])
    command = preview["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == f"{loop} hook SessionStart --harness claude"
