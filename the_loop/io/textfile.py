"""Reading text files that people edit: UTF-8, or a precise error.

One place decides what a file that is not UTF-8 looks like to the user: the
file, the line and column of the first bad byte, and the fix.
"""

from __future__ import annotations

from pathlib import Path

from the_loop.errors import UnusableInputError, Where


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
