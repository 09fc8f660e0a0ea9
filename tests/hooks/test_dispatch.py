"""``loop hook``: answers in the harness's format and never breaks the harness.

Whatever goes wrong (bad input, an unknown event, a bug), the hook exits 0 with
one line on stderr and one line in the state folder's error log; outside a loop
project it says nothing and writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import git
from helpers.hooks import SESSION, hook, payload, recorded_payloads, state

from the_loop.hooks.answer import CONTEXT_LIMIT, HookAnswer, render
from the_loop.hooks.payload import EVENTS, HookInputError, parse_input
from the_loop.telemetry.reading import Harness


@pytest.mark.parametrize("name", ["claude-hooks.jsonl", "codex-hooks.jsonl"])
def test_every_recorded_payload_parses(name: str) -> None:
    harness = name.split("-")[0]
    seen = set()
    for data in recorded_payloads(name):
        event = data["hook_event_name"]
        if event not in EVENTS:
            continue
        parsed = parse_input(json.dumps(data), event=event, harness=harness)
        seen.add(event)
        assert parsed.session_id == data["session_id"]
        assert parsed.transcript_path == Path(data["transcript_path"])
        assert parsed.cwd == Path(data["cwd"])
        assert parsed.source == data.get("source")
        assert parsed.trigger == data.get("trigger")
    assert {"SessionStart", "PreCompact", "PostCompact", "Stop", "SessionEnd"} <= seen


def test_a_payload_for_another_event_is_refused() -> None:
    with pytest.raises(HookInputError, match="installed for Stop, but the harness sent SessionEnd"):
        parse_input('{"hook_event_name": "SessionEnd"}', event="Stop", harness="claude")


def test_answers_render_as_both_harnesses_read_them() -> None:
    context = render(HookAnswer(context="hello"), event="SessionStart", harness=Harness.CODEX)
    assert json.loads(context) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hello"}
    }
    block = render(HookAnswer(block="stop here"), event="Stop", harness=Harness.CLAUDE)
    assert json.loads(block) == {"decision": "block", "reason": "stop here"}
    assert render(HookAnswer(), event="Stop", harness=Harness.CLAUDE) == ""


def test_context_is_cut_at_the_harness_limit() -> None:
    out = render(HookAnswer(context="x" * 20_000), event="SessionStart", harness=Harness.CLAUDE)
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= CONTEXT_LIMIT
    assert text.endswith("(cut at the hook's 10,000-character limit)\n")


@pytest.mark.parametrize(
    ("stdin", "event", "harness", "said"),
    [
        ("{not json", "SessionStart", "claude", "the hook input is not JSON"),
        ("[1, 2]", "Stop", "claude", "the hook input is not a JSON object"),
        (None, "Notification", "claude", "loop does not answer the 'Notification' hook"),
        (None, "Stop", "gemini", "--harness must be one of ('claude', 'codex')"),
    ],
    ids=["not-json", "not-an-object", "unknown-event", "unknown-harness"],
)
def test_bad_input_exits_0_with_one_line_and_a_log_line(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    stdin: str | None,
    event: str,
    harness: str,
    said: str,
) -> None:
    monkeypatch.chdir(project)  # no cwd in the payload: the process's folder is the project
    text = stdin if stdin is not None else json.dumps({"session_id": SESSION})

    ran = hook(project, event, harness=harness, stdin=text)

    assert ran.exit_code == 0
    assert ran.stdout == ""
    (line,) = ran.stderr.splitlines()
    assert line.startswith(f"loop hook {event}: {said}")
    assert line.endswith(f"(see {state(project) / 'hooks' / 'errors.log'})")
    logged = (state(project) / "hooks" / "errors.log").read_text().splitlines()
    assert len(logged) == 1 and said in logged[0] and f" {harness} {event}: " in logged[0]


def test_an_internal_error_never_reaches_the_harness(project: Path) -> None:
    # a session record that is a folder: reading it fails inside the handler
    (state(project) / "sessions" / f"{SESSION}.json").mkdir(parents=True)

    ran = hook(project, "Stop")

    assert ran.exit_code == 0 and ran.stdout == ""
    assert ran.stderr.startswith("loop hook Stop: ")
    assert "errors.log" in ran.stderr
    assert (state(project) / "hooks" / "errors.log").is_file()


def test_outside_a_loop_project_nothing_is_said_or_written(git_repo: Path) -> None:
    ran = hook(git_repo, "SessionStart", source="startup")

    assert (ran.exit_code, ran.stdout, ran.stderr) == (0, "", "")
    assert not (git_repo / ".the-loop").exists()
    assert git(git_repo, "status", "--porcelain").stdout == ""


def test_each_event_records_when_it_fired(project: Path) -> None:
    for event in EVENTS:
        hook(project, event, harness="codex")

    fired = json.loads((state(project) / "hooks" / "fired.json").read_text())
    assert set(fired) == {"codex"}
    assert set(fired["codex"]) == set(EVENTS)


def test_the_payload_cwd_names_the_project(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    ran = hook(
        project,
        "SessionStart",
        source="startup",
        stdin=payload("SessionStart", project / "docs", source="startup"),
    )

    assert ran.exit_code == 0, ran.stderr
    assert ran.context is not None and "issue-7" in ran.context
    assert not (elsewhere / ".the-loop").exists()
