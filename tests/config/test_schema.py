"""The config schema: valid 2020-12, accepts the upstream configs, and agrees with docs/config.md.

The schema file is the single source of truth for keys and defaults, and
``docs/config.md`` is written by hand; the tests at the bottom keep the two from
drifting apart (every key path and every override mark must match).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers import CORPUS, CORPUS_HEAD, REPO_ROOT, requires_corpus
from ruamel.yaml import YAML

SCHEMA_PATH = REPO_ROOT / "schema" / "config.schema.json"
DOC_PATH = REPO_ROOT / "docs" / "config.md"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

CORPUS_CONFIGS = [
    CORPUS / ".the-loop/config.yaml",
    CORPUS / "skills/the-loop/templates/config.yaml",
    CORPUS_HEAD / ".the-loop/harness-config.yaml",
]

# Maps whose keys the user names; every other object rejects unknown keys.
FREE_FORM_MAPS = {
    "tokenEconomy.modelRouting.stages",
    "tokenEconomy.thinkingEffort.stages",
    "reviews.critics[].env",
    "agent.prices",  # model id -> its prices
}

# docs/decisions/0001-required-config-keys.md: only what an entry is meaningless without.
REQUIRED_KEYS = {
    "": ["version"],
    "customInstructions.docs[]": ["path"],
    "reviews.critics[]": ["name"],
    "personas[]": ["handle", "roles"],
    "messaging.channels[]": ["type"],
    "externalTools.tools[]": ["name"],
    "graph.hooks.attach[]": ["hook", "node"],
}


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a local ``$ref`` followed; sibling keywords win, as in 2020-12."""
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    target: Any = SCHEMA
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return {**_resolve(target), **{k: v for k, v in node.items() if k != "$ref"}}


def _key_paths(
    node: dict[str, Any], prefix: str = "", marked: bool = False
) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """Every key path (``a.b``, ``list[].key``) with its schema and effective override mark."""
    node = _resolve(node)
    if node.get("type") == "array" and isinstance(node.get("items"), dict):
        yield from _key_paths(node["items"], f"{prefix}[]", marked)
    for key, child in node.get("properties", {}).items():
        child = _resolve(child)
        path = f"{prefix}.{key}" if prefix else key
        child_marked = marked or child.get("x-overridable") is True
        yield path, child, child_marked
        yield from _key_paths(child, path, child_marked)


def _all_subschemas(node: Any, pointer: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object in the file, by JSON pointer (``$defs`` and ``if``/``then`` too)."""
    if not isinstance(node, dict):
        return
    yield pointer, node
    for key in ("properties", "$defs"):
        for name, child in node.get(key, {}).items():
            yield from _all_subschemas(child, f"{pointer}/{key}/{name}")
    for key in ("items", "additionalProperties", "if", "then", "else"):
        yield from _all_subschemas(node.get(key), f"{pointer}/{key}")


def _defaults(node: dict[str, Any]) -> dict[str, Any]:
    """The default config, built the way the loader builds it: walking ``properties``."""
    result: dict[str, Any] = {}
    for key, child in _resolve(node).get("properties", {}).items():
        child = _resolve(child)
        if "default" in child:
            result[key] = child["default"]
        elif nested := _defaults(child):
            result[key] = nested
    return result


def _errors(instance: Any) -> list[jsonschema.ValidationError]:
    return sorted(VALIDATOR.iter_errors(instance), key=lambda e: list(e.absolute_path))


def _doc_text() -> str:
    return DOC_PATH.read_text(encoding="utf-8")


def _doc_rows() -> dict[str, list[str]]:
    """Table rows of docs/config.md: key path → the cells after the key."""
    rows: dict[str, list[str]] = {}
    for match in re.finditer(r"^\| `([^`]+)` \|(.*)\|$", _doc_text(), flags=re.MULTILINE):
        rows[match[1]] = [cell.strip() for cell in match[2].split("|")]
    return rows


def _doc_override_list() -> list[str]:
    """The dotted paths listed under "What a work item may override"."""
    text = _doc_text()
    start = text.index("## What a work item may override")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else None]
    return re.findall(r"^- `([^`]+)`\s*$", section, flags=re.MULTILINE)


def test_schema_is_valid_draft_2020_12() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@requires_corpus()
@pytest.mark.parametrize("relpath", CORPUS_CONFIGS, ids=lambda p: p.name)
def test_upstream_configs_validate(relpath: Path) -> None:
    config = YAML(typ="safe").load(relpath.read_text(encoding="utf-8"))
    assert [e.message for e in _errors(config)] == []


def test_version_alone_is_a_valid_config() -> None:
    assert _errors({"version": "0.1.0"}) == []


@pytest.mark.parametrize(
    ("instance", "valid"),
    [
        ({}, False),
        ({"version": "0.1"}, True),
        ({"version": "10.2.3"}, True),
        ({"version": 0.1}, False),  # what unquoted YAML gives
        ({"version": "v1"}, True),  # the upstream format takes any text
        ({"version": "1.2.3.4"}, True),
    ],
)
def test_version_is_required_text(instance: dict[str, Any], valid: bool) -> None:
    assert (_errors(instance) == []) is valid


# (where the stray key sits, the config fragment carrying it)
UNKNOWN_KEYS = [
    ([], {"surprise": 1}),
    (["ticketing", "github"], {"ticketing": {"github": {"organisation": "x"}}}),
    (["contextManagement"], {"contextManagement": {"midtask": "compact"}}),
    (["contextManagement", "pressure"], {"contextManagement": {"pressure": {"soft": 1}}}),
    (
        ["tokenEconomy", "modelRouting", "tiers", "economy"],
        {"tokenEconomy": {"modelRouting": {"tiers": {"economy": {"gemini": "x"}}}}},
    ),
    (["autonomy", "tiers"], {"autonomy": {"tiers": {"6": "autonomous-complete"}}}),
    (["checkpoint"], {"checkpoint": {"signoff": True}}),
    (["agent"], {"agent": {"model": "x"}}),
    (["personas", 0], {"personas": [{"handle": "@a", "roles": ["engineer"], "email": "a@b"}]}),
    (["security", "review"], {"security": {"review": {"owner": "x"}}}),
]


@pytest.mark.parametrize(
    ("where", "instance"),
    [pytest.param(w, i, id=".".join(map(str, w)) or "top") for w, i in UNKNOWN_KEYS],
)
def test_unknown_keys_are_rejected(where: list[Any], instance: dict[str, Any]) -> None:
    errors = _errors({"version": "0.1.0", **instance})
    assert [(e.validator, list(e.absolute_path)) for e in errors] == [
        ("additionalProperties", where)
    ]


def test_only_the_stage_maps_take_free_form_keys() -> None:
    maps = set()
    for path, node, _ in _key_paths(SCHEMA):
        if isinstance(node.get("additionalProperties"), dict):
            maps.add(path)
    assert maps == FREE_FORM_MAPS
    for pointer, node in _all_subschemas(SCHEMA):
        if node.get("type") == "object" and "properties" in node:
            assert node.get("additionalProperties") is False, pointer


def test_required_keys_are_only_the_decided_ones() -> None:
    found = {"": SCHEMA["required"]}
    for path, node, _ in _key_paths(SCHEMA):
        if "required" in node:
            found[path] = node["required"]
        items = _resolve(node.get("items", {}))
        if "required" in items:
            found[f"{path}[]"] = items["required"]
    assert found == REQUIRED_KEYS


def test_mid_task_clear_is_rejected_with_a_hint() -> None:
    errors = _errors({"version": "0.1.0", "contextManagement": {"midTask": "clear"}})
    assert [list(e.absolute_path) for e in errors] == [["contextManagement", "midTask"]]
    assert errors[0].schema["x-hint"] == (
        "clearing inside an unfinished task is never allowed; use compact or off"
    )


@pytest.mark.parametrize("key", ["phaseBoundary", "taskBoundary"])
def test_boundaries_may_clear(key: str) -> None:
    assert _errors({"version": "0.1.0", "contextManagement": {key: "clear"}}) == []


@pytest.mark.parametrize(
    ("instance", "valid"),
    [
        ({"contextManagement": {"pressure": {"softTokens": 0}}}, False),
        ({"contextManagement": {"pressure": {"selectivePercent": 101}}}, False),
        ({"contextManagement": {"pressure": {"fullClearPercent": 100}}}, True),
        ({"contextManagement": {"pressure": {"hardTokens": 1.5}}}, False),
        ({"security": {"review": {"humanSignOffMinTier": 6}}}, True),
        ({"security": {"review": {"humanSignOffMinTier": 7}}}, False),
        ({"autonomy": {"defaultTier": 0}}, False),
        ({"reviews": {"selfReviewCount": 0}}, True),
        ({"reviews": {"selfReviewCount": -1}}, False),
        ({"checkpoint": {"stage": "tracked", "testTimeoutSeconds": 1}}, True),
        ({"checkpoint": {"stage": "staged"}}, False),
        ({"tokenEconomy": {"modelRouting": {"stages": {"my-stage": "frontier"}}}}, True),
        ({"tokenEconomy": {"thinkingEffort": {"stages": {"design": "max"}}}}, False),
        ({"personas": [{"handle": "@a", "roles": []}]}, False),
        ({"messaging": {"channels": [{"target": "#x"}]}}, False),
    ],
)
def test_ranges_enums_and_entries(instance: dict[str, Any], valid: bool) -> None:
    assert (_errors({"version": "0.1.0", **instance}) == []) is valid


@pytest.mark.parametrize(
    ("agent", "valid"),
    [
        ({"kind": "command"}, False),
        ({"kind": "command", "command": []}, False),
        ({"kind": "command", "command": ["my-agent", "--headless"]}, True),
        ({"kind": "codex"}, True),
        ({"kind": "claude", "command": ["/opt/claude/bin/claude"]}, True),
        ({"kind": "aider"}, False),
    ],
)
def test_agent_kind_command_needs_a_command_line(agent: dict[str, Any], valid: bool) -> None:
    assert (_errors({"version": "0.1.0", "agent": agent}) == []) is valid


@pytest.mark.parametrize("pointer", [p for p, node in _all_subschemas(SCHEMA) if "default" in node])
def test_each_default_satisfies_its_own_schema(pointer: str) -> None:
    node = dict(_all_subschemas(SCHEMA))[pointer]
    errors = list(VALIDATOR.evolve(schema=node).iter_errors(node["default"]))
    assert [e.message for e in errors] == []


def test_the_default_config_is_valid() -> None:
    config = {"version": "0.1.0", **_defaults(SCHEMA)}
    assert [e.message for e in _errors(config)] == []
    assert config["contextManagement"]["pressure"] == {
        "softTokens": 200000,
        "hardTokens": 280000,
        "selectivePercent": 75,
        "fullClearPercent": 90,
    }
    assert config["checkpoint"]["messageTemplate"] == "chore({{ item }}): checkpoint {{ subject }}"


def test_custom_keywords_are_well_formed() -> None:
    for pointer, node in _all_subschemas(SCHEMA):
        for key, value in node.items():
            if key.startswith("x-"):
                assert key in {"x-overridable", "x-hint"}, pointer
                expected = bool if key == "x-overridable" else str
                assert isinstance(value, expected), pointer
                assert value, pointer


def test_doc_override_list_matches_the_schema() -> None:
    marked = sorted(path for path, node, _ in _key_paths(SCHEMA) if node.get("x-overridable"))
    assert sorted(_doc_override_list()) == marked


def test_doc_tables_cover_every_key_and_no_other() -> None:
    schema_paths = {path for path, _, _ in _key_paths(SCHEMA)}
    assert set(_doc_rows()) == schema_paths


def test_doc_overridable_column_matches_the_schema() -> None:
    rows = _doc_rows()
    wrong = {
        path: rows[path][3]
        for path, _, overridable in _key_paths(SCHEMA)
        if rows.get(path, ["", "", "", ""])[3] != ("yes" if overridable else "no")
    }
    assert wrong == {}
