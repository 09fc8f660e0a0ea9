"""The README's commands keep working: the demo runs, CI runs the README's test line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO_ROOT, git


def readme_command(marker: str) -> str:
    """The one-line command under ``<!-- marker -->`` in the README."""
    text = (REPO_ROOT / "README.md").read_text()
    match = re.search(rf"<!-- {marker} -->\n```sh\n(.+)\n```", text)
    assert match, f"README.md has no {marker} block"
    return match.group(1)


def test_readme_has_exactly_two_one_line_commands() -> None:
    demo, tests = readme_command("demo-command"), readme_command("test-command")
    assert "examples/demo.py" in demo
    assert "pytest" in tests
    assert "\n" not in demo and "\n" not in tests


def test_ci_runs_the_readme_test_command() -> None:
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci  # CI reads the line from the README itself


@pytest.mark.slow  # the whole example, about 5 s: the README command runs it, the quick run not
def test_the_demo_walks_the_example_item_to_needs_review(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / "demo.py"), "--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    repo = tmp_path / "greeter"
    subjects = git(repo, "log", "--format=%s").stdout.splitlines()
    assert subjects == [
        "chore(issue-1): checkpoint task 4",  # the last task's checkpoint enters needs-review
        "chore(issue-1): checkpoint task 3",
        "chore(issue-1): checkpoint task 2",
        "chore(issue-1): checkpoint task 1",
        "chore(issue-1): checkpoint phase implementation",
        "greeter: drafted spec for issue-1",
    ]
    assert "reset: clear" in result.stdout and "reset: compact" in result.stdout
    # Before the approvals, execute-tasks was refused: nothing runs ahead of a lock.
    assert "tasks are executed only against a locked task list" in result.stdout
    tasks = (repo / "docs/specs/issue-1/tasks.md").read_text()
    assert tasks.count("- [x]") == 4
    # The agent's work really passed each task's test: the test module runs green.
    unit = subprocess.run(
        [sys.executable, "-m", "unittest", "-q", "test_greet"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert unit.returncode == 0, unit.stderr
