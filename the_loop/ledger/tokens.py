"""Token counts in one convention, whichever harness reported them.

Four disjoint counts: ``input`` (uncached prompt tokens), ``cache_read``,
``cache_write`` (prompt tokens read from or written to the prompt cache) and
``output`` (reasoning included). Anthropic reports them disjoint already; the
OpenAI convention counts the cached tokens inside ``input_tokens``, so a Codex
count is converted (``input = input_tokens - cached - cache_write``). Prices per
million tokens apply to each count on its own. A :data:`Usage` maps a model id
to its counts: a run may call more than one model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

_KEYS: tuple[tuple[str, str], ...] = (
    ("input", "input"),
    ("output", "output"),
    ("cache_read", "cacheRead"),
    ("cache_write", "cacheWrite"),
)


@dataclass(frozen=True)
class Tokens:
    """Disjoint token counts of one run (or a sum of runs)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        """Every token counted, input of all kinds plus output."""
        return self.input + self.output + self.cache_read + self.cache_write

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    def minus(self, other: Tokens) -> Tokens:
        """``self - other`` per count, never below zero (a counter that restarted)."""
        return Tokens(
            max(0, self.input - other.input),
            max(0, self.output - other.output),
            max(0, self.cache_read - other.cache_read),
            max(0, self.cache_write - other.cache_write),
        )

    def to_json(self) -> dict[str, int]:
        """``{"input", "output", "cacheRead", "cacheWrite", "total"}``."""
        data = {name: getattr(self, attr) for attr, name in _KEYS}
        data["total"] = self.total
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Tokens:
        """The counts of :meth:`to_json` (``total`` is derived, not read)."""
        values = [data.get(name, 0) for _, name in _KEYS]
        return cls(*(v if isinstance(v, int) and not isinstance(v, bool) else 0 for v in values))


Usage = Mapping[str, Tokens]  # model id -> counts


def usage_total(usage: Usage) -> Tokens:
    """The counts of every model added up."""
    total = Tokens()
    for tokens in usage.values():
        total = total + tokens
    return total


def usage_sum(*usages: Usage) -> dict[str, Tokens]:
    """Several usages added model by model."""
    result: dict[str, Tokens] = {}
    for usage in usages:
        for model, tokens in usage.items():
            result[model] = result.get(model, Tokens()) + tokens
    return result


def usage_minus(after: Usage, before: Usage) -> dict[str, Tokens]:
    """What ``after`` (a session's cumulative counts) adds to ``before``; empty models dropped."""
    result = {}
    for model, tokens in after.items():
        delta = tokens.minus(before.get(model, Tokens()))
        if delta.total:
            result[model] = delta
    return result


def usage_to_json(usage: Usage) -> dict[str, dict[str, int]]:
    """``{model: counts}`` in the JSON form of :meth:`Tokens.to_json`."""
    return {model: tokens.to_json() for model, tokens in sorted(usage.items())}


def usage_from_json(data: object) -> dict[str, Tokens]:
    """The inverse of :func:`usage_to_json`; anything malformed is left out."""
    if not isinstance(data, Mapping):
        return {}
    return {
        str(model): Tokens.from_json(counts)
        for model, counts in data.items()
        if isinstance(counts, Mapping)
    }
