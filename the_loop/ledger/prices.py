"""Prices from ``agent.prices``: dollars per million tokens, per model id.

loop ships no price as truth: prices change and differ by contract. The user
copies them from the provider's pricing page (docs/config.md says where). A
model with no price gives tokens only; its dollars are None, never zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from the_loop.config.settings import Config
from the_loop.ledger.tokens import Tokens, Usage

PER = 1_000_000


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens of each kind (a kind not given costs nothing)."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0

    def dollars(self, tokens: Tokens) -> float:
        """What ``tokens`` cost at this price."""
        return (
            tokens.input * self.input
            + tokens.output * self.output
            + tokens.cache_read * self.cache_read
            + tokens.cache_write * self.cache_write
        ) / PER


Prices = Mapping[str, Price]


def prices_from(config: Config) -> dict[str, Price]:
    """``agent.prices`` of the effective config (validated by the schema already)."""
    agent = config.data.get("agent")
    raw = agent.get("prices") if isinstance(agent, Mapping) else None
    if not isinstance(raw, Mapping):
        return {}
    return {
        str(model): Price(
            input=float(p.get("input", 0)),
            output=float(p.get("output", 0)),
            cache_read=float(p.get("cacheRead", 0)),
            cache_write=float(p.get("cacheWrite", 0)),
        )
        for model, p in raw.items()
        if isinstance(p, Mapping)
    }


def dollars(usage: Usage, prices: Prices) -> float | None:
    """What ``usage`` cost; None when a model that used tokens has no price."""
    total = 0.0
    for model, tokens in usage.items():
        price = prices.get(model)
        if price is None:
            if tokens.total:
                return None
            continue
        total += price.dollars(tokens)
    return total


def unpriced(usage: Usage, prices: Prices) -> list[str]:
    """The models in ``usage`` that used tokens and have no price."""
    return sorted(m for m, t in usage.items() if t.total and m not in prices)
