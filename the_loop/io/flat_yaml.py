"""A small reader for the simple YAML that front matter is made of, without ruamel.

Front matter is read on every command, and ruamel.yaml costs more to import than
the rest of a read-only command's start-up. The blocks loop writes, and nearly
all that people write, use a sliver of YAML: ``key: value`` lines, nested
mappings by indentation, ``[a, "b"]`` and ``- item`` lists of scalars, ``{}``,
comments. ``read_flat`` reads exactly that sliver and answers ``None`` for
anything else (anchors, tags, block scalars, multi-line values, flow mappings,
duplicate keys, tabs, a value that YAML would read as a float or a date), so the
caller falls back to the full reader in ``the_loop.io.yamlio``; errors are always
reported by that reader.

What it returns equals ``yamlio.to_plain`` of ruamel's round-trip load of the
same text (YAML 1.2 rules: ``yes`` is a string, ``true``/``True``/``TRUE`` a
boolean, ``~``/``null`` and an empty value null); tests/io/test_flat_yaml.py
holds the two readers to that on generated and real front matter.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing is not imported at run time: it costs every cold start ~2 ms
if TYPE_CHECKING:
    from typing import Any

# A plain mapping key that YAML reads as a string and as nothing else.
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_./-]*)[ ]*:(?:[ ]+|$)")
_CANONICAL_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
# Plain scalars that start like a number but are read as something else than
# an int or a string: floats, other int forms, timestamps (YAML 1.2 core schema
# as ruamel resolves it). The reader leaves them to ruamel.
_NUMBER_LIKE = re.compile(
    r"""[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*(?:[eE][-+]?[0-9]+)
    |[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)
    |[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+
    |[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}.*)?""",
    re.X,
)
_WORDS: dict[str, Any] = {
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
    "null": None,
    "Null": None,
    "NULL": None,
    "~": None,
}
# A plain scalar may not start with these (they open another kind of node).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`<=")


class _Unsupported(Exception):
    """The block uses YAML this reader leaves to ruamel."""


def read_flat(block: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """``(data, line of each top-level key)`` for a simple block, else ``None``.

    Lines in the second mapping are 0-based within ``block``.
    """
    if "\t" in block or "\r" in block:
        return None  # tabs and carriage returns: leave every subtlety to ruamel
    lines = []
    for no, line in enumerate(block.split("\n")):
        stripped = line.lstrip(" ")
        if stripped and stripped[0] != "#":  # blank and comment lines hold nothing
            lines.append((no, len(line) - len(stripped), line))
    try:
        data, lines_of, rest = _mapping(lines, 0, 0)
    except _Unsupported:
        return None
    if rest != len(lines):
        return None
    return data, lines_of


Lines = list[tuple[int, int, str]]  # (line number, indent, text) of each content line


def _mapping(lines: Lines, start: int, indent: int) -> tuple[dict[str, Any], dict[str, int], int]:
    """The mapping whose keys sit at ``indent``, from ``lines[start]``; returns the next index."""
    data: dict[str, Any] = {}
    lines_of: dict[str, int] = {}
    index = start
    while index < len(lines):
        no, here, line = lines[index]
        if here < indent:
            break
        if here > indent:
            raise _Unsupported  # a continuation line or a stray indent
        match = _KEY.match(line, here)
        if match is None:
            raise _Unsupported
        key = match.group(1)
        if key in data or key in _WORDS or key == "<<":
            raise _Unsupported  # a duplicate (ruamel reports it) or a non-string key
        rest = line[match.end() :]
        index += 1
        if rest and not rest.startswith("#"):
            data[key] = _inline(rest)
        else:
            data[key], index = _nested(lines, index, indent)
        lines_of[key] = no
    return data, lines_of, index


def _nested(lines: Lines, index: int, indent: int) -> tuple[Any, int]:
    """The block value of a ``key:`` line: a mapping, a list, or null when nothing follows."""
    if index >= len(lines):
        return None, index
    _no, here, line = lines[index]
    is_item = line.startswith("- ", here) or line[here:] == "-"
    if is_item and here >= indent:
        return _sequence(lines, index, here)
    if here <= indent:
        return None, index
    data, _lines, index = _mapping(lines, index, here)
    return data, index


def _sequence(lines: Lines, index: int, indent: int) -> tuple[list[Any], int]:
    """A block list of scalars whose ``-`` sit at ``indent``."""
    items: list[Any] = []
    while index < len(lines):
        _no, here, line = lines[index]
        if here > indent:
            raise _Unsupported  # nested lists, mappings in lists, continuation lines
        if here < indent or not line.startswith("- ", here):
            break  # the next key of the mapping around the list
        text = line[here + 2 :].lstrip(" ")
        if not text or text.startswith("#") or _KEY.match(text):
            raise _Unsupported
        items.append(_inline(text))
        index += 1
    return items, index


def _inline(text: str) -> Any:
    """A value written on the key's own line (comment allowed after it)."""
    first = text[0]
    if first in "\"'":
        value, rest = _quoted(text)
        _only_comment(rest)
        return value
    if first == "[":
        items, rest = _flow_list(text[1:])
        _only_comment(rest)
        return items
    if first == "{":
        if not text.startswith("{}"):
            raise _Unsupported  # a flow mapping with content
        _only_comment(text[2:])
        return {}
    return _plain(_strip_comment(text), flow=False)


def _quoted(text: str) -> tuple[str, str]:
    """A quoted scalar at the start of ``text`` and what follows it."""
    if text[0] == '"':
        return _double_quoted(text)
    value: list[str] = []
    at = 1
    while True:
        end = text.find("'", at)
        if end < 0:
            raise _Unsupported  # runs over lines
        value.append(text[at:end])
        if text.startswith("''", end):
            value.append("'")
            at = end + 2
            continue
        return "".join(value), text[end + 1 :]


def _double_quoted(text: str) -> tuple[str, str]:
    value: list[str] = []
    at = 1
    while at < len(text):
        ch = text[at]
        if ch == '"':
            return "".join(value), text[at + 1 :]
        if ch == "\\":
            escaped = text[at + 1 : at + 2]
            if escaped not in _SIMPLE_ESCAPES:
                raise _Unsupported  # \n, \u…, a line break: leave them to ruamel
            value.append(escaped)
            at += 2
            continue
        value.append(ch)
        at += 1
    raise _Unsupported  # runs over lines


_SIMPLE_ESCAPES = frozenset({'"', "\\", "/"})


def _only_comment(rest: str) -> None:
    stripped = rest.lstrip(" ")
    if stripped and not (stripped.startswith("#") and rest[: len(rest) - len(stripped)]):
        raise _Unsupported


def _strip_comment(text: str) -> str:
    at = text.find(" #")
    return (text[:at] if at >= 0 else text).rstrip(" ")


def _flow_list(text: str) -> tuple[list[Any], str]:
    """The items of a ``[...]`` list (after its ``[``) and the text after its ``]``.

    Items are scalars; nested lists and mappings, comments and trailing commas
    are left to ruamel.
    """
    items: list[Any] = []
    rest = text.lstrip(" ")
    if rest.startswith("]"):
        return items, rest[1:]
    while True:
        if rest[:1] in ("'", '"'):
            value, rest = _quoted(rest)
        else:
            end = min((i for i in (rest.find(","), rest.find("]")) if i >= 0), default=-1)
            if end < 0:
                raise _Unsupported  # runs over lines
            piece = rest[:end].rstrip(" ")
            if any(ch in piece for ch in "[{}#"):
                raise _Unsupported
            value, rest = _plain(piece, flow=True), rest[end:]
        items.append(value)
        rest = rest.lstrip(" ")
        if rest.startswith("]"):
            return items, rest[1:]
        if not rest.startswith(","):
            raise _Unsupported
        rest = rest[1:].lstrip(" ")
        if rest.startswith("]") or not rest:
            raise _Unsupported  # a trailing comma: leave the subtleties to ruamel


def _plain(text: str, *, flow: bool) -> Any:
    """A plain scalar as YAML 1.2 reads it: null, a boolean, an int or a string."""
    if not text:
        if flow:
            raise _Unsupported
        return None
    if text in _WORDS:
        return _WORDS[text]
    first = text[0]
    if first in _INDICATORS:
        raise _Unsupported
    if ": " in text or text.endswith(":") or (flow and ":" in text):
        raise _Unsupported
    if first.isdigit() or first in "+.":
        if _CANONICAL_INT.fullmatch(text):
            return int(text)
        if _NUMBER_LIKE.fullmatch(text):
            raise _Unsupported
    return text
