"""``loop cost`` as a table: per task (work, compaction), then the item.

Rendered from the JSON form (``CostReport.to_json``), so the table, ``--json``
and the driver's summary show the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping


def tally_words(tally: object) -> str:
    """``"3 runs, 12,345 tokens, $0.0123"`` for one tally of the JSON form."""
    if not isinstance(tally, Mapping):
        return "none"
    runs = tally.get("runs", 0)
    tokens = tally.get("tokens")
    total = tokens.get("total", 0) if isinstance(tokens, Mapping) else 0
    money = tally.get("dollars")
    unknown = tally.get("unknownRuns") or 0
    text = f"{runs} run{'s' if runs != 1 else ''}, {total:,} tokens"
    text += f", ${money:.4f}" if isinstance(money, (int, float)) else ", $ —"
    if unknown:
        text += f" ({unknown} run(s) reported no tokens)"
    return text


def _cell(tally: object, key: str) -> str:
    if not isinstance(tally, Mapping):
        return "-"
    if key == "dollars":
        money = tally.get("dollars")
        return f"{money:.4f}" if isinstance(money, (int, float)) else "—"
    if key == "seconds":
        return f"{float(tally.get('seconds', 0)):.1f}"
    if key == "runs":
        return str(tally.get("runs", 0))
    tokens = tally.get("tokens")
    return f"{tokens.get(key, 0):,}" if isinstance(tokens, Mapping) else "-"


_COLUMNS = (
    ("runs", "runs"),
    ("input", "input"),
    ("output", "output"),
    ("cacheRead", "cache read"),
    ("cacheWrite", "cache write"),
    ("total", "tokens"),
    ("dollars", "$"),
    ("seconds", "seconds"),
)


def cost_table(report: Mapping[str, object]) -> str:
    """The whole report as an aligned plain-text table."""
    rows: list[tuple[str, object]] = []
    tasks = report.get("tasks")
    for row in tasks if isinstance(tasks, list) else []:
        if not isinstance(row, Mapping):
            continue
        name = f"task {row.get('task')}" if row.get("task") is not None else "(no task)"
        rows.append((name, row.get("work")))
        compaction = row.get("compaction")
        if isinstance(compaction, Mapping) and compaction.get("runs"):
            rows.append(("  compaction", compaction))
    rows += [
        ("item: work", report.get("work")),
        ("item: compaction", report.get("compaction")),
        ("item: total", report.get("total")),
    ]
    header = ["", *(title for _, title in _COLUMNS)]
    table = [header] + [[name, *(_cell(t, key) for key, _ in _COLUMNS)] for name, t in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [f"{report.get('item')}: cost per task (USD from agent.prices)"]
    for line in table:
        cells = [line[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True)
        ]
        lines.append("  " + "  ".join(cells).rstrip())
    unpriced = report.get("unpriced")
    if isinstance(unpriced, list) and unpriced:
        lines.append(
            "  no price for " + ", ".join(map(str, unpriced)) + ": add it under agent.prices "
            "(docs/config.md) to see dollars"
        )
    return "\n".join(lines) + "\n"
