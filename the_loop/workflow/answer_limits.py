"""How much a JSON answer an agent reads may list: bounded whatever the plan's size.

An agent pays for every byte it reads. Lists that grow with the task graph
(ready tasks, what blocks what, a task's dependencies) hold at most
``LIST_LIMIT`` items beside a count of them all; ``--full`` prints everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

LIST_LIMIT = 20  # items per list in a bounded JSON answer


def capped(values: Sequence[T], limit: int | None) -> list[T]:
    """The first ``limit`` values (all of them when ``limit`` is None)."""
    return list(values if limit is None else values[:limit])
