"""A 12-task item for the graph and board tests: four waves, a critical path, a fork and a join."""

from __future__ import annotations

from pathlib import Path

from driver.driver_project import TaskSpec, make_item

TWELVE = (
    TaskSpec("1", "config key"),
    TaskSpec("2", "parser", ("1",)),
    TaskSpec("3", "ledger store", ("1",)),
    TaskSpec("4", "prices", ("3",)),
    TaskSpec("5", "cost report", ("3", "4")),
    TaskSpec("6", "budget watchdog", ("2",)),
    TaskSpec("7", "harness flags", ("6",)),
    TaskSpec("8", "svg layout"),
    TaskSpec("9", "board server", ("5", "8")),
    TaskSpec("10", "board page", ("9",)),
    TaskSpec("11", "browser test", ("10", "7")),
    TaskSpec("12", "docs", ("11",)),
)


def twelve(root: Path, *, config: str = "") -> Path:
    """A git project whose ``issue-7`` has the twelve tasks, approved, before implementation."""
    tasks = tuple(
        TaskSpec(t.id, t.title, t.depends, test=f"test -f done-{t.id}.txt") for t in TWELVE
    )
    return make_item(root, tasks, config=config)
