"""Fenced code blocks (``` and ~~~): the rules every markdown reader here shares.

A fence opens with three or more backticks or tildes; a backtick fence's info
string may not contain a backtick. It closes at a line holding only the same
character, at least as many times. The readers differ in what they do with the
fenced lines, not in where a fence starts or ends.
"""

from __future__ import annotations

import re

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
