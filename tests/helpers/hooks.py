"""Helpers for the hook tests: payloads as the harnesses send them, transcripts, the runner.

Payload shapes follow the recorded real ones in ``tests/fixtures/harness/*hooks.jsonl``
(Claude Code 2.1.328, Codex 0.169.0); transcript lines follow real-clients.md.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.replies import ModelRequest, ToolCall

from helpers import REPO_ROOT, git, invoke

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "harness"
SESSION = "6b1f0c2e-1111-4d2a-9c3e-aaaaaaaaaaaa"
OTHER = "6b1f0c2e-2222-4d2a-9c3e-bbbbbbbbbbbb"
CLAUDE_MODEL = "claude-sonnet-4-5-20250929"  # a 200,000-token window (windows.py)
# How the hooks spell loop when run in-process by pytest (not a `loop` console script).
LOOP = shlex.join([os.path.abspath(sys.executable), "-m", "the_loop"])


@dataclass(frozen=True)
class HookRun:
    """One ``loop hook`` call."""

    exit_code: int
    stdout: str
    stderr: str

    def answer(self) -> dict[str, Any]:
        """stdout as JSON ({} when the hook said nothing)."""
        return json.loads(self.stdout) if self.stdout.strip() else {}

    @property
    def context(self) -> str | None:
        out = self.answer().get("hookSpecificOutput") or {}
        value = out.get("additionalContext")
        return value if isinstance(value, str) else None

    @property
    def block(self) -> str | None:
        data = self.answer()
        return data.get("reason") if data.get("decision") == "block" else None


def payload(event: str, root: Path, *, session: str | None = SESSION, **fields: Any) -> str:
    """The stdin JSON a harness sends for ``event`` in a session working in ``root``."""
    data: dict[str, Any] = {"cwd": str(root), "hook_event_name": event}
    if session is not None:
        data["session_id"] = session
    data.update({k: (str(v) if isinstance(v, Path) else v) for k, v in fields.items()})
    return json.dumps(data)


def hook(
    root: Path,
    event: str,
    *,
    harness: str = "claude",
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    **fields: Any,
) -> HookRun:
    """Run ``loop hook EVENT --harness H`` in-process with a payload for ``root``."""
    text = stdin if stdin is not None else payload(event, root, **fields)
    ran = invoke(["hook", event, "--harness", harness], env=env, input=text)
    return HookRun(ran.exit_code, ran.stdout, ran.stderr)


def claude_transcript(
    path: Path, tokens: int, *, session: str = SESSION, model: str = CLAUDE_MODEL
) -> Path:
    """A Claude Code transcript whose last reply used ``tokens`` (cache read + input)."""
    lines = [
        {
            "type": "user",
            "sessionId": session,
            "isSidechain": False,
            "message": {"role": "user", "content": "work on the task"},
        },
        {
            "type": "assistant",
            "sessionId": session,
            "isSidechain": False,
            "requestId": "req_1",
            "message": {
                "id": "msg_1",
                "model": model,
                "role": "assistant",
                "content": [{"type": "text", "text": "Working."}],
                "usage": {
                    "input_tokens": 2,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": tokens - 2,
                    "output_tokens": 10,
                },
            },
        },
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def recorded_payloads(name: str) -> list[dict[str, Any]]:
    """The real hook payloads recorded in ``tests/fixtures/harness/<name>``."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def state(root: Path) -> Path:
    return root / ".the-loop" / "state"


def session_record(root: Path, session: str = SESSION) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((state(root) / "sessions" / f"{session}.json").read_text())
    return data


def history(root: Path) -> list[dict[str, Any]]:
    path = state(root) / "resets" / "history.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---------------------------------------------------------- the real harnesses' sessions

LOOP_BIN = Path(sys.executable).parent / "loop"  # the console script of this environment
# What the fake model writes into the checkpoint command a hook hands it.
FILLED = ('"half the config key"', '"finish the config key: the schema default"')


def install_hooks(project: Path, harness: str) -> Path:
    """``loop install <harness>`` with this environment's loop, committed (task 1 in progress)."""
    ran = invoke(["-C", str(project), "install", harness, "--loop-command", str(LOOP_BIN)])
    assert ran.exit_code == 0, ran.output
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "task 1 handed out; loop hooks installed")
    return project


def run_the_checkpoint_command(request: ModelRequest) -> ToolCall:
    """The fake model's reply to a block: the checkpoint command it names, texts filled in."""
    text = "\n".join(request.strings())
    found = re.search(r"`([^`]*checkpoint issue-7 --mid-task[^`]*)`", text)
    assert found, "the block names the checkpoint command"
    command = found[1].replace("'<what is done so far>'", FILLED[0])
    return ToolCall(command.replace("'<the concrete next step>'", FILLED[1]))
