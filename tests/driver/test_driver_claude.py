"""``loop execute-tasks ID --agent claude``: the real Claude Code CLI against the fake API.

Every session id is read from the requests Claude Code sent (``x-claude-code-session-id``),
so "a new session" and "the same session" are what the harness did, not what loop says.
Compaction is confirmed from the session's own transcript (``compact_boundary``): loop's
hooks are not installed here, so PreCompact/PostCompact are not part of these runs.
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
    subjects,
    task_commits,
)
from harness.agents import ClaudeCli, read_jsonl
from harness.fake_anthropic import FakeAnthropic
from harness.replies import (
    AnthropicUsage,
    ModelRequest,
    Rule,
    Text,
    ToolCall,
    prompt_contains,
    run_command,
)
from helpers.project import entries, task_states

from the_loop.tasks import TaskState

pytestmark = pytest.mark.agents

# Each task's brief carries a line the fake turns into a Bash call making the test's file.
WORKING = tuple(
    TaskSpec(t.id, t.title, t.depends, t.test, (f"RUN: touch done-{t.id}.txt",)) for t in FOUR
)
# The same DAG with tests that always pass: the runs stay one model call each.
QUICK = tuple(TaskSpec(t.id, t.title, t.depends, "true") for t in FOUR)


def session_of(request: ModelRequest) -> str:
    return request.headers["x-claude-code-session-id"]


def briefs(fake: FakeAnthropic) -> list[ModelRequest]:
    """The requests that carried a task brief, in order."""
    return [r for r in fake.requests if r.prompt.startswith("# issue-7 task ")]


def drive(root: Path, cli: ClaudeCli, *args: str) -> list[dict[str, object]]:
    ran = loop_process(
        root, "execute-tasks", "7", "--agent", "claude", "--json", *args, env=cli.env
    )
    assert ran.returncode == 0, f"{ran.stdout}\n{ran.stderr}"
    return events(ran.stdout)


def project(tmp_path: Path, cli: ClaudeCli, tasks: tuple[TaskSpec, ...], boundary: str) -> Path:
    config = agent_config("claude", [cli.binary], task_boundary=boundary)
    return make_item(tmp_path / "p", tasks, config=config)


def test_clear_runs_each_task_in_a_new_session(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.add(run_command("RUN:"))
    fake_anthropic.settings.after_tool_reply = Text("Made the file; the task's test passes.")
    root = project(tmp_path, claude_cli, WORKING, "clear")

    done = drive(root, claude_cli)

    assert task_states(root) == {t.id: TaskState.DONE for t in FOUR}
    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    sessions = [session_of(r) for r in briefs(fake_anthropic)]
    assert len(sessions) == 4 and len(set(sessions)) == 4
    task_resets = [h for h in reset_history(root) if h["session"] and h["state"] == "completed"]
    assert [(h["session"], h["confirmed_session"]) for h in task_resets] == [
        (sessions[i], sessions[i + 1]) for i in range(3)
    ]
    assert all("unverified" not in h["note"] for h in task_resets)
    assert [e.fields["did"].split(" (")[0] for e in entries(root) if " done: " in e.summary] == [
        "Made the file; the task's test passes."
    ] * 4
    assert done[-1]["sessions"] == sessions


def test_compact_keeps_one_session_and_compacts_between_tasks(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    root = project(tmp_path, claude_cli, QUICK, "compact")

    done = drive(root, claude_cli)

    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    (session,) = {session_of(r) for r in fake_anthropic.requests}
    kinds = [
        "compact" if r.is_compaction else r.prompt.split(":")[0] for r in fake_anthropic.requests
    ]
    assert kinds == [
        "# issue-7 task 1",
        "compact",
        "# issue-7 task 2",
        "compact",
        "# issue-7 task 3",
        "compact",
        "# issue-7 task 4",
    ]
    boundaries = [
        line
        for line in read_jsonl(claude_cli.transcript(session))
        if line.get("subtype") == "compact_boundary"
    ]
    assert [b["compactMetadata"]["trigger"] for b in boundaries] == ["manual"] * 3
    compacts = [h for h in reset_history(root) if h["mode"] == "compact"]
    assert [h["state"] for h in compacts] == ["completed"] * 3  # task 4 ends in review: clear
    assert {h["confirmed_session"] for h in compacts} == {session}
    assert all("compact_boundary" in h["note"] for h in compacts)
    assert done[-1]["resets"] == {"clear": 1, "compact": 3}


def test_off_resumes_one_session_without_compacting(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    root = project(tmp_path, claude_cli, QUICK, "off")

    drive(root, claude_cli)

    assert task_commits(root) == {"1": 1, "2": 1, "3": 1, "4": 1}
    assert len({session_of(r) for r in fake_anthropic.requests}) == 1
    assert [r.is_compaction for r in fake_anthropic.requests] == [False] * 4
    (session,) = {session_of(r) for r in fake_anthropic.requests}
    lines = read_jsonl(claude_cli.transcript(session))
    assert not [line for line in lines if line.get("subtype") == "compact_boundary"]


def test_an_unfinished_task_over_the_hard_threshold_is_compacted_and_finished(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    # 290,000 + 300 + 5,000 = 295,300 tokens in use: past hardTokens (280,000).
    full = AnthropicUsage(input=290_000, cache_creation=300, cache_read=5_000, output=42)
    fake_anthropic.add(
        Rule(prompt_contains("continue task 1"), ToolCall("touch done-1.txt")),
        Rule(prompt_contains("# issue-7 task 1"), Text("Read the code; no change yet.", full), 1),
    )
    fake_anthropic.settings.after_tool_reply = Text("done-1.txt is there now.")
    tasks = (TaskSpec("1", "config key", test="test -f done-1.txt"),)
    root = project(tmp_path, claude_cli, tasks, "clear")

    done = drive(root, claude_cli)

    assert task_states(root) == {"1": TaskState.DONE}
    assert subjects(root)[-2:] == [
        "chore(issue-7): checkpoint interim, task 1",
        "chore(issue-7): checkpoint task 1",  # the last task: it also enters needs-review
    ]
    interim = [e for e in entries(root) if e.summary == "interim checkpoint during task 1"][0]
    assert interim.context.startswith("compact (about to): mid-task in task 1; pressure verdict")
    assert "full_clear" in interim.context
    requests = fake_anthropic.requests
    assert len({session_of(r) for r in requests}) == 1
    order = ["compact" if r.is_compaction else r.prompt.split(":")[0] for r in requests]
    assert order[:3] == ["# issue-7 task 1", "compact", "continue task 1"]
    finished = [e for e in done if e["event"] == "agent-finished"]
    assert [(e["outcome"], e["tokens"]) for e in finished] == [
        ("unfinished", 295_300),
        ("done", 6_500),
    ]
    (compact,) = [h for h in reset_history(root) if h["mode"] == "compact"]
    assert compact["state"] == "completed"
    assert compact["confirmed_session"] == compact["session"] == session_of(requests[0])
    task_done = [e for e in entries(root) if e.summary.startswith("task 1 done")][0]
    assert task_done.fields["did"].startswith("done-1.txt is there now. (claude, 2 runs;")


def test_a_task_claude_checkpointed_itself_is_accepted_and_its_reset_performed(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.add(run_command("RUN:"))
    fake_anthropic.settings.after_tool_reply = Text("Recorded with loop task done.")
    done_by_agent = (
        "RUN: touch done-1.txt && loop task done 7 1 --did 'claude made done-1.txt'"
        " --next 'implement task 2: retry ledger' --tests 'test -f done-1.txt: pass'"
    )
    tasks = (
        TaskSpec("1", "config key", test="test -f done-1.txt", details=(done_by_agent,)),
        TaskSpec("2", "retry ledger", ("1",)),
    )
    root = project(tmp_path, claude_cli, tasks, "clear")

    done = drive(root, claude_cli)

    assert task_commits(root) == {"1": 1, "2": 1}
    first = [e for e in entries(root) if e.summary.startswith("task 1 done")]
    assert [e.fields["did"] for e in first] == ["claude made done-1.txt"]
    outcomes = [e["outcome"] for e in done if e["event"] == "agent-finished"]
    assert outcomes == ["done-by-agent", "done"]
    # `loop task done` ran inside Claude's Bash tool with LOOP_SESSION_ID set by the driver,
    # so its clear names the session it was taken in and the new one verifies it.
    one, two = (session_of(r) for r in briefs(fake_anthropic))
    (reset,) = [h for h in reset_history(root) if h["session"] == one]
    assert (reset["state"], reset["confirmed_session"]) == ("completed", two)
    assert "unverified" not in reset["note"]
