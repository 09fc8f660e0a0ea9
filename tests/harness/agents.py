"""Find the pinned Claude Code and Codex CLIs and run them, isolated, against the fake APIs.

The binaries come from ``tools/install-agents`` (``.agents/node_modules/.bin/``) unless
``LOOP_CLAUDE_BIN`` / ``LOOP_CODEX_BIN`` name others. Those variables are read when this module
is imported, because the suite's autouse ``hermetic_env`` fixture removes every ``LOOP_*``
variable before a test runs.

Each run gets an environment built from nothing but what the CLI needs (no inherited
variables, so no proxies, credentials or user config leak in): a fresh ``HOME``, the CLI's own
config folder inside it, the fake's URL, a fake API key, and the switches that turn off
telemetry, update checks and other traffic. Both CLIs then make model calls only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
AGENTS_BIN = REPO_ROOT / ".agents" / "node_modules" / ".bin"
INSTALL_HINT = "run tools/install-agents to install the pinned claude and codex CLIs"

# Keep in step with tools/install-agents; the fixtures under tests/fixtures/harness/ were
# recorded with these versions.
CLAUDE_VERSION = "2.1.328"
CODEX_VERSION = "0.169.0"

FAKE_ANTHROPIC_KEY = "sk-ant-fake-key"
FAKE_OPENAI_KEY = "sk-fake-openai-key"
CODEX_KEY_VARIABLE = "FAKE_OPENAI_KEY"
CODEX_MODEL = "gpt-5.5"  # a slug Codex has metadata for; unknown slugs add a warning

# Flags that make Codex run hooks from $CODEX_HOME/hooks.json without the interactive review.
CODEX_HOOK_FLAGS = ("--enable", "hooks", "--dangerously-bypass-hook-trust")

# Switches Claude Code reads; all turn off traffic a test must not make or wait for. The
# retry count is 0 so that a scripted HTTP error is seen once, at once (no backoff).
CLAUDE_QUIET_ENV = {
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}

_LOCAL = "127.0.0.1,localhost"


def _binary(variable: str, name: str) -> Path | None:
    chosen = os.environ.get(variable)
    candidate = Path(chosen) if chosen else AGENTS_BIN / name
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


# Resolved at import: see the module docstring.
CLAUDE_BIN = _binary("LOOP_CLAUDE_BIN", "claude")
CODEX_BIN = _binary("LOOP_CODEX_BIN", "codex")


def base_env(home: Path) -> dict[str, str]:
    """The environment every agent run starts from: PATH, a fresh HOME, no proxies."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "USER": "tester",
        "LOGNAME": "tester",
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        # Both CLIs keep scratch files under the temp dir (Claude: claude-<uid>/, Codex: its
        # sandbox mount targets); a private one keeps runs from sharing or leaving them.
        "TMPDIR": str(home / "tmp"),
        # Nothing inherits HTTP(S)_PROXY; these make any library that guesses one stay local.
        "NO_PROXY": _LOCAL,
        "no_proxy": _LOCAL,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Loop Tester",
        "GIT_AUTHOR_EMAIL": "tester@example.invalid",
        "GIT_COMMITTER_NAME": "Loop Tester",
        "GIT_COMMITTER_EMAIL": "tester@example.invalid",
    }


def claude_env(home: Path, base_url: str) -> dict[str, str]:
    """Environment for Claude Code talking to the fake Anthropic API at ``base_url``."""
    return {
        **base_env(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_KEY,
        **CLAUDE_QUIET_ENV,
    }


def codex_env(home: Path) -> dict[str, str]:
    """Environment for Codex; the fake's address lives in ``$CODEX_HOME/config.toml``."""
    return {
        **base_env(home),
        "CODEX_HOME": str(home / ".codex"),
        CODEX_KEY_VARIABLE: FAKE_OPENAI_KEY,
    }


def codex_config(base_url: str, model: str = CODEX_MODEL) -> str:
    """A ``config.toml`` that sends every model call to the fake Responses API.

    Retries are off so that a scripted HTTP error is seen once. The update check, analytics,
    the plugin catalogue sync (a git fetch from GitHub) and the background daemon are off so
    that nothing but model calls leaves the process and nothing outlives it.
    """
    return f"""\
model = "{model}"
model_provider = "fake"
check_for_update_on_startup = false

[features]
plugins = false
remote_plugin = false
in_app_updates = false
daemon_auto_start = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.fake]
name = "Fake OpenAI"
base_url = "{base_url}"
wire_api = "responses"
env_key = "{CODEX_KEY_VARIABLE}"
request_max_retries = 0
stream_max_retries = 0
"""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (transcript, rollout), in order."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@dataclass(frozen=True)
class AgentRun:
    """One finished CLI process."""

    argv: tuple[str, ...]
    cwd: Path
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def json(self) -> dict[str, Any]:
        """stdout as one JSON object (``claude -p --output-format json``)."""
        result: dict[str, Any] = json.loads(self.stdout)
        return result

    def events(self) -> list[dict[str, Any]]:
        """stdout's JSON lines (``codex exec --json``, ``claude --output-format stream-json``)."""
        lines = (line for line in self.stdout.splitlines() if line.startswith("{"))
        return [json.loads(line) for line in lines]

    def ok(self) -> AgentRun:
        """This run, after checking it exited 0 (the message shows both streams if not)."""
        assert self.returncode == 0, (
            f"{' '.join(self.argv[:3])}… exited {self.returncode}\n"
            f"--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"
        )
        return self


def _run(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    stdin: str | None,
    timeout: float,
) -> AgentRun:
    started = time.monotonic()
    done = subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env),
        input=stdin if stdin is not None else "",
        text=True,
        capture_output=True,
        timeout=timeout,
    )
    return AgentRun(
        argv=tuple(argv),
        cwd=cwd,
        returncode=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        seconds=time.monotonic() - started,
    )


@dataclass(frozen=True)
class AgentCli:
    """A real agent binary with an isolated HOME (and its own config folders in ``env``)."""

    binary: Path
    home: Path
    env: Mapping[str, str]

    def run(
        self,
        *args: str,
        cwd: Path,
        stdin: str | None = None,
        timeout: float = 60,
        env: Mapping[str, str] | None = None,
    ) -> AgentRun:
        """Run ``<binary> <args>`` in ``cwd``; ``env`` adds to or overrides the isolated env.

        stdin is empty unless given, so a headless run never waits for input.
        """
        return _run([str(self.binary), *args], cwd, {**self.env, **(env or {})}, stdin, timeout)


@dataclass(frozen=True)
class ClaudeCli(AgentCli):
    """The real ``claude`` binary with an isolated HOME, pointed at a fake Anthropic API."""

    @property
    def config_dir(self) -> Path:
        """``CLAUDE_CONFIG_DIR``: settings, ``projects/`` transcripts, ``.claude.json``."""
        return Path(self.env["CLAUDE_CONFIG_DIR"])

    def prompt(self, text: str, *args: str, cwd: Path, **kwargs: Any) -> AgentRun:
        """``claude -p <text> --output-format json <args>``."""
        return self.run("-p", text, "--output-format", "json", *args, cwd=cwd, **kwargs)

    def transcript(self, session_id: str) -> Path:
        """The transcript of ``session_id``, found under ``projects/`` (the folder name
        encodes the cwd; finding it beats re-deriving the encoding)."""
        found = sorted(self.config_dir.glob(f"projects/*/{session_id}.jsonl"))
        assert len(found) == 1, f"expected one transcript for {session_id}, found {found}"
        return found[0]


@dataclass(frozen=True)
class CodexCli(AgentCli):
    """The real ``codex`` binary with an isolated HOME and CODEX_HOME, using a fake provider."""

    @property
    def codex_home(self) -> Path:
        """``CODEX_HOME``: ``config.toml``, ``hooks.json``, ``sessions/`` rollouts."""
        return Path(self.env["CODEX_HOME"])

    def exec(self, prompt: str, *args: str, cwd: Path, **kwargs: Any) -> AgentRun:
        """``codex exec --json <args> <prompt>``: a new thread."""
        return self.run("exec", "--json", *args, prompt, cwd=cwd, **kwargs)

    def resume(self, thread_id: str, prompt: str, *args: str, cwd: Path, **kwargs: Any) -> AgentRun:
        """``codex exec --json <args> resume <thread_id> <prompt>``: the same thread again."""
        return self.run("exec", "--json", *args, "resume", thread_id, prompt, cwd=cwd, **kwargs)

    def write_hooks(self, hooks: Mapping[str, Any]) -> Path:
        """Write ``$CODEX_HOME/hooks.json`` (``{"hooks": {...}}``, Claude's format); runs
        need :data:`CODEX_HOOK_FLAGS` for them to fire."""
        path = self.codex_home / "hooks.json"
        path.write_text(json.dumps(hooks, indent=2), encoding="utf-8")
        return path

    def rollout(self, thread_id: str) -> Path:
        """The rollout file of ``thread_id`` under ``sessions/YYYY/MM/DD/``."""
        found = sorted(self.codex_home.glob(f"sessions/*/*/*/rollout-*-{thread_id}.jsonl"))
        assert len(found) == 1, f"expected one rollout for {thread_id}, found {found}"
        return found[0]


def thread_id(run: AgentRun) -> str:
    """The thread id from a ``codex exec --json`` run's ``thread.started`` event."""
    for event in run.events():
        if event.get("type") == "thread.started":
            return str(event["thread_id"])
    raise AssertionError(f"no thread.started event in:\n{run.stdout}\n{run.stderr}")


def completed_items(run: AgentRun, kind: str) -> list[dict[str, Any]]:
    """The ``item.completed`` items of one type (``agent_message``, ``command_execution``,
    ``error``…) from a ``codex exec --json`` run, in order."""
    items = [e["item"] for e in run.events() if e.get("type") == "item.completed"]
    return [item for item in items if item.get("type") == kind]


def make_claude(binary: Path, home: Path, base_url: str) -> ClaudeCli:
    """A :class:`ClaudeCli` with a fresh config folder under ``home``."""
    env = claude_env(home, base_url)
    Path(env["CLAUDE_CONFIG_DIR"]).mkdir(parents=True, exist_ok=True)
    Path(env["TMPDIR"]).mkdir(exist_ok=True)
    return ClaudeCli(binary=binary, home=home, env=env)


def make_codex(binary: Path, home: Path, base_url: str) -> CodexCli:
    """A :class:`CodexCli` with a fresh ``CODEX_HOME`` whose config points at ``base_url``."""
    env = codex_env(home)
    codex_home = Path(env["CODEX_HOME"])
    codex_home.mkdir(parents=True, exist_ok=True)
    Path(env["TMPDIR"]).mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(base_url), encoding="utf-8")
    return CodexCli(binary=binary, home=home, env=env)


def write_hook_script(path: Path, log: Path, output: Mapping[str, Any] | None = None) -> Path:
    """An executable hook command: appends its stdin JSON as one line to ``log``, then prints
    ``output`` as JSON (for example ``hookSpecificOutput.additionalContext``) if given.

    Both CLIs run hook commands with the event's JSON on stdin, so one script serves both.
    """
    reply = json.dumps(json.dumps(output)) if output is not None else "None"
    path.write_text(
        f"""#!{sys.executable}
import json, sys
payload = json.load(sys.stdin)
with open({str(log)!r}, "a", encoding="utf-8") as handle:
    handle.write(json.dumps(payload) + "\\n")
reply = {reply}
if reply is not None:
    sys.stdout.write(reply)
""",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def hooks_config(commands: Mapping[str, Path]) -> dict[str, Any]:
    """``{"hooks": {event: [...]}}`` running ``commands[event]`` on each event (Claude and
    Codex share the format; tool events get the match-all matcher)."""
    hooks: dict[str, Any] = {}
    for event, command in commands.items():
        entry: dict[str, Any] = {"hooks": [{"type": "command", "command": str(command)}]}
        if event in ("PreToolUse", "PostToolUse"):
            entry["matcher"] = "*"
        hooks[event] = [entry]
    return {"hooks": hooks}
