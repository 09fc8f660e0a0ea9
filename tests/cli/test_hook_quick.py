"""``loop hook`` without click (the_loop.cli.hook_quick) answers as the click command does.

Each case runs the same hook twice, in two copies of one project (a hook
records what it saw, so one run changes the next one's state): once through
the quick path (``python -m the_loop hook …``) and once through click (the
same command line behind a global option, which the quick path leaves to
click). stdout, stderr and the exit code must be identical.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.hooks import claude_transcript, payload
from helpers.project import ok, project_copy

from the_loop.cli import hook_quick


def _run(root: Path, args: list[str], stdin: str) -> tuple[str, str, int]:
    """``python -m the_loop ARGS`` in ``root``, the clock pinned."""
    done = subprocess.run(
        [sys.executable, "-m", "the_loop", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "LOOP_NOW": "2026-11-30T12:00Z"},
    )
    return done.stdout, done.stderr, done.returncode


@pytest.fixture
def twins(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    one = project_copy(tmp_path_factory, tmp_path / "quick")
    ok(one, "execute-tasks", "7")
    other = tmp_path / "click"
    shutil.copytree(one, other, symlinks=True)
    return one, other


CASES = {
    "quiet tool call": ("PostToolUse", 100_000),
    "past the soft threshold": ("PostToolUse", 160_000),
    "at the hard threshold": ("PostToolUse", 190_000),
    "session start": ("SessionStart", 0),
    "stop": ("Stop", 0),
}


@pytest.mark.slow  # two real processes per case
@pytest.mark.parametrize("case", CASES)
def test_the_quick_hook_prints_what_click_prints(twins: tuple[Path, Path], case: str) -> None:
    event, tokens = CASES[case]
    runs = []
    for root, global_option in zip(twins, ([], ["--no-color"]), strict=True):
        transcript = claude_transcript(root.parent / f"{root.name}.jsonl", tokens or 1_000)
        stdin = payload(event, root, transcript_path=transcript, tool_name="Bash", source="startup")
        out, err, code = _run(root, [*global_option, "hook", event, "--harness", "claude"], stdin)
        runs.append((out.replace(str(root), "<root>"), err.replace(str(root), "<root>"), code))
    assert runs[0] == runs[1]
    if case != "quiet tool call" and event == "PostToolUse":
        assert runs[0][0].strip(), "the case must make the hook speak"


@pytest.mark.slow  # two real processes per case
def test_unusable_input_is_one_line_on_stderr_both_ways(twins: tuple[Path, Path]) -> None:
    quick = _run(twins[0], ["hook", "PostToolUse"], "{not json")
    click = _run(twins[1], ["--no-color", "hook", "PostToolUse"], "{not json")
    assert quick == tuple(str(part).replace("/click/", "/quick/") for part in click[:2]) + (0,)
    assert quick[2] == 0 and quick[1].startswith("loop hook PostToolUse:")


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["hook", "Stop"], ("Stop", "claude")),
        (["hook", "Stop", "--harness", "codex"], ("Stop", "codex")),
        (["hook", "--harness=codex", "Stop"], ("Stop", "codex")),
        (["hook"], None),
        (["hook", "Stop", "--help"], None),
        (["hook", "Stop", "Extra"], None),
        (["hook", "Stop", "--harness"], None),
        (["status", "7"], None),
    ],
)
def test_only_the_plain_forms_take_the_quick_path(
    argv: list[str], parsed: tuple[str, str] | None
) -> None:
    assert hook_quick.parse(argv) == parsed
