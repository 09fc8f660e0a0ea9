"""``loop execute-tasks ID --agent codex``: the real Codex CLI against the fake Responses API.

Thread ids come from the requests (``prompt_cache_key`` is the thread id) and from the
rollouts Codex wrote; a compaction is the rollout's own ``compacted`` line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from driver_project import (
    FOUR,
    TaskSpec,
    agent_config,
    events,
    loop_process,
    make_item,
    reset_history,
    task_commits,
)
from harness.agents import CodexCli, read_jsonl
from harness.fake_openai import FakeOpenAI
from harness.replies import ModelRequest, Text, run_command
from helpers.project import task_states

from the_loop.tasks import TaskState

pytestmark = pytest.mark.agents

WORKING = tuple(
    TaskSpec(t.id, t.title, t.depends, t.test, (f"RUN: touch done-{t.id}.txt",)) for t in FOUR
)


def thread_of(request: ModelRequest) -> str:
    return str(request.body["prompt_cache_key"])


def drive(root: Path, cli: CodexCli) -> list[dict[str, object]]:
    args = ("execute-tasks", "7", "--agent", "codex", "--json")
    ran = loop_process(root, *args, env=cli.env)
    assert ran.returncode == 0, f"{ran.stdout}\n{ran.stderr}"
    return events(ran.stdout)


def project(tmp_path: Path, cli: CodexCli, boundary: str) -> Path:
    config = agent_config("codex", [cli.binary], task_boundary=boundary)
    return make_item(tmp_path / "p", WORKING, config=config)


@pytest.fixture
def working(fake_openai: FakeOpenAI) -> FakeOpenAI:
    """The fake answering ``RUN: <cmd>`` with an exec_command call, then "done"."""
    fake_openai.add(run_command("RUN:"))
    fake_openai.settings.after_tool_reply = Text("Made the file; the task's test passes.")
    return fake_openai


def test_clear_runs_each_task_in_a_new_thread(
    codex_cli: CodexCli, working: FakeOpenAI, tmp_path: Path
) -> None:
    root = project(tmp_path, codex_cli, "clear")

    done = drive(root, codex_cli)

    assert task_states(root) == {t.id: TaskState.DONE for t in FOUR}
    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    threads = [thread_of(r) for r in working.requests if r.prompt.startswith("# issue-7 task")]
    assert len(set(threads)) == 4
    task_resets = [h for h in reset_history(root) if h["session"] and h["state"] == "completed"]
    assert [(h["session"], h["confirmed_session"]) for h in task_resets] == [
        (threads[i], threads[i + 1]) for i in range(3)
    ]
    assert done[-1]["sessions"] == threads


def test_compact_keeps_one_thread_and_compacts_between_tasks(
    codex_cli: CodexCli, working: FakeOpenAI, tmp_path: Path
) -> None:
    root = project(tmp_path, codex_cli, "compact")

    drive(root, codex_cli)

    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    (thread,) = {thread_of(r) for r in working.requests}
    # One compaction before each of tasks 2-4, none inside a task's own turn.
    compactions = [i for i, r in enumerate(working.requests) if r.is_compaction]
    assert len(compactions) == 3
    briefs = [i for i, r in enumerate(working.requests) if r.prompt.startswith("# issue-7 task")]
    assert [sum(1 for c in compactions if c < b) for b in briefs] == [0, 1, 2, 3]
    lines = read_jsonl(codex_cli.rollout(thread))
    assert len([line for line in lines if line["type"] == "compacted"]) == 3
    compacts = [h for h in reset_history(root) if h["mode"] == "compact"]
    assert [h["state"] for h in compacts] == ["completed"] * 3  # task 4 ends in review: clear
    assert {h["confirmed_session"] for h in compacts} == {thread}
