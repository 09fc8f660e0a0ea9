"""Issue 21: every command ``loop`` hands a person or an agent can be pasted into a shell.

Hints used to put backticks inside double quotes (``--next "… (`loop execute-tasks
7` hands it out)"``): pasted into a shell or an agent's Bash tool they ran a second
``loop`` and stored its output as the Next:. Here each hint and each command a brief
prints is pasted into ``bash -c`` with a recording ``loop`` first on PATH, and
exactly one ``loop`` command must run, with the words the hint shows.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from helpers.project import TASKS, ok, project_copy, run

from the_loop.hooks.commands import mid_task_command, task_done_command

RECORDER = """#!/bin/sh
exec python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@" >> "$LOOP_RECORD"
"""


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def paste(text: str, tmp_path: Path) -> list[list[str]]:
    """Run ``text`` as bash would after a paste; the ``loop`` calls it made."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    recorder = bin_dir / "loop"
    recorder.write_text(RECORDER)
    recorder.chmod(0o755)
    record = tmp_path / "calls.jsonl"
    record.unlink(missing_ok=True)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "LOOP_RECORD": str(record)}
    subprocess.run(["bash", "-c", text], env=env, check=False, capture_output=True)
    lines = record.read_text().splitlines() if record.exists() else []
    return [json.loads(line) for line in lines]


def hints(output: str) -> list[str]:
    return [line[len("hint: ") :] for line in output.splitlines() if line.startswith("hint: ")]


def assert_pastes_as_one_loop(command: str, tmp_path: Path) -> None:
    assert "`" not in command, command
    calls = paste(command, tmp_path)
    assert len(calls) == 1, (command, calls)
    expected = shlex.split(command, comments=True)
    assert ["loop", *calls[0]] == expected


def tick_by_hand(root: Path, task: str) -> None:
    path = root / TASKS
    path.write_text(path.read_text().replace(f"- [ ] {task}.", f"- [x] {task}.", 1))


def test_the_proposed_next_of_a_refusal_pastes_into_the_command_it_fixes(
    project: Path, tmp_path: Path
) -> None:
    refused = run(project, "task", "done", "7", "1", "--did", "the key", "--next", "carry on")

    assert refused.exit_code == 2
    (hint,) = hints(refused.stderr)
    assert hint.startswith("e.g. --next '")
    command = "loop task done 7 1 --did 'the key' " + hint[len("e.g. ") :]
    assert_pastes_as_one_loop(command, tmp_path)
    # The proposal names a command in plain words, and it is itself a valid Next:.
    nxt = shlex.split(command)[-1]
    ok(project, "task", "done", "7", "1", "--did", "the key", "--next", nxt)


def test_the_vague_did_hint_pastes(project: Path, tmp_path: Path) -> None:
    refused = run(project, "task", "done", "7", "1", "--did", "tbd", "--next", "task 2")

    (hint,) = hints(refused.stderr)
    assert_pastes_as_one_loop("loop task done 7 1 " + hint[len("e.g. ") :], tmp_path)


def test_the_adopt_hints_of_a_hand_tick_paste_whole(project: Path, tmp_path: Path) -> None:
    tick_by_hand(project, "1")

    checked = run(project, "check", "7", "--json")
    refused = run(project, "task", "done", "7", "1", "--did", "the key", "--next", "task 2")

    found = [
        str(f["hint"])
        for f in json.loads(checked.stdout)["findings"]
        if f["code"] == "tick.no-checkpoint"
    ]
    assert found and hints(refused.stderr)
    for hint in [*found, *hints(refused.stderr)]:
        assert_pastes_as_one_loop(hint, tmp_path)


def test_every_command_of_the_task_brief_pastes(project: Path, tmp_path: Path) -> None:
    brief = ok(project, "execute-tasks", "7").stdout
    commands = [line.strip() for line in brief.splitlines() if line.strip().startswith("loop ")]

    assert any(" task done " in c for c in commands)
    assert any(" checkpoint " in c for c in commands)
    for command in commands:
        assert_pastes_as_one_loop(command, tmp_path)


def test_the_commands_the_hooks_name_paste(tmp_path: Path) -> None:
    assert_pastes_as_one_loop(mid_task_command("loop", "issue-7", "1"), tmp_path)
    assert_pastes_as_one_loop(task_done_command("loop", "issue-7", "1"), tmp_path)


@pytest.mark.parametrize(
    "nxt",
    [
        "write pkg/new_module.py with the ledger",
        "run the suite in tests",
        "run the suite in tests/",
    ],
)
def test_a_natural_next_step_is_accepted(project: Path, nxt: str) -> None:
    (project / "pkg").mkdir()
    (project / "tests").mkdir(exist_ok=True)
    (project / "tests" / "test_x.py").write_text("")

    ok(project, "task", "done", "7", "1", "--did", "the key", "--next", nxt)


def test_a_file_in_a_folder_that_does_not_exist_is_still_refused(project: Path) -> None:
    refused = run(
        project, "task", "done", "7", "1", "--did", "the key", "--next", "write nowhere/new.py"
    )
    assert refused.exit_code == 2
