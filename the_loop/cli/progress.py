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

import click

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
