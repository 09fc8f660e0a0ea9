"""Budgets: what one task, and the whole item, may spend before loop stops the agent.

``agent.budget`` sets the limits (docs/config.md):

* ``task.tokens`` / ``task.dollars``: every run of one task together (the
  ledger's records of its earlier runs count against it), and
  ``item.tokens`` / ``item.dollars``: every run of the item;
* ``task.turns``, ``task.wallMinutes``, ``task.noProgressMinutes``: each agent
  run on its own. *No progress* means no file changed in the project and no
  tool call was seen in the agent's streamed output.

They are enforced twice. Where the harness has a limit of its own, it is passed
on the command line (Claude Code: ``--max-turns``, ``--max-budget-usd``) and the
harness stops itself. And :class:`Watchdog`, a thread beside every agent run,
checks every ``watchdogSeconds`` the run's wall time, its progress and its live
spend (Claude Code: the usage of each assistant message it streams; Codex: the
running total in its rollout); past a limit it stops the agent's process group
(SIGTERM, then SIGKILL) and says why in :attr:`Watchdog.tripped`. The driver then
takes an interim checkpoint, leaves the task open with the reason in the log and
ends the run with exit 1. The live spend of a Claude Code run is an estimate
(streamed usage is written before a reply's last output token is known); the
harness's ``--max-budget-usd`` is the exact limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from the_loop.config.settings import Config

GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL, as for a timeout
_SKIPPED = {".git", "node_modules", ".venv", "__pycache__"}
_SCAN_LIMIT = 20_000  # files looked at per progress scan; a huge tree is sampled, not walked


@dataclass(frozen=True)
class Budget:
    """``agent.budget``: None is no limit."""

    task_tokens: int | None = None
    task_dollars: float | None = None
    turns: int | None = None
    wall_seconds: float | None = None
    idle_seconds: float | None = None
    item_tokens: int | None = None
    item_dollars: float | None = None
    interval: float = 2.0

    @property
    def watched(self) -> bool:
        """Whether the watchdog has anything to watch."""
        return any(
            v is not None
            for v in (
                self.task_tokens,
                self.task_dollars,
                self.turns,
                self.wall_seconds,
                self.idle_seconds,
                self.item_tokens,
                self.item_dollars,
            )
        )


def budget_from(config: Config) -> Budget:
    """The effective ``agent.budget`` (validated by the schema already)."""
    agent = config.data.get("agent")
    raw = agent.get("budget") if isinstance(agent, Mapping) else None
    if not isinstance(raw, Mapping):
        return Budget()
    task = _section(raw, "task")
    item = _section(raw, "item")
    return Budget(
        task_tokens=_int(task.get("tokens")),
        task_dollars=_float(task.get("dollars")),
        turns=_int(task.get("turns")),
        wall_seconds=_minutes(task.get("wallMinutes")),
        idle_seconds=_minutes(task.get("noProgressMinutes")),
        item_tokens=_int(item.get("tokens")),
        item_dollars=_float(item.get("dollars")),
        interval=_float(raw.get("watchdogSeconds")) or 2.0,
    )


@dataclass(frozen=True)
class Allowance:
    """What one run may still spend: the task's and the item's budgets less what was spent."""

    tokens: int | None
    dollars: float | None
    tokens_why: str = ""
    dollars_why: str = ""

    def exhausted(self) -> str | None:
        """Why nothing is left to spend (before the run starts), or None."""
        if self.tokens is not None and self.tokens <= 0:
            return f"the {self.tokens_why} is spent"
        if self.dollars is not None and self.dollars <= 0:
            return f"the {self.dollars_why} is spent"
        return None


def allowance(
    budget: Budget,
    *,
    task_spent: tuple[int, float | None],
    item_spent: tuple[int, float | None],
) -> Allowance:
    """The tighter of the task's and the item's remaining tokens and dollars."""
    tokens: list[tuple[int, str]] = []
    dollars: list[tuple[float, str]] = []
    for limit, spent, name in (
        (
            budget.task_tokens,
            task_spent[0],
            f"task token budget ({budget.task_tokens:,})" if budget.task_tokens is not None else "",
        ),
        (
            budget.item_tokens,
            item_spent[0],
            f"item token budget ({budget.item_tokens:,})" if budget.item_tokens is not None else "",
        ),
    ):
        if limit is not None:
            tokens.append((limit - spent, name))
    for money, paid, name in (
        (budget.task_dollars, task_spent[1], f"task budget (${budget.task_dollars})"),
        (budget.item_dollars, item_spent[1], f"item budget (${budget.item_dollars})"),
    ):
        if money is not None:
            dollars.append((money - (paid or 0.0), name))
    token = min(tokens) if tokens else None
    money_left = min(dollars) if dollars else None
    return Allowance(
        tokens=token[0] if token else None,
        dollars=money_left[0] if money_left else None,
        tokens_why=token[1] if token else "",
        dollars_why=money_left[1] if money_left else "",
    )


def claude_flags(budget: Budget, allowed: Allowance) -> tuple[str, ...]:
    """Claude Code's own limits for one run: ``--max-turns`` and ``--max-budget-usd``."""
    flags: list[str] = []
    if budget.turns is not None:
        flags += ["--max-turns", str(budget.turns)]
    if allowed.dollars is not None:
        flags += ["--max-budget-usd", f"{max(allowed.dollars, 0.0):.4f}"]
    return tuple(flags)


# ---------------------------------------------------------------- the watchdog

Spend = Callable[[], "tuple[int, float | None]"]  # tokens and dollars spent so far by the run


class StreamCounter:
    """Turns, tool calls and spent tokens from an agent's streamed output lines.

    Claude Code's ``stream-json``: each ``assistant`` message (by ``message.id``)
    is one model turn, its ``usage`` what it cost, a ``tool_use`` block a tool
    call. Codex's ``exec --json``: a started or completed ``command_execution``,
    ``file_change`` or ``mcp_tool_call`` item is a tool call.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: dict[str, int] = {}
        self.tool_calls = 0

    def line(self, line: str) -> bool:
        """Count one line; True when it shows a tool call (progress)."""
        if not line.startswith("{") or ('"assistant"' not in line and '"item.' not in line):
            return False
        try:
            obj = json.loads(line)
        except ValueError:
            return False
        if not isinstance(obj, dict):
            return False
        called = False
        if obj.get("type") == "assistant":
            message = obj.get("message")
            if isinstance(message, dict):
                usage = message.get("usage")
                spent = _spent(usage) if isinstance(usage, dict) else 0
                blocks = message.get("content")
                called = isinstance(blocks, list) and any(
                    isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks
                )
                with self._lock:
                    self._messages[str(message.get("id"))] = spent
        elif str(obj.get("type", "")).startswith("item."):
            item = obj.get("item")
            called = isinstance(item, dict) and item.get("type") in (
                "command_execution",
                "file_change",
                "mcp_tool_call",
            )
        if called:
            with self._lock:
                self.tool_calls += 1
        return called

    @property
    def turns(self) -> int:
        """Model turns seen so far."""
        with self._lock:
            return len(self._messages)

    @property
    def tokens(self) -> int:
        """Tokens the streamed messages reported."""
        with self._lock:
            return sum(self._messages.values())


def _spent(usage: Mapping[str, object]) -> int:
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    values = [usage.get(k) for k in (*keys, "output_tokens")]
    return sum(v for v in values if isinstance(v, int) and v > 0)


class Watchdog:
    """Stops one agent run that passes its budget (see the module docstring)."""

    def __init__(
        self,
        budget: Budget,
        allowed: Allowance,
        *,
        root: Path,
        spend: Spend,
        counter: StreamCounter,
    ) -> None:
        self.budget = budget
        self.allowed = allowed
        self.root = root
        self.spend = spend
        self.counter = counter
        self.tripped: str | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.monotonic()
        self._progress = self._started
        self._signature = _tree_signature(root) if budget.idle_seconds is not None else None

    def start(self, pid: int) -> None:
        """Watch the process group of ``pid`` (the agent, started in its own session)."""
        self._started = self._progress = time.monotonic()
        self._thread = threading.Thread(
            target=self._watch, args=(pid,), name="loop-budget-watchdog", daemon=True
        )
        self._thread.start()

    def line(self, line: str) -> None:
        """A line of the agent's streamed output."""
        if self.counter.line(line):
            self._progress = time.monotonic()

    def stop(self) -> None:
        """The run is over: end the watch."""
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=GRACE_SECONDS * 3)

    def _watch(self, pid: int) -> None:
        while not self._done.wait(self.budget.interval):
            reason = self._over()
            if reason is not None:
                self.tripped = reason
                _stop_group(pid, self._done)
                return

    def _over(self) -> str | None:
        budget, now = self.budget, time.monotonic()
        elapsed = now - self._started
        if budget.wall_seconds is not None and elapsed >= budget.wall_seconds:
            return (
                f"stopped by loop's watchdog: the run took {elapsed:.0f}s, past the wall-time "
                f"budget of {_minutes_text(budget.wall_seconds)} (agent.budget.task.wallMinutes)"
            )
        if budget.idle_seconds is not None:
            signature = _tree_signature(self.root)
            if signature != self._signature:
                self._signature = signature
                self._progress = now
            idle = now - self._progress
            if idle >= budget.idle_seconds:
                return (
                    f"stopped by loop's watchdog: no progress (no file changed, no tool call) "
                    f"for {idle:.0f}s, past {_minutes_text(budget.idle_seconds)} "
                    "(agent.budget.task.noProgressMinutes)"
                )
        if budget.turns is not None and self.counter.turns > budget.turns:
            return (
                f"stopped by loop's watchdog: {self.counter.turns} model turns, past "
                f"agent.budget.task.turns ({budget.turns})"
            )
        return self._over_spend()

    def _over_spend(self) -> str | None:
        allowed = self.allowed
        if allowed.tokens is None and allowed.dollars is None:
            return None
        tokens, dollars = self.spend()
        if allowed.tokens is not None and tokens > allowed.tokens:
            return f"stopped by loop's watchdog: {tokens:,} tokens, past the {allowed.tokens_why}"
        if allowed.dollars is not None and dollars is not None and dollars > allowed.dollars:
            return f"stopped by loop's watchdog: ${dollars:.4f}, past the {allowed.dollars_why}"
        return None


def _stop_group(pid: int, done: threading.Event) -> None:
    """SIGTERM to the group, then SIGKILL when it has not ended within the grace period."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)
    if done.wait(GRACE_SECONDS):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _tree_signature(root: Path) -> tuple[int, int]:
    """(files seen, newest modification) of the project tree outside git and loop's state."""
    newest = 0
    seen = 0
    state = root / ".the-loop" / "state"
    stack = [root]
    while stack and seen < _SCAN_LIMIT:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name in _SKIPPED:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if Path(entry.path) != state:
                        stack.append(Path(entry.path))
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            seen += 1
            newest = max(newest, info.st_mtime_ns)
    return seen, newest


def _section(raw: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = raw.get(key)
    return value if isinstance(value, Mapping) else {}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _minutes(value: object) -> float | None:
    minutes = _float(value)
    return None if minutes is None else minutes * 60


def _minutes_text(seconds: float) -> str:
    return f"{seconds / 60:g} min ({seconds:g}s)"
