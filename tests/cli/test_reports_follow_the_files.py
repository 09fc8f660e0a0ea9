"""A report asked again after a file changed answers from the new files, never a stale answer.

The read-only reports reuse what the parse cache holds while the files it was
computed from are unchanged; an agent that ticked a task by hand, added an item
or rewrote history must not be told what was true before. Each case fills the
cache by answering every report, makes one kind of change, and holds each report
to what a run without any cache prints (``--no-cache``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import Result
from helpers.project import LOG, TASKS, project_copy

Loop = Callable[..., Result]

REPORTS = (
    ("status", "7"),
    ("status", "7", "--json"),
    ("status", "--all"),
    ("next", "7", "--json"),
    ("next", "7"),
    ("check", "7"),
    ("check", "--all", "--json"),
    ("graph", "7"),
    ("graph", "7", "--json"),
)
NEXT = "task 3: write the give-up log line (tests/test_retry.py)"


def _hand_tick(root: Path) -> None:
    """Tick task 3 by hand: the same size, so only the content tells."""
    text = (root / TASKS).read_text()
    (root / TASKS).write_text(text.replace("- [ ] 3.", "- [x] 3.", 1))


def _second_item(root: Path) -> None:
    other = root / "docs/specs/issue-8"
    other.mkdir(parents=True)
    (other / "requirements.md").write_text("---\ntype: requirements\n---\n\n# Requirements\n")


def _second_config(root: Path) -> None:
    """A second config file beside config.yaml: an error every report must show."""
    (root / ".the-loop/harness-config.yaml").write_text('version: "0.1.0"\n')


def _history_rewritten(root: Path) -> None:
    """The checkpoint commit of task 1 loses its trailer: HEAD moves, the tick loses evidence."""
    message = _git(root, "log", "-1", "--format=%B")
    kept = "\n".join(line for line in message.splitlines() if "Loop-Checkpoint" not in line)
    _git(root, "commit", "-q", "--amend", "-m", kept or "squashed")


def _log_appended(root: Path) -> None:
    """A newer entry by hand: its Next is where ``status`` says to resume."""
    with (root / LOG).open("a") as handle:
        handle.write(
            "\n### 2026-11-30T23:59Z — notes\n\n- **Phase:** implementation\n"
            "- **Did:** read the retry code\n"
            "- **Next:** task 2: the retry ledger in retry/ledger.py\n"
            "- **Context:** compact (about to): notes\n"
        )


CHANGES: dict[str, Callable[[Path], None]] = {
    "hand tick": _hand_tick,
    "new item": _second_item,
    "second config": _second_config,
    "history rewritten": _history_rewritten,
    "log appended": _log_appended,
}


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, text=True, capture_output=True, check=True)
    return done.stdout


def _answer(loop: Loop, root: Path, *args: str) -> tuple[str, str, int]:
    result = loop("-C", str(root), *args)
    return result.stdout, result.stderr, result.exit_code


@pytest.mark.parametrize("change", CHANGES)
def test_a_changed_file_is_never_answered_from_before(
    loop: Loop, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, change: str
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "p")
    done = loop("-C", str(root), "task", "done", "7", "1", "--did", "the key", "--next", NEXT)
    assert done.exit_code == 0, done.output
    before = {report: _answer(loop, root, *report) for report in REPORTS}  # fills the cache
    assert (root / ".the-loop/state/cache").is_dir()

    CHANGES[change](root)

    differs = 0
    for report in REPORTS:
        now = _answer(loop, root, *report)
        assert now == _answer(loop, root, "--no-cache", *report), report
        differs += now != before[report]
    assert differs, f"{change} changed no report: the case tests nothing"
