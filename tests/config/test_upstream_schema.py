"""Every config the upstream the-loop schema accepts, loop's schema accepts too.

The head-a corpus ships the upstream ``harness-config.schema.json``. Walking it
beside ``schema/config.schema.json`` checks, key by key, that ours is nowhere
tighter: every key upstream knows exists in ours (where ours is closed), every
value its enums allow ours allows, no type, pattern, bound or required key of ours
refuses what upstream takes. Ours may be looser and may know more keys.
Skipped, with the reason shown, when the corpus is not beside the clone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, CORPUS_HEAD, REPO_ROOT

from the_loop.config.loader import check_file

UPSTREAM = CORPUS_HEAD / ".the-loop" / "harness-config.schema.json"
OURS = REPO_ROOT / "schema" / "config.schema.json"
SHIPPED_CONFIGS = [
    CORPUS / ".the-loop" / "config.yaml",
    CORPUS / "skills" / "the-loop" / "templates" / "config.yaml",
    CORPUS_HEAD / ".the-loop" / "harness-config.yaml",
]

pytestmark = pytest.mark.skipif(
    not UPSTREAM.is_file(), reason=f"upstream schema not found at {UPSTREAM} (../shared absent)"
)

_BOUNDS = ("minimum", "exclusiveMinimum", "minItems", "minLength", "minProperties")
_CAPS = ("maximum", "exclusiveMaximum", "maxItems", "maxLength", "maxProperties")


def _resolve(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target: Any = root
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _types(node: dict[str, Any]) -> set[str] | None:
    kind = node.get("type")
    if kind is None:
        return None
    found = {kind} if isinstance(kind, str) else set(kind)
    if "number" in found:
        found.add("integer")
    return found


def tighter(
    up_root: dict[str, Any],
    our_root: dict[str, Any],
    up: dict[str, Any],
    ours: dict[str, Any],
    path: str = "$",
) -> Iterator[str]:
    """Every place where ``ours`` refuses something ``up`` accepts."""
    up, ours = _resolve(up_root, up), _resolve(our_root, ours)
    yield from _keyword_problems(up, ours, path)
    our_props = ours.get("properties", {})
    our_extra = ours.get("additionalProperties", True)
    for key, child in up.get("properties", {}).items():
        if key in our_props:
            yield from tighter(up_root, our_root, child, our_props[key], f"{path}.{key}")
        elif our_extra is False:
            yield f"{path}: unknown key {key!r} for loop"
        elif isinstance(our_extra, dict):
            yield from tighter(up_root, our_root, child, our_extra, f"{path}.{key}")
    up_extra = up.get("additionalProperties", True)
    if our_extra is False and up_extra is not False:
        yield f"{path}: closed, upstream takes other keys"
    if isinstance(up_extra, dict) and isinstance(our_extra, dict):
        yield from tighter(up_root, our_root, up_extra, our_extra, f"{path}.*")
    if isinstance(up.get("items"), dict) and isinstance(ours.get("items"), dict):
        yield from tighter(up_root, our_root, up["items"], ours["items"], f"{path}[]")


def _keyword_problems(up: dict[str, Any], ours: dict[str, Any], path: str) -> Iterator[str]:
    """Keywords of one node (type, enum, pattern, bounds, required) tighter in ours."""
    up_types, our_types = _types(up), _types(ours)
    if our_types is not None and up_types is not None and not up_types <= our_types:
        yield f"{path}: type {sorted(our_types)} is narrower than {sorted(up_types)}"
    if "enum" in ours and set(map(str, up.get("enum", [object()]))) - set(map(str, ours["enum"])):
        missing = sorted(set(map(str, up.get("enum", ["<any>"]))) - set(map(str, ours["enum"])))
        yield f"{path}: enum lacks {missing}"
    if "pattern" in ours and ours["pattern"] != up.get("pattern"):
        yield f"{path}: pattern {ours['pattern']!r} that upstream does not have"
    for key in (*_BOUNDS, *_CAPS):
        if key in ours and key not in up:
            yield f"{path}: {key} {ours[key]} that upstream does not have"
        elif key in ours and (ours[key] > up[key] if key in _BOUNDS else ours[key] < up[key]):
            yield f"{path}: {key} {ours[key]} tighter than {up[key]}"
    if ours.get("uniqueItems") and not up.get("uniqueItems"):
        yield f"{path}: uniqueItems that upstream does not have"
    extra_required = set(ours.get("required", [])) - set(up.get("required", []))
    if extra_required:
        yield f"{path}: requires {sorted(extra_required)}, upstream does not"


def test_loops_schema_is_nowhere_tighter_than_upstreams() -> None:
    up = json.loads(UPSTREAM.read_text())
    ours = json.loads(OURS.read_text())
    assert list(tighter(up, ours, up, ours)) == []


def test_the_walk_finds_a_tighter_schema() -> None:
    """The comparison itself can fail: a closed object, a narrower enum, a new pattern."""
    up = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "enum": ["x", "y"]},
            "b": {"type": "string"},
            "c": {"type": "number"},
        },
    }
    ours = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "a": {"type": "string", "enum": ["x"]},
            "b": {"type": "string", "pattern": "^z"},
        },
    }
    assert list(tighter(up, ours, up, ours)) == [
        "$.a: enum lacks ['y']",
        "$.b: pattern '^z' that upstream does not have",
        "$: unknown key 'c' for loop",
        "$: closed, upstream takes other keys",
    ]


@pytest.mark.parametrize("path", SHIPPED_CONFIGS, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_every_shipped_config_validates(path: Path) -> None:
    assert check_file(path) == []
