"""``loop context`` with no session named reads the live session (issue 21).

Inside an agent session the hooks have already told loop which session runs and
where its transcript is; a user who types ``loop context`` should not have to
dig out an id. With no session to be found, the error says what to give.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.hooks import SESSION, claude_transcript, hook
from helpers.project import project_copy, run


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def test_the_session_the_hooks_saw_is_read(project: Path, tmp_path: Path) -> None:
    transcript = claude_transcript(tmp_path / "session.jsonl", 120_000)
    started = hook(project, "SessionStart", transcript_path=transcript, source="startup")
    assert started.exit_code == 0, started.stderr

    done = run(project, "context", "--json")

    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert (data["sessionId"], data["tokensInUse"]) == (SESSION, 120_000)
    assert data["pressure"]["verdict"] == "no_op"
    text = run(project, "--no-color", "context")
    assert text.stdout.startswith(f"claude {SESSION}: 120,000 tokens in use of 200,000")


def test_no_live_session_is_a_clear_error(project: Path) -> None:
    done = run(project, "context")

    assert done.exit_code == 2
    assert done.stderr.startswith("error: no live session found: say which session to read\n")
    assert "--transcript PATH" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_ended_session_is_not_live(project: Path, tmp_path: Path) -> None:
    transcript = claude_transcript(tmp_path / "session.jsonl", 120_000)
    hook(project, "SessionStart", transcript_path=transcript, source="startup")
    hook(project, "SessionEnd", transcript_path=transcript, reason="exit")

    assert run(project, "context").exit_code == 2


def test_the_usage_guide_documents_context_with_and_without_an_argument() -> None:
    # Issue 21: `loop context` was missing from the docs.
    guide = (Path(__file__).resolve().parents[2] / "docs" / "usage.md").read_text()
    section = guide[guide.index("`loop context` reads") :]
    section = section[: section.find("\n## ")]
    assert "$ loop context\n" in section  # no argument: the live session
    assert "--transcript" in section and "--session" in section
