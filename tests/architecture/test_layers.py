"""The package map holds: dependencies point down, never up, and nothing cycles.

docs/architecture.md draws the layers; this test reads every module's imports
(function-level ones included) and fails on an import that reaches up.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import REPO_ROOT

PACKAGE = REPO_ROOT / "the_loop"

# Low to high. A module may import from its own layer and the layers before it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "findings"),
    ("io",),
    ("telemetry",),
    ("config",),
    ("tasks",),
    ("dag",),
    ("spec",),
    ("log",),
    ("git",),
    ("checkpoint",),
    ("workflow",),
    ("hooks", "driver"),
    ("cli", "__main__", "__init__"),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}

# Third-party imports that belong to exactly one place (start-up cost, one owner).
OWNED = {
    "click": ("cli",),
    "jsonschema": ("config",),
    "jinja2": ("io",),
    "ruamel": ("io", "config", "spec", "workflow"),
    "temporalio": ("driver",),  # the optional extra: the_loop/driver/temporal/ only (below)
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_resources" not in p.parts)


def _top(path: Path) -> str:
    """The layer a module belongs to: its subpackage, or its own name at the top."""
    rel = path.relative_to(PACKAGE).with_suffix("")
    return rel.parts[0]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def test_every_module_sits_in_a_known_layer() -> None:
    unknown = {_top(p) for p in _modules()} - set(RANK)
    assert not unknown, f"add {sorted(unknown)} to LAYERS here and to docs/architecture.md"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    own = RANK[_top(path)]
    upward = []
    for line, module in _imports(path):
        parts = module.split(".")
        if parts[0] != "the_loop" or len(parts) < 2:
            continue
        if RANK.get(parts[1], -1) > own:
            upward.append(f"{path.relative_to(REPO_ROOT)}:{line}: imports {module}")
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize("library", sorted(OWNED))
def test_heavy_libraries_have_one_home(library: str) -> None:
    outside = [
        f"{path.relative_to(REPO_ROOT)}:{line}"
        for path in _modules()
        for line, module in _imports(path)
        if module.split(".")[0] == library and _top(path) not in OWNED[library]
    ]
    assert not outside, f"{library} imported outside {OWNED[library]}: {outside}"


def test_no_module_cycles() -> None:
    """Module-level (top-of-file) imports between loop's own modules form no cycle."""
    graph: dict[str, set[str]] = {}
    names = {
        ".".join(("the_loop", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(
            ".__init__"
        ): p
        for p in _modules()
    }
    for name, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets: set[str] = set()
        for node in tree.body:  # only what runs at import time can cycle
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    targets.add(full if full in names else node.module)
        graph[name] = {t for t in targets if t in names and t != name}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1 and not node.startswith(nxt + "."):
                cycle = stack[stack.index(nxt) :] + [nxt]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_temporalio_is_imported_only_by_the_temporal_backend() -> None:
    """The optional extra: a core install never imports it, whatever command runs."""
    home = PACKAGE / "driver" / "temporal"
    outside = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in _modules()
        if home not in path.parents
        for line, module in _imports(path)
        if module.split(".")[0] == "temporalio"
    ]
    assert outside == []
