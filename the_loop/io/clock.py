"""The current time, in one place.

``LOOP_NOW`` (an ISO-8601 UTC timestamp) pins it, so demos and tests produce
the same log entries on every run.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone

from the_loop.errors import UsageError


def utc_now() -> datetime:
    """Now, in UTC, to the second."""
    pinned = os.environ.get("LOOP_NOW")
    if pinned:
        try:
            value = datetime.fromisoformat(pinned.replace("Z", "+00:00"))
        except ValueError as exc:
            raise UsageError(
                f"LOOP_NOW={pinned!r} is not an ISO-8601 timestamp",
                hint="e.g. LOOP_NOW=2026-11-30T12:00Z",
            ) from exc
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)
    return datetime.now(timezone.utc).replace(microsecond=0)


def minute_stamp(when: datetime) -> str:
    """ISO-8601 UTC to the minute: ``2026-11-30T12:05Z`` (the log heading form)."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def second_stamp(when: datetime) -> str:
    """ISO-8601 UTC to the second: ``2026-11-30T12:05:09Z`` (state records)."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def day(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d")
