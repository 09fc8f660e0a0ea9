"""Campaign: fuzzed input for every reader — no traceback, no hang.

2,400 inputs, each made by mutating realistic seed files (and the real-world
corpus when it is beside the clone): tokens that matter to the grammars
inserted (fences, comments, checkboxes, front-matter fences, YAML anchors and
aliases, brackets, control characters, a BOM), spans deleted, duplicated and
spliced across seeds, bytes flipped. Every input goes through every reader in
process — tasks.md (and the DAG built on it), requirements and traceability,
the execution log (whole, tail, the append planner), front matter (read and
edit), and config (check and load) — under a 10-second alarm. The readers
may report findings or raise loop's own errors, nothing else. A sample then
goes through the CLI in a real project.
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from helpers import CORPUS, CORPUS_HEAD, invoke
from helpers.project import ITEM_DIR, project_copy

from the_loop.config.loader import check_file, load_config
from the_loop.dag.analysis import analyze
from the_loop.errors import LoopError
from the_loop.log.execution_log import parse_log, plan_append, tail_entries
from the_loop.spec.front_matter import parse_front_matter, update_front_matter
from the_loop.spec.requirements import parse_requirements, read_requirements
from the_loop.spec.traceability import trace
from the_loop.tasks import parse_tasks, read_tasks

pytestmark = [pytest.mark.slow, pytest.mark.campaign]

INPUTS = 2_400
CLI_SAMPLE = 60
HANG_SECONDS = 10
SEED = 20261130

TASKS_SEED = """\
---
type: tasks
workItem: issue-7
status: approved
approvedBy: [{by: "@a", date: 2026-11-30}]
overrides: {contextManagement: {taskBoundary: compact}}
---

# Tasks: retries

- [ ] 1. Config key
  - _Depends on:_ none
  - _Requirements:_ R1.1, R2
  - _Test:_ `pytest tests/test_config.py -q`
- [x] 2. Retry ledger
  - _Depends on:_ 1
  - _Requirements:_ R1.2
- [-] **T3 — Give-up log line.** detail text
  - Depends on: 1, 2
<!--
- [ ] 4. commented out
-->
```mermaid
flowchart TD
  T1 --> T2
  T2 --> T3
```
- [ ] 3.2 nested id — _Requirements:_ R1 · _Test:_ `true`
"""

REQUIREMENTS_SEED = """\
---
type: requirements
status: approved
---

# Requirements: retries

## Requirements

### R1 — bounded retries

1. WHEN a dispatch fails THEN the system SHALL retry it up to the budget.
2. **AC2** WHEN the budget is exhausted THEN the system SHALL log a terminal failure.

### R2: configurable budget

- The system SHALL read the budget from `polling.maxRetries`.

<!-- ### R9 — idea
-->
NFR1. Latency stays under 10 ms.
"""

LOG_SEED = """\
---
type: execution-log
workItem: issue-7
phase: implementation  # comment
status: in-progress
---

# Execution Log: retries

## Phase transitions

| Phase | Entered | Reviewed/approved by | Notes |
|-------|---------|----------------------|-------|
| implementation | 2026-11-30 | @a |  |

## Progress entries

### 2026-11-30T12:00Z — task 1 done: config key

- **Phase:** implementation
- **Did:** wrote it
  ```python
  x = 1
  ```
- **Checkpoint/tests:** not run
- **Next:** implement task 2: the ledger
- **Context:** compacted — task 1 done
- **Blockers:** none
- **WIP:** committed with this entry (Loop-Checkpoint: 20261130T120000Z-abcdef)

### 2026-11-30 — a date-only heading
- **Next:** \\u{41} escaped
"""

CONFIG_SEED = """\
version: "0.1.0"
workflow:
  specDir: docs/specs
  phases: [not-started, brainstorming, requirements-definition, design, tasks-breakdown,
    implementation, needs-review, complete]
contextManagement: &cm
  enabled: true
  phaseBoundary: clear
  taskBoundary: compact
  pressure: {softTokens: 200000, hardTokens: 280000, selectivePercent: 75, fullClearPercent: 90}
checkpoint:
  commit: true
  stage: all
  messageTemplate: "chore({{ item }}): checkpoint {{ subject }}"
agent:
  kind: claude
  command: [claude, -p]
"""

TOKENS = [
    "\n- [ ] ",
    "\n- [x] 9. ",
    "\n- [?] ",
    "\n  - _Depends on:_ ",
    "\n  - _Requirements:_ R",
    "\n  - _Test:_ `",
    "\n```",
    "\n~~~~",
    "\n```mermaid\nflowchart TD\n  A --> B\n",
    "\n<!--",
    "-->",
    "\n---\n",
    "\n...\n",
    "\n### ",
    "\n## Progress entries\n",
    "\n### 2026-01-01T00:00Z — x\n- **Next:** ",
    "\n- **Did:** ",
    "**",
    "&a ",
    "*a",
    "&b [*a, *a, *a, *a, *a, *a, *a, *a]",
    "<<: *a\n",
    "[" * 80,
    "]" * 80,
    "{",
    ": ",
    "\t",
    "\r",
    "\r\n",
    "\x00",
    "\x1b[31m",
    "\ufeff",
    "\u2028",
    "R1.",
    "1.",
    "T03",
    "\\u{",
    "'",
    '"',
    "!!binary ",
    "!!omap [a: 1, a: 2]",
    "2001-02-30",
    "9" * 40,
    "é" * 10,
]


def corpus_seeds() -> list[str]:
    """Real files from the public the-loop repository, when the corpus is available."""
    seeds = []
    for root in (CORPUS, CORPUS_HEAD):
        if not root.is_dir():
            continue
        for path in sorted(root.glob("docs/specs/*/*.md"))[:80]:
            seeds.append(path.read_text(errors="replace")[:20_000])
        for path in sorted(root.glob(".the-loop/*.yaml")):
            seeds.append(path.read_text(errors="replace"))
    return seeds


def mutate(rng: random.Random, seeds: list[str]) -> str:
    text = rng.choice(seeds)
    for _ in range(rng.randint(1, 8)):
        op = rng.random()
        at = rng.randint(0, len(text))
        if op < 0.45:
            text = text[:at] + rng.choice(TOKENS) * rng.choice((1, 1, 1, 3, 50)) + text[at:]
        elif op < 0.6:
            text = text[:at] + text[at + rng.randint(1, 200) :]
        elif op < 0.72:
            end = min(len(text), at + rng.randint(1, 400))
            text = text[:at] + text[at:end] * rng.randint(2, 4) + text[at:]
        elif op < 0.84:
            other = rng.choice(seeds)
            cut = rng.randint(0, len(other))
            text = text[:at] + other[cut : cut + rng.randint(1, 600)] + text[at:]
        else:
            chars = list(text)
            for _ in range(rng.randint(1, 5)):
                if chars:
                    chars[rng.randrange(len(chars))] = chr(rng.randint(0, 0x2FFF))
            text = "".join(chars)
    return text


def as_bytes(rng: random.Random, text: str) -> bytes:
    data = text.encode("utf-8", "surrogatepass")
    if data and rng.random() < 0.15:  # not UTF-8 now and then
        at = rng.randrange(len(data))
        data = data[:at] + bytes([rng.randint(0x80, 0xFF)]) + data[at:]
    return data


class Hang(Exception):
    """A reader ran past the alarm."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


@dataclass
class Tally:
    inputs: int = 0
    calls: int = 0
    loop_errors: int = 0
    tracebacks: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    slowest: float = 0.0


def readers(folder: Path, text: str, data: bytes) -> Iterator[tuple[str, Callable[[], Any]]]:
    """Every reader, fed this input (as text, or as the bytes of a file)."""
    tasks, reqs, log, config = (
        folder / "tasks.md",
        folder / "requirements.md",
        folder / "execution-log.md",
        folder / ".the-loop" / "config.yaml",
    )
    for path in (tasks, reqs, log, config):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    yield "tasks", lambda: analyze(parse_tasks(text, tasks))
    yield "tasks-file", lambda: analyze(read_tasks(tasks))
    yield "requirements", lambda: trace(parse_requirements(text, reqs), parse_tasks(text, tasks))
    yield "requirements-file", lambda: read_requirements(reqs)
    yield "log", lambda: parse_log(text, log)
    yield "log-tail", lambda: tail_entries(log, 3)
    yield "log-append-plan", lambda: plan_append(log, "### 2026-01-01T00:00Z — x\n")
    yield "front-matter", lambda: parse_front_matter(text, tasks)
    yield "front-matter-edit", lambda: update_front_matter(text, tasks, {"status": "approved"})
    yield "config-check", lambda: check_file(config)
    yield "config-load", lambda: load_config(folder)


def feed(tally: Tally, name: str, call: Callable[[], Any], sample: str) -> None:
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        call()
    except LoopError:
        tally.loop_errors += 1
    except Hang:
        tally.hangs.append(f"{name}: {sample!r}")
    except Exception as exc:  # a traceback a user would see
        tally.tracebacks.append(f"{name}: {type(exc).__name__}: {exc} <- {sample!r}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    tally.calls += 1
    tally.slowest = max(tally.slowest, time.monotonic() - started)


def test_fuzzed_inputs_through_every_reader(
    tmp_path: Path, hermetic_env: Path, record_property: Callable[[str, object], None]
) -> None:
    rng = random.Random(SEED)
    seeds = [TASKS_SEED, REQUIREMENTS_SEED, LOG_SEED, CONFIG_SEED, *corpus_seeds()]
    tally = Tally()
    previous = signal.signal(signal.SIGALRM, _alarm)
    started = time.monotonic()
    try:
        for index in range(INPUTS):
            text = mutate(rng, seeds)
            data = as_bytes(rng, text)
            folder = tmp_path / f"in{index % 4}"
            for name, call in readers(folder, text, data):
                feed(tally, name, call, text[:300])
            tally.inputs += 1
    finally:
        signal.signal(signal.SIGALRM, previous)
    elapsed = time.monotonic() - started
    record_property(
        "campaign",
        f"fuzz readers: {tally.inputs} inputs, {tally.calls} reader calls, "
        f"{tally.loop_errors} clear errors, {len(tally.tracebacks)} tracebacks, "
        f"{len(tally.hangs)} hangs, slowest call {tally.slowest:.2f}s, {elapsed:.0f}s",
    )
    assert tally.tracebacks == [], "\n".join(tally.tracebacks[:10])
    assert tally.hangs == [], "\n".join(tally.hangs[:10])
    assert tally.inputs >= 2_000


CLI_COMMANDS = (
    ("status", "7"),
    ("check", "7"),
    ("next", "7"),
    ("log", "7", "--last", "0"),
    ("--json", "status", "--all"),
)


def test_a_sample_through_the_cli(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    record_property: Callable[[str, object], None],
) -> None:
    rng = random.Random(SEED + 1)
    seeds = [TASKS_SEED, REQUIREMENTS_SEED, LOG_SEED, CONFIG_SEED, *corpus_seeds()]
    root = project_copy(tmp_path_factory, tmp_path / "p", repo=False)
    targets = [
        root / ITEM_DIR / "tasks.md",
        root / ITEM_DIR / "requirements.md",
        root / ITEM_DIR / "execution-log.md",
        root / ITEM_DIR / "design.md",
        root / ".the-loop" / "config.yaml",
    ]
    originals = {p: p.read_bytes() for p in targets}
    runs, failures, slowest = 0, [], 0.0
    for _ in range(CLI_SAMPLE):
        target = rng.choice(targets)
        for path, data in originals.items():
            path.write_bytes(data)
        text = mutate(rng, seeds)
        target.write_bytes(as_bytes(rng, text))
        for command in CLI_COMMANDS:
            started = time.monotonic()
            result = invoke(["-C", str(root), *command])
            slowest = max(slowest, time.monotonic() - started)
            runs += 1
            if result.exit_code not in (0, 1, 2) or "internal error" in result.output:
                failures.append(f"{command} on {target.name}: {result.output[-500:]!r}")
    record_property(
        "campaign",
        f"fuzz CLI: {CLI_SAMPLE} inputs x {len(CLI_COMMANDS)} commands = {runs} runs, "
        f"{len(failures)} internal errors, slowest {slowest:.2f}s",
    )
    assert failures == [], "\n".join(failures[:5])
    assert slowest < HANG_SECONDS
