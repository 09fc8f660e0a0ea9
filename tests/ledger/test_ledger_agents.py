"""The ledger against the real Claude Code and Codex CLIs talking to the fake model servers.

The fakes record the usage they reported for every model call (``fake.exchanges``).
After a driven run with ``taskBoundary: compact``, ``loop cost --json`` must equal the
fake's own totals per task, with the compaction passes apart (a pass is charged to the
task whose turn it precedes), and its dollars must be tokens × the configured prices.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from driver.driver_project import FOUR, TaskSpec, agent_config, events, loop_process, make_item
from harness.agents import ClaudeCli, CodexCli
from harness.fake_anthropic import FakeAnthropic
from harness.fake_openai import FakeOpenAI
from harness.fake_server import FakeModelServer
from harness.replies import AnthropicUsage, OpenAIUsage, Rule, Text, prompt_contains

pytestmark = pytest.mark.agents

QUICK = tuple(TaskSpec(t.id, t.title, t.depends, "true") for t in FOUR)
PRICE = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
CODEX_PASS = "loop compacted this session"  # the_loop.driver.codex's compaction turn
COUNTS = ("input", "output", "cacheRead", "cacheWrite")


def counts(usage: AnthropicUsage | OpenAIUsage) -> tuple[int, int, int, int]:
    """The fake's usage in the ledger's convention (disjoint counts)."""
    if isinstance(usage, AnthropicUsage):
        return usage.input, usage.output, usage.cache_read, usage.cache_creation
    return usage.input - usage.cached, usage.output, usage.cached, 0


def fake_totals(fake: FakeModelServer) -> dict[tuple[str, str], list[int]]:
    """(task, work|compaction) -> summed counts, from what the fake reported.

    A compaction request is charged to the task whose brief comes next, and so is the
    rest of a compaction run (Codex's pass is a short turn of its own: its request for a
    one-word answer belongs to the pass).
    """
    totals: dict[tuple[str, str], list[int]] = {}
    pending: list[tuple[int, int, int, int]] = []
    task = None
    for exchange in fake.exchanges:
        assert exchange.usage is not None
        request = exchange.request
        if request.is_compaction or request.prompt.startswith(CODEX_PASS):
            pending.append(counts(exchange.usage))
            continue
        if request.prompt.startswith("# issue-7 task "):
            task = request.prompt.split()[3].rstrip(":")
            for compaction in pending:
                _add(totals, (task, "compaction"), compaction)
            pending = []
        assert task is not None
        _add(totals, (task, "work"), counts(exchange.usage))
    return totals


def _add(
    totals: dict[tuple[str, str], list[int]], key: tuple[str, str], add: tuple[int, ...]
) -> None:
    row = totals.setdefault(key, [0, 0, 0, 0])
    for i, n in enumerate(add):
        row[i] += n


def ledger_totals(root: Path) -> tuple[dict[tuple[str, str], list[int]], dict[str, object]]:
    ran = loop_process(root, "cost", "7", "--json")
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    totals = {}
    for row in data["tasks"]:
        for part in ("work", "compaction"):
            if row[part]["runs"]:
                totals[(row["task"], part)] = [row[part]["tokens"][k] for k in COUNTS]
    return totals, data


def check_dollars(data: dict[str, object], model_count: int = 1) -> None:
    for row in data["tasks"]:  # type: ignore[attr-defined]
        for part in ("work", "compaction"):
            tally = row[part]
            if not tally["runs"]:
                continue
            expected = sum(
                sum(tokens[k] * PRICE[k] for k in COUNTS) / 1_000_000
                for tokens in tally["models"].values()
            )
            assert tally["dollars"] == round(expected, 6)


def test_claude_cost_equals_the_fakes_totals(
    claude_cli: ClaudeCli, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    # Task 3 costs more than the others, so a mix-up between tasks shows.
    big = AnthropicUsage(input=9000, cache_creation=700, cache_read=40000, output=321)
    fake_anthropic.add(Rule(when=prompt_contains("task 3:"), reply=Text("done", usage=big)))
    prices = "  prices:\n" + "".join(
        f"    {m}: {json.dumps(PRICE)}\n" for m in ("claude-opus-5-5", "claude-sonnet-4-5")
    )
    config = agent_config("claude", [claude_cli.binary], task_boundary="compact", extra=prices)
    root = make_item(tmp_path / "p", QUICK, config=config)

    ran = loop_process(
        root, "execute-tasks", "7", "--agent", "claude", "--json", env=claude_cli.env
    )

    assert ran.returncode == 0, ran.stderr
    expected = fake_totals(fake_anthropic)
    assert any(part == "compaction" for _, part in expected)  # the run did compact
    found, data = ledger_totals(root)
    assert found == expected
    check_dollars(data)
    assert data["unpriced"] == []
    assert events(ran.stdout)[-1]["cost"]["total"] == data["total"]


def test_codex_cost_equals_the_fakes_totals(
    codex_cli: CodexCli, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    big = OpenAIUsage(input=8000, cached=5000, output=77)
    fake_openai.add(Rule(when=prompt_contains("task 3:"), reply=Text("done", usage=big)))
    prices = f"  prices:\n    gpt-5.5: {json.dumps(PRICE)}\n"
    config = agent_config("codex", [codex_cli.binary], task_boundary="compact", extra=prices)
    root = make_item(tmp_path / "p", QUICK, config=config)

    ran = loop_process(root, "execute-tasks", "7", "--agent", "codex", "--json", env=codex_cli.env)

    assert ran.returncode == 0, ran.stderr
    expected = fake_totals(fake_openai)
    found, data = ledger_totals(root)
    assert any(part == "compaction" for _, part in expected)
    assert found == expected
    check_dollars(data)
