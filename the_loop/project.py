"""A project: its root, its effective config and its spec folder.

Commands start here: ``open_project`` for repository-wide questions,
``open_item`` for one work item (whose front-matter overrides then apply).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from the_loop.config import Config, load_config, with_overrides
from the_loop.workitem import WorkItem, list_items, load_item, resolve_item


@dataclass(frozen=True)
class Project:
    """The project root with the config that applies to it."""

    root: Path
    config: Config

    @property
    def spec_root(self) -> Path:
        return self.root / self.config.workflow.spec_dir

    def items(self) -> list[WorkItem]:
        """Every work item, in natural order."""
        return [load_item(folder, self.spec_root) for folder in list_items(self.spec_root)]


@dataclass(frozen=True)
class ItemContext:
    """One work item with the effective config (project config + its overrides)."""

    project: Project
    item: WorkItem
    config: Config


def open_project(root: Path) -> Project:
    """Load the project's config (without any work item's overrides)."""
    return Project(root, load_config(root))


def open_item(root: Path, ref: str, *, cwd: Path) -> ItemContext:
    """Resolve ``ref`` and load the item and its effective config."""
    project = open_project(root)
    folder = resolve_item(project.spec_root, ref, cwd=cwd)
    return item_context(project, load_item(folder, project.spec_root))


def item_context(project: Project, item: WorkItem) -> ItemContext:
    """The effective config for an already-loaded item."""
    return ItemContext(project, item, with_overrides(project.config, item.override_sources()))
