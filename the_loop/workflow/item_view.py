"""What the checks on one work item read of it: the shape ``ItemReport`` has.

``tick_evidence`` and ``task_tests`` judge an item from these few views; they
name this protocol instead of ``ItemReport``, which calls them, so imports point
one way (``item_report`` → ``tick_evidence``, ``task_tests`` → ``item_view``).
Only type checkers import this module.
"""

from __future__ import annotations

from typing import Protocol

from the_loop.config.settings import Config
from the_loop.log.task_checkpoints import LogCheckpoints
from the_loop.spec.items import WorkItem
from the_loop.spec.project import ItemContext
from the_loop.tasks import TaskList


class ItemView(Protocol):
    """One work item as the checks see it (``the_loop.workflow.item_report.ItemReport``)."""

    @property
    def id(self) -> str: ...

    @property
    def ctx(self) -> ItemContext: ...

    @property
    def item(self) -> WorkItem: ...

    @property
    def config(self) -> Config: ...

    @property
    def tasks(self) -> TaskList | None: ...

    @property
    def log_checkpoints(self) -> LogCheckpoints: ...
