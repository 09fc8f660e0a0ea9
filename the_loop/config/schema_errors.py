"""Turn jsonschema's errors into messages a person can act on.

Kept apart from ``schema.py`` because importing jsonschema is expensive; only
code that really validates reaches this module.
"""

from __future__ import annotations

import datetime
import difflib
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from the_loop.config.schema import HINT, SchemaIssue, subschema

_TYPE_NAMES = {
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "string": "text",
    "object": "a mapping of keys to values",
    "array": "a list",
    "null": "nothing (null)",
}


def explain_errors(schema: dict[str, Any], instance: Any) -> list[SchemaIssue]:
    """Validate ``instance`` and return one issue per problem, deepest first."""
    validator = Draft202012Validator(schema)
    issues: list[SchemaIssue] = []
    for error in validator.iter_errors(instance):
        issues.extend(_explain(error))
    return issues


def _explain(error: ValidationError) -> list[SchemaIssue]:
    path = tuple(error.absolute_path)
    handler = _HANDLERS.get(str(error.validator), _generic)
    return handler(error, path)


def _generic(error: ValidationError, path: tuple[str | int, ...]) -> list[SchemaIssue]:
    return [SchemaIssue(path, error.message, _schema_hint(error))]


def _schema_hint(error: ValidationError) -> str | None:
    hint = error.schema.get(HINT) if isinstance(error.schema, dict) else None
    if hint is None and isinstance(error.parent, ValidationError):
        hint = error.parent.schema.get(HINT)
    if hint is None:  # e.g. an if/then branch: the key's own schema carries the hint
        own = subschema(tuple(error.absolute_path))
        hint = own.get(HINT) if own else None
    return hint if isinstance(hint, str) else None


def _additional(error: ValidationError, path: tuple[str | int, ...]) -> list[SchemaIssue]:
    allowed = sorted(error.schema.get("properties", {}))
    extra = [k for k in error.instance if k not in allowed]
    issues = []
    for key in extra:
        close = difflib.get_close_matches(key, allowed, n=1)
        if close:
            hint = f"did you mean {close[0]!r}?"
        elif allowed:
            hint = "allowed keys here: " + ", ".join(allowed)
        else:
            hint = "this mapping takes no keys"
        issues.append(SchemaIssue((*path, key), f"unknown key {key!r}", hint))
    return issues


def _required(error: ValidationError, path: tuple[str | int, ...]) -> list[SchemaIssue]:
    missing = [k for k in error.validator_value if k not in error.instance]
    return [
        SchemaIssue(path, f"missing required key {key!r}", f"add `{key}:` to this mapping")
        for key in missing
    ]


def _type(error: ValidationError, path: tuple[str | int, ...]) -> list[SchemaIssue]:
    wanted = error.validator_value
    names = [wanted] if isinstance(wanted, str) else list(wanted)
    expected = " or ".join(_TYPE_NAMES.get(n, n) for n in names)
    got = error.instance
    message = f"expected {expected}, got {_describe(got)}"
    hint = _schema_hint(error)
    if "boolean" in names and isinstance(got, str) and got.lower() in _YAML11_BOOLS:
        hint = f"YAML 1.2 reads {got!r} as text; write true or false"
    return [SchemaIssue(path, message, hint)]


_YAML11_BOOLS = {"yes", "no", "on", "off", "y", "n"}


def _enum(error: ValidationError, path: tuple[str | int, ...]) -> list[SchemaIssue]:
    choices = ", ".join(str(c) for c in error.validator_value)
    message = f"{error.instance!r} is not allowed; choose one of: {choices}"
    return [SchemaIssue(path, message, _schema_hint(error))]


def _bound(error: ValidationError, path: tuple[str | int, ...]) -> list[SchemaIssue]:
    words = {
        "minimum": "at least",
        "maximum": "at most",
        "exclusiveMinimum": "more than",
        "exclusiveMaximum": "less than",
    }[str(error.validator)]
    message = f"must be {words} {error.validator_value}, got {error.instance!r}"
    return [SchemaIssue(path, message, _schema_hint(error))]


def _pattern(error: ValidationError, path: tuple[str | int, ...]) -> list[SchemaIssue]:
    examples = error.schema.get("examples") if isinstance(error.schema, dict) else None
    hint = f"for example {examples[0]!r}" if examples else _schema_hint(error)
    message = f"{error.instance!r} does not have the expected form ({error.validator_value})"
    return [SchemaIssue(path, message, hint)]


def _min_items(error: ValidationError, path: tuple[str | int, ...]) -> list[SchemaIssue]:
    count = error.validator_value
    message = "must not be empty" if count == 1 else f"needs at least {count} items"
    return [SchemaIssue(path, message, _schema_hint(error))]


def _describe(value: Any) -> str:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return f"the date {value.isoformat()} (YAML reads it as a date; quote it for text)"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the text {value!r}"
    return f"the number {value!r}"


_HANDLERS = {
    "additionalProperties": _additional,
    "required": _required,
    "type": _type,
    "enum": _enum,
    "minimum": _bound,
    "maximum": _bound,
    "exclusiveMinimum": _bound,
    "exclusiveMaximum": _bound,
    "pattern": _pattern,
    "minItems": _min_items,
}
