"""The pressure thresholds' usual environment overrides, read over ``config.yaml``.

Two designs ``loop`` implements name a variable for a deployment to move a
threshold without editing files: ``DR_CTX_SOFT_TOKENS`` and ``DR_CTX_HARD_TOKENS``
(the token arm's ceilings) and ``CONSERVE_EMERGENCY_THRESHOLD`` (a fraction of
the window, e.g. ``0.85``, from which the window is cleared: our
``fullClearPercent``). They win over the file and a work item's overrides, and
``loop config show --explain`` names the variable as the value's origin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from the_loop.errors import ConfigError

_PRESSURE = ("contextManagement", "pressure")
VARIABLES = ("DR_CTX_SOFT_TOKENS", "DR_CTX_HARD_TOKENS", "CONSERVE_EMERGENCY_THRESHOLD")
PERCENT_FLOOR = 50  # a reset policy below half the window costs more than it saves


@dataclass(frozen=True)
class EnvOverride:
    """One variable's value, as the config key it sets."""

    variable: str
    path: tuple[str, ...]
    value: int


def environment_overrides(env: Mapping[str, str]) -> list[EnvOverride]:
    """The overrides set in ``env``; a malformed value raises ``ConfigError`` naming it."""
    found = []
    token_keys = (("DR_CTX_SOFT_TOKENS", "softTokens"), ("DR_CTX_HARD_TOKENS", "hardTokens"))
    for variable, key in token_keys:
        text = env.get(variable, "").strip()
        if text:
            found.append(EnvOverride(variable, (*_PRESSURE, key), _tokens(variable, text)))
    text = env.get("CONSERVE_EMERGENCY_THRESHOLD", "").strip()
    if text:
        percent = _fraction(text)
        found.append(
            EnvOverride("CONSERVE_EMERGENCY_THRESHOLD", (*_PRESSURE, "fullClearPercent"), percent)
        )
    return found


def _tokens(variable: str, text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(
            f"{variable}={text!r} is not a positive number of tokens",
            hint=f"set {variable} to a whole number such as 280000, or unset it",
        )
    return value


def _fraction(text: str) -> int:
    """``0.85`` as 85 (rounded up, toward caution); at least the 50 % floor."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (PERCENT_FLOOR / 100 <= value <= 1):
        raise ConfigError(
            f"CONSERVE_EMERGENCY_THRESHOLD={text!r} must be a fraction of the window "
            f"from {PERCENT_FLOOR / 100:g} to 1",
            hint="set it to e.g. 0.85 (clear from 85 % of the window), or unset it",
        )
    return math.ceil(round(value * 100, 6))
