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
from functools import cache

from the_loop.io.resources import resource_dir

# The shipped templates a checkpoint renders; anything else goes to Jinja.
SHIPPED = frozenset({"log-entry.md.j2", "commit-message.txt.j2"})

# A tag, or the start of one this renderer does not take. A block tag is taken only
# as a whole line (lstrip_blocks drops the indent before it, trim_blocks the newline).
# (One pattern, and plain tuples below: this module loads on every checkpoint.)
_TAG = re.compile(
    r"\{\{(?P<expr>[^{}]*)\}\}|^[ \t]*\{%(?P<stmt>[^{}%\n]*)%\}(?:\n|\Z)|[{}]", re.MULTILINE
)
# Names Jinja reads as literals or operators, never as a variable of the context.
_KEYWORDS = frozenset(
    {"true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if"}
    | {"else", "elif", "endif", "for", "endfor", "set", "block", "recursive"}
)


class _Unsupported(Exception):
    """The template (or a value given to it) is outside the subset: Jinja renders it."""


# The pieces of a compiled template:
#   ("text", text)
#   ("out", name, ((filter, argument), ...))   {{ name | filter(argument) … }}
#   ("if", name, defined_test)                 defined_test: `name is defined and name`
#   ("endif",)
_Piece = tuple[object, ...]


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
        if any(piece[0] == "out" and piece[2] for piece in program):
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
            pieces.append(("text", source[at : match.start()]))
        at = match.end()
        if match.group("expr") is not None:
            pieces.append(_output(match.group("expr")))
        elif match.group("stmt") is not None and blocks:
            piece = _statement(match.group("stmt"))
            depth += 1 if piece[0] == "if" else -1
            if depth < 0:
                raise _Unsupported
            pieces.append(piece)
        else:
            raise _Unsupported  # a brace Jinja might read as the start of a tag
    if depth:
        raise _Unsupported
    if at < len(source):
        pieces.append(("text", source[at:]))
    return tuple(pieces)


def _output(expr: str) -> _Piece:
    first, *rest = expr.split("|")
    name = _variable(first)
    filters: list[tuple[str, str | int]] = []
    for part in (p.strip() for p in rest):
        argument = _call(part, "indent")
        if argument is not None and argument.isascii() and argument.isdigit():
            filters.append(("indent", int(argument)))
            continue
        argument = _call(part, "join")
        quoted = argument is not None and len(argument) >= 2 and argument[0] == argument[-1] == "'"
        if argument is not None and quoted and not _special(argument[1:-1]):
            filters.append(("join", argument[1:-1]))
            continue
        raise _Unsupported
    return ("out", name, tuple(filters))


def _call(text: str, name: str) -> str | None:
    """The argument of ``name(argument)`` (blanks around it dropped), or None."""
    if text.startswith(name + "(") and text.endswith(")"):
        return text[len(name) + 1 : -1].strip()
    return None


def _special(text: str) -> bool:
    """Whether a string literal holds what Jinja would read otherwise (an escape, a quote)."""
    return any(c in text for c in "'\\{}") or not text.isprintable()


def _statement(stmt: str) -> _Piece:
    words = stmt.split()
    if words == ["endif"]:
        return ("endif",)
    if len(words) == 2 and words[0] == "if":
        return ("if", _variable(words[1]), False)
    if len(words) == 6 and words[0] == "if" and words[2:5] == ["is", "defined", "and"]:
        if words[5] == words[1]:
            return ("if", _variable(words[1]), True)
    raise _Unsupported


def _variable(text: str) -> str:
    name = text.strip(" ")
    if not (name.isascii() and name.isidentifier()) or name in _KEYWORDS:
        raise _Unsupported
    return name


def _run(program: tuple[_Piece, ...], context: Mapping[str, object]) -> str:
    out: list[str] = []
    shown: list[bool] = []  # one per open if: whether its body is rendered
    for piece in program:
        kind = piece[0]
        if kind == "if":
            shown.append(all(shown) and _true(str(piece[1]), bool(piece[2]), context))
        elif kind == "endif":
            shown.pop()
        elif not all(shown):
            continue
        elif kind == "text":
            out.append(str(piece[1]))
        else:
            out.append(_value(piece, context))
    return "".join(out)


def _true(name: str, defined_test: bool, context: Mapping[str, object]) -> bool:
    if name not in context:
        if defined_test:
            return False
        raise _Unsupported  # Jinja's strict undefined raises; let it say so
    return bool(context[name])


def _value(piece: _Piece, context: Mapping[str, object]) -> str:
    _, name, filters = piece
    if name not in context:
        raise _Unsupported
    value = context[str(name)]
    for filter_name, argument in filters:  # type: ignore[attr-defined]
        if filter_name == "join":
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
