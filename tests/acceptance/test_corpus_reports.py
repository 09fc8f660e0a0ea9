"""The read-only reports and ``loop work-on`` over every work item of the-loop 0.14.2.

The corpus (``../shared/corpus/the-loop-0.14.2``) is real data nobody here wrote.
Read-only commands run on it in place (a guard below proves they write
nothing); anything that writes runs on a copy in ``tmp_path`` that is made
writable and committed to a fresh git repository first.

Every expectation below was set by reading the corpus files, not by running
loop: the line numbers, which artifacts are approved, which tasks are ticked
and what each log's front matter says.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import CORPUS, Result, front_matter, git, requires_corpus, without_loop_cache

from the_loop.tasks.mermaid import parse_flowchart

pytestmark = requires_corpus()

Loop = Callable[..., Result]
SPECS = CORPUS / "docs" / "specs"
NOW = "2026-11-30T12:00Z"

# The 23 work items, in loop's natural order.
_NUMBERS = "1 11 12 15 17 18 21 25 32 34 36 37 46 47 48 49 50 59 63 70 76 78 80"
ITEMS = [f"issue-{n}" for n in _NUMBERS.split()]
# Items with a tasks.md: (tasks, done).
TASKS = {
    "issue-1": (25, 15),
    "issue-11": (5, 5),
    "issue-12": (5, 5),
    "issue-15": (10, 10),
    "issue-17": (6, 6),
    "issue-18": (7, 7),
    "issue-21": (6, 6),
    "issue-25": (7, 7),
    "issue-32": (8, 8),
    "issue-36": (6, 6),
    "issue-70": (10, 10),
    "issue-78": (5, 5),
    "issue-80": (10, 10),
}
# Drafts: requirements.md and design.md both `status: draft`, no log, no tasks.md.
DRAFTS = ["issue-34", "issue-46", "issue-47", "issue-48", "issue-49", "issue-50", "issue-59"]
DRAFTS += ["issue-76"]
# Every artifact approved, every task ticked, log front matter `phase: needs-review`.
SHIPPED = ["issue-11", "issue-12", "issue-15", "issue-17", "issue-18", "issue-21", "issue-25"]
SHIPPED += ["issue-32", "issue-36", "issue-70", "issue-78"]

# item: (implied phase, recorded phase, relation) — from reading each item's
# artifacts' `status:`, its checkboxes and its log's `phase:`.
PHASES: dict[str, tuple[str, str | None, str]] = {
    # 25 tasks, 16–25 deferred and open; the log says needs-review.
    "issue-1": ("implementation", "needs-review", "ahead"),
    **{item: ("needs-review", "needs-review", "same") for item in SHIPPED},
    **{item: ("requirements-definition", None, "unrecorded") for item in DRAFTS},
    # Only brainstorm.md (approved); the log says needs-review.
    "issue-37": ("requirements-definition", "needs-review", "ahead"),
    # requirements.md and design.md approved, no tasks.md, no log.
    "issue-63": ("tasks-breakdown", None, "unrecorded"),
    # bugfix.md, design.md and tasks.md all draft, 10/10 ticked; the log says implementation.
    "issue-80": ("requirements-definition", "implementation", "ahead"),
}

# Every error and warning `loop check --all` must report: (level, code, where).
ERRORS_AND_WARNINGS = {
    ("warning", "phase.mismatch", "docs/specs/issue-1/execution-log.md:4"),
    # R1.1 is the only criterion of R1 no task cites (task 10 cites R1.2).
    ("warning", "trace.uncovered", "docs/specs/issue-15/requirements.md:38"),
    # R6 (label-gated auto-execution) is cited by no task at all.
    ("warning", "trace.uncovered", "docs/specs/issue-15/requirements.md:123"),
    # issue-21: task 6 depends on 2, 3, 4, 5; the flowchart has no 3 --> 6 edge but draws
    # 3 --> 4 --> 6, the same order: no warning.
    # The prose chains of issue-1 (lines 94–97) order 1, 6 before 3, 3 before 5 and 5, 7, 9
    # before 8, which the fields of tasks 3, 5 and 8 do not.
    ("warning", "tasks.dag-mismatch", "docs/specs/issue-1/tasks.md:26"),
    ("warning", "tasks.dag-mismatch", "docs/specs/issue-1/tasks.md:31"),
    ("warning", "tasks.dag-mismatch", "docs/specs/issue-1/tasks.md:37"),
    # `1 → {2, 3, 4, 5} → 6` (line 98); task 6's field says 2, 3, 4.
    ("warning", "tasks.dag-mismatch", "docs/specs/issue-70/tasks.md:58"),
    # Box-drawing art under "## Dependency graph (DAG)" (lines 65–66) is not understood.
    ("warning", "tasks.dag-unreadable", "docs/specs/issue-25/tasks.md:65"),
    # R1.5, R3.4 and R6.3 are the criteria no task range reaches.
    ("warning", "trace.uncovered", "docs/specs/issue-32/requirements.md:53"),
    ("warning", "trace.uncovered", "docs/specs/issue-32/requirements.md:89"),
    ("warning", "trace.uncovered", "docs/specs/issue-32/requirements.md:141"),
    # bugfix.md numbers its criteria 1–4 (AC1–AC4); the tasks cite R1–R4 instead.
    ("warning", "trace.uncovered", "docs/specs/issue-36/bugfix.md:50"),
    ("warning", "trace.uncovered", "docs/specs/issue-36/bugfix.md:52"),
    ("warning", "trace.uncovered", "docs/specs/issue-36/bugfix.md:54"),
    ("warning", "trace.uncovered", "docs/specs/issue-36/bugfix.md:57"),
    ("error", "trace.undefined", "docs/specs/issue-36/tasks.md:19"),  # R2
    ("error", "trace.undefined", "docs/specs/issue-36/tasks.md:25"),  # R1, R3
    ("error", "trace.undefined", "docs/specs/issue-36/tasks.md:32"),  # R1, R3
    ("error", "trace.undefined", "docs/specs/issue-36/tasks.md:37"),  # R4
    ("error", "trace.undefined", "docs/specs/issue-36/tasks.md:44"),  # R4
    ("error", "trace.undefined", "docs/specs/issue-36/tasks.md:48"),  # R1–R4
    # _Test:_ commands written for a shell (`… && ! test -d …`, `rg … commands/*.md`):
    # loop runs a test without one, so `task done --verify` could never pass them.
    ("warning", "tasks.test-needs-shell", "docs/specs/issue-36/tasks.md:20"),
    ("warning", "tasks.test-needs-shell", "docs/specs/issue-36/tasks.md:33"),
    ("warning", "phase.mismatch", "docs/specs/issue-37/execution-log.md:4"),
    ("warning", "phase.mismatch", "docs/specs/issue-80/execution-log.md:4"),
    # T1 is the first ticked task; tasks.md is still draft.
    ("warning", "lock.work-ahead", "docs/specs/issue-80/tasks.md:16"),
    # Its own transitions table (line 21) records needs-review; the front matter says
    # implementation.
    ("warning", "log.transitions-ahead", "docs/specs/issue-80/execution-log.md:21"),
    # design.md (and issue-80's tasks.md) written while the requirements are still draft.
    *(
        ("warning", "lock.written-ahead", f"docs/specs/{item}/design.md:1")
        for item in [
            "issue-34",
            "issue-46",
            "issue-47",
            "issue-48",
            "issue-49",
            "issue-50",
            "issue-59",
            "issue-76",
            "issue-80",
        ]
    ),
    ("warning", "lock.written-ahead", "docs/specs/issue-80/tasks.md:1"),
}
# How many findings share one place (several undefined ids on one line).
ERROR_COUNTS = {19: 1, 25: 2, 32: 2, 37: 1, 44: 1, 48: 4}

# Infos other than `lock.no-hash` (derived from the files in `_approved_without_hash`).
INFOS = {
    *(("info", "phase.no-log", f"docs/specs/{item}") for item in [*DRAFTS, "issue-63"]),
    ("info", "trace.unlinked-task", "docs/specs/issue-32/tasks.md:60"),  # "ready-to-ship gate"
    ("info", "trace.unlinked-task", "docs/specs/issue-70/tasks.md:70"),  # "process conformance"
    ("info", "trace.unlinked-task", "docs/specs/issue-78/tasks.md:24"),  # T4, no *(AC …)*
    ("info", "trace.unlinked-task", "docs/specs/issue-78/tasks.md:26"),  # T5
    ("info", "trace.unlinked-task", "docs/specs/issue-80/tasks.md:53"),  # T9
    ("info", "trace.unlinked-task", "docs/specs/issue-80/tasks.md:56"),  # T10
    # Bold T1–T5 with no `depends on` clause anywhere and no flowchart.
    ("info", "tasks.no-dependencies", "docs/specs/issue-78/tasks.md:15"),
}

# The notable findings as `loop check --all` prints them, word for word.
NOTABLE_LINES = [
    "docs/specs/issue-1/execution-log.md:4: warning: the log says phase needs-review, but "
    "the artifacts imply implementation (15 of 25 tasks done)",
    'docs/specs/issue-15/requirements.md:123: warning: R6 "Label-gated auto-execution '
    '(GitHub workflow)" is not covered: no task cites it or any of its criteria (R6.1–R6.6)',
    "docs/specs/issue-70/tasks.md:58: warning: task 6: its dependency statement (line 58) "
    "says 2, 3, 4, but the dependency chain (line 98) says 2, 3, 4, 5 (5 only in the "
    "dependency chain); loop uses both",
    "docs/specs/issue-36/tasks.md:19: error: task 1 cites R2, which bugfix.md does not define",
    "    hint: bugfix.md numbers its acceptance criteria AC1–AC4: did you mean AC2?",
    "docs/specs/issue-37/execution-log.md:4: warning: the log says phase needs-review, but the "
    "artifacts imply requirements-definition (brainstorm.md is approved; requirements not "
    "written)",
    "docs/specs/issue-80/execution-log.md:4: warning: the log says phase implementation, but "
    "the artifacts imply requirements-definition (bugfix.md is draft)",
    "docs/specs/issue-80/tasks.md:16: warning: 10 task(s) are ticked while tasks.md is draft: "
    "work ran ahead of the lock",
    "docs/specs/issue-34: info: no execution-log.md: the phase is not recorded and there is no "
    "resume anchor",
]


def _approved_without_hash() -> set[tuple[str, str, str]]:
    """`status: approved` with no `approval:` block: an info at the `status:` line."""
    found = set()
    for path in sorted(SPECS.glob("*/*.md")):
        if path.name == "execution-log.md":
            continue
        lines = path.read_text().split("\n")
        end = lines.index("---", 1)
        head = lines[1:end]
        status = [i for i, line in enumerate(head, 2) if re.match(r"status:\s*approved\b", line)]
        if status and not any(line.startswith("approval:") for line in head):
            rel = path.relative_to(CORPUS)
            found.add(("info", "lock.no-hash", f"{rel}:{status[0]}"))
    return found


def _tree(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with a digest of its content."""
    result = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_dir():
            result[rel + "/"] = ""
        elif ".git" not in path.relative_to(root).parts:
            result[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return result


@pytest.fixture(scope="module", autouse=True)
def corpus_is_never_written() -> Iterator[None]:
    """Read-only commands run on the corpus in place: they must leave no trace."""
    before = _tree(CORPUS) if CORPUS.is_dir() else {}
    yield
    if CORPUS.is_dir():
        assert _tree(CORPUS) == before


def _where(finding: dict[str, object]) -> str:
    line = finding["line"]
    return f"{finding['path']}:{line}" if line is not None else str(finding["path"])


def _check_json(loop: Loop) -> dict:
    result = loop("check", "--all", "--json", cwd=CORPUS)
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)


def _no_crash(result: Result) -> None:
    assert "internal error" not in result.output
    assert "Traceback" not in result.output


# --- the whole corpus -----------------------------------------------------------------


def test_the_corpus_holds_the_items_this_suite_expects() -> None:
    names = {p.name for p in SPECS.iterdir() if p.is_dir()}
    assert names == set(ITEMS)
    assert {p.parent.name for p in SPECS.glob("*/tasks.md")} == set(TASKS)
    assert set(PHASES) == set(ITEMS)


def test_status_all_lists_every_item_in_natural_order(loop: Loop) -> None:
    result = loop("status", "--all", cwd=CORPUS)
    assert result.exit_code == 0, result.output
    _no_crash(result)
    rows = [line for line in result.stdout.splitlines() if line.startswith("issue-")]
    assert [row.split()[0] for row in rows] == ITEMS
    by_item = {row.split()[0]: row for row in rows}
    for item, (implied, _recorded, relation) in PHASES.items():
        assert by_item[item].split()[1].rstrip("!") == implied
        # the three items whose log records another phase are marked
        assert by_item[item].split()[1].endswith("!") == (relation == "ahead"), by_item[item]
    for item, (total, done) in TASKS.items():
        assert f" {done}/{total} " in by_item[item]


def test_status_all_json_phase_of_every_item(loop: Loop) -> None:
    result = loop("status", "--all", "--json", cwd=CORPUS)
    assert result.exit_code == 0, result.output
    views = json.loads(result.stdout)
    assert [v["item"] for v in views] == ITEMS
    actual = {
        v["item"]: (v["phase"]["implied"], v["phase"]["recorded"], v["phase"]["relation"])
        for v in views
    }
    assert actual == PHASES
    tasks = {
        v["item"]: (v["tasks"]["total"], v["tasks"]["done"]) for v in views if v["tasks"]["total"]
    }
    assert tasks == TASKS
    by_item = {v["item"]: v for v in views}
    assert by_item["issue-63"]["phase"]["reason"] == "tasks.md is not written yet"
    assert by_item["issue-34"]["phase"]["reason"] == "requirements.md is draft"
    assert by_item["issue-80"]["phase"]["reason"] == "bugfix.md is draft"
    assert by_item["issue-80"]["artifacts"]["bugfix.md"]["status"] == "draft"
    assert "requirements.md" not in by_item["issue-80"]["artifacts"]
    assert by_item["issue-1"]["tasks"]["ready"] == ["22", "17", "16", "20", "21"]
    # The resume anchor is the last entry's Next: wherever there is a log.
    assert by_item["issue-80"]["resume"]["next"] == (
        "open PR with the reviewer briefing; request review."
    )
    assert by_item["issue-37"]["resume"]["next"] == "human review on PR #41."
    for item in [*DRAFTS, "issue-63"]:
        assert by_item[item]["resume"] is None


def test_status_json_next_action_of_every_item(loop: Loop) -> None:
    result = loop("status", "--all", "--json", cwd=CORPUS)
    assert result.exit_code == 0, result.output
    actual = {v["item"]: (v["next"]["kind"], v["next"]["text"]) for v in json.loads(result.stdout)}
    expected = {
        "issue-1": (
            "implement",
            "implement task 22: Predictability: decide hooks vs custom code/scripts; enforce "
            "PDLC steps (incl. hard-enforcing mandatory user education, R10.4)",
        ),
        **{
            item: ("review", f"all {TASKS[item][0]} tasks done: review the work")
            for item in SHIPPED
        },
        **{
            item: ("revise", "finish requirements.md (draft), then ask for review")
            for item in DRAFTS
        },
        "issue-37": ("write", "write requirements.md from the brainstorm"),
        "issue-63": ("write", "write tasks.md from the approved requirements and design"),
        "issue-80": ("revise", "finish bugfix.md (draft), then ask for review"),
    }
    assert actual == expected


def test_check_all_fails_on_the_real_errors_and_reports_each_precisely(loop: Loop) -> None:
    data = _check_json(loop)
    assert data["ok"] is False
    assert data["items"] == ITEMS
    findings = data["findings"]
    loud = [(f["level"], f["code"], _where(f)) for f in findings if f["level"] != "info"]
    assert set(loud) == ERRORS_AND_WARNINGS
    errors_per_line = {}
    for level, _code, where in loud:
        if level == "error":
            line = int(where.rsplit(":", 1)[1])
            errors_per_line[line] = errors_per_line.get(line, 0) + 1
    assert errors_per_line == ERROR_COUNTS
    infos = {(f["level"], f["code"], _where(f)) for f in findings if f["level"] == "info"}
    assert infos == INFOS | _approved_without_hash()
    assert data["counts"] == {"error": 11, "warning": 31, "info": len(infos)}


def test_every_finding_has_a_place_a_message_and_for_errors_and_warnings_a_hint(
    loop: Loop,
) -> None:
    for finding in _check_json(loop)["findings"]:
        assert finding["message"], finding
        assert finding["path"], finding
        place = CORPUS / str(finding["path"])
        assert place.exists(), finding
        if place.is_file():
            assert isinstance(finding["line"], int) and finding["line"] >= 1, finding
            assert finding["line"] <= len(place.read_text().split("\n")), finding
        if finding["level"] in ("error", "warning"):
            assert finding["hint"], finding


def test_check_all_text_names_each_notable_irregularity(loop: Loop) -> None:
    result = loop("check", "--all", cwd=CORPUS)
    assert result.exit_code == 1, result.output
    _no_crash(result)
    lines = result.stdout.splitlines()
    for expected in NOTABLE_LINES:
        assert expected in lines
    assert lines[-1].startswith("failed: 11 error(s), 31 warning(s), ")
    assert lines[-1].endswith(" info in 23 work item(s)")


def test_check_one_clean_item_passes_and_one_broken_item_fails(loop: Loop) -> None:
    clean = loop("check", "issue-11", cwd=CORPUS)
    assert clean.exit_code == 0, clean.output
    assert clean.stdout.splitlines()[-1] == "ok: 0 error(s), 0 warning(s), 3 info in 1 work item(s)"
    broken = loop("check", "36", cwd=CORPUS)
    assert broken.exit_code == 1
    assert broken.stdout.splitlines()[-1] == (
        "failed: 11 error(s), 6 warning(s), 3 info in 1 work item(s)"
    )
    strict = loop("check", "issue-70", "--strict", cwd=CORPUS)
    assert strict.exit_code == 1  # the chain/field mismatch is a warning
    assert loop("check", "issue-70", cwd=CORPUS).exit_code == 0
    assert loop("check", "issue-21", "--strict", cwd=CORPUS).exit_code == 0


def test_status_of_one_item_shows_both_phases_and_the_findings(loop: Loop) -> None:
    result = loop("status", "issue-80", cwd=CORPUS)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "issue-80  failed events are never retried — dead tmux sessions, and the poller "
        'baselining failures as "processed"',
        "  phase      requirements-definition  (log says implementation)  — bugfix.md is draft",
        "  format     the-loop",
        "  artifacts  bugfix.md: draft  design.md: draft  tasks.md: draft  execution-log.md",
        "  tasks      10/10 done",
        "  next       finish bugfix.md (draft), then ask for review  → loop approve issue-80 "
        "bugfix --by @you",
        "  resume     open PR with the reviewer briefing; request review.  — 2026-07-24",
        "  findings   5 warning(s)  → loop check issue-80",
    ]


def test_status_of_an_item_with_trace_errors_counts_them(loop: Loop) -> None:
    """status must not say an item is clean when check finds errors in it."""
    result = loop("status", "issue-36", "--json", cwd=CORPUS)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["findings"]["error"] == 11


@pytest.mark.parametrize("item", sorted(TASKS))
@pytest.mark.parametrize("fmt", ["text", "mermaid", "dot"])
def test_graph_of_every_item_with_tasks(loop: Loop, item: str, fmt: str) -> None:
    result = loop("graph", item, "--format", fmt, cwd=CORPUS)
    assert result.exit_code == 0, result.output
    _no_crash(result)
    total, done = TASKS[item]
    first = result.stdout.splitlines()[0]
    if fmt == "text":
        assert first.startswith(f"{item}: {total} tasks, {done} done, ")
    elif fmt == "mermaid":
        assert first == "flowchart LR"
        assert result.stdout.count(":::") == total
    else:
        assert first == f'digraph "{item}" {{'
        assert result.stdout.rstrip().endswith("}")


@pytest.mark.parametrize("item", sorted(TASKS))
def test_graph_mermaid_reads_back_as_the_same_dag(loop: Loop, item: str) -> None:
    """The rendered flowchart, read by loop's own mermaid reader, has the DAG's edges."""
    data = json.loads(loop("graph", item, "--json", cwd=CORPUS).stdout)
    mermaid = loop("graph", item, "--format", "mermaid", cwd=CORPUS).stdout
    chart = parse_flowchart(mermaid, Path("graph.mmd"))
    assert chart is not None
    assert [f for f in chart.findings if f.level.value != "info"] == []
    assert sorted((e.source, e.target) for e in chart.edges) == sorted(map(tuple, data["edges"]))


def test_graph_of_issue_1_marks_waves_and_the_critical_path(loop: Loop) -> None:
    result = loop("graph", "issue-1", cwd=CORPUS)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:5] == [
        "issue-1: 25 tasks, 15 done, 5 ready, 3 wave(s)",
        "  wave 1: 16, 17, 20, 21, 22*",
        "  wave 2: 18, 19, 23*, 25",
        "  wave 3: 24*",
        "  critical path: 22 → 23 → 24",
    ]
    assert "[ ] 22*. Predictability: decide hooks vs custom code/scripts;" in result.stdout


def test_graph_of_an_item_without_tasks_is_a_usage_error(loop: Loop) -> None:
    result = loop("graph", "issue-63", cwd=CORPUS)
    assert result.exit_code == 2
    assert "issue-63 has no tasks.md yet" in result.stderr


@pytest.mark.parametrize("item", sorted(TASKS))
def test_next_json_of_every_item_with_tasks(loop: Loop, item: str) -> None:
    result = loop("next", item, "--json", cwd=CORPUS)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    total, done = TASKS[item]
    assert (data["total"], data["done"], data["graphErrors"]) == (total, done, 0)
    if item == "issue-1":
        assert data["next"]["id"] == "22"
        assert data["next"]["line"] == 82
        assert data["next"]["requirements"] == [
            {
                "id": "R4",
                "text": "The loop: 3-phase spec workflow **[v0 process; automation deferred]**",
                "where": "docs/specs/issue-1/requirements.md:61",
            },
            {
                "id": "R10",
                "text": "User-interaction principles **[v0 process]**",
                "where": "docs/specs/issue-1/requirements.md:132",
            },
        ]
        assert data["blockedBy"] == {
            "18": ["17"],
            "19": ["17"],
            "23": ["22"],
            "24": ["23"],
            "25": ["22"],
        }
    else:
        assert data["next"] is None
        assert data["message"] == f"all {total} tasks are done"


@pytest.mark.parametrize("item", ITEMS)
def test_resume_of_every_item_is_bounded(loop: Loop, item: str) -> None:
    result = loop("resume", item, cwd=CORPUS)
    assert result.exit_code == 0, result.output
    _no_crash(result)
    assert result.stdout.startswith(f"# Resume {item}")
    assert len(result.stdout) <= 8000
    implied, recorded, relation = PHASES[item]
    assert f"Phase: {implied}" in result.stdout
    if relation == "ahead":
        assert f"(the log says {recorded})" in result.stdout
    if recorded is None:
        assert "No checkpoint recorded yet." in result.stdout


def test_resume_never_prints_an_empty_read_list(loop: Loop) -> None:
    text = loop("resume", "issue-34", cwd=CORPUS).stdout
    lines = text.rstrip("\n").split("\n")
    assert "Read only:" in lines
    after = lines[lines.index("Read only:") + 1 :]
    assert after and after[0].startswith("- `")


def test_status_all_as_a_separate_process_just_completes(loop_process, tmp_path: Path) -> None:
    """A smoke test, not a timing: the whole corpus in a fresh interpreter."""
    proc = loop_process("-C", str(CORPUS), "status", "--all", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sum(line.startswith("issue-") for line in proc.stdout.splitlines()) == len(ITEMS)
    proc = loop_process("-C", str(CORPUS), "check", "--all", "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["counts"]["error"] == 11


# --- irregularities loop does not report (yet) -------------------------------------------


def test_design_written_ahead_of_draft_requirements_is_a_finding(loop: Loop) -> None:
    data = json.loads(loop("check", "issue-34", "--json", cwd=CORPUS).stdout)
    paths = [f["path"] for f in data["findings"] if f["level"] != "info"]
    assert "docs/specs/issue-34/design.md" in paths


def test_log_front_matter_against_its_own_transitions_table(loop: Loop) -> None:
    data = json.loads(loop("check", "issue-80", "--json", cwd=CORPUS).stdout)
    on_log = [f for f in data["findings"] if f["path"].endswith("execution-log.md")]
    assert any("needs-review" in f["message"] for f in on_log)


# --- work-on on a writable copy -----------------------------------------------------------


def _writable_copy(dest: Path) -> Path:
    """The corpus copied to ``dest``, made writable and committed to a new git repo."""
    shutil.copytree(CORPUS, dest)
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "the-loop 0.14.2 work items")
    return dest


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOOP_NOW", NOW)
    return _writable_copy(tmp_path / "the-loop")


def _head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def _dirty(repo: Path) -> list[str]:
    return git(repo, "status", "--porcelain").stdout.splitlines()


# item: (action kind, action text, file rendered, (crossing into, reset) or None)
WORK_ON: dict[str, tuple[str, str, str | None, tuple[str, str] | None]] = {
    # The log says needs-review, the artifacts imply implementation: reported, not crossed.
    "issue-1": ("implement", "implement task 22: " + "Predictability", None, None),
    **{
        item: ("review", f"all {TASKS[item][0]} tasks done: review the work", None, None)
        for item in SHIPPED
    },
    # No log yet: the first crossing records requirements-definition; nothing to reset.
    **{
        item: (
            "revise",
            "finish requirements.md (draft), then ask for review",
            None,
            ("requirements-definition", "none"),
        )
        for item in DRAFTS
    },
    # Brainstorm locked, requirements missing: written from the template; the log stays
    # ahead (needs-review) and is not silently rewritten.
    "issue-37": ("write", "write requirements.md from the brainstorm", "requirements.md", None),
    # Requirements and design locked, tasks.md missing: written; crossing with a clear.
    "issue-63": (
        "write",
        "write tasks.md from the approved requirements and design",
        "tasks.md",
        ("tasks-breakdown", "clear"),
    ),
    # The log is ahead of the draft bugfix.md: reported, never crossed.
    "issue-80": ("revise", "finish bugfix.md (draft), then ask for review", None, None),
}


def test_work_on_dry_run_for_every_item(loop: Loop, repo: Path) -> None:
    before, head = _tree(repo), _head(repo)
    actual = {}
    for item in ITEMS:
        result = loop("work-on", item, "--dry-run", "--json", cwd=repo)
        assert result.exit_code == 0, (item, result.output)
        data = json.loads(result.stdout)
        assert data["dryRun"] is True
        phase = data["status"]["phase"]
        assert (phase["implied"], phase["recorded"], phase["relation"]) == PHASES[item]
        action = data["action"]
        text = action["text"]
        if action["kind"] == "implement":
            text = text[: len("implement task 22: Predictability")]
        rendered = Path(data["rendered"]).name if data["rendered"] else None
        crossing = data["crossing"]
        actual[item] = (
            action["kind"],
            text,
            rendered,
            (crossing["to"], crossing["reset"]) if crossing else None,
        )
        deferred = crossing is not None and crossing["reset"] != "none"
        assert (data["brief"] is None) == deferred, item
    assert actual == WORK_ON
    assert without_loop_cache(_tree(repo)) == before
    assert _head(repo) == head


def test_work_on_issue_63_renders_tasks_and_crosses_with_a_checkpoint(
    loop: Loop, repo: Path
) -> None:
    item_dir = repo / "docs/specs/issue-63"
    result = loop("work-on", "issue-63", "--json", cwd=repo)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["rendered"] == str(item_dir / "tasks.md")
    assert (data["crossing"]["from"], data["crossing"]["to"]) == (None, "tasks-breakdown")
    assert data["reset"]["reset"] == "clear"
    assert data["reset"]["checkpoint"]["commit"] == _head(repo)
    assert data["brief"] is None  # the brief waits for the fresh session
    tasks = front_matter(item_dir / "tasks.md")
    assert (tasks["type"], tasks["workItem"], tasks["status"]) == ("tasks", "issue-63", "draft")
    log = item_dir / "execution-log.md"
    assert front_matter(log)["phase"] == "tasks-breakdown"
    text = log.read_text()
    assert "| tasks-breakdown | 2026-11-30 | @MadaraUchiha-314 |" in text
    assert "- **Context:** clear (about to): phase boundary not-started → tasks-breakdown" in text
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == (
        "chore(issue-63): checkpoint phase tasks-breakdown"
    )
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert sorted(committed) == [
        "docs/specs/issue-63/execution-log.md",
        "docs/specs/issue-63/tasks.md",
    ]
    assert _dirty(repo) == []
    status = json.loads(loop("status", "issue-63", "--json", cwd=repo).stdout)
    assert status["phase"]["relation"] == "same"
    assert status["next"]["text"] == "finish tasks.md (draft), then ask for review"


def test_work_on_issue_80_reports_the_mirror_ahead_and_changes_nothing(
    loop: Loop, repo: Path
) -> None:
    head = _head(repo)
    result = loop("work-on", "issue-80", cwd=repo)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "  phase      requirements-definition  (log says implementation)" in out
    assert "\n# issue-80: finish bugfix.md (draft), then ask for review\n" in out
    assert "reset:" not in out
    assert front_matter(repo / "docs/specs/issue-80/execution-log.md")["phase"] == "implementation"
    assert (_head(repo), _dirty(repo)) == (head, [])
    # --sync is the explicit repair; in a dry run it only says what it would do.
    dry = loop("work-on", "issue-80", "--sync", "--dry-run", cwd=repo)
    assert dry.exit_code == 0, dry.output
    assert "would repair the phase mirror: implementation → requirements-definition" in dry.stdout
    assert (_head(repo), _dirty(repo)) == (head, [])


def test_work_on_issue_34_records_the_phase_and_briefs_the_requirements(
    loop: Loop, repo: Path
) -> None:
    item_dir = repo / "docs/specs/issue-34"
    result = loop("work-on", "issue-34", cwd=repo)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "reset: none — phase boundary not-started → requirements-definition" in out
    brief = out[out.index("\n# issue-34: ") + 1 :]
    assert (
        brief.splitlines()[0] == "# issue-34: finish requirements.md (draft), then ask for review"
    )
    assert "`docs/specs/issue-34/requirements.md` (draft)." in brief
    assert "loop approve issue-34 requirements --by @handle" in brief
    assert "design.md" not in brief  # nothing downstream before the lock
    assert front_matter(item_dir / "execution-log.md")["phase"] == "requirements-definition"
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == (
        "chore(issue-34): checkpoint phase requirements-definition"
    )
    assert _dirty(repo) == []
    assert not (item_dir / "tasks.md").exists()
    check = json.loads(loop("check", "issue-34", "--json", cwd=repo).stdout)
    assert "phase.no-log" not in {f["code"] for f in check["findings"]}


def test_work_on_log_entry_does_not_claim_a_missing_brainstorm_was_approved(
    loop: Loop, repo: Path
) -> None:
    """issue-34 has no brainstorm.md: the first entry must not say one was approved."""
    assert loop("work-on", "issue-34", cwd=repo).exit_code == 0
    log = (repo / "docs/specs/issue-34/execution-log.md").read_text()
    assert "brainstorm.md approved" not in log
    assert "- **Did:** entered requirements-definition\n" in log


def test_work_on_issue_37_writes_requirements_but_leaves_the_log_alone(
    loop: Loop, repo: Path
) -> None:
    item_dir = repo / "docs/specs/issue-37"
    log_before = (item_dir / "execution-log.md").read_bytes()
    head = _head(repo)
    result = loop("work-on", "issue-37", cwd=repo)
    assert result.exit_code == 0, result.output
    assert "wrote docs/specs/issue-37/requirements.md from its template" in result.stdout
    assert "- `docs/specs/issue-37/brainstorm.md` — approved upstream; derive from it" in (
        result.stdout
    )
    req = front_matter(item_dir / "requirements.md")
    assert (req["type"], req["workItem"], req["status"]) == ("requirements", "issue-37", "draft")
    # The mirror is ahead (needs-review): reported, never silently moved back.
    assert (item_dir / "execution-log.md").read_bytes() == log_before
    assert _head(repo) == head
    assert _dirty(repo) == ["?? docs/specs/issue-37/requirements.md"]


def test_work_on_a_shipped_item_briefs_the_review_and_writes_nothing(
    loop: Loop, repo: Path
) -> None:
    head = _head(repo)
    result = loop("work-on", "issue-21", cwd=repo)
    assert result.exit_code == 0, result.output
    assert "\n# issue-21: all 6 tasks done: review the work\n" in result.stdout
    assert "- `docs/specs/issue-21/tasks.md` — what was done" in result.stdout
    assert (_head(repo), _dirty(repo)) == (head, [])


def test_work_on_brief_for_a_bugfix_speaks_of_bugfix_md(loop: Loop, repo: Path) -> None:
    result = loop("work-on", "issue-80", "--dry-run", "--json", cwd=repo)
    assert result.exit_code == 0, result.output
    brief = json.loads(result.stdout)["brief"]
    assert "### R<n>" not in brief
    assert "loop approve issue-80 bugfix --by @handle" in brief
