"""Issue 21, item 3: the driver guards its own runs (real Claude Code, fake Anthropic API).

Without ``loop install``, each driven ``claude -p`` gets loop's hooks and an
auto-compaction point above loop's hard arm through a per-run ``--settings``
overlay, so a compaction the harness starts on its own is preceded by loop's
checkpoint. A rerun reconciles an open compaction against the transcript and never
sends a second ``/compact`` for one that already happened.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from driver_project import FOUR, TaskSpec, agent_config, events, loop_process, make_item
from harness.agents import ClaudeCli
from harness.fake_anthropic import FakeAnthropic
from harness.replies import PromptTooLong, Rule, Text, run_command
from helpers.project import entries, git

from the_loop.config.settings import ContextPolicy, Pressure
from the_loop.driver.overlay import harness_thresholds

pytestmark = pytest.mark.agents

QUICK = tuple(TaskSpec(t.id, t.title, t.depends, "true") for t in FOUR)


def test_the_harness_threshold_sits_above_both_of_loops_hard_arms() -> None:
    policy = ContextPolicy(True, "clear", "compact", "compact", Pressure(200_000, 280_000, 75, 90))

    assert harness_thresholds(policy) == {
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "95",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "308000",
    }


def test_a_compaction_the_harness_starts_is_checkpointed_first_without_loop_install(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    tasks = (TaskSpec("1", "config key", (), "test -f done-1.txt", ("RUN: touch done-1.txt",)),)
    fake_anthropic.add(
        run_command("RUN:"),
        # The tool's result comes back "too long": Claude Code compacts by itself, then retries.
        Rule(when=lambda r: r.is_tool_result, reply=PromptTooLong(), times=1),
    )
    fake_anthropic.settings.after_tool_reply = Text("Made the file.")
    root = make_item(tmp_path / "p", tasks, config=agent_config("claude", [claude_cli.binary]))
    assert not (root / ".claude").exists()  # no loop install

    ran = loop_process(
        root, "execute-tasks", "7", "--agent", "claude", "--json", env=claude_cli.env
    )

    assert ran.returncode == 0, ran.stdout + ran.stderr
    compactions = [r for r in fake_anthropic.requests if r.is_compaction]
    assert len(compactions) == 1
    saved = [e for e in entries(root) if "PreCompact hook, trigger auto" in e.fields.get("did", "")]
    assert len(saved) == 1, [e.summary for e in entries(root)]
    # The WIP commit holds the agent's file: it landed before the harness compacted.
    log = git(root, "log", "--format=%s", "--name-only")
    assert "done-1.txt" in log.split("checkpoint task 1")[-1] or "done-1.txt" in log
    assert not (root / ".claude").exists()  # the user's files were never written


def test_a_rerun_after_an_unrecorded_compaction_sends_no_second_compact(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    config = agent_config("claude", [claude_cli.binary], task_boundary="compact")
    root = make_item(tmp_path / "p", QUICK, config=config)
    first = loop_process(
        root, "execute-tasks", "7", "--agent", "claude", "--json", "--max-tasks", "1",
        env=claude_cli.env,
    )  # fmt: skip
    assert first.returncode == 0, first.stdout
    (record_file,) = (root / ".the-loop/state/resets").glob("*.json")
    record = json.loads(record_file.read_text())
    assert (record["mode"], record["state"]) == ("compact", "dispatched")
    # The compaction happens (a run that crashed before recording it), outside the driver.
    claude_cli.run("-p", "/compact keep the design", "--resume", record["session"], cwd=root).ok()
    before = len([r for r in fake_anthropic.requests if r.is_compaction])
    assert before == 1

    again = loop_process(
        root, "execute-tasks", "7", "--agent", "claude", "--json", "--max-tasks", "1",
        env=claude_cli.env,
    )  # fmt: skip

    assert again.returncode == 0, again.stdout
    assert len([r for r in fake_anthropic.requests if r.is_compaction]) == before
    (reset,) = [e for e in events(again.stdout) if e["event"] == "reset"][:1]
    assert reset["state"] == "completed" and "reconciled" in reset["how"]
    history = (root / ".the-loop/state/resets/history.jsonl").read_text().splitlines()
    closed = [json.loads(line) for line in history if record["id"] in line]
    assert [c["state"] for c in closed] == ["completed"]


def test_with_the_hooks_installed_no_empty_interim_commit_comes_before_each_task(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    from helpers.hooks import install_hooks

    config = agent_config("claude", [claude_cli.binary], task_boundary="compact")
    root = install_hooks(make_item(tmp_path / "p", QUICK, config=config), "claude")
    before = len(git(root, "log", "--format=%H").split())

    ran = loop_process(
        root, "execute-tasks", "7", "--agent", "claude", "--json", env=claude_cli.env
    )

    assert ran.returncode == 0, ran.stdout + ran.stderr
    made = git(
        root, "log", "--format=%s", f"-{len(git(root, 'log', '--format=%H').split()) - before}"
    )
    assert not [s for s in made.splitlines() if "interim" in s], made
    # the crossing into implementation and one checkpoint commit per task, nothing else
    assert len(made.splitlines()) == 5
    summary = events(ran.stdout)[-1]
    assert summary["resets"] == {"clear": 1, "compact": 3}
