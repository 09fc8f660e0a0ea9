"""The one place that builds ruamel.yaml instances and turns YAML errors into ours.

Everything is loaded round-trip so that every node knows its line and column:
config errors point at ``file:line:col``, and front matter can be edited in
place without losing comments or key order. YAML 1.2 rules apply (``yes`` is a
string), which is why type errors on booleans carry a hint.

ruamel.yaml is imported by the functions that need it, not with this module: it
costs about as much as the rest of a read-only command's start-up, and a warm
read never needs it: what ruamel read from a text (front matter, by
:func:`read_plain`; the config, by its loader) is kept in loop's one cache under
the text's hash.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import Where
from the_loop.io.content_cache import user_cache

if TYPE_CHECKING:
    from typing import Any

    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import MarkedYAMLError

JsonPath = tuple[str | int, ...]


def round_trip() -> YAML:
    """A round-trip instance: keeps comments, key order and quoting."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.allow_duplicate_keys = False
    yaml.width = 4096  # never re-wrap a user's long lines
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


@dataclass(frozen=True)
class YamlProblem:
    """Why a YAML text could not be loaded, and where."""

    message: str
    line: int | None
    col: int | None
    hint: str | None = None


def read_plain(text: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """A YAML mapping as plain data, and the 0-based line of each top-level key.

    Read by ruamel once per content and kept in loop's cache, so that a later
    read of the same text needs neither the parse nor the import. None when the
    text is not a clean mapping (invalid, or another kind of value): the caller
    then loads it with :func:`parse`, which says what is wrong and where.
    """

    def decode(plain: Any) -> tuple[dict[str, Any], dict[str, int]] | None:
        if plain is None:
            return None
        data, lines = plain
        if not isinstance(data, dict) or not isinstance(lines, dict):
            raise ValueError("not a mapping")
        return data, lines

    return user_cache().by_content("yaml-mapping", text, lambda: _read_plain(text), decode=decode)


def _read_plain(text: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    node, problem = parse(text)
    if problem is not None or not isinstance(node, dict) or key_collisions(node):
        return None if node is not None or problem is not None else ({}, {})
    lines: dict[str, int] = {}
    lc: Any = getattr(node, "lc", None)
    for key in node:
        try:
            lines[str(key)] = int(lc.key(key)[0])
        except (AttributeError, KeyError):  # a key a merge (<<: *anchor) brought in
            continue
    return to_plain(node), lines


def parse(text: str, *, first_line: int = 1) -> tuple[Any, YamlProblem | None]:
    """Load one YAML document; return ``(data, None)`` or ``(None, problem)``.

    ``first_line`` is the file line the text starts on (front matter starts on
    line 2), so problem lines are file lines. Documents nested more than
    ``MAX_DEPTH`` levels, or whose aliases expand to more than ``MAX_VALUES``
    values (an "alias bomb"), are problems too: every reader downstream would
    pay for the expansion.
    """
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    deep = _flow_depth_problem(text, first_line)
    if deep is not None:
        return None, deep
    try:
        data = round_trip().load(text)
    except DuplicateKeyError as exc:
        hint = _duplicate_hint(exc, text, first_line)
        return None, _problem(exc, first_line, "duplicate key", hint)
    except MarkedYAMLError as exc:
        return None, _problem(exc, first_line, None, _marked_hint(exc, text))
    except YAMLError as exc:  # pragma: no cover - unmarked errors are rare
        return None, YamlProblem(f"invalid YAML: {exc}", first_line, None)
    except RecursionError:
        return None, _too_deep(_deep_line(text, first_line), None)
    except Exception as exc:  # the YAML library's own failures on odd text
        # ruamel raises ValueError (a date like 2001-02-30, an integer past Python's
        # 4,300 digits), AssertionError (an !!omap with a repeated key) and others for
        # text it tokenized fine: a problem with the text, reported as one, at the
        # value that raised when it can be found.
        detail = str(exc).strip() or type(exc).__name__
        line, col = _failing_value(text, first_line)
        return None, YamlProblem(f"cannot be read as YAML: {detail}", line, col)
    return data, _size_problem(data, first_line)


def _failing_value(text: str, first_line: int) -> tuple[int, int | None]:
    """Where a value that fails to load sits: each scalar is built on its own.

    The composed tree knows every node's position (composing builds no values);
    the first scalar whose construction raises is the culprit. Without one, the
    document's first line.
    """
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    try:
        yaml = round_trip()
        root = yaml.compose(text)
        constructor = yaml.constructor
    except Exception:  # composing fails too: no position to give
        return first_line, None
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, ScalarNode):
            try:
                constructor.construct_object(node, deep=True)
            except Exception:
                return node.start_mark.line + first_line, node.start_mark.column + 1
        elif isinstance(node, MappingNode):
            stack.extend(part for pair in reversed(node.value) for part in reversed(pair))
        elif isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))
    return first_line, None


def _deep_line(text: str, first_line: int) -> int:
    """The first line nested more than ``MAX_DEPTH`` levels by indentation and ``- `` entries."""
    indents: list[int] = []
    for number, line in enumerate(text.split("\n")):
        rest = line.lstrip(" ")
        if not rest or rest.startswith("#"):
            continue
        indent = len(line) - len(rest)
        while indents and indents[-1] >= indent:
            indents.pop()
        indents.append(indent)
        entries = 0
        while rest.startswith(("- ", "? ")):
            entries += 1
            rest = rest[2:].lstrip(" ")
        if len(indents) + entries > MAX_DEPTH:
            return number + first_line
    return first_line


MAX_DEPTH = 64  # real config and front matter nest 4 levels at most
MAX_VALUES = 20_000  # values after every alias is expanded; real files hold under 500

_DEPTH_HINT = "real configuration and front matter nest a few levels; flatten it"


def _too_deep(line: int | None, col: int | None) -> YamlProblem:
    return YamlProblem(f"nested more than {MAX_DEPTH} levels deep", line, col, _DEPTH_HINT)


def _flow_depth_problem(text: str, first_line: int) -> YamlProblem | None:
    """A cheap scan for runaway ``[[[…`` / ``{{{…`` nesting, before the parser recurses.

    Quoted scalars and comments are skipped; brackets inside plain scalars are
    counted too, which only matters past ``MAX_DEPTH`` of them.
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    quote = ""
    for number, line in enumerate(text.split("\n")):
        index = 0
        while index < len(line):
            char = line[index]
            if quote:
                if char == "\\" and quote == '"':
                    index += 1
                elif char == quote:
                    quote = ""
            elif char in "'\"":
                quote = char
            elif char == "#" and (index == 0 or line[index - 1] in " \t"):
                break
            elif char in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    return _too_deep(number + first_line, index + 1)
            elif char in "]}":
                depth = max(0, depth - 1)
            index += 1
    return None


def _size_problem(data: Any, first_line: int) -> YamlProblem | None:
    """Too deep, or too many values once aliases are expanded (counted without expanding)."""
    sizes: dict[int, int] = {}
    depth_of: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, done = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        key = id(node)
        if done:
            children = _children(node)
            sizes[key] = 1 + sum(sizes.get(id(c), 1) for c in children)
            depth_of[key] = 1 + max(
                (depth_of.get(id(c), 0) for c in children if isinstance(c, (dict, list))),
                default=0,
            )
            if depth_of[key] > MAX_DEPTH:
                pos = _node_position(node, first_line)
                return _too_deep(pos[0] if pos else first_line, pos[1] if pos else None)
            continue
        if key in sizes:
            continue
        if key in depth_of:  # on the current path: an alias that contains itself
            pos = _node_position(node, first_line)
            return YamlProblem(
                "an alias refers to a value that contains it (a recursive alias)",
                pos[0] if pos else first_line,
                pos[1] if pos else None,
                "an alias (*name) may only refer to a value defined before it, outside it",
            )
        depth_of[key] = 0
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node))
    total = sizes.get(id(data), 1)
    if total <= MAX_VALUES:
        return None
    line, col = _largest_expansion(data, sizes, first_line)
    return YamlProblem(
        f"aliases expand this document to {total} values (loop reads at most {MAX_VALUES})",
        line,
        col,
        "an alias (*name) repeats the anchored value; anchors nested in anchors multiply "
        "it: write the values out, or remove the aliases",
    )


def _children(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [*node.keys(), *node.values()]
    return list(node)


def _largest_expansion(data: Any, sizes: dict[int, int], first_line: int) -> tuple[int, int | None]:
    """Where the expansion happens: the deepest value that alone is over the limit."""
    node = data
    while True:
        big = [c for c in _children(node) if sizes.get(id(c), 1) > MAX_VALUES]
        if not big:
            break
        node = big[0]
    pos = _node_position(node, first_line)
    return (pos[0], pos[1]) if pos else (first_line, None)


def _problem(
    exc: MarkedYAMLError, first_line: int, summary: str | None, hint: str | None
) -> YamlProblem:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + first_line if mark is not None else None
    col = mark.column + 1 if mark is not None else None
    problem = (exc.problem or exc.context or "invalid YAML").strip()
    if exc.context and exc.problem and "found another document" in exc.problem:
        problem = f"{exc.context.strip()}, {problem}"  # which rule was broken, and where
    if summary:
        key = _duplicate_key(exc)
        problem = f"duplicate key {key!r}" if key else summary
    return YamlProblem(problem, line, col, hint)


def _duplicate_key(exc: MarkedYAMLError) -> str | None:
    text = exc.problem or ""
    start = text.find('"')
    end = text.find('"', start + 1)
    return text[start + 1 : end] if 0 <= start < end else None


def _duplicate_hint(exc: MarkedYAMLError, text: str, first_line: int) -> str:
    line = _first_definition(exc, text)
    where = f" (first defined on line {line + first_line})" if line is not None else ""
    return f"a key may appear once per mapping{where}; keep one and delete the other"


def _first_definition(exc: MarkedYAMLError, text: str) -> int | None:
    """The 0-based line of the first of the duplicated keys.

    ruamel's error marks the mapping the keys are in (its ``context_mark``) and
    the second key; the first one is found in the composed node tree, which
    holds every key, duplicates included, with its position.
    """
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    mapping, key = exc.context_mark, _duplicate_key(exc)
    if mapping is None or key is None:
        return None
    try:
        root = round_trip().compose(text)
    except Exception:  # the text failed to load once already; positions are a bonus
        return mapping.line
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            here = (node.start_mark.line, node.start_mark.column)
            if here == (mapping.line, mapping.column):
                for key_node, _value in node.value:
                    if str(key_node.value) == key:
                        return int(key_node.start_mark.line)
            stack.extend(part for pair in node.value for part in pair)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return mapping.line


def _marked_hint(exc: MarkedYAMLError, text: str) -> str | None:
    mark = exc.problem_mark
    if mark is not None:
        lines = text.splitlines()
        if mark.line < len(lines) and "\t" in lines[mark.line][: mark.column + 1]:
            return "YAML does not allow tabs for indentation; indent with spaces"
    if "\t" in (exc.problem or ""):
        return "YAML does not allow tabs for indentation; indent with spaces"
    return None


def to_plain(node: Any) -> Any:
    """Copy ruamel nodes into plain dicts/lists/scalars (keys as strings).

    JSON Schema only knows string keys, and YAML readily produces integer keys
    (``4: standard``), so keys are stringified here, once.
    """
    if isinstance(node, dict):
        return {str(k): to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [to_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def key_collisions(node: Any, path: JsonPath = ()) -> list[tuple[JsonPath, str]]:
    """Keys that differ in YAML but become one key as text (``1:`` and ``"1":``).

    Returns ``(path of the later key, key text)`` for each collision.
    """
    found: list[tuple[JsonPath, str]] = []
    if isinstance(node, dict):
        seen: set[str] = set()
        for key, value in node.items():
            text = str(key)
            if text in seen:
                found.append(((*path, text), text))
            seen.add(text)
            found.extend(key_collisions(value, (*path, text)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(key_collisions(value, (*path, index)))
    return found


def locate(root: Any, path: Iterable[str | int], *, first_line: int = 1) -> tuple[int, int] | None:
    """The 1-based ``(line, col)`` of the value at ``path``, or the nearest ancestor.

    For a mapping key the position is that of the key itself, which is where a
    reader looks for a wrong value too.
    """
    node = root
    found: tuple[int, int] | None = _node_position(root, first_line)
    for part in path:
        pos = _child_position(node, part, first_line)
        if pos is None:
            break
        found = pos
        node = _child(node, part)
        if node is None:
            break
    return found


def _node_position(node: Any, first_line: int) -> tuple[int, int] | None:
    lc = getattr(node, "lc", None)
    if lc is None or lc.line is None:
        return None
    return lc.line + first_line, lc.col + 1


def _child_position(node: Any, part: str | int, first_line: int) -> tuple[int, int] | None:
    if getattr(node, "lc", None) is None:
        return None  # plain data (not loaded round-trip): no positions to give
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        key = _map_key(node, part)
        if key is _MISSING:
            return None
        try:
            line, col = node.lc.key(key)
        except KeyError:  # a key brought in by a merge (<<: *anchor) has no own position
            return None
        return line + first_line, col + 1
    if isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
        line, col = node.lc.item(part)
        return line + first_line, col + 1
    return None


_MISSING = object()


def _map_key(node: CommentedMap, part: str | int) -> Any:
    if part in node:
        return part
    for key in node:  # keys were stringified for validation; find the original
        if str(key) == str(part):
            return key
    return _MISSING


def _child(node: Any, part: str | int) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        key = _map_key(node, part)
        return None if key is _MISSING else node[key]
    if isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return None


def where_of(path: Path | str, root: Any, json_path: JsonPath, *, first_line: int = 1) -> Where:
    """A ``Where`` for the value at ``json_path`` inside a loaded document."""
    pos = locate(root, json_path, first_line=first_line)
    if pos is None:
        return Where(path)
    return Where(path, pos[0], pos[1])


def flow_list(values: list[str]) -> Any:
    """A list that a round-trip dump writes on one line, ``[a, b]`` (as the templates do)."""
    from ruamel.yaml.comments import CommentedSeq

    seq = CommentedSeq(values)
    seq.fa.set_flow_style()
    return seq


def dump(data: Any) -> str:
    """Serialize round-trip data back to YAML text."""
    stream = io.StringIO()
    round_trip().dump(data, stream)
    return stream.getvalue()


def json_path_text(path: Iterable[str | int]) -> str:
    """``("a", 0, "b")`` → ``$.a[0].b`` (the form error messages use)."""
    text = "$"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text
