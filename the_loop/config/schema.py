"""The config JSON Schema: loading it, reading its defaults and marks.

The schema file is the single source of truth for keys, types and defaults.
Validating an instance is ``the_loop.config.validation``'s (jsonschema is
imported there, through ``schema_errors``, only for an instance not seen yet).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from the_loop.io.resources import resource_path

if TYPE_CHECKING:
    from typing import Any

SCHEMA_FILE = "config.schema.json"
OVERRIDABLE = "x-overridable"
HINT = "x-hint"


@cache
def schema_bytes() -> bytes:
    """The raw bytes of the shipped config schema."""
    return resource_path("schema", SCHEMA_FILE).read_bytes()


@cache
def config_schema() -> dict[str, Any]:
    """The parsed config schema."""
    data: dict[str, Any] = json.loads(schema_bytes())
    return data


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    while isinstance(ref, str) and ref.startswith("#/"):
        target: Any = config_schema()
        for part in ref[2:].split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        ref = target.get("$ref")
    return node


def subschema(path: tuple[str | int, ...]) -> dict[str, Any] | None:
    """The schema that applies at ``path``, following properties, maps and items."""
    node = _resolve(config_schema())
    for part in path:
        child = _child_schema(node, part)
        if child is None:
            return None
        node = _resolve(child)
    return node


def _child_schema(node: dict[str, Any], part: str | int) -> dict[str, Any] | None:
    if isinstance(part, int):
        items = node.get("items")
        return items if isinstance(items, dict) else None
    props = node.get("properties", {})
    if part in props:
        child: dict[str, Any] = props[part]
        return child
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def is_overridable(path: tuple[str | int, ...]) -> bool:
    """Whether a work item may override the key at ``path`` (it or an ancestor is marked)."""
    node = _resolve(config_schema())
    for part in path:
        child = _child_schema(node, part)
        if child is None:
            return False
        node = _resolve(child)
        if node.get(OVERRIDABLE) is True:
            return True
    return False


def overridable_paths() -> list[str]:
    """Every dotted key path carrying the overridable mark (for docs and errors)."""
    return sorted(".".join(p) for p, node in _walk_properties() if node.get(OVERRIDABLE) is True)


def _walk_properties(
    node: dict[str, Any] | None = None, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    node = _resolve(node if node is not None else config_schema())
    for key, child in node.get("properties", {}).items():
        resolved = _resolve(child)
        yield (*prefix, key), resolved
        yield from _walk_properties(resolved, (*prefix, key))


def defaults(node: dict[str, Any] | None = None) -> dict[str, Any]:
    """The default config: every ``default`` in the schema, nested as in a file."""
    node = _resolve(node if node is not None else config_schema())
    result: dict[str, Any] = {}
    for key, child in node.get("properties", {}).items():
        resolved = _resolve(child)
        if "default" in resolved:
            result[key] = json.loads(json.dumps(resolved["default"]))
        elif resolved.get("type") == "object" or "properties" in resolved:
            nested = defaults(resolved)
            if nested:
                result[key] = nested
    return result


@dataclass(frozen=True)
class SchemaIssue:
    """One way an instance breaks the schema, in our own words."""

    path: tuple[str | int, ...]
    message: str
    hint: str | None = None
