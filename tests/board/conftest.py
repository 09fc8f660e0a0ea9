"""Fixtures of the board tests: Debian's chromium, or a skip that says how to get it."""

from __future__ import annotations

import pytest
from browser import CHROMIUM, INSTALL_HINT


@pytest.fixture
def chromium() -> str:
    """The chromium binary; the test skips with the reason when it is not installed."""
    if CHROMIUM is None:
        pytest.skip(INSTALL_HINT)
    return CHROMIUM
