"""Issue 21: what fault probes of the driver found, each through a real ``loop`` run.

A hand tick passed off as "done by the agent", an HTTP 400 retried in silence and
called "success", refused tools gone from the stop reason after the first run, a
silent backoff. Command agents are real processes; the Claude runs use the real CLI
against the fake Anthropic server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from driver_project import (
    FOUR,
    TaskSpec,
    agent_config,
    command_agent,
    events,
    loop_process,
    make_item,
    runs,
)
from harness.agents import ClaudeCli
from harness.fake_anthropic import FakeAnthropic
from harness.replies import HttpError, Rule, Text, ToolCall, always, prompt_contains
from helpers.project import commits, entries, task_states

from the_loop.tasks import TaskState

HAND_TICK = (
    'pathlib.Path(f"done-{task}.txt").write_text("done\\n")\n'
    'path = pathlib.Path("docs/specs/issue-7/tasks.md")\n'
    'text = path.read_text().replace(f"- [-] {task}.", f"- [x] {task}.", 1)\n'
    'path.write_text(text.replace(f"- [ ] {task}.", f"- [x] {task}.", 1))\n'
)


@pytest.mark.slow
def test_a_task_the_agent_ticked_by_hand_is_not_done_by_the_agent(tmp_path: Path) -> None:
    program, _log = command_agent(tmp_path / "bin", HAND_TICK)
    root = make_item(tmp_path / "p", config=agent_config("command", [program], max_attempts=2))
    before = len(commits(root))

    ran = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert ran.returncode == 1, ran.stdout
    found = events(ran.stdout)
    summary = found[-1]
    assert summary["status"] == "failed" and summary["tasksDone"] == []
    assert "task 1 is ticked without a checkpoint" in str(summary["reason"])
    assert "loop task done issue-7 1 --adopt" in str(summary["reason"])
    finished = [e for e in found if e["event"] == "agent-finished"]
    assert [e["outcome"] for e in finished] == ["failed"]
    # No "done" entry was made up for it; only the stop note is logged and committed.
    assert not [e for e in entries(root) if e.summary.startswith("task 1 done")]
    assert len(commits(root)) == before + 1


@pytest.mark.slow
def test_a_retry_says_how_long_it_waits(tmp_path: Path) -> None:
    program, log = command_agent(tmp_path / "bin", "sys.exit(3 if len(mine) == 1 else 0)\n")
    config = agent_config("command", [program], max_attempts=2).replace(
        "backoffSeconds: 0", "backoffSeconds: 1"
    )
    tasks = (TaskSpec("1", "config key", (), "true"),)
    root = make_item(tmp_path / "p", tasks, config=config)

    ran = loop_process(root, "execute-tasks", "7", "--agent", "--json")

    assert ran.returncode == 0, ran.stdout
    kinds = [e["event"] for e in events(ran.stdout)]
    retry = next(e for e in events(ran.stdout) if e["event"] == "retry")
    assert (retry["task"], retry["run"], retry["seconds"]) == ("1", 1, 1.0)
    assert kinds.index("retry") < kinds.index("task-started", kinds.index("retry"))
    assert len(runs(log)) == 2
    text = loop_process(root, "execute-tasks", "7", "--agent", "--dry-run")
    assert text.returncode == 0


@pytest.mark.agents
def test_an_http_400_is_not_retried_and_not_called_success(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.add(Rule(always, HttpError(400, "this request is malformed")))
    config = agent_config("claude", [claude_cli.binary], max_attempts=3)
    root = make_item(tmp_path / "p", FOUR, config=config)

    ran = loop_process(
        root, "execute-tasks", "7", "--agent", "claude", "--json", env=claude_cli.env
    )

    assert ran.returncode == 1
    found = events(ran.stdout)
    assert [e["event"] for e in found].count("task-started") == 1
    assert not [e for e in found if e["event"] == "retry"]
    reason = str(found[-1]["reason"])
    assert "not retried" in reason and "API status 400" in reason
    assert "success" not in reason
    assert task_states(root)["1"] is not TaskState.DONE


@pytest.mark.agents
def test_refused_tools_stay_in_the_stop_reason_after_the_first_run(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    # Run 1 asks for Bash (not allowed here) and is refused; run 2 only talks.
    fake_anthropic.add(Rule(prompt_contains("# issue-7 task 1"), ToolCall("touch done-1.txt"), 1))
    fake_anthropic.settings.after_tool_reply = Text("I could not run the command.")
    fake_anthropic.settings.default_reply = Text("Still cannot run it.")
    tasks = (TaskSpec("1", "config key", (), "test -f done-1.txt"),)
    config = agent_config(
        "claude", [claude_cli.binary], max_attempts=2, extra="  claude:\n    allowedTools: [Read]\n"
    )
    root = make_item(tmp_path / "p", tasks, config=config)

    ran = loop_process(
        root, "execute-tasks", "7", "--agent", "claude", "--json", env=claude_cli.env
    )

    assert ran.returncode == 1
    assert [e["event"] for e in events(ran.stdout)].count("task-started") == 2
    assert "tools refused: Bash" in str(events(ran.stdout)[-1]["reason"])
