"""Reading text files that people edit: UTF-8 and of a sane size, or a precise error.

One place decides what a file that is not UTF-8 looks like to the user: the
file, the line and column of the first bad byte, and the fix. And one place
bounds how much of a file loop will read whole, so a runaway file (a log
pasted into a spec, a generated config) costs a clear error, not minutes of
CPU and gigabytes of memory.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from the_loop.errors import UnusableInputError, Where

MIB = 1024 * 1024
# Spec artifacts: the 100,000-task benchmark's tasks.md is about 11 MiB.
SPEC_LIMIT = 32 * MIB
# An execution log read whole (`loop log --last 0`, `loop check`); tail reads are unbounded.
LOG_LIMIT = 256 * MIB
# Config files: real ones are under 25 KiB; parsing costs about 2 s per MiB.
CONFIG_LIMIT = 256 * 1024


def decode_utf8(data: bytes, path: Path) -> str:
    """``data`` (read from ``path``) as text; ``UnusableInputError`` at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UnusableInputError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded",
            where=Where(path, line, col),
            hint="save the file as UTF-8",
        ) from exc


def read_limited(path: Path, limit: int, *, what: str = "file") -> bytes:
    """The bytes of ``path``, refused with ``UnusableInputError`` when over ``limit``.

    Only a regular file is read: a FIFO or a device in a file's place would
    hang or never end, so it is refused too. Raises ``FileNotFoundError`` and
    other ``OSError`` as ``Path.read_bytes`` would, so callers keep their own
    messages for a missing or unreadable file.
    """
    with open(path, "rb", opener=_without_blocking) as handle:
        status = os.fstat(handle.fileno())
        mode = status.st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise UnusableInputError(
                f"this {what} is not a regular file (a pipe or a device?)",
                where=Where(path),
                hint="replace it with a regular file",
            )
        # One byte more tells "over the limit" apart. The first read is sized to the
        # file: a buffer of the whole limit (32 MiB) costs more than reading a small
        # file. A file that grew meanwhile is read on, to the same bound as before.
        data = handle.read(min(status.st_size, limit) + 1)
        if status.st_size < len(data) <= limit:
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise too_large(path, limit, what=what)
    return data


def _without_blocking(path: str, flags: int) -> int:
    # A FIFO opened for reading would wait for a writer; O_NONBLOCK returns at once.
    return os.open(path, flags | os.O_NONBLOCK)


def too_large(path: Path, limit: int, *, what: str = "file") -> UnusableInputError:
    """The error for a file over loop's size limit for its kind."""
    try:
        size = f"{Path(path).stat().st_size / MIB:.1f} MiB"
    except OSError:
        size = "too large"
    return UnusableInputError(
        f"this {what} is {size}; loop reads {what}s up to {_size_text(limit)}",
        where=Where(path),
        hint="it is most likely generated or pasted by mistake: shrink it, or split the work",
    )


def _size_text(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit // 1024} KiB"
