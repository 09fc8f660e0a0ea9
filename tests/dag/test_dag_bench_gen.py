"""Tests for the benchmark generator ``bench/gen.py`` and ``analyze`` on its graphs."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import REPO_ROOT

from the_loop.dag.analysis import analyze
from the_loop.tasks import Task, TaskList, TaskState

GEN = REPO_ROOT / "bench" / "gen.py"
SPEC = "docs/specs/bench-{n}"


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    """``bench/gen.py`` imported as a module (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_gen", GEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve their module through sys.modules while the class is built.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def run_gen(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GEN), str(out), *args],
        check=True,
        text=True,
        capture_output=True,
    )


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def as_task_list(plan: Any) -> TaskList:
    """The generated plan as the parser would read it (lines as gen.py writes them)."""
    tasks = []
    for k, t in enumerate(plan.tasks):
        line = 14 + 4 * k  # front matter, title, heading and blank lines come first
        tasks.append(
            Task(
                id=str(t.id),
                label=str(t.id),
                title=t.title,
                state=TaskState.DONE if t.done else TaskState.OPEN,
                line=line,
                end_line=line + 3,
                mark_offset=0,
                depends_on=tuple(str(d) for d in t.deps),
                depends_line=line + 1,
            )
        )
    return TaskList(path=Path("tasks.md"), tasks=tuple(tasks), findings=())


def test_same_seed_gives_byte_identical_output(tmp_path: Path) -> None:
    run_gen(tmp_path / "a", "--n", "200", "--seed", "7")
    run_gen(tmp_path / "b", "--n", "200", "--seed", "7")
    first, second = tree_bytes(tmp_path / "a"), tree_bytes(tmp_path / "b")
    assert sorted(first) == [
        "n-200/.the-loop/config.yaml",
        f"n-200/{SPEC.format(n=200)}/design.md",
        f"n-200/{SPEC.format(n=200)}/execution-log.md",
        f"n-200/{SPEC.format(n=200)}/requirements.md",
        f"n-200/{SPEC.format(n=200)}/tasks.md",
    ]
    assert first == second


def test_another_seed_gives_another_graph(tmp_path: Path) -> None:
    run_gen(tmp_path / "a", "--n", "200", "--seed", "7")
    run_gen(tmp_path / "b", "--n", "200", "--seed", "8")
    tasks = f"n-200/{SPEC.format(n=200)}/tasks.md"
    assert tree_bytes(tmp_path / "a")[tasks] != tree_bytes(tmp_path / "b")[tasks]


def test_files_have_the_documented_shape(tmp_path: Path) -> None:
    result = run_gen(tmp_path, "--n", "40", "--broken")
    assert "injected cycle" in result.stdout
    root = tmp_path / "n-40"
    spec = root / SPEC.format(n=40)
    assert (root / ".the-loop/config.yaml").read_text() == 'version: "0.1.0"\n'
    requirements = (spec / "requirements.md").read_text(encoding="utf-8")
    assert requirements.startswith("---\ntype: requirements\n")
    assert "\nstatus: approved\n" in requirements
    assert re.findall(r"^### (R\d+) — ", requirements, re.M) == [f"R{k}" for k in range(1, 21)]
    assert "\nstatus: approved\n" in (spec / "design.md").read_text(encoding="utf-8")
    tasks = (spec / "tasks.md").read_text(encoding="utf-8")
    assert tasks.startswith("---\ntype: tasks\n") and "\nstatus: approved\n" in tasks
    assert len(re.findall(r"^- \[[ x]\] \d+\. ", tasks, re.M)) == 40
    assert len(re.findall(r"^  - _Depends on:_ (none|\d+(, \d+)*)$", tasks, re.M)) == 40
    assert len(re.findall(r"^  - _Requirements:_ R\d+$", tasks, re.M)) == 40
    assert tasks.count("  - _Test:_ `pytest -q`\n") == 40
    log = (spec / "execution-log.md").read_text(encoding="utf-8")
    assert log.startswith("---\ntype: execution-log\n")
    assert "\nphase: implementation\n" in log and "\nstatus: in-progress\n" in log
    assert "### 2026-11-30T10:00Z — started\n" in log
    assert "- **Next:** implement the ready tasks\n" in log


def test_task_lines_match_the_plan(gen: ModuleType, tmp_path: Path) -> None:
    plan = gen.make_plan(30, 7)
    root = gen.write_repo(tmp_path, plan)
    lines = (root / SPEC.format(n=30) / "tasks.md").read_text(encoding="utf-8").splitlines()
    for task, parsed in zip(plan.tasks, as_task_list(plan).tasks, strict=True):
        mark = "x" if task.done else " "
        assert lines[parsed.line - 1] == f"- [{mark}] {task.id}. {task.title}"
        assert lines[parsed.line].startswith("  - _Depends on:_ ")


@pytest.mark.parametrize("shape", ["random", "ladder"])
def test_generated_graph_is_a_clean_dag_with_30_percent_done(gen: ModuleType, shape: str) -> None:
    plan = gen.make_plan(1000, 7, shape)
    report = analyze(as_task_list(plan))
    assert report.findings == ()  # acyclic, no dangling ids, no done task waiting on an open one
    assert (report.done, report.total) == (300, 1000)
    assert report.ready
    if shape == "ladder":
        assert len(report.critical_path) == 700
        assert all(len(t.deps) == min(2, t.id - 1) for t in plan.tasks)


def test_broken_graph_has_exactly_one_cycle_and_one_dangling_dependency(
    gen: ModuleType,
) -> None:
    plan = gen.make_plan(1000, 7, "random", broken=True)
    report = analyze(as_task_list(plan))
    codes = [f.code for f in report.findings]
    assert codes.count("dag.cycle") == 1
    assert codes.count("dag.unknown-dependency") == 1
    assert set(codes) <= {"dag.cycle", "dag.unknown-dependency", "dag.done-depends-on-open"}
    # The injected cycle's head is its lowest id; the report gives the shortest
    # cycle through it, which the injected one bounds.
    (cycle,) = report.cycles
    assert cycle[0] == str(plan.cycle[0])
    assert 2 <= len(cycle) <= len(plan.cycle)
    task, missing = plan.dangling
    assert str(task) in report.unschedulable or plan.tasks[task - 1].done
    if not plan.tasks[task - 1].done:
        assert str(missing) in report.blocked_by[str(task)]


def test_rejects_a_broken_graph_too_small_to_break(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(GEN), str(tmp_path), "--n", "5", "--broken"],
        text=True,
        capture_output=True,
    )
    assert result.returncode == 2
    assert "--broken needs n of at least 10" in result.stderr
