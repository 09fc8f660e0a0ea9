"""Whether the environment lets loop use its caches: ``LOOP_NO_CACHE`` unset, empty or 0.

One rule for every cache loop keeps (today the parse cache, ``io/content_cache.py``).
"""

from __future__ import annotations

import os


def caches_allowed() -> bool:
    """``LOOP_NO_CACHE`` is unset, empty or ``0``."""
    return os.environ.get("LOOP_NO_CACHE", "") in ("", "0")
