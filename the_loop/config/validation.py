"""Validate a config instance against the shipped schema, once per content.

``jsonschema`` costs about 100 ms to import, so it is imported only when an
instance is not in loop's cache yet: the issues found for an instance (none,
for a valid one) are kept under the hash of its canonical JSON text. The
schema itself is part of every cache key (``content_cache.code_stamp``).
This module sits between ``schema`` (the schema's data) and ``schema_errors``
(jsonschema's errors in our words), so neither imports the other's user.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from the_loop.config.schema import SchemaIssue, config_schema
from the_loop.io.content_cache import user_cache

if TYPE_CHECKING:
    from typing import Any


def validate(instance: Any) -> list[SchemaIssue]:
    """Every schema violation in ``instance`` (an empty list means valid)."""
    # Non-JSON values (a YAML date) keep their type in the key: a date must never
    # share a cache entry with the same text as a string.
    canon = json.dumps(
        instance,
        sort_keys=True,
        separators=(",", ":"),
        default=lambda o: f"<{type(o).__name__}:{o!r}>",
    )
    return user_cache().by_content(
        "schema-issues",
        canon,
        lambda: _explain(instance),
        encode=lambda issues: [[list(i.path), i.message, i.hint] for i in issues],
        decode=lambda rows: [SchemaIssue(tuple(p), m, h) for p, m, h in rows],
    )


def _explain(instance: Any) -> list[SchemaIssue]:
    from the_loop.config.schema_errors import explain_errors  # imports jsonschema

    return explain_errors(config_schema(), instance)
