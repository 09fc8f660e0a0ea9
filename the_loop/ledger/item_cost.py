"""The cost of one work item: its ledger records summed, with a forecast of what is left.

``loop cost ID`` and ``loop status`` call :func:`item_cost`; it reads the ledger
and the item's tasks.md, and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from the_loop.dag.analysis import analyze
from the_loop.ledger import store
from the_loop.ledger.forecast import Forecast, forecast
from the_loop.ledger.prices import prices_from
from the_loop.ledger.report import CostReport, cost_report
from the_loop.spec.project import ItemContext, open_item
from the_loop.tasks import TaskState, read_tasks


@dataclass(frozen=True)
class ItemCost:
    """The ledger of an item and the forecast of its remaining tasks."""

    report: CostReport
    forecast: Forecast | None

    def to_json(self) -> dict[str, object]:
        """``loop cost --json``."""
        data = self.report.to_json()
        data["forecast"] = self.forecast.to_json() if self.forecast is not None else None
        return data


def item_cost(root: Path, ref: str, *, cwd: Path) -> ItemCost:
    """The cost of the item ``ref`` names."""
    return cost_of(open_item(root, ref, cwd=cwd, tolerant=True))


def cost_of(ctx: ItemContext) -> ItemCost:
    """The cost of an opened item."""
    item = ctx.item.id
    report = cost_report(item, store.read_runs(ctx.project.root, item), prices_from(ctx.config))
    return ItemCost(report, _forecast(ctx, report))


def _forecast(ctx: ItemContext, report: CostReport) -> Forecast | None:
    tasks_file = ctx.item.artifacts["tasks"]
    if not tasks_file.exists:
        return None
    tasks = read_tasks(tasks_file.path)
    dag = analyze(tasks)
    done = [t.id for t in tasks.tasks if t.state is TaskState.DONE]
    return forecast(report, done, dag.total - dag.done)
