"""``agent.budget``: a runaway agent is stopped, checkpointed, and the run ends with exit 1.

A command agent that loops forever is stopped by loop's watchdog within its limit plus
one watchdog interval (the ledger's record of the run says how long it ran); its task
stays open, the reason is in the log, and its work so far is in an interim commit.
With the real ``claude`` the budget is also passed as Claude Code's own flags: a wrapper
on ``agent.command`` records the argv the CLI was started with.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from driver.driver_project import (
    TaskSpec,
    agent_config,
    alive,
    command_agent,
    events,
    loop_process,
    make_item,
    runs,
)
from harness.agents import ClaudeCli
from harness.fake_anthropic import FakeAnthropic
from harness.replies import run_command
from helpers.project import entries, git, task_states

from the_loop.ledger import store
from the_loop.tasks import TaskState

ONE = (TaskSpec("1", "endless task", test="test -f done-1.txt"),)
INTERVAL = 0.5
# The watchdog's SIGTERM ends the sleeping agent at once; this covers starting the
# process and the thread's wake-up on a loaded machine, not the limit itself.
SLACK = 1.5

# Writes a file once (work in progress), then does nothing for ever.
STALLS = 'pathlib.Path("half.txt").write_text("started\\n")\nwhile True:\n    time.sleep(0.1)\n'
# Keeps changing a file (progress), for ever.
BUSY = (
    "n = 0\nwhile True:\n"
    '    n += 1\n    pathlib.Path("busy.txt").write_text(str(n))\n    time.sleep(0.1)\n'
)


def budget(**task: float) -> str:
    limits = json.dumps(task)
    return f"  budget:\n    task: {limits}\n    watchdogSeconds: {INTERVAL}\n"


def stopped_run(tmp_path: Path, body: str, **limits: float) -> tuple[Path, Path, dict[str, object]]:
    program, log = command_agent(tmp_path / "bin", body)
    config = agent_config("command", [program], timeout=120, extra=budget(**limits))
    root = make_item(tmp_path / "p", ONE, config=config)

    ran = loop_process(root, "execute-tasks", "7", "--agent", "command", "--json")

    assert ran.returncode == 1, ran.stdout + ran.stderr
    return root, log, {"events": events(ran.stdout), "stdout": ran.stdout}


def check_stopped(root: Path, log: Path, limit_seconds: float, why: str) -> None:
    (record,) = store.read_runs(root, "issue-7")
    assert record.stopped is not None and why in record.stopped
    assert limit_seconds <= record.seconds <= limit_seconds + INTERVAL + SLACK, record.seconds
    assert not alive(runs(log)[-1]["pid"])  # the process group was stopped
    assert task_states(root)["1"] is not TaskState.DONE  # open (in progress)
    interim = entries(root)[-1]
    assert interim.summary == "interim checkpoint during task 1"
    assert "stopped by its budget" in interim.fields["did"] and why in interim.fields["did"]
    assert "interim" in git(root, "log", "-1", "--format=%s") or "checkpoint" in git(
        root, "log", "-1", "--format=%s"
    )


@pytest.mark.slow
def test_no_progress_stops_an_agent_that_loops_for_ever(tmp_path: Path) -> None:
    limit = 3.0
    root, log, out = stopped_run(tmp_path, STALLS, noProgressMinutes=limit / 60)

    check_stopped(root, log, limit, "no progress")
    assert git(root, "show", "--stat", "HEAD").count("half.txt") == 1  # its work is committed
    failed = [e for e in out["events"] if e["event"] == "task-failed"]  # type: ignore[union-attr]
    assert failed and "over its budget" in failed[0]["reason"]
    assert out["events"][-1]["status"] == "failed"  # type: ignore[index]


@pytest.mark.slow
def test_wall_time_stops_an_agent_that_keeps_busy(tmp_path: Path) -> None:
    limit = 3.0
    root, log, _ = stopped_run(tmp_path, BUSY, wallMinutes=limit / 60, noProgressMinutes=1)

    check_stopped(root, log, limit, "wall-time")


@pytest.mark.agents
def test_claude_gets_its_own_limit_flags(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.add(run_command("RUN:"))
    argv_log = tmp_path / "argv.jsonl"
    wrapper = tmp_path / "claude-wrapper"
    wrapper.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"open({str(argv_log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"os.execv({str(claude_cli.binary)!r}, [{str(claude_cli.binary)!r}, *sys.argv[1:]])\n"
    )
    wrapper.chmod(0o755)
    tasks = (TaskSpec("1", "tool task", test="test -f done-1.txt", details=("RUN: sleep 0",)),)
    prices = '  prices:\n    claude-opus-5-5: {"input": 3, "output": 15}\n'
    limits = '  budget:\n    task: {"turns": 1, "dollars": 5}\n'
    config = agent_config("claude", [wrapper], max_attempts=2, extra=prices + limits)
    root = make_item(tmp_path / "p", tasks, config=config)

    ran = loop_process(
        root, "execute-tasks", "7", "--agent", "claude", "--json", env=claude_cli.env
    )

    assert ran.returncode == 1, ran.stdout + ran.stderr
    first = json.loads(argv_log.read_text().splitlines()[0])
    assert first[first.index("--max-turns") + 1] == "1"
    assert float(first[first.index("--max-budget-usd") + 1]) == pytest.approx(5.0)
    # Claude Code stopped itself at one turn: loop treats it as the budget's stop.
    assert task_states(root)["1"] is not TaskState.DONE  # open (in progress)
    assert "Reached maximum number of turns (1)" in entries(root)[-1].fields["did"]
    assert len(argv_log.read_text().splitlines()) == 1  # no retry past a budget
