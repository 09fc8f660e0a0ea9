"""Ctrl-C while the driver writes a checkpoint waits until the checkpoint is written.

A checkpoint is journaled and a later command would finish it, but finishing
it now is simpler for everyone: SIGINT (and SIGTERM) inside ``sheltered()``
are held and raised as ``KeyboardInterrupt`` when the block ends. Outside the
block, SIGTERM is turned into ``KeyboardInterrupt`` too (``stop_on_sigterm``),
so ``kill <pid>`` stops a run as cleanly as Ctrl-C.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def sheltered() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the duration of the block; raise afterwards if one came."""
    if not _in_main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    previous = {sig: signal.signal(sig, hold) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if held:
        raise KeyboardInterrupt


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """SIGTERM raises ``KeyboardInterrupt`` in the block, as Ctrl-C does."""
    if not _in_main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
