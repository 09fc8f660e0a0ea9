"""A project: its root, its effective config and its spec folder.

Commands start here: ``open_project`` for repository-wide questions,
``open_item`` for one work item (whose front-matter overrides then apply).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from the_loop.config.loader import load_config, with_overrides
from the_loop.config.settings import Config
from the_loop.errors import ConfigError, Where
from the_loop.findings import Finding, Level
from the_loop.spec.items import WorkItem, list_items, load_item, resolve_item


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
    """One work item with the effective config (project config + its overrides).

    ``problems`` holds a config error of this item's overrides when the context
    was opened tolerantly (a report over every item shows it as a finding).
    """

    project: Project
    item: WorkItem
    config: Config
    problems: tuple[Finding, ...] = ()


def open_project(root: Path) -> Project:
    """Load the project's config (without any work item's overrides)."""
    return Project(root, load_config(root))


def open_item(root: Path, ref: str, *, cwd: Path, tolerant: bool = False) -> ItemContext:
    """Resolve ``ref`` and load the item and its effective config.

    ``tolerant`` (read-only commands): an invalid override of this item becomes a
    finding in ``ItemContext.problems`` and the project config applies, instead
    of an error; reporting on an item never depends on its overrides being valid.
    """
    project = open_project(root)
    folder = resolve_item(project.spec_root, ref, cwd=cwd)
    return item_context(project, load_item(folder, project.spec_root), tolerant=tolerant)


def item_context(project: Project, item: WorkItem, *, tolerant: bool = False) -> ItemContext:
    """The effective config for an already-loaded item.

    ``tolerant``: an invalid override does not stop a report over every item;
    the item is read with the project config and the error becomes a finding.
    """
    try:
        return ItemContext(project, item, with_overrides(project.config, item.override_sources()))
    except ConfigError as exc:
        if not tolerant:
            raise
        found = [f for f in getattr(exc, "findings", ()) if f.level is Level.ERROR]
        problems = tuple(
            Finding(
                Level.ERROR,
                "config.override",
                f"invalid override, ignored for this report: {f.message}",
                f.where or Where(item.path),
                hint=f.hint or exc.hint,
            )
            for f in found
        ) or (
            Finding(
                Level.ERROR,
                "config.override",
                f"invalid overrides, ignored for this report: {exc.message}",
                exc.where or Where(item.path),
                hint=exc.hint,
            ),
        )
        return ItemContext(project, item, project.config, problems)
