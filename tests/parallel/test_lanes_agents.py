"""Parallel lanes with the real ``claude`` (3 lanes) and ``codex`` (2 lanes) CLIs against the
fake model servers: the 12-task DAG, a session of its own per task, each agent's cwd its
own worktree (read from the harness's own records: transcripts and rollouts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from driver.driver_project import agent_config, events, loop_process, make_item, task_commits
from harness.agents import ClaudeCli, CodexCli, read_jsonl
from harness.fake_anthropic import FakeAnthropic
from harness.fake_openai import FakeOpenAI
from harness.replies import Text, run_command
from lanes_project import TaskSpec, leftovers, twelve

pytestmark = pytest.mark.agents

# Each brief carries the shell line the fake turns into the agent's tool call.
WORKING = tuple(
    TaskSpec(t.id, t.title, t.depends, t.test, (f"RUN: mkdir -p out && touch out/t{t.id}.txt",))
    for t in twelve()
)


def _run(root: Path, kind: str, lanes: int, env: dict[str, str]) -> list[dict[str, object]]:
    args = ("execute-tasks", "7", "--agent", kind, "--parallel", str(lanes), "--json")
    done = loop_process(root, *args, env=env, timeout=600)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return events(done.stdout)


def _lane_cwds(root: Path) -> list[str]:
    return [str(root / f".the-loop/state/worktrees/issue-7/{n}") for n in range(1, 13)]


def test_claude_in_three_lanes(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.add(run_command("RUN:"))
    fake_anthropic.settings.after_tool_reply = Text("Made the file; the task's test passes.")
    config = agent_config("claude", [claude_cli.binary])
    root = make_item(tmp_path / "p", WORKING, config=config)

    seen = _run(root, "claude", 3, claude_cli.env)

    assert task_commits(root) == {str(n): 1 for n in range(1, 13)}
    assert leftovers(root) == {"worktrees": 0, "branches": [], "leases": []}
    sessions = seen[-1]["sessions"]
    assert isinstance(sessions, list) and len(set(sessions)) == 12
    cwds = sorted({line["cwd"] for s in sessions for line in _lines(claude_cli, s)})
    assert cwds == sorted(_lane_cwds(root))
    lanes = {e["lane"] for e in seen if e["event"] == "task-started"}
    assert lanes == {1, 2, 3}


def _lines(cli: ClaudeCli, session: str) -> list[dict[str, object]]:
    return [line for line in read_jsonl(cli.transcript(session)) if "cwd" in line]


def test_codex_in_two_lanes(codex_cli: CodexCli, fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.add(run_command("RUN:"))
    fake_openai.settings.after_tool_reply = Text("Made the file; the task's test passes.")
    config = agent_config("codex", [codex_cli.binary])
    root = make_item(tmp_path / "p", WORKING, config=config)

    seen = _run(root, "codex", 2, codex_cli.env)

    assert task_commits(root) == {str(n): 1 for n in range(1, 13)}
    assert leftovers(root) == {"worktrees": 0, "branches": [], "leases": []}
    threads = seen[-1]["sessions"]
    assert isinstance(threads, list) and len(set(threads)) == 12
    cwds = []
    for thread in threads:
        meta = [x for x in read_jsonl(codex_cli.rollout(thread)) if x["type"] == "session_meta"]
        cwds.append(meta[0]["payload"]["cwd"])
    assert sorted(cwds) == sorted(_lane_cwds(root))
    assert {e["lane"] for e in seen if e["event"] == "task-started"} == {1, 2}
