"""Re-record ``tests/fixtures/harness/``: real transcripts, rollouts and hook payloads.

Runs the pinned CLIs (``tools/install-agents``) against the fakes with fixed, distinct usage
numbers per request, so a telemetry parser has known right answers (listed in the fixtures'
README). Run from the repository root::

    .venv/bin/python tests/harness/record_fixtures.py

Everything runs under ``/tmp/loop-harness-fixtures`` (wiped first), so paths inside the
fixtures are stable. Bulky strings in lines a parser has no use for (attachments, request
shapes, the system instructions) are cut to a short prefix to keep the files small; message,
usage, compaction and event lines are kept whole.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the ``harness`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.agents import (
    CLAUDE_BIN,
    CODEX_BIN,
    CODEX_HOOK_FLAGS,
    INSTALL_HINT,
    REPO_ROOT,
    ClaudeCli,
    CodexCli,
    hooks_config,
    make_claude,
    make_codex,
    thread_id,
    write_hook_script,
)
from harness.fake_anthropic import FakeAnthropic
from harness.fake_openai import FakeOpenAI
from harness.replies import (
    AnthropicUsage,
    OpenAIUsage,
    PromptTooLong,
    Summary,
    Text,
    ToolCall,
)

SCRATCH = Path("/tmp/loop-harness-fixtures")
OUT = REPO_ROOT / "tests" / "fixtures" / "harness"
KEEP = 120  # characters kept of a trimmed string
KEEP_ITEMS = 2  # items kept of a trimmed list
KEEP_DEPTH = 4  # levels of nesting kept in a trimmed line
HOOK_CONTEXT = "Loop resume note: task 3 of issue-42 is next."
CLAUDE_EVENTS = [
    "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop",
    "PreCompact", "PostCompact", "SessionEnd",
]  # fmt: skip
CODEX_EVENTS = [
    "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "PostCompact",
    "SessionEnd",
]  # fmt: skip

# Usage per request, by scenario (the README lists them with the expected readings).
CLAUDE_TOOL = (
    AnthropicUsage(input=8, cache_creation=2100, cache_read=18000, output=60),
    AnthropicUsage(input=5, cache_creation=400, cache_read=20100, output=12),
)
CLAUDE_COMPACT = (
    AnthropicUsage(input=3, cache_creation=6000, cache_read=0, output=25),
    AnthropicUsage(input=6100, cache_creation=0, cache_read=0, output=300),  # the summary
    AnthropicUsage(input=4, cache_creation=800, cache_read=5000, output=9),
)
CLAUDE_AUTO = (
    AnthropicUsage(input=2, cache_creation=150000, cache_read=40000, output=70),
    AnthropicUsage(input=190500, cache_creation=0, cache_read=0, output=400),  # the summary
    AnthropicUsage(input=6, cache_creation=1200, cache_read=9000, output=15),
)
CODEX_TOOL = (
    OpenAIUsage(input=12000, cached=8000, output=150, reasoning=64),
    OpenAIUsage(input=12400, cached=12000, output=40, reasoning=0),
)
CODEX_COMPACT = (
    OpenAIUsage(input=9000, cached=0, output=20, reasoning=0),
    OpenAIUsage(input=9100, cached=9000, output=200, reasoning=0),  # the summary
    OpenAIUsage(input=3000, cached=0, output=15, reasoning=0),
)

_BULKY_CLAUDE = {"attachment", "api-request-shape", "api-request-blob", "api-request"}
_BULKY_CODEX = {"session_meta", "turn_context", "world_state"}


def _trim(value: Any, depth: int = 0) -> Any:
    """``value`` with long strings cut to a prefix, long lists to their first items, and
    anything nested deeper than :data:`KEEP_DEPTH` to a note of its size."""
    if isinstance(value, (dict, list)) and depth >= KEEP_DEPTH:
        return f"…[trimmed {len(json.dumps(value))} chars of JSON]"
    if isinstance(value, str) and len(value) > KEEP:
        return f"{value[:KEEP]}…[trimmed {len(value) - KEEP} chars]"
    if isinstance(value, dict):
        return {key: _trim(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        kept = [_trim(item, depth + 1) for item in value[:KEEP_ITEMS]]
        if len(value) > KEEP_ITEMS:
            kept.append(f"…[trimmed {len(value) - KEEP_ITEMS} more items]")
        return kept
    return value


def _claude_line(line: dict[str, Any]) -> dict[str, Any]:
    return _trim(line) if line.get("type") in _BULKY_CLAUDE else line


def _codex_line(line: dict[str, Any]) -> dict[str, Any]:
    payload = line.get("payload") or {}
    if line.get("type") == "compacted":  # keep the summary message whole
        history = payload.get("replacement_history")
        return {**line, "payload": {**payload, "replacement_history": _trim(history)}}
    developer = payload.get("type") == "message" and payload.get("role") == "developer"
    context = payload.get("type") == "message" and "<environment_context>" in json.dumps(payload)
    if line.get("type") in _BULKY_CODEX or developer or context:
        return _trim(line)
    return line


def _copy(source: Path, name: str, shrink: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    lines = [json.loads(text) for text in source.read_text().splitlines() if text.strip()]
    body = "".join(json.dumps(shrink(line), ensure_ascii=False) + "\n" for line in lines)
    (OUT / name).write_text(body, encoding="utf-8")
    print(f"{name}: {len(lines)} lines, {len(body.encode())} bytes")


def _repo(name: str) -> Path:
    repo = SCRATCH / name
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def _hooks(tag: str, events: list[str]) -> dict[str, Any]:
    log = SCRATCH / f"{tag}-hooks.jsonl"
    context = {"hookEventName": "SessionStart", "additionalContext": HOOK_CONTEXT}
    start = write_hook_script(SCRATCH / f"{tag}-start-hook", log, {"hookSpecificOutput": context})
    other = write_hook_script(SCRATCH / f"{tag}-log-hook", log)
    return hooks_config({"SessionStart": start, **dict.fromkeys(events, other)})


def record_claude(binary: Path) -> None:
    """Three sessions: a Bash tool call, a manual /compact, a reactive auto-compaction."""
    hooks = json.dumps(_hooks("claude", CLAUDE_EVENTS))
    with FakeAnthropic() as fake:
        cli = make_claude(binary, SCRATCH / "claude-home", fake.base_url)

        def session(name: str) -> Path:
            repo = _repo(name)
            (repo / ".claude").mkdir()
            (repo / ".claude" / "settings.json").write_text(hooks)
            return repo

        repo = session("claude-tool")
        fake.enqueue(
            ToolCall("echo hello > out.txt", preface="Creating the file.", usage=CLAUDE_TOOL[0]),
            Text("done", usage=CLAUDE_TOOL[1]),
        )
        out = _claude(cli, repo, "Create out.txt.", "--allowedTools", "Bash")
        _copy(cli.transcript(out), "claude-tool-use.jsonl", _claude_line)

        repo = session("claude-compact")
        first, summary, last = CLAUDE_COMPACT
        fake.settings.summary_reply = Summary("The user said hi; nothing is pending.", summary)
        fake.enqueue(Text("Hi.", usage=first), Text("Continuing.", usage=last))
        sid = _claude(cli, repo, "say hi")
        _claude(cli, repo, "/compact", "--resume", sid)
        _claude(cli, repo, "continue", "--resume", sid)
        _copy(cli.transcript(sid), "claude-compact.jsonl", _claude_line)

        repo = session("claude-auto-compact")
        first, summary, last = CLAUDE_AUTO
        fake.settings.summary_reply = Summary("Task 3 is half done; tests pass.", summary)
        fake.enqueue(Text("Started task 3.", usage=first), PromptTooLong())
        fake.enqueue(Text("Task 3 finished.", usage=last))
        sid = _claude(cli, repo, "work on task 3")
        _claude(cli, repo, "finish task 3", "--resume", sid)
        _copy(cli.transcript(sid), "claude-auto-compact.jsonl", _claude_line)
    _copy(SCRATCH / "claude-hooks.jsonl", "claude-hooks.jsonl", lambda line: line)


def _claude(cli: ClaudeCli, repo: Path, prompt: str, *args: str) -> str:
    return str(cli.prompt(prompt, *args, cwd=repo).ok().json()["session_id"])


def record_codex(binary: Path) -> None:
    """Two threads: an exec_command tool call, and a resume that compacts first."""
    with FakeOpenAI() as fake:
        cli = make_codex(binary, SCRATCH / "codex-home", fake.base_url)
        cli.write_hooks(_hooks("codex", CODEX_EVENTS))

        fake.enqueue(
            ToolCall("echo hello > out.txt", preface="Creating the file.", usage=CODEX_TOOL[0]),
            Text("done", usage=CODEX_TOOL[1]),
        )
        thread = _codex(cli, _repo("codex-tool"), "Create out.txt.", "--sandbox", "workspace-write")
        _copy(cli.rollout(thread), "codex-tool-use.jsonl", _codex_line)

        first, summary, last = CODEX_COMPACT
        fake.settings.summary_reply = Summary("The user said hi; nothing is pending.", summary)
        fake.enqueue(Text("Hi.", usage=first), Text("Continuing.", usage=last))
        repo = _repo("codex-compact")
        thread = _codex(cli, repo, "say hi")
        limit = ("-c", "model_auto_compact_token_limit=1")
        cli.resume(thread, "continue", *CODEX_HOOK_FLAGS, *limit, cwd=repo).ok()
        _copy(cli.rollout(thread), "codex-compact.jsonl", _codex_line)
    _copy(SCRATCH / "codex-hooks.jsonl", "codex-hooks.jsonl", lambda line: line)


def _codex(cli: CodexCli, repo: Path, prompt: str, *args: str) -> str:
    return thread_id(cli.exec(prompt, *CODEX_HOOK_FLAGS, *args, cwd=repo).ok())


def main() -> int:
    """Record every fixture; exit 1 if a CLI is missing."""
    if CLAUDE_BIN is None or CODEX_BIN is None:
        print(f"record_fixtures: {INSTALL_HINT}", file=sys.stderr)
        return 1
    shutil.rmtree(SCRATCH, ignore_errors=True)
    SCRATCH.mkdir(parents=True)
    OUT.mkdir(parents=True, exist_ok=True)
    record_claude(CLAUDE_BIN)
    record_codex(CODEX_BIN)
    return 0


if __name__ == "__main__":
    sys.exit(main())
