"""The task DAG ``loop`` reports for every real work item, checked against a second reader.

For each item of both corpora (``shared/corpus/the-loop-0.14.2`` and
``the-loop-head-a``), ``loop -C <corpus> graph <item> --json`` runs through the real
CLI (the ``loop`` fixture of ``tests/conftest.py``, in-process for speed) and its
tasks, done flags and edges are compared with ``dag_oracle`` — a deliberately
simple extractor written from the corpus, sharing no code with ``the_loop``.

* Task ids and done flags must be equal.
* Every edge the oracle reads must be in loop's graph, unless loop reports a warning
  or error on a line that states that edge (loop said it could not read it).
* loop must not report an edge that no source states.

A second test unticks every task of an item in a temporary copy and checks that
``loop next --all-ready`` lists only tasks whose stated dependencies are all done.

A difference found later goes into ``GRAPH_GAPS``/``READY_GAPS`` as a strict
``xfail`` with the reason, so this file documents the gap; when the reader is fixed
the test passes, XPASS fails, and the mark goes. Today there is none.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dag_oracle import OracleDag, read_dag

REPO_ROOT = Path(__file__).resolve().parents[2]
# CI lays shared/ beside the clone; a worktree finds it the same way.
CORPORA_ROOT = REPO_ROOT.parent / "shared" / "corpus"
CORPORA = ("the-loop-0.14.2", "the-loop-head-a")

# (corpus, item) → why loop's DAG differs from the oracle today, as a strict xfail.
# Empty: every gap the first survey found (prose DAG lines, heading tasks, plain
# inline fields, suffixed ids, tasks without fields beside a chart, `+` lists) is read.
GRAPH_GAPS: dict[tuple[str, str], str] = {}

# (corpus, item) → why `next --all-ready` offers a task too early today.
READY_GAPS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Item:
    """One work item folder of a corpus."""

    corpus: str
    name: str

    @property
    def root(self) -> Path:
        return CORPORA_ROOT / self.corpus

    @property
    def folder(self) -> Path:
        return self.root / "docs" / "specs" / self.name

    @property
    def tasks(self) -> Path:
        return self.folder / "tasks.md"


def _items() -> list[Item]:
    found: list[Item] = []
    for corpus in CORPORA:
        specs = CORPORA_ROOT / corpus / "docs" / "specs"
        if specs.is_dir():
            found += [Item(corpus, p.name) for p in sorted(specs.iterdir()) if p.is_dir()]
    return found


ITEMS = _items()
pytestmark = pytest.mark.skipif(
    not all((CORPORA_ROOT / c).is_dir() for c in CORPORA),
    reason=f"corpora not found under {CORPORA_ROOT} (shared/ is not beside the clone)",
)


def _params(gaps: dict[tuple[str, str], str], *, with_tasks: bool) -> list[Any]:
    params = []
    for item in ITEMS:
        if with_tasks and not item.tasks.is_file():
            continue
        gap = gaps.get((item.corpus, item.name))
        marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
        params.append(pytest.param(item, id=f"{item.corpus}/{item.name}", marks=marks))
    return params


Runner = Callable[..., Any]  # the ``loop`` fixture: (*args) -> Result(exit_code, stdout, stderr)


def tasks_findings(loop: Runner, item: Item) -> dict[int, list[str]]:
    """Line → codes of the warnings and errors ``loop check`` reports on the item's tasks.md."""
    report = json.loads(loop("-C", str(item.root), "--json", "check", item.name).stdout)
    out: dict[int, list[str]] = {}
    for f in report["findings"]:
        if f["level"] in ("warning", "error") and str(f.get("path") or "").endswith("tasks.md"):
            out.setdefault(f.get("line") or 0, []).append(f["code"])
    return out


def graph_differences(
    loop: Runner, item: Item, graph: dict[str, Any], oracle: OracleDag
) -> list[str]:
    """Every way loop's graph differs from the oracle that loop did not report."""
    problems: list[str] = []
    loop_done = {t["id"]: t["state"] == "done" for t in graph["tasks"]}
    oracle_done = oracle.done()
    if set(loop_done) != set(oracle_done):
        problems.append(
            f"tasks: only loop {sorted(set(loop_done) - set(oracle_done))}, "
            f"only oracle {sorted(set(oracle_done) - set(loop_done))}"
        )
    flips = sorted(
        k for k in loop_done.keys() & oracle_done.keys() if loop_done[k] != oracle_done[k]
    )
    if flips:
        problems.append(f"done flag differs for {flips}")
    loop_edges = {(a, b) for a, b in graph["edges"]}
    missing = sorted(oracle.edge_set() - loop_edges)
    extra = sorted(loop_edges - oracle.edge_set())
    if extra:
        problems.append(f"edges no source states: {extra}")
    if missing or oracle.dangling():
        findings = tasks_findings(loop, item)
        unexplained = [e for e in missing if not oracle.lines_of(e) & findings.keys()]
        if unexplained:
            where = {e: sorted(oracle.lines_of(e)) for e in unexplained}
            problems.append(f"stated edges missing, unreported (dep, task): lines {where}")
        silent = [e for e in sorted(oracle.dangling()) if not oracle.lines_of(e) & findings.keys()]
        if silent:
            problems.append(f"edges to tasks the file does not list, unreported: {silent}")
    return problems


def test_the_corpora_hold_every_item_this_file_names() -> None:
    named = set(GRAPH_GAPS) | set(READY_GAPS)
    assert named <= {(i.corpus, i.name) for i in ITEMS}
    assert len([i for i in ITEMS if i.corpus == "the-loop-0.14.2"]) == 23
    assert len([i for i in ITEMS if i.corpus == "the-loop-head-a"]) == 40


@pytest.mark.parametrize("item", _params(GRAPH_GAPS, with_tasks=False))
def test_graph_json_matches_the_oracle(loop: Runner, item: Item) -> None:
    res = loop("-C", str(item.root), "--json", "graph", item.name)
    if not item.tasks.is_file():
        assert res.exit_code == 2, res.output
        assert "tasks.md" in res.output
        return
    assert res.exit_code == 0, res.output
    graph = json.loads(res.stdout)
    assert graph["item"] == item.name
    assert graph_differences(loop, item, graph, read_dag(item.tasks)) == []


def copy_writable(src: Path, dst: Path) -> None:
    """Copy a corpus folder; the corpus is read-only, the copy must not be."""
    shutil.copytree(src, dst, copy_function=shutil.copyfile)
    for folder, _, files in os.walk(dst):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


_TICKED = re.compile(r"^([-*+][ \t]+)\[[xX]\]", re.MULTILINE)


@pytest.mark.parametrize("item", _params(READY_GAPS, with_tasks=True))
def test_unticked_item_offers_only_tasks_with_every_dependency_done(
    loop: Runner, item: Item, tmp_path: Path
) -> None:
    """With nothing done, a ready task is one that states no dependency at all."""
    repo = tmp_path / "repo"
    copy_writable(item.folder, repo / "docs" / "specs" / item.name)
    if (item.root / ".the-loop").is_dir():
        copy_writable(item.root / ".the-loop", repo / ".the-loop")
    tasks = repo / "docs" / "specs" / item.name / "tasks.md"
    tasks.write_text(_TICKED.sub(r"\1[ ]", tasks.read_text(encoding="utf-8")), encoding="utf-8")

    oracle = read_dag(tasks)
    assert not any(oracle.done().values())
    waiting = {task for _, task in oracle.edge_set()} | {task for _, task in oracle.dangling()}
    startable = set(oracle.ids) - waiting

    res = loop("-C", str(repo), "--json", "next", item.name, "--all-ready")
    assert res.exit_code in (0, 1), res.output
    ready = {t["id"] for t in json.loads(res.stdout)["ready"]}
    assert ready <= startable, f"offered before their dependencies: {sorted(ready - startable)}"
