"""Apply one mutation to a source file: a function body swapped by qualname, or a snippet.

A function is found with ``ast`` by its qualified name (``Class.method``,
``outer.inner``), so other people's edits elsewhere in the module never move
or break the mutation. Its signature, decorators and docstring stay; only the
statements of the body are replaced. The new body may call the untouched
function through the placeholder ``__original__``: the original is kept beside
the mutant under a new name, so a mutation can filter what the real code
returns instead of copying it.
"""

from __future__ import annotations

import ast
import textwrap

ORIGINAL = "__original__"


class Stale(Exception):
    """The function or snippet a mutation targets is no longer in the file."""


def find_function(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """The function or method named ``qualname`` (dotted through classes and functions)."""
    scope: ast.AST = tree
    found: ast.AST | None = None
    for part in qualname.split("."):
        found = next(
            (
                node
                for node in ast.iter_child_nodes(scope)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and node.name == part
            ),
            None,
        )
        if found is None:
            raise Stale(f"no {qualname} (missing {part!r})")
        scope = found
    if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise Stale(f"{qualname} is not a function")
    return found


def replace_body(source: str, qualname: str, body: str) -> str:
    """``source`` with the body of ``qualname`` replaced by ``body`` (dedented)."""
    tree = ast.parse(source)
    node = find_function(tree, qualname)
    lines = source.splitlines(keepends=True)
    statements = node.body
    if ast.get_docstring(node, clean=False) is not None and len(statements) > 1:
        statements = statements[1:]  # keep the docstring: it is not the behaviour
    first = statements[0]
    indent = lines[first.lineno - 1][: first.col_offset]
    if indent.strip():
        raise ValueError(f"{qualname}: the body shares a line with the signature; cannot splice")
    end = node.end_lineno
    assert end is not None
    original_name = f"{node.name}__original"
    new_body = textwrap.dedent(body).strip("\n").replace(ORIGINAL, original_name)
    spliced = [indent + line if line.strip() else "\n" for line in new_body.splitlines()]
    mutant = [line if line.endswith("\n") else line + "\n" for line in spliced]
    kept = _renamed_copy(lines, node, original_name) if ORIGINAL in body else []
    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    result = "".join(lines[:start] + kept + lines[start : first.lineno - 1] + mutant + lines[end:])
    ast.parse(result)  # a mutation that does not parse is a bug in the mutation
    return result


def _renamed_copy(
    lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef, new_name: str
) -> list[str]:
    """The function's own lines (decorators included) with its name changed, then a blank."""
    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    assert node.end_lineno is not None
    copy = lines[start : node.end_lineno]
    at = node.lineno - 1 - start
    copy[at] = copy[at].replace(f"def {node.name}(", f"def {new_name}(", 1)
    return [*copy, "\n"]


def replace_text(source: str, old: str, new: str) -> str:
    """``source`` with the one occurrence of ``old`` replaced by ``new``."""
    count = source.count(old)
    if count == 0:
        raise Stale("snippet not found")
    if count > 1:
        raise ValueError(f"snippet found {count} times; make it unique")
    return source.replace(old, new, 1)
