"""``loop cost``: the ledger summed per task and per item, compaction passes apart.

A task's ``work`` is its task and retry runs; its ``compaction`` the passes
run before its turns (a compaction is charged to the task whose turn it
precedes). The item's total adds every task's work and compaction, plus runs
attributed to no task (a hook turn with no task in focus). Dollars are tokens ×
``agent.prices``; a figure that would need a missing price is None.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from the_loop.dag.analysis import id_sort_key
from the_loop.ledger.prices import Prices, dollars, unpriced
from the_loop.ledger.records import RunRecord
from the_loop.ledger.tokens import Tokens, usage_sum, usage_to_json, usage_total


@dataclass(frozen=True)
class Tally:
    """Runs added up: how many, their tokens per model, their time."""

    runs: int = 0
    usage: dict[str, Tokens] = field(default_factory=dict)
    seconds: float = 0.0
    unknown: int = 0  # runs whose tokens no record told

    @property
    def tokens(self) -> Tokens:
        """Every model's counts added up."""
        return usage_total(self.usage)

    def plus(self, record: RunRecord) -> Tally:
        """This tally with ``record`` added."""
        return Tally(
            runs=self.runs + 1,
            usage=usage_sum(self.usage, record.usage),
            seconds=round(self.seconds + record.seconds, 3),
            unknown=self.unknown + (0 if record.tokens_known else 1),
        )

    def merged(self, other: Tally) -> Tally:
        """Two tallies added."""
        return Tally(
            self.runs + other.runs,
            usage_sum(self.usage, other.usage),
            round(self.seconds + other.seconds, 3),
            self.unknown + other.unknown,
        )

    def to_json(self, prices: Prices) -> dict[str, object]:
        """Runs, tokens (total and per model), dollars (None without a price), seconds."""
        return {
            "runs": self.runs,
            "tokens": self.tokens.to_json(),
            "models": usage_to_json(self.usage),
            "dollars": _rounded(dollars(self.usage, prices)),
            "seconds": self.seconds,
            "unknownRuns": self.unknown,
        }


@dataclass(frozen=True)
class TaskCost:
    """One task's runs: its work and its compaction passes."""

    task: str | None
    work: Tally
    compaction: Tally

    @property
    def total(self) -> Tally:
        return self.work.merged(self.compaction)


@dataclass(frozen=True)
class CostReport:
    """The ledger of one item."""

    item: str
    tasks: tuple[TaskCost, ...]
    prices: Prices

    @property
    def work(self) -> Tally:
        return _merge(t.work for t in self.tasks)

    @property
    def compaction(self) -> Tally:
        return _merge(t.compaction for t in self.tasks)

    @property
    def total(self) -> Tally:
        return self.work.merged(self.compaction)

    def task(self, task_id: str) -> TaskCost | None:
        """The row of ``task_id``, if it ran."""
        return next((t for t in self.tasks if t.task == task_id), None)

    def to_json(self) -> dict[str, object]:
        """``loop cost --json``: per task, then the item (work, compaction, total)."""
        return {
            "item": self.item,
            "currency": "USD",
            "tasks": [
                {
                    "task": t.task,
                    "work": t.work.to_json(self.prices),
                    "compaction": t.compaction.to_json(self.prices),
                    "total": t.total.to_json(self.prices),
                }
                for t in self.tasks
            ],
            "work": self.work.to_json(self.prices),
            "compaction": self.compaction.to_json(self.prices),
            "total": self.total.to_json(self.prices),
            "unpriced": unpriced(self.total.usage, self.prices),
        }


def cost_report(item: str, records: Iterable[RunRecord], prices: Prices) -> CostReport:
    """Sum ``records`` of ``item`` per task (tasks in id order, the unattributed last)."""
    work: dict[str | None, Tally] = {}
    compaction: dict[str | None, Tally] = {}
    for record in records:
        if record.item != item:
            continue
        table = compaction if record.kind == "compaction" else work
        table[record.task] = table.get(record.task, Tally()).plus(record)
    ids: Sequence[str | None] = sorted(
        {*work, *compaction}, key=lambda t: (t is None, id_sort_key(t or ""))
    )
    rows = tuple(TaskCost(t, work.get(t, Tally()), compaction.get(t, Tally())) for t in ids)
    return CostReport(item=item, tasks=rows, prices=prices)


def _merge(tallies: Iterable[Tally]) -> Tally:
    total = Tally()
    for tally in tallies:
        total = total.merged(tally)
    return total


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
