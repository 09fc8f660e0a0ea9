"""``loop check``, ``loop next``, ``loop graph`` and ``loop status`` on small trees.

Each test writes a work item in one readable block and runs the real CLI in
process. Exit code first, then the message; the ``file:line`` of every finding
is pinned, counted from the text written here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from helpers import Result

from the_loop.tasks.mermaid import parse_flowchart

Loop = Callable[..., Result]
Build = Callable[[Mapping[str, str]], Path]

CONFIG = 'version: "0.1.0"\n'

# Lines 9–16: R1 with two criteria (11, 12), R2 with one (16).
REQUIREMENTS = """\
---
type: requirements
workItem: {item}
status: approved
---

# Requirements: retries

### R1 — bounded retries

1. WHEN a dispatch fails THEN the system SHALL retry it up to the budget.
2. WHEN the budget is exhausted THEN the system SHALL log a terminal failure.

### R2 — configurable budget

1. The system SHALL read the budget from `polling.maxRetries`.
"""

DESIGN = """\
---
type: design
workItem: {item}
status: approved
---

# Design: retries
"""

# The tasks start at line 9.
TASKS_HEAD = """\
---
type: tasks
workItem: {item}
status: {status}
---

# Tasks: retries

"""

# Three tasks, three lines each: task N is at line 9 + 3·(N-1), its depends line below it.
CYCLE = """\
- [ ] 1. Config key
  - _Depends on:_ 3
  - _Requirements:_ R2.1
- [ ] 2. Retry ledger
  - _Depends on:_ 1
  - _Requirements:_ R1.1
- [ ] 3. Give-up log line
  - _Depends on:_ 2
  - _Requirements:_ R1.2
"""
CLEAN = CYCLE.replace("_Depends on:_ 3", "_Depends on:_ none")
DANGLING = CLEAN.replace("_Depends on:_ 2", "_Depends on:_ 2, 9")
DUPLICATE = (
    CLEAN
    + """\
- [ ] 2. Another ledger
  - _Depends on:_ none
  - _Requirements:_ R1
"""
)

# 1 done, 2 in progress, 3 ready; 4 waits for 2 and 3; 5 and 6 wait for 4.
SIX = """\
- [x] 1. Config key
  - _Depends on:_ none
  - _Requirements:_ R2.1
  - _Test:_ `pytest -k config`
- [-] 2. Retry ledger
  - _Depends on:_ 1
  - _Requirements:_ R1.1
  - _Test:_ `pytest -k ledger`
- [ ] 3. Give-up log line
  - _Depends on:_ 1
  - _Requirements:_ R1.2
  - _Test:_ `pytest -k giveup`
- [ ] 4. Wire ledger into poller
  - _Depends on:_ 2, 3
  - _Requirements:_ R1
- [ ] 5. Integration test
  - _Depends on:_ 4
  - _Requirements:_ R1
- [ ] 6. Docs
  - _Depends on:_ 4
  - _Requirements:_ R2
"""

LOG = """\
---
type: execution-log
workItem: {item}
phase: implementation
status: in-progress
---

# Execution Log: retries

## Phase transitions

| Phase | Entered | Reviewed/approved by | Notes |
|-------|---------|----------------------|-------|
| implementation | 2026-11-29 | @ann |  |

## Progress entries

### 2026-11-29T10:00Z — task 1 done

- **Phase:** implementation
- **Did:** added the config key
- **Checkpoint/tests:** `pytest -k config` passed
- **Next:** implement task 2: the retry ledger
- **Context:** compacted — task boundary
- **Blockers:** none
"""

BUGFIX = """\
---
type: bugfix
workItem: {item}
status: approved
---

# Bugfix: lost retries

## Acceptance criteria

1. WHEN a dispatch fails THEN the system SHALL retry it.
2. WHEN retries run out THEN the system SHALL log it.
"""


def item_files(item: str, tasks: str | None, *, status: str = "draft") -> dict[str, str]:
    """requirements.md (approved) and, when given, design.md (approved) and tasks.md."""
    files = {f"docs/specs/{item}/requirements.md": REQUIREMENTS.format(item=item)}
    if tasks is not None:
        # tasks.md is written below an approved design, as the process wants it
        files[f"docs/specs/{item}/design.md"] = DESIGN.format(item=item)
        files[f"docs/specs/{item}/tasks.md"] = TASKS_HEAD.format(item=item, status=status) + tasks
    return files


def project(build_tree: Build, *parts: Mapping[str, str]) -> Path:
    files: dict[str, str] = {".the-loop/config.yaml": CONFIG}
    for part in parts:
        files.update(part)
    return build_tree(files)


def six_tasks(item: str = "issue-5", *, log: bool = True) -> dict[str, str]:
    """An item in implementation: everything approved, the SIX task graph, a log."""
    files = item_files(item, SIX, status="approved")
    files[f"docs/specs/{item}/design.md"] = DESIGN.format(item=item)
    if log:
        files[f"docs/specs/{item}/execution-log.md"] = LOG.format(item=item)
    return files


def out_lines(result: Result) -> list[str]:
    return result.stdout.splitlines()


# --- check: the issue-3 done-when ---------------------------------------------------------


def test_a_cycle_fails_with_its_path_and_each_line(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CYCLE))
    result = loop("check", "4", cwd=root)
    assert result.exit_code == 1
    lines = out_lines(result)
    assert "docs/specs/issue-4/tasks.md:9: error: cycle: 1 → 2 → 3 → 1" in lines
    hint = result.stdout[result.stdout.index("cycle: 1 → 2 → 3 → 1") :]
    assert "tasks.md:12: task 2 depends on 1" in hint
    assert "tasks.md:15: task 3 depends on 2" in hint
    assert "tasks.md:9: task 1 depends on 3" in hint
    assert lines[-1] == "failed: 1 error(s), 0 warning(s), 3 info in 1 work item(s)"


def test_the_cycle_hint_uses_the_same_relative_paths(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CYCLE))
    result = loop("check", "4", cwd=root)
    assert result.exit_code == 1
    assert str(root) not in result.stdout


def test_a_dangling_reference_fails_at_its_depends_line(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", DANGLING))
    result = loop("check", "issue-4", cwd=root)
    assert result.exit_code == 1
    assert (
        "docs/specs/issue-4/tasks.md:16: error: task 3 at line 15 depends on 9, which does not "
        "exist" in out_lines(result)
    )
    assert "    hint: no task has id 9; nearby ids: " in result.stdout


def test_a_duplicate_id_fails_at_the_second_definition(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", DUPLICATE))
    result = loop("check", "issue-4", cwd=root)
    assert result.exit_code == 1
    assert (
        "docs/specs/issue-4/tasks.md:18: error: duplicate task id 2: defined at line 12 and "
        "again at line 18; the graph uses line 12" in out_lines(result)
    )


def test_the_findings_as_json(loop: Loop, build_tree: Build) -> None:
    tasks = DANGLING + DUPLICATE[len(CLEAN) :]
    root = project(build_tree, item_files("issue-4", tasks))
    result = loop("check", "issue-4", "--json", cwd=root)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False
    assert data["items"] == ["issue-4"]
    loud = [
        (f["level"], f["code"], f["path"], f["line"])
        for f in data["findings"]
        if f["level"] != "info"
    ]
    assert loud == [
        ("error", "dag.unknown-dependency", "docs/specs/issue-4/tasks.md", 16),
        ("error", "dag.duplicate-id", "docs/specs/issue-4/tasks.md", 18),
    ]
    assert all(f["hint"] for f in data["findings"])


def test_a_clean_item_passes(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CLEAN))
    result = loop("check", "4", cwd=root)
    assert result.exit_code == 0, result.output
    assert out_lines(result)[-1] == "ok: 0 error(s), 0 warning(s), 3 info in 1 work item(s)"
    data = json.loads(loop("check", "4", "--json", cwd=root).stdout)
    assert data["ok"] is True
    assert data["evaluated"] == 6  # requirements.md, design.md, tasks.md and three tasks


def test_strict_makes_warnings_fail(loop: Loop, build_tree: Build) -> None:
    # No task cites R2 or its criterion: a warning, not an error.
    tasks = CLEAN.replace("R2.1", "R1.1")
    root = project(build_tree, item_files("issue-4", tasks))
    lenient = loop("check", "4", cwd=root)
    assert lenient.exit_code == 0, lenient.output
    assert (
        'docs/specs/issue-4/requirements.md:14: warning: R2 "configurable budget" is not '
        "covered: no task cites it or any of its criteria (R2.1)" in out_lines(lenient)
    )
    assert out_lines(lenient)[-1].startswith("ok: 0 error(s), 1 warning(s)")
    strict = loop("check", "4", "--strict", cwd=root)
    assert strict.exit_code == 1
    assert out_lines(strict)[-1].startswith("failed: 0 error(s), 1 warning(s)")
    assert json.loads(loop("check", "4", "--strict", "--json", cwd=root).stdout)["ok"] is False


def test_check_all_with_nothing_to_check_fails(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, {"docs/specs/.keep": ""})
    result = loop("check", "--all", cwd=root)
    assert result.exit_code == 1
    assert out_lines(result) == [
        "nothing was checked: no work items were found under docs/specs",
        "failed: 0 error(s), 0 warning(s), 0 info in 0 work item(s)",
    ]
    data = json.loads(loop("check", "--all", "--json", cwd=root).stdout)
    assert (data["ok"], data["items"], data["evaluated"]) == (False, [], 0)


def test_check_all_without_a_spec_folder_fails_too(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree)
    result = loop("check", "--all", cwd=root)
    assert result.exit_code == 1
    assert "nothing was checked" in result.stdout


def test_check_all_covers_every_item(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CYCLE), item_files("issue-5", CLEAN))
    result = loop("check", "--all", "--json", cwd=root)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["items"] == ["issue-4", "issue-5"]
    assert data["counts"]["error"] == 1
    assert loop("check", "issue-5", cwd=root).exit_code == 0


@pytest.mark.parametrize(
    ("text", "level", "code", "lines"),
    [
        ("# Requirements: x\n", "warning", "item.no-front-matter", (1,)),
        (
            "---\ntype: requirements\nstatus: draft\n\n# R\n",
            "error",
            "frontmatter.unterminated",
            (1,),
        ),
        ("---\n- a\n- b\n---\n\n# R\n", "error", "frontmatter.root", (2,)),
        (
            "---\ntype: requirements\nstatus: [draft\n---\n\n# R\n",
            "error",
            "frontmatter.yaml",
            (3, 4),
        ),
        ("---\ntype: requirements\nstatus: done\n---\n\n# R\n", "error", "item.bad-status", (3,)),
    ],
    ids=["missing", "unterminated", "not-a-mapping", "invalid-yaml", "bad-status"],
)
def test_broken_front_matter_is_a_finding_never_a_crash(
    loop: Loop, build_tree: Build, text: str, level: str, code: str, lines: tuple[int, ...]
) -> None:
    root = project(build_tree, {"docs/specs/issue-4/requirements.md": text})
    result = loop("check", "4", "--json", cwd=root)
    assert result.exit_code == (1 if level == "error" else 0), result.output
    found = [f for f in json.loads(result.stdout)["findings"] if f["code"] == code]
    assert len(found) == 1
    assert found[0]["level"] == level
    assert found[0]["path"] == "docs/specs/issue-4/requirements.md"
    assert found[0]["line"] in lines
    assert loop("status", "4", cwd=root).exit_code == 0


# --- next ---------------------------------------------------------------------------------


def test_next_text(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, six_tasks())
    result = loop("next", "5", cwd=root)
    assert result.exit_code == 0, result.output
    assert out_lines(result) == [
        "issue-5: next task (1/6 done)",
        "task 2: Retry ledger  (docs/specs/issue-5/tasks.md:13, in-progress)",
        "  depends on: 1 (all done)",
        "  requires R1.1: WHEN a dispatch fails THEN the system SHALL retry it up to the "
        "budget.  (docs/specs/issue-5/requirements.md:11)",
        "  test: `pytest -k ledger`",
        "not ready: 4 waits for 2, 3; 5 waits for 4; 6 waits for 4",
    ]


def test_next_json(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, six_tasks())
    result = loop("next", "issue-5", "--json", cwd=root)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["next"] == {
        "id": "2",
        "label": "2",
        "title": "Retry ledger",
        "state": "in-progress",
        "line": 13,
        "path": "docs/specs/issue-5/tasks.md",
        "dependsOn": ["1"],
        "dependsOnCount": 1,
        "requirements": [
            {
                "id": "R1.1",
                "text": "WHEN a dispatch fails THEN the system SHALL retry it up to the budget.",
                "where": "docs/specs/issue-5/requirements.md:11",
            }
        ],
        "test": "`pytest -k ledger`",
        "testCommand": ["pytest", "-k", "ledger"],
        "details": [],
    }
    assert [t["id"] for t in data["ready"]] == ["2"]
    assert data["blockedBy"] == {"4": ["2", "3"], "5": ["4"], "6": ["4"]}
    assert (data["readyCount"], data["blockedByCount"], data["truncated"]) == (1, 3, False)
    assert "more" not in data
    assert (data["done"], data["total"], data["graphErrors"]) == (1, 6, 0)


def test_next_all_ready(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, six_tasks())
    result = loop("next", "5", "--all-ready", cwd=root)
    assert result.exit_code == 0, result.output
    lines = out_lines(result)
    assert lines[0] == "issue-5: 2 ready task(s) (1/6 done)"
    assert [line for line in lines if line.startswith("task ")] == [
        "task 2: Retry ledger  (docs/specs/issue-5/tasks.md:13, in-progress)",
        "task 3: Give-up log line  (docs/specs/issue-5/tasks.md:17, open)",
    ]
    assert (
        "  requires R1.2: WHEN the budget is exhausted THEN the system SHALL log a terminal "
        "failure.  (docs/specs/issue-5/requirements.md:12)" in lines
    )
    data = json.loads(loop("next", "5", "--all-ready", "--json", cwd=root).stdout)
    assert [t["id"] for t in data["ready"]] == ["2", "3"]
    assert data["next"]["id"] == "2"


def test_next_fails_when_open_tasks_remain_but_none_can_start(
    loop: Loop, build_tree: Build
) -> None:
    root = project(build_tree, item_files("issue-4", CYCLE))
    result = loop("next", "4", cwd=root)
    assert result.exit_code == 1
    assert out_lines(result) == [
        "issue-4: no task can start (0/3 done); `loop check issue-4` says why; tasks.md "
        "has 1 error(s): `loop check issue-4`",
        "not ready: 1 waits for 3; 2 waits for 1; 3 waits for 2",
    ]
    data = json.loads(loop("next", "4", "--json", cwd=root).stdout)
    assert data["next"] is None
    assert data["ready"] == []
    assert data["blockedBy"] == {"1": ["3"], "2": ["1"], "3": ["2"]}
    assert data["graphErrors"] == 1


def test_next_when_every_task_is_done(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CLEAN.replace("[ ]", "[x]")))
    result = loop("next", "4", cwd=root)
    assert result.exit_code == 0, result.output
    assert out_lines(result) == ["issue-4: all 3 tasks are done"]


def test_next_without_tasks_says_what_comes_first(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", None))
    result = loop("next", "4", cwd=root)
    assert result.exit_code == 0, result.output
    assert out_lines(result) == [
        "issue-4: no tasks.md yet: write design.md from the approved requirements"
    ]


# --- graph --------------------------------------------------------------------------------


def test_graph_text(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, six_tasks())
    result = loop("graph", "5", cwd=root)
    assert result.exit_code == 0, result.output
    assert out_lines(result) == [
        "issue-5: 6 tasks, 1 done, 2 ready, 3 wave(s)",
        "  wave 1: 2*, 3",
        "  wave 2: 4*",
        "  wave 3: 5*, 6",
        "  critical path: 2 → 4 → 5",
        "",
        "[x] 1. Config key",
        "[-] 2*. Retry ledger  ← 1  (ready)",
        "[ ] 3. Give-up log line  ← 1  (ready)",
        "[ ] 4*. Wire ledger into poller  ← 2, 3",
        "[ ] 5*. Integration test  ← 4",
        "[ ] 6. Docs  ← 4",
    ]


def test_graph_text_of_a_cycle_names_the_blocked_tasks(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CYCLE))
    result = loop("graph", "4", cwd=root)
    assert result.exit_code == 1, result.output  # drawn, and the cycle is an error
    assert "error: cycle: 1 → 2 → 3 → 1" in result.stderr
    assert out_lines(result)[:2] == [
        "issue-4: 3 tasks, 0 done, 0 ready, 0 wave(s)",
        "  blocked for good: 1, 2, 3",
    ]


def test_graph_mermaid(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, six_tasks())
    result = loop("graph", "5", "--format", "mermaid", cwd=root)
    assert result.exit_code == 0, result.output
    lines = out_lines(result)
    assert lines[0] == "flowchart LR"
    assert [line for line in lines if ":::" in line] == [
        '  T1["1 Config key"]:::done',
        '  T2["2 Retry ledger"]:::active',
        '  T3["3 Give-up log line"]:::ready',
        '  T4["4 Wire ledger into poller"]:::open',
        '  T5["5 Integration test"]:::open',
        '  T6["6 Docs"]:::open',
    ]
    # The critical path 2 → 4 → 5 is drawn with thick links, the rest thin.
    assert [line.strip() for line in lines if "-->" in line or "==>" in line] == [
        "T1 --> T2",
        "T1 --> T3",
        "T2 ==> T4",
        "T3 --> T4",
        "T4 ==> T5",
        "T4 --> T6",
    ]
    assert "  %% wave 1: 2, 3" in lines
    assert "  %% wave 3: 5, 6" in lines
    classes = [line.split()[1] for line in lines if line.strip().startswith("classDef ")]
    assert classes == ["done", "active", "ready", "open", "blocked"]
    chart = parse_flowchart(result.stdout, Path("graph.mmd"))
    assert chart is not None and chart.findings == ()
    assert sorted((e.source, e.target) for e in chart.edges) == [
        ("1", "2"),
        ("1", "3"),
        ("2", "4"),
        ("3", "4"),
        ("4", "5"),
        ("4", "6"),
    ]


def test_graph_mermaid_marks_a_cycle_blocked(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CYCLE))
    result = loop("graph", "4", "--format", "mermaid", cwd=root)
    assert result.exit_code == 1, result.output
    assert result.stdout.count(":::blocked") == 3


_DOT_LINE = re.compile(
    r"""\s*(?:
        rankdir=LR;
      | node\ \[[^\]]*\];
      | "[^"]+"\ \[label="(?:[^"\\]|\\.)*",\ fillcolor="\#[0-9a-f]{6}"\];
      | "[^"]+"\ ->\ "[^"]+"(?:\ \[penwidth=3,\ color="\#[0-9a-f]{6}"\])?;
      | \{\ rank=same;(?:\ "[^"]+";)+\ \}
    )""",
    re.VERBOSE,
)


def test_graph_dot_is_a_valid_digraph(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, six_tasks())
    result = loop("graph", "5", "--format", "dot", cwd=root)
    assert result.exit_code == 0, result.output
    lines = out_lines(result)
    assert lines[0] == 'digraph "issue-5" {'
    assert lines[-1] == "}"
    for line in lines[1:-1]:
        assert _DOT_LINE.fullmatch(line), line
    assert '  "2" [label="2. Retry ledger\\n(active)", fillcolor="#fff3bf"];' in lines
    assert '  "2" -> "4" [penwidth=3, color="#c92a2a"];' in lines
    assert '  "1" -> "3";' in lines
    assert [line for line in lines if "rank=same" in line] == [
        '  { rank=same; "2"; "3"; }',
        '  { rank=same; "4"; }',
        '  { rank=same; "5"; "6"; }',
    ]


def test_graph_json(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, six_tasks())
    result = loop("graph", "5", "--json", cwd=root)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["item"] == "issue-5"
    assert data["order"] == ["1", "2", "3", "4", "5", "6"]
    assert data["ready"] == ["2", "3"]
    assert data["waves"] == [["2", "3"], ["4"], ["5", "6"]]
    assert data["criticalPath"] == ["2", "4", "5"]
    assert data["unschedulable"] == []
    assert data["edges"] == [["1", "2"], ["1", "3"], ["2", "4"], ["3", "4"], ["4", "5"], ["4", "6"]]
    assert [(t["id"], t["state"], t["line"]) for t in data["tasks"]] == [
        ("1", "done", 9),
        ("2", "in-progress", 13),
        ("3", "open", 17),
        ("4", "open", 21),
        ("5", "open", 24),
        ("6", "open", 27),
    ]


def test_graph_without_tasks_is_a_usage_error(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", None))
    result = loop("graph", "4", cwd=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: issue-4 has no tasks.md yet",
        "hint: `loop work-on issue-4` says what comes first",
    ]


# --- status -------------------------------------------------------------------------------


def test_status_of_one_item(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, six_tasks())
    result = loop("status", "5", cwd=root)
    assert result.exit_code == 0, result.output
    assert out_lines(result) == [
        "issue-5  retries",
        "  phase      implementation  (log agrees)  — 1 of 6 tasks done",
        "  format     the-loop",
        "  artifacts  requirements.md: approved  design.md: approved  tasks.md: approved  "
        "execution-log.md",
        "  tasks      1/6 done · in progress: 2 · ready: 2, 3",
        "  next       implement task 2: Retry ledger  → loop execute-tasks issue-5",
        "  resume     implement task 2: the retry ledger  — 2026-11-29T10:00Z",
    ]


def test_status_of_one_item_flags_a_disagreeing_log_and_findings(
    loop: Loop, build_tree: Build
) -> None:
    files = six_tasks()
    log = "docs/specs/issue-5/execution-log.md"
    files[log] = files[log].replace("phase: implementation", "phase: needs-review", 1)
    files["docs/specs/issue-5/tasks.md"] = files["docs/specs/issue-5/tasks.md"].replace(
        "R2.1", "R9"
    )
    root = project(build_tree, files)
    result = loop("status", "5", cwd=root)
    assert result.exit_code == 0, result.output
    lines = out_lines(result)
    assert lines[1] == "  phase      implementation  (log says needs-review)  — 1 of 6 tasks done"
    assert lines[-1] == "  findings   1 error(s), 1 warning(s)  → loop check issue-5"
    data = json.loads(loop("status", "5", "--json", cwd=root).stdout)
    assert data["phase"] == {
        "implied": "implementation",
        "recorded": "needs-review",
        "reason": "1 of 6 tasks done",
        "relation": "ahead",
    }
    assert data["findings"] == {"error": 1, "warning": 1, "info": 3}


def test_status_json_of_one_item(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, six_tasks())
    result = loop("status", "issue-5", "--json", cwd=root)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["item"], data["title"], data["path"]) == (
        "issue-5",
        "retries",
        "docs/specs/issue-5",
    )
    assert data["tasks"] == {
        "done": 1,
        "total": 6,
        "ready": ["2", "3"],
        "readyCount": 2,
        "inProgress": ["2"],
        "inProgressCount": 1,
    }
    assert data["next"]["kind"] == "implement"
    assert data["next"]["task"] == "2"
    assert data["resume"] == {
        "next": "implement task 2: the retry ledger",
        "stamp": "2026-11-29T10:00Z",
        "summary": "task 1 done",
    }
    assert sorted(data["artifacts"]) == [
        "design.md",
        "execution-log.md",
        "requirements.md",
        "tasks.md",
    ]


def test_status_all_table(loop: Loop, build_tree: Build) -> None:
    files = six_tasks()
    files["docs/specs/issue-5/execution-log.md"] = files[
        "docs/specs/issue-5/execution-log.md"
    ].replace("phase: implementation", "phase: needs-review", 1)
    root = project(build_tree, item_files("issue-4", CYCLE), files, item_files("issue-12", None))
    result = loop("status", "--all", cwd=root)
    assert result.exit_code == 0, result.output
    # id (padded to the longest) · implied phase, ! when the log disagrees · done/total · next
    assert out_lines(result) == [
        "issue-4   tasks-breakdown" + " " * 13 + "0/3  finish tasks.md (draft), then ask for review"
        "  1 error(s)",
        "issue-5   implementation!" + " " * 13 + "1/6  implement task 2: Retry ledger"
        "  1 warning(s)",
        "issue-12  design" + " " * 24 + "-  write design.md from the approved requirements",
        "! the log records another phase: `loop status ID` shows both",
    ]
    data = json.loads(loop("status", "--all", "--json", cwd=root).stdout)
    assert [v["item"] for v in data] == ["issue-4", "issue-5", "issue-12"]


def test_status_all_with_no_items(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree)
    result = loop("status", "--all", cwd=root)
    assert result.exit_code == 0
    assert out_lines(result) == ['no work items yet; `loop new "<title>"` creates one']
    assert json.loads(loop("status", "--all", "--json", cwd=root).stdout) == []


def test_status_and_next_agree_on_the_total_with_a_duplicate_id(
    loop: Loop, build_tree: Build
) -> None:
    root = project(build_tree, item_files("issue-4", DUPLICATE))
    status = json.loads(loop("status", "4", "--json", cwd=root).stdout)
    nxt = json.loads(loop("next", "4", "--json", cwd=root).stdout)
    assert status["tasks"]["total"] == nxt["total"]


# --- resolving work items -----------------------------------------------------------------


def test_an_unknown_id_is_a_usage_error_with_a_suggestion(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CLEAN))
    for command in (("status",), ("check",), ("next",), ("graph",)):
        result = loop(*command, "isue-4", cwd=root)
        assert result.exit_code == 2
        assert result.stderr.splitlines() == [
            f"error: no work item 'isue-4' in {root / 'docs/specs'}",
            "hint: did you mean issue-4?",
        ]


def test_an_id_matching_several_items_lists_them(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CLEAN), item_files("PROJ-4", None))
    result = loop("status", "4", cwd=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: '4' matches several work items: PROJ-4, issue-4",
        "hint: name one of them in full",
    ]
    assert loop("status", "PROJ-4", cwd=root).exit_code == 0
    assert loop("status", "issue-4", cwd=root).exit_code == 0


def test_ids_resolve_leniently(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-42", CLEAN))
    for ref in ("42", "#42", "issue-42", "ISSUE-42", "docs/specs/issue-42"):
        result = loop("status", ref, "--json", cwd=root)
        assert result.exit_code == 0, (ref, result.output)
        assert json.loads(result.stdout)["item"] == "issue-42"
    # A file inside the item, and the item folder seen from inside it.
    assert loop("status", "docs/specs/issue-42/tasks.md", cwd=root).exit_code == 0
    inside = loop("status", ".", "--json", cwd=root / "docs/specs/issue-42")
    assert inside.exit_code == 0, inside.output
    assert json.loads(inside.stdout)["item"] == "issue-42"


@pytest.mark.parametrize("ref", ["../outside", "docs/specs", "/etc", "docs/specs/../.."])
def test_paths_outside_the_spec_folder_are_refused(loop: Loop, build_tree: Build, ref: str) -> None:
    root = project(build_tree, item_files("issue-4", CLEAN))
    result = loop("status", ref, cwd=root)
    assert result.exit_code == 2
    assert f"error: {ref} is not a work item inside the spec folder" in result.stderr


def test_id_and_all_together_or_neither_are_usage_errors(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, item_files("issue-4", CLEAN))
    both = loop("check", "4", "--all", cwd=root)
    assert both.exit_code == 2
    assert "give a work item or --all, not both" in both.stderr
    neither = loop("status", cwd=root)
    assert neither.exit_code == 2
    assert "name a work item" in neither.stderr


# --- bugfix items -------------------------------------------------------------------------


def bug_item(item: str = "issue-9", cites: tuple[str, str] = ("AC1", "AC2")) -> dict[str, str]:
    tasks = f"""\
- [ ] 1. Retry on failure
  - _Depends on:_ none
  - _Requirements:_ {cites[0]}
- [ ] 2. Log the give-up
  - _Depends on:_ 1
  - _Requirements:_ {cites[1]}
"""
    return {
        f"docs/specs/{item}/bugfix.md": BUGFIX.format(item=item),
        f"docs/specs/{item}/design.md": DESIGN.format(item=item),
        f"docs/specs/{item}/tasks.md": TASKS_HEAD.format(item=item, status="approved") + tasks,
    }


def test_a_bug_item_reads_like_a_requirements_item(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, bug_item())
    status = loop("status", "9", cwd=root)
    assert status.exit_code == 0, status.output
    assert out_lines(status)[:6] == [
        "issue-9  lost retries",
        "  phase      implementation  (not recorded: no log phase)  — 0 of 2 tasks done",
        "  format     the-loop",
        "  artifacts  bugfix.md: approved  design.md: approved  tasks.md: approved  "
        "execution-log.md: missing",
        "  tasks      0/2 done · ready: 1",
        "  next       implement task 1: Retry on failure  → loop execute-tasks issue-9",
    ]
    nxt = loop("next", "9", cwd=root)
    assert nxt.exit_code == 0
    assert (
        "  requires AC1: WHEN a dispatch fails THEN the system SHALL retry it.  "
        "(docs/specs/issue-9/bugfix.md:11)" in out_lines(nxt)
    )
    check = loop("check", "9", cwd=root)
    assert check.exit_code == 0, check.output


def test_a_bug_item_citing_r_ids_gets_an_ac_hint(loop: Loop, build_tree: Build) -> None:
    root = project(build_tree, bug_item(cites=("R1", "AC2")))
    result = loop("check", "9", cwd=root)
    assert result.exit_code == 1
    lines = out_lines(result)
    assert (
        "docs/specs/issue-9/tasks.md:11: error: task 1 cites R1, which bugfix.md does not define"
        in lines
    )
    assert (
        "    hint: bugfix.md numbers its acceptance criteria AC1, AC2: did you mean AC1?" in lines
    )
    assert any(line.startswith("docs/specs/issue-9/bugfix.md:11: warning: AC1 ") for line in lines)


def test_requirements_and_bugfix_together_is_an_error(loop: Loop, build_tree: Build) -> None:
    files = bug_item()
    files["docs/specs/issue-9/requirements.md"] = REQUIREMENTS.format(item="issue-9")
    root = project(build_tree, files)
    result = loop("check", "9", cwd=root)
    assert result.exit_code == 1
    assert (
        "docs/specs/issue-9/bugfix.md:1: error: the work item has both requirements.md and "
        "bugfix.md" in out_lines(result)
    )
    assert (
        "    hint: keep exactly one: requirements.md for features, bugfix.md for bugs"
        in out_lines(result)
    )
    status = json.loads(loop("status", "9", "--json", cwd=root).stdout)
    assert status["next"]["kind"] == "fix"
    assert status["next"]["text"] == "keep exactly one of requirements.md and bugfix.md"
