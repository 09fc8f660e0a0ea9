"""The package map holds: dependencies point down, never up, and nothing cycles.

docs/architecture.md draws the layers; this test reads every module's imports
(function-level ones included) and fails on an import that reaches up.
"""

from __future__ import annotations

import ast
from functools import cache
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
    ("ledger",),
    ("workflow",),
    ("hooks", "driver"),
    ("board",),
    ("cli", "__main__", "__init__"),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}

# Third-party imports that belong to exactly one place (start-up cost, one owner): a
# package, or for the libraries with one module as their home, that module.
OWNED = {
    "click": ("cli",),
    "jsonschema": ("config/schema_errors.py",),
    "jinja2": ("io/templating.py",),
    "git": ("git",),  # GitPython: the git layer's library, and it starts git on import
    "ruamel": ("io/yamlio.py",),
    "temporalio": ("driver",),  # the optional extra: the_loop/driver/temporal/ only (below)
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_resources" not in p.parts)


def _top(path: Path) -> str:
    """The layer a module belongs to: its subpackage, or its own name at the top."""
    rel = path.relative_to(PACKAGE).with_suffix("")
    return rel.parts[0]


@cache  # each module is parsed once per session, whichever rule asks
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
        if module.split(".")[0] == library and not _owned(path, OWNED[library])
    ]
    assert not outside, f"{library} imported outside {OWNED[library]}: {outside}"


def _owned(path: Path, homes: tuple[str, ...]) -> bool:
    rel = path.relative_to(PACKAGE).as_posix()
    return any(rel == home if home.endswith(".py") else _top(path) == home for home in homes)


# Cycles known and owned elsewhere: each must still be one (drop it here once fixed).
KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset({})


def _module_graph() -> dict[str, set[str]]:
    """loop's modules and the modules each imports, at any depth of the file.

    Function-level imports and those under ``if TYPE_CHECKING:`` count too: a
    lazy import only postpones a cycle, and a type-only one is still two modules
    that cannot be understood (or moved) apart.
    """
    names = {
        ".".join(("the_loop", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(
            ".__init__"
        ): p
        for p in _modules()
    }
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    targets.add(full if full in names else node.module)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        # A package's __init__ is imported on the way to its modules: not an edge back.
        graph[name] = {
            t for t in targets if t in names and t != name and not name.startswith(t + ".")
        }
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _path(graph: dict[str, set[str]], group: list[str]) -> str:
    """One cycle through the group, as `a → b → a`, for the message."""
    members = set(group)
    start = group[0]
    trail = [start]
    while True:
        nxt = sorted(graph[trail[-1]] & members)[0]
        if nxt in trail:
            return " → ".join([*trail[trail.index(nxt) :], nxt])
        trail.append(nxt)


def test_no_module_cycles() -> None:
    """No two of loop's modules import each other, directly or round a loop of any length."""
    graph = _module_graph()
    cycles = _cycles(graph)
    new = [c for c in cycles if frozenset(c) not in KNOWN_CYCLES]
    assert not new, "import cycles:\n" + "\n".join(_path(graph, c) for c in new)
    gone = KNOWN_CYCLES - {frozenset(c) for c in cycles}
    assert not gone, f"no longer a cycle, drop it from KNOWN_CYCLES: {sorted(map(sorted, gone))}"


def test_the_cycle_rule_sees_lazy_and_type_only_imports(tmp_path: Path) -> None:
    """The rule fails on a cycle made only of a function-level and a TYPE_CHECKING import."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _path(graph, ["a", "b", "c"]) == "a → b → c → a"
    module = tmp_path / "m.py"
    module.write_text(
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from the_loop.x import Y\n\n"
        "def f() -> None:\n    from the_loop.z import w\n"
    )
    assert {m for _, m in _imports(module)} == {"the_loop.x", "the_loop.z"}


def test_gitpython_is_imported_inside_functions() -> None:
    """GitPython costs start-up time and runs `git version` on import: never at module level."""
    found = [
        f"{path.relative_to(REPO_ROOT)}:{node.lineno}"
        for path in _modules()
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "git" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "git")
    ]
    assert not found, f"import GitPython inside the function that needs it: {found}"


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
