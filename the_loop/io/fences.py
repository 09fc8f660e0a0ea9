"""Fenced code blocks (``` and ~~~): the rules every markdown reader here shares.

A fence opens with three or more backticks or tildes; a backtick fence's info
string may not contain a backtick. It closes at a line holding only the same
character, at least as many times. The readers differ in what they do with the
fenced lines, not in where a fence starts or ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_OPEN = re.compile(r"(`{3,}|~{3,})[ \t]*(.*)$")


def open_fence(stripped: str) -> tuple[str, int, str] | None:
    """``(char, length, info)`` when ``stripped`` (a line without its indent) opens a fence."""
    m = _OPEN.match(stripped)
    if m is None:
        return None
    marker, info = m.group(1), m.group(2)
    if marker[0] == "`" and "`" in info:
        return None
    return marker[0], len(marker), info


def closes_fence(char: str, length: int, line: str) -> bool:
    """Whether ``line`` closes a fence opened with ``length`` times ``char``."""
    stripped = line.strip()
    return len(stripped) >= length and stripped == char * len(stripped)


class Unfenced:
    """The lines of a text outside its code fences, with their numbers.

    Iterating yields ``(number, line, after_fence)`` for every line that is not a
    fence line or fenced content, its ``\\r`` dropped; ``after_fence`` is True for
    the first line after a fenced block (a fence ends a paragraph, a list item).
    Once iterated, ``unclosed`` is ``(line, char, length)`` of a fence never
    closed (everything after it was fenced), else None. Readers that only skip
    fenced code use this; the tasks reader, which reads mermaid and JSON blocks,
    shares ``open_fence`` and ``closes_fence``.
    """

    def __init__(self, lines: Iterable[str], first: int = 1) -> None:
        self._lines = lines
        self._first = first
        self.unclosed: tuple[int, str, int] | None = None

    def __iter__(self) -> Iterator[tuple[int, str, bool]]:
        fence: tuple[int, str, int] | None = None
        after = False
        for number, raw in enumerate(self._lines, self._first):
            line = raw[:-1] if raw.endswith("\r") else raw
            if fence is not None:
                if closes_fence(fence[1], fence[2], line):
                    fence, after = None, True
                continue
            stripped = line.lstrip()
            if stripped[:1] in _FENCE_STARTS:
                opened = open_fence(stripped)
                if opened is not None:
                    fence = (number, opened[0], opened[1])
                    continue
            yield number, line, after
            after = False
        self.unclosed = fence


def unfenced_lines(lines: Iterable[str], first: int = 1) -> Unfenced:
    """``(number, line, after_fence)`` for each line of ``lines`` outside code fences."""
    return Unfenced(lines, first)


_FENCE_STARTS = ("`", "~")
