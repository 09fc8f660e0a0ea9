"""The reliability campaigns report their counts at the end of the run.

Each campaign records ``("campaign", "<name>: <counts>")`` with pytest's
``record_property``; the summary below prints them (also under xdist, whose
reports carry the properties back to the controller).
"""

from __future__ import annotations

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                if key == "campaign" and getattr(report, "when", "call") == "call":
                    lines.append(str(value))
    if lines:
        terminalreporter.section("reliability campaigns")
        for line in sorted(set(lines)):
            terminalreporter.write_line(line)
