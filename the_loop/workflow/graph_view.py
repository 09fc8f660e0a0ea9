"""``loop graph --json``: the whole task graph as data, kept in the parse cache.

Made of tasks.md alone, so it is stored under that file's content hash: a warm
call builds nothing and loads plain data only.
"""

from __future__ import annotations

from the_loop.dag.render import graph_json
from the_loop.findings import Finding, Level
from the_loop.io.content_cache import findings_from_plain, findings_to_plain
from the_loop.workflow.item_report import ItemReport


def graph_errors(report: ItemReport) -> list[Finding]:
    """The errors that break the graph (a cycle, an unknown or duplicate task)."""
    if report.tasks is None or report.dag is None:
        return []
    found = (*report.tasks.findings, *report.dag.findings)
    return [f for f in found if f.level is Level.ERROR]


def graph_answer(report: ItemReport) -> tuple[dict[str, object], list[Finding]]:
    """The graph of ``report``'s item as JSON data, and its errors (the item has a tasks.md).

    The errors keep their absolute paths (the cached data must not depend on the
    current folder); the caller shows them relative to it.
    """
    tasks = report.item.artifacts["tasks"]

    def compute() -> tuple[dict[str, object], list[Finding]]:

        assert report.tasks is not None and report.dag is not None
        return graph_json(report.id, report.tasks, report.dag), graph_errors(report)

    key = report.answer_key(("tasks",), "graph", "errors", report.id)
    if key is None:
        return compute()
    data, errors = report.cache.cached(
        "graph",
        tasks.path,
        key,
        compute,
        trust_stat=False,
        encode=lambda answer: (answer[0], findings_to_plain(answer[1])),
        decode=lambda plain: (dict(plain[0]), findings_from_plain(plain[1])),
    )
    return data, list(errors)
