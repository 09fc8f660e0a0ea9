"""What the rest of an item will cost, from what its finished tasks cost.

The mean of the finished tasks' totals (work and compaction, from the ledger)
times the number of tasks still open. Tasks done with no run in the ledger
(ticked by hand, or before the ledger existed) are left out of the mean; with
no finished task in the ledger there is no forecast, not a guess.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from the_loop.ledger.prices import dollars
from the_loop.ledger.report import CostReport


@dataclass(frozen=True)
class Forecast:
    """The remaining cost of an item, projected."""

    remaining_tasks: int
    measured_tasks: int  # finished tasks the mean is taken over
    tokens: int | None
    dollars: float | None

    def to_json(self) -> dict[str, object]:
        """``{"remainingTasks", "measuredTasks", "tokens", "dollars"}``."""
        return {
            "remainingTasks": self.remaining_tasks,
            "measuredTasks": self.measured_tasks,
            "tokens": self.tokens,
            "dollars": None if self.dollars is None else round(self.dollars, 4),
        }

    def line(self) -> str:
        """One line for ``loop status``."""
        if self.tokens is None:
            return f"{self.remaining_tasks} task(s) left; no finished task in the ledger yet"
        money = f" ≈ ${self.dollars:.2f}" if self.dollars is not None else ""
        return (
            f"{self.remaining_tasks} task(s) left ≈ {self.tokens:,} tokens{money} "
            f"(mean of {self.measured_tasks} finished task(s))"
        )


def forecast(report: CostReport, done: Iterable[str], remaining: int) -> Forecast:
    """Mean cost of the ``done`` tasks that have runs, times ``remaining``."""
    rows = [row for task in done if (row := report.task(task)) is not None]
    measured = [row.total for row in rows if row.total.runs and not row.total.unknown]
    if not measured:
        return Forecast(remaining, 0, None, None)
    tokens = sum(t.tokens.total for t in measured) / len(measured)
    costs = [dollars(t.usage, report.prices) for t in measured]
    money = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs) / len(costs)
    return Forecast(
        remaining_tasks=remaining,
        measured_tasks=len(measured),
        tokens=round(tokens * remaining),
        dollars=None if money is None else money * remaining,
    )
