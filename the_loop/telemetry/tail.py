"""Read a file's lines from the end backwards, in fixed blocks, within a byte budget.

Agent transcripts grow to hundreds of megabytes while the answer we want sits
in their last few kilobytes, so nothing here ever reads a whole file: blocks
of ``block_size`` bytes are read from the end towards the start until the
caller stops asking or ``budget`` bytes have been read. ``bytes_read`` counts
every byte taken from the disk, so tests can pin the bound without timing.

A line is the bytes between two newlines. The newest line may lack its
newline (a writer caught mid-append); it is yielded with ``complete=False``.
The line the budget cuts through is never yielded: its start was not read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import BinaryIO

BLOCK_SIZE = 64 * 1024
# "A few MB is plenty" (harness-telemetry.md §3.3); 8 MiB also spans a large tool result.
DEFAULT_BUDGET = 8 * 1024 * 1024
# Counting lines means reading the file's front; done only when that front is this small.
LINE_COUNT_LIMIT = 1024 * 1024


@dataclass(frozen=True)
class TailLine:
    """One line (without its newline) and the byte offset where it starts."""

    data: bytes
    offset: int
    complete: bool  # False only for a newest line with no newline after it


class TailReader:
    """Yields a file's lines newest first; reads at most ``budget`` bytes for them."""

    def __init__(
        self, path: Path, *, budget: int = DEFAULT_BUDGET, block_size: int = BLOCK_SIZE
    ) -> None:
        if budget <= 0 or block_size <= 0:
            raise ValueError("budget and block_size must be positive")
        self.path = path
        self.budget = budget
        self.block_size = block_size
        self.bytes_read = 0
        self.size: int | None = None
        self.reached_start = False  # every line of the file was yielded
        self.budget_exhausted = False  # stopped with older bytes left unread

    def lines(self) -> Iterator[TailLine]:
        """The file's non-empty lines, newest first. Raises ``OSError`` if unreadable."""
        with self.path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            self.size = size
            yield from self._walk(handle, size)

    def _walk(self, handle: BinaryIO, size: int) -> Iterator[TailLine]:
        pos = size
        fragments: list[bytes] = []  # pieces of the oldest unfinished line, newest piece first
        newest_complete: bool | None = None
        while pos > 0:
            want = min(self.block_size, pos, self.budget - self.bytes_read)
            if want <= 0:
                self.budget_exhausted = True
                return
            pos -= want
            data = _read_at(handle, pos, want)
            self.bytes_read += len(data)
            if len(data) != want:
                # The file shrank under us (rewritten, not appended): what we hold is stale.
                self.budget_exhausted = True
                return
            if newest_complete is None:
                newest_complete = data.endswith(b"\n")
                if newest_complete:
                    data = data[:-1]
            cut = data.rfind(b"\n")
            if cut < 0:
                fragments.append(data)
                continue
            head = data[cut + 1 :] + b"".join(reversed(fragments))
            yield from _emit(head, pos + cut + 1, newest_complete)
            newest_complete = True  # only the very newest line can be torn
            end = cut
            while (start := data.rfind(b"\n", 0, end)) >= 0:
                yield from _emit(data[start + 1 : end], pos + start + 1, True)
                end = start
            fragments = [data[:end]]
        self.reached_start = True
        if fragments:
            yield from _emit(b"".join(reversed(fragments)), 0, newest_complete is not False)

    def stop_after(self, more: int) -> None:
        """Read at most ``more`` further bytes (never raises the budget).

        Works mid-walk: a caller that has its answer but would like one more
        detail if it is near can cap the search without stopping it now.
        """
        self.budget = min(self.budget, self.bytes_read + max(0, more))

    def line_number(self, offset: int) -> int | None:
        """The 1-based line number at ``offset``, or None when that needs a long read.

        Only the bytes before ``offset`` are read, and only when they are few
        (``LINE_COUNT_LIMIT``): a line number is a courtesy, never a full scan.
        """
        if offset > LINE_COUNT_LIMIT:
            return None
        try:
            with self.path.open("rb") as handle:
                front = handle.read(offset)
        except OSError:
            return None
        self.bytes_read += len(front)
        if len(front) != offset:
            return None
        return front.count(b"\n") + 1


def _read_at(handle: BinaryIO, pos: int, size: int) -> bytes:
    handle.seek(pos)
    return handle.read(size)


def _emit(data: bytes, offset: int, complete: bool | None) -> Iterator[TailLine]:
    """Yield one line unless it is blank."""
    if data and not data.isspace():
        yield TailLine(data, offset, complete is not False)


def size_words(n: int) -> str:
    """``8 MiB`` or ``512 bytes``: a byte count for messages."""
    mib = 1024 * 1024
    return f"{n / mib:.0f} MiB" if n >= mib else f"{n} bytes"
