"""Parse one transcript line, quietly: a garbled line is None, never an exception.

Transcripts are written by another program while we read them; a torn line,
stray bytes or a non-object line is expected, counted by the caller and skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


def parse_object(data: bytes) -> Mapping[str, Any] | None:
    """The JSON object on this line, or None if it is not one."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):  # ValueError covers bad UTF-8 and bad JSON
        return None
    return value if isinstance(value, dict) else None


def field(obj: Mapping[str, Any], *keys: str) -> Any:
    """``obj[k1][k2]…``, or None as soon as a step is missing or not an object."""
    value: Any = obj
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def count(value: Any) -> int | None:
    """A token count: a non-negative int (not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def text(value: Any) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None
