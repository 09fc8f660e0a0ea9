"""The ready set of a parallel run: ``next`` order, less busy tasks and predicted overlap."""

from __future__ import annotations

from pathlib import Path

from the_loop.dag.analysis import DagReport, analyze
from the_loop.driver.lanes.scheduler import overlapping, pick, predicted_paths
from the_loop.tasks import parse_tasks

TASKS = """\
- [ ] 1. Retry budget in `src/config.py`
  - _Test:_ `pytest tests/test_config.py`
- [ ] 2. Retry ledger
  - Files: src/ledger.py, docs/ledger.md
  - _Test:_ `true`
- [ ] 3. Give-up line in src/ledger.py
  - _Test:_ `true`
- [ ] 4. Docs
  - _Depends on:_ 1
  - _Test:_ `true`
"""


def _dag() -> DagReport:
    return analyze(parse_tasks(TASKS, Path("tasks.md")))


def test_the_paths_a_task_names() -> None:
    dag = _dag()
    assert predicted_paths(dag.task("1")) == {"src/config.py", "tests/test_config.py"}
    assert predicted_paths(dag.task("2")) == {"src/ledger.py", "docs/ledger.md"}
    assert predicted_paths(dag.task("3")) == {"src/ledger.py"}
    assert predicted_paths(dag.task("4")) == frozenset()


def test_a_folder_overlaps_the_files_in_it() -> None:
    assert overlapping(frozenset({"src/"}), [frozenset({"src/app.py"})])
    assert not overlapping(frozenset({"src/app.py"}), [frozenset({"src/apple.py"})])


def test_pick_follows_next_order_and_holds_back_an_overlapping_task() -> None:
    dag = _dag()
    assert pick(dag, {}, set()) == (dag.ready[0], ())
    busy = {"2": predicted_paths(dag.task("2"))}
    first, held = pick(dag, busy, {"1"})
    assert (first, held) == (None, ("3",))  # 3 names src/ledger.py, which 2 is changing
    assert pick(dag, busy, set())[0] == "1"
