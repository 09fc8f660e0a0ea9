"""``loop graph --json``: the whole task graph as data, kept in the parse cache.

Made of tasks.md alone, so it is stored under that file's content hash: a warm
call builds nothing and loads plain data only.
"""

from __future__ import annotations

from the_loop.workflow.item_report import ItemReport


def graph_answer(report: ItemReport) -> dict[str, object]:
    """The graph of ``report``'s item as JSON data (the item must have a tasks.md)."""
    tasks = report.item.artifacts["tasks"]

    def compute() -> dict[str, object]:
        from the_loop.dag.render import graph_json

        assert report.tasks is not None and report.dag is not None
        return graph_json(report.id, report.tasks, report.dag)

    key = report.answer_key(("tasks",), "graph", report.id)
    if key is None:
        return compute()
    return report.cache.cached("graph", tasks.path, key, compute, trust_stat=False)
