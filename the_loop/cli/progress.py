"""Showing a long-running test while it runs: its command and the time so far.

On a terminal the line is redrawn in place on stderr (``running: CMD  12s``)
and replaced by the result when the test ends; anywhere else a single line
``running: CMD`` is written once, so logs and pipes stay readable.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

import click

if TYPE_CHECKING:
    from the_loop.driver.events import Event, Merged

_REFRESH = 0.25  # seconds between redraws
_CLEAR_LINE = "\r\x1b[K"


@contextmanager
def showing_run(command: str) -> Iterator[None]:
    """Show ``command`` running (with a live elapsed time on a terminal) for the block."""
    stream = sys.stderr
    if not stream.isatty():
        click.echo(f"running: {command}", err=True)
        yield
        return
    started = time.monotonic()
    stop = threading.Event()

    def draw() -> None:
        while True:
            elapsed = time.monotonic() - started
            stream.write(f"{_CLEAR_LINE}running: {command}  {elapsed:.0f}s")
            stream.flush()
            if stop.wait(_REFRESH):
                return

    drawer = threading.Thread(target=draw, name="loop-elapsed", daemon=True)
    drawer.start()
    try:
        yield
    finally:
        stop.set()
        drawer.join()
        elapsed = time.monotonic() - started
        stream.write(f"{_CLEAR_LINE}ran: {command}  ({elapsed:.1f}s)\n")
        stream.flush()


class LaneView:
    """The listener of a parallel run: one live line per lane, the queue, then the table.

    On a terminal, stderr holds a block redrawn in place: ``lane k: task N · agent ·
    elapsed · tokens · state`` for each lane and ``queue: …``. Event lines go to
    stdout, tagged with their lane. With ``--json`` every event is one JSON object
    (with its ``lane``), progress ticks left out.
    """

    def __init__(self, *, as_json: bool, live: TextIO | None, lanes: int) -> None:
        from the_loop.cli.agent_output import EventPrinter  # the serial printer, reused

        self.printer = EventPrinter(as_json=as_json, live=None)
        self.as_json = as_json
        self.live = live if live is not None and live.isatty() and not as_json else None
        self.lanes: dict[int, list[str]] = {
            n: ["idle", "", "", "", "", ""] for n in range(1, lanes + 1)
        }
        self.queue: tuple[str, ...] = ()
        self._drawn = 0

    def __call__(self, event: Event) -> None:
        from the_loop.driver.events import Progress

        self._track(event)
        if isinstance(event, Progress):
            self._draw()
            return
        self._erase()
        if self.as_json:
            self.printer(event)
            return
        for line in _lines(event):
            click.echo(line)
        self._draw()

    def _track(self, event: Event) -> None:
        """Keep each lane's line and the queue current."""
        from the_loop.driver.events import AgentFinished, Merged, Progress, TaskStarted

        lane = getattr(event, "lane", None)
        if isinstance(event, TaskStarted) and lane:
            self.lanes[lane] = [f"task {event.task}", event.title, "", "?", "running", ""]
        elif isinstance(event, Progress) and lane:
            row = self.lanes[lane]
            row[2] = f"{int(event.seconds) // 60}:{int(event.seconds) % 60:02d}"
            row[3] = _tokens(event.tokens)
            row[4] = event.doing
        elif isinstance(event, AgentFinished) and lane:
            self.lanes[lane][4] = "testing" if event.outcome == "done" else event.outcome
        elif isinstance(event, Merged):
            self.queue = event.queued
            landed = event.result in ("landed", "evicted", "failed")
            if landed and self.lanes[event.lane][0] == f"task {event.task}":
                self.lanes[event.lane] = ["idle", "", "", "", "", ""]

    def _draw(self) -> None:
        if self.live is None:
            return
        self._erase()
        lines = [
            f"lane {n}: "
            + (" · ".join(p for p in (row[0], row[2], row[3] and f"{row[3]} tokens", row[4]) if p))
            for n, row in sorted(self.lanes.items())
        ]
        lines.append("queue: " + (", ".join(self.queue) or "empty"))
        self.live.write("\n".join(lines) + "\n")
        self.live.flush()
        self._drawn = len(lines)

    def _erase(self) -> None:
        if self.live is None or not self._drawn:
            return
        self.live.write("\033[F\033[K" * self._drawn)
        self.live.flush()
        self._drawn = 0


def _lines(event: Event) -> list[str]:
    from the_loop.cli.agent_output import event_lines, summary_lines
    from the_loop.driver.events import Merged, RunSummary

    if isinstance(event, Merged):
        return [_merge_line(event)]
    if isinstance(event, RunSummary):
        return summary_lines(event) + lane_table(event.table)
    lane = getattr(event, "lane", None)
    tag = f"[lane {lane}] " if lane else ""
    return [tag + line.lstrip() if tag else line for line in event_lines(event)]


def _merge_line(event: Merged) -> str:
    from the_loop.cli.output import bad, good, warn

    colour = {"landed": good, "evicted": warn, "failed": bad}.get(event.result, warn)
    commit = f" {event.commit[:10]}" if event.commit else ""
    return (
        f"[lane {event.lane}] merge task {event.task}: "
        + colour(event.result)
        + commit
        + f" — {event.detail}"
    )


def lane_table(table: tuple[dict[str, object], ...]) -> list[str]:
    """The final table of a parallel run: each task's lane, attempts, time, tokens, merge."""
    if not table:
        return []
    lines = ["", f"  {'task':<6} {'lane':>4} {'attempts':>8} {'time':>7} {'tokens':>8}  merge"]
    for row in table:
        seconds = float(str(row.get("seconds") or 0))
        tokens = row.get("tokens")
        shown = _tokens(tokens if isinstance(tokens, int) else None)
        lines.append(
            f"  {row['task']!s:<6} {row['lane']!s:>4} {row['attempts']!s:>8} "
            f"{seconds:>6.1f}s {shown:>8}  {row['merge']}"
        )
    return lines


def _tokens(value: int | None) -> str:
    if value is None:
        return "?"
    return f"{value / 1000:.1f}k" if value >= 1000 else str(value)
