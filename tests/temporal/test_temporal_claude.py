"""``--backend temporal`` with the real Claude Code CLI on two workers, against the fake API."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import Fleet
from driver.driver_project import (
    FOUR,
    TaskSpec,
    agent_config,
    loop_command,
    loop_env,
    make_item,
    task_commits,
)
from harness.agents import ClaudeCli
from harness.fake_anthropic import FakeAnthropic
from harness.replies import Text, run_command
from helpers.project import git

pytestmark = [pytest.mark.temporal, pytest.mark.agents, pytest.mark.slow]

WORKING = tuple(
    TaskSpec(t.id, t.title, t.depends, t.test, (f"RUN: touch done-{t.id}.txt",)) for t in FOUR
)


def test_claude_on_two_workers_one_session_per_task_in_its_worktree(
    fleet: Fleet, claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.add(run_command("RUN:"))
    fake_anthropic.settings.after_tool_reply = Text("Made the file; the task's test passes.")
    root = make_item(tmp_path / "p", WORKING, config=agent_config("claude", [claude_cli.binary]))
    git(root, "remote", "add", "origin", str(fleet.remote))
    git(root, "push", "-q", "origin", "main")
    for name in ("m1", "m2"):
        fleet.start_worker(name, lanes=1, env=dict(claude_cli.env))
    done = subprocess.run(
        loop_command(root, "execute-tasks", "7", "--agent", "claude", "--parallel", "2")
        + ["--backend", "temporal", *fleet.flags()],
        cwd=root,
        env=loop_env(claude_cli.env),
        text=True,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    briefs = [r for r in fake_anthropic.requests if "# issue-7 task " in r.prompt]
    sessions = {r.headers["x-claude-code-session-id"] for r in briefs}
    assert len(sessions) == 4  # a new session per task
    # each brief names the worktree it runs in, on one of the two machines
    places = set()
    for request in briefs:
        for machine in ("m1", "m2"):
            if f"/machines/{machine}/.the-loop/state/worktrees/issue-7/" in request.raw:
                places.add(machine)
    assert places == {"m1", "m2"}
