"""Render the simplest templates without Jinja, byte for byte as Jinja would.

Every ``loop task done`` renders a log entry, a commit message and the commit
subject (``checkpoint.messageTemplate``). Importing Jinja and compiling those
templates costs a tenth of the command, more than the rendering is worth: the
templates only put values in place. So ``the_loop.io.templating`` first offers
them here, and this module renders a template that keeps to the small subset
below, or answers ``None``, and Jinja renders it as before (every error
message included). The subset is:

- text without braces and without carriage returns (Jinja rewrites line endings);
- ``{{ name }}`` where ``name`` is in the context and its value a ``str``;
  optionally piped through ``join('text')`` (a list or tuple of ``str``) and
  ``indent(N)``, the two filters the log entry uses;
- with ``blocks=True`` (the shipped templates' environment, which trims blocks):
  a line holding nothing but ``{% if name %}``,
  ``{% if name is defined and name %}`` or ``{% endif %}``.

tests/io/test_plain_templates.py holds this renderer to Jinja's output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from the_loop.io.resources import resource_dir

# The shipped templates a checkpoint renders; anything else goes to Jinja.
SHIPPED = frozenset({"log-entry.md.j2", "commit-message.txt.j2"})

# A tag, or the start of one this renderer does not take. A block tag is taken only
# as a whole line (lstrip_blocks drops the indent before it, trim_blocks the newline).
_TAG = re.compile(
    r"\{\{(?P<expr>[^{}]*)\}\}"
    r"|^[ \t]*\{%(?P<stmt>[^{}%]*)%\}(?:\n|\Z)"
    r"|[{}]",
    re.MULTILINE,
)
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_VARIABLE = re.compile(rf" *({_NAME}) *")
_INDENT = re.compile(r" *indent\( *([0-9]+) *\) *")
_JOIN = re.compile(r" *join\( *'([^'\\{}]*)' *\) *")
_IF = re.compile(rf" *if +({_NAME})(?: +is +defined +and +({_NAME}))? *")
_ENDIF = re.compile(r" *endif *")
# Names Jinja reads as literals or operators, never as a variable of the context.
_KEYWORDS = frozenset(
    {"true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if"}
    | {"else", "elif", "endif", "for", "endfor", "set", "block", "recursive"}
)


class _Unsupported(Exception):
    """The template (or a value given to it) is outside the subset: Jinja renders it."""


@dataclass(frozen=True)
class _Output:
    """``{{ name | filter … }}``: the filters as (name, argument) in order."""

    name: str
    filters: tuple[tuple[str, str | int], ...]


@dataclass(frozen=True)
class _If:
    name: str
    defined_test: bool  # ``name is defined and name``: an absent name is false


@dataclass(frozen=True)
class _EndIf:
    pass


_Piece = str | _Output | _If | _EndIf


def render_shipped(name: str, context: Mapping[str, object]) -> str | None:
    """Shipped template ``name`` rendered with ``context``, or None to let Jinja do it."""
    if name not in SHIPPED:
        return None
    program = _shipped_program(name)
    if program is None:
        return None
    try:
        return _run(program, context)
    except _Unsupported:
        return None


def render_source(source: str, context: Mapping[str, object]) -> str | None:
    """A user's template string (no blocks, no filters) rendered, or None for Jinja."""
    try:
        program = _compiled(source, blocks=False)
        if any(isinstance(p, _Output) and p.filters for p in program):
            return None  # the sandbox's filters are Jinja's to apply
        return _run(program, context)
    except _Unsupported:
        return None


@cache
def _shipped_program(name: str) -> tuple[_Piece, ...] | None:
    try:
        # Bytes decoded as Jinja's loader does; Path.read_text would translate "\r\n".
        source = (resource_dir("templates") / name).read_bytes().decode("utf-8")
        return _compiled(source, blocks=True)
    except (OSError, UnicodeDecodeError, _Unsupported):
        return None  # Jinja reports a missing or unreadable template its own way


@cache
def _compiled(source: str, *, blocks: bool) -> tuple[_Piece, ...]:
    """The template as text and tags; raises ``_Unsupported`` outside the subset."""
    if "\r" in source:
        raise _Unsupported
    pieces: list[_Piece] = []
    depth = 0
    at = 0
    for match in _TAG.finditer(source):
        if match.start() > at:
            pieces.append(source[at : match.start()])
        at = match.end()
        if match.group("expr") is not None:
            pieces.append(_output(match.group("expr")))
        elif match.group("stmt") is not None and blocks:
            piece = _statement(match.group("stmt"))
            depth += 1 if isinstance(piece, _If) else -1
            if depth < 0:
                raise _Unsupported
            pieces.append(piece)
        else:
            raise _Unsupported  # a brace Jinja might read as the start of a tag
    if depth:
        raise _Unsupported
    if at < len(source):
        pieces.append(source[at:])
    return tuple(pieces)


def _output(expr: str) -> _Output:
    first, *rest = expr.split("|")
    name = _variable(first)
    filters: list[tuple[str, str | int]] = []
    for part in rest:
        if indent := _INDENT.fullmatch(part):
            filters.append(("indent", int(indent.group(1))))
        elif join := _JOIN.fullmatch(part):
            filters.append(("join", join.group(1)))
        else:
            raise _Unsupported
    return _Output(name, tuple(filters))


def _statement(stmt: str) -> _If | _EndIf:
    if _ENDIF.fullmatch(stmt):
        return _EndIf()
    found = _IF.fullmatch(stmt)
    if found is None:
        raise _Unsupported
    name = _variable(found.group(1))
    if found.group(2) is not None and found.group(2) != name:
        raise _Unsupported
    return _If(name, defined_test=found.group(2) is not None)


def _variable(text: str) -> str:
    found = _VARIABLE.fullmatch(text)
    if found is None or found.group(1) in _KEYWORDS:
        raise _Unsupported
    return found.group(1)


def _run(program: tuple[_Piece, ...], context: Mapping[str, object]) -> str:
    out: list[str] = []
    shown: list[bool] = []  # one per open if: whether its body is rendered
    for piece in program:
        if isinstance(piece, _If):
            shown.append(all(shown) and _true(piece, context))
        elif isinstance(piece, _EndIf):
            shown.pop()
        elif not all(shown):
            continue
        elif isinstance(piece, str):
            out.append(piece)
        else:
            out.append(_value(piece, context))
    return "".join(out)


def _true(test: _If, context: Mapping[str, object]) -> bool:
    if test.name not in context:
        if test.defined_test:
            return False
        raise _Unsupported  # Jinja's strict undefined raises; let it say so
    return bool(context[test.name])


def _value(output: _Output, context: Mapping[str, object]) -> str:
    if output.name not in context:
        raise _Unsupported
    value = context[output.name]
    for name, argument in output.filters:
        if name == "join":
            if type(value) not in (list, tuple):
                raise _Unsupported
            items = list(value)  # type: ignore[call-overload]
            if any(type(item) is not str for item in items):
                raise _Unsupported
            value = str(argument).join(items)
        else:
            if type(value) is not str:
                raise _Unsupported
            value = _indent(value, int(argument))
    if type(value) is not str:
        raise _Unsupported  # Jinja's own str() of other values is left to Jinja
    return value


def _indent(text: str, width: int) -> str:
    """Jinja's ``indent(width)``: every line but the first and the blank ones gets
    ``width`` spaces; a final line break becomes a blank line, as Jinja reads it."""
    first, *others = (text + "\n").splitlines()
    pad = " " * width
    return "\n".join([first, *(pad + line if line else line for line in others)])
