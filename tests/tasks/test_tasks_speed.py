"""The reader stays linear: large generated files and inputs built to make regexes backtrack.

No absolute seconds: linearity is counted (Python calls made while parsing, which
do not depend on the machine's load), and a hostile input is timed against an
ordinary file of the same size parsed in the same test, as a ratio.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import pytest

from the_loop.tasks import parse_tasks

pytestmark = pytest.mark.slow

PATH = Path("tasks.md")


def template_file(count: int) -> str:
    lines = ["---", "type: tasks", "status: approved", "---", "", "# Tasks", "", "## Task list", ""]
    for n in range(1, count + 1):
        lines.append(f"- [{'x' if n % 3 else ' '}] {n}. Build component {n} of the system")
        lines.append(f"  - _Depends on:_ {'none' if n == 1 else f'{max(1, n - 7)}, {n - 1}'}")
        lines.append(f"  - _Requirements:_ R{n % 40 + 1}, R{n % 7 + 1}.2")
        lines.append(f"  - _Test:_ `pytest tests/test_c{n}.py -q`")
    return "\n".join(lines) + "\n"


def best_of(runs: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def calls_made(action: Callable[[], object]) -> int:
    """How many Python and C function calls ``action`` makes: a clock that load cannot skew."""
    count = 0

    def tally(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(tally)
    try:
        action()
    finally:
        sys.setprofile(None)
    return count


def test_a_hundred_thousand_tasks_are_read() -> None:
    result = parse_tasks(template_file(100_000), PATH)
    assert len(result.tasks) == 100_000 and result.findings == ()
    assert result.tasks[-1].depends_on == ("99993", "99999")


def test_work_grows_linearly_with_the_number_of_tasks() -> None:
    small, large = template_file(2_000), template_file(20_000)
    ratio = calls_made(lambda: parse_tasks(large, PATH)) / calls_made(
        lambda: parse_tasks(small, PATH)
    )
    assert ratio < 11  # ten times the tasks: ten times the work (quadratic would be 100)


@pytest.mark.parametrize(
    "text",
    [
        "- [ ] 1. Title\n" + "  continuation line of the paragraph\n" * 50_000,
        "- [ ] 1. Title\n  - " + "_Test:_ `x` — " * 20_000 + "\n",
        "- [ ] 1. Title\n  - _Requirements:_ " + "abcdefgh " * 100_000 + "\n",
        "- [ ] 1. Title\n  - _Requirements:_ " + "R1, " * 100_000 + "x\n",
        "- [ ] 1. Title\n  - _Depends on:_ " + "1, " * 100_000 + "x\n",
        "- [ ] " + "1." * 100_000 + " Title\n",
        "- [ ] 1. " + "(" * 100_000 + "\n  - _Requirements:_ " + "(" * 100_000 + "\n",
        "- [ ] **T1 — " + "*" * 200_000 + "\n",
        "- [ ] **T1 — a.** " + "depends on " * 50_000 + "\n",
        "```mermaid\nflowchart LR\n" + "  T1 -- a " * 20_000 + "\n```\n",
        "```mermaid\nflowchart LR\n  " + " --> ".join(f"T{n}" for n in range(20_000)) + "\n```\n",
        "- [ ] 1. x\n" * 30_000 + "  - _Depends on:_ all\n",
        "- [ ] **T1 — a.** " + "*(" * 50_000 + "\n",
        "- [ ] **T1 — a.** " + "Depends on: " * 30_000 + "\n",
        "## DAG\n\n```\n1 → 2\n" + "  → 3\n" * 30_000 + "```\n",
        "## DAG\n\n" + "a → " * 30_000 + "1\n",
        "| Task | Depends on |\n|---|---|\n"
        + "".join(f"| {i} | {i - 1} |\n" for i in range(1, 30_000)),
        "".join(
            f"### T{i} — t\n- **Depends on:** T{i - 1}\n- [ ] Done\n" for i in range(1, 30_000)
        ),
    ],
    ids=[
        "long-paragraph",
        "many-fields-on-one-line",
        "long-requirement-prose",
        "long-requirement-list",
        "long-depends-list",
        "deep-dotted-id",
        "open-parentheses",
        "unclosed-bold",
        "repeated-prose-clauses",
        "mermaid-text-links",
        "mermaid-long-chain",
        "many-tasks-then-all",
        "unclosed-citation-groups",
        "repeated-colon-clauses",
        "dag-continuation-lines",
        "dag-arrows-between-words",
        "dependency-table",
        "heading-tasks",
    ],
)
def test_inputs_built_to_backtrack_stay_fast(text: str) -> None:
    """As fast as an ordinary tasks.md of the same size, within a wide margin."""
    tasks = max(1, len(text) // 180)  # template_file writes about 180 bytes per task
    ordinary = template_file(tasks)
    hostile_time = best_of(1, lambda: parse_tasks(text, PATH))
    ordinary_time = best_of(3, lambda: parse_tasks(ordinary, PATH))
    # measured: up to ~26x (a 20k-node mermaid chain is dense work per byte);
    # catastrophic backtracking is exponential: thousands of times slower
    assert hostile_time < 100 * ordinary_time + 0.1
