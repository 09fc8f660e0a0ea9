"""Campaign: a full disk, a permission error, a read-only file system — at every write site.

Each write site of each state-changing command is made to fail with ENOSPC,
EACCES and EROFS (and the log append with a short write, as a full disk does),
at its first, second, … matching operation until the command no longer hits
it. The fault is injected into the real ``loop`` process by a test-side
``sitecustomize`` (tests/helpers/faults.py); loop's code has no switch for it.

After each fault: the command exits 1 or 2 with ``error: <file>…`` (never 3,
never a traceback, never death by a signal); the project is either untouched
(byte for byte), or the checkpoint completed, or — when the fault hit after
the commit — ``loop doctor --repair`` completes it; ``loop doctor`` never fails
internally; and the same command, run again without the fault, succeeds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.faults import Ran, fault_site, run_faulty
from helpers.project import (
    ITEM_DIR,
    NEXT,
    STATE,
    commits,
    entries,
    git,
    journal,
    ok,
    project_copy,
    run,
    snapshot,
    task_states,
)

from the_loop.tasks import TaskState

pytestmark = [pytest.mark.slow, pytest.mark.campaign]

ERRNOS = ("ENOSPC", "EACCES", "EROFS")
MAX_SKIP = 8
DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)
DONE_3 = ("task", "done", "7", "3", "--did", "the give-up line", "--next", NEXT)


@dataclass(frozen=True)
class Site:
    """Where a write happens: a path pattern and the operations that write it."""

    name: str
    match: str
    ops: str = "open,write,replace,link,mkdir,fsync"
    faults: tuple[str, ...] = ERRNOS


# The operation that writes each file: a temporary file's creation (open) and its
# rename (replace) for whole-file writes, the open and the write for an append.
CHECKPOINT_SITES = (
    Site("tick: tasks.md", r"/issue-7/tasks\.md$", "open,replace"),
    Site(
        "append: execution-log.md",
        r"/issue-7/execution-log\.md$",
        "open,write",
        faults=(*ERRNOS, "short"),
    ),
    Site("journal", r"/state/checkpoint\.json$", "replace"),
    Site("restore copies", r"/state/[^/]+\.orig$", "open"),
    Site("reset record", r"/state/resets/[^/]+\.json$", "open"),
    Site("lock", r"/state/lock$", "open,write"),
    Site("state .gitignore", r"/state/\.gitignore$", "open"),
)


@dataclass
class Count:
    runs: int = 0
    fired: int = 0
    untouched: int = 0
    completed: int = 0
    repaired: int = 0


def assert_clear_failure(ran: Ran) -> None:
    assert ran.returncode in (0, 1, 2), (ran.returncode, ran.output)
    assert "Traceback" not in ran.output, ran.output
    assert "internal error" not in ran.output, ran.output
    if ran.returncode != 0:
        first = ran.stderr.splitlines()[0]
        assert first.startswith("error: "), ran.stderr
        assert "/" in first or ".md" in first or ".json" in first, first


def consistent(root: Path) -> None:
    """Task ⇔ entry ⇔ commit, no journal, no leftovers, a clean tree."""
    assert journal(root) is None
    states = task_states(root)
    found = entries(root)
    history = commits(root)
    for task, state in states.items():
        logged = sum(e.summary.startswith(f"task {task} done") for e in found)
        committed = sum(f"Loop-Task: {task}" in m.splitlines() for m in history)
        expected = (1, 1) if state is TaskState.DONE else (0, 0)
        assert (logged, committed) == expected, (task, state, logged, committed)
    assert list((root / STATE).glob("*.orig")) == []
    assert [p for p in root.rglob("*.tmp") if ".git" not in p.parts] == []
    assert git(root, "status", "--porcelain") == ""


def test_faults_at_every_checkpoint_write_site(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    record_property: Callable[[str, object], None],
) -> None:
    site_dir = fault_site(tmp_path / "site")
    count = Count()
    per_site: dict[str, int] = {}
    for site in CHECKPOINT_SITES:
        for fault in site.faults:
            for skip in range(MAX_SKIP + 1):
                root = project_copy(tmp_path_factory, tmp_path / f"p{count.runs}")
                if site.name == "state .gitignore":
                    (root / STATE / ".gitignore").unlink()
                before = snapshot(root)
                ran = run_faulty(
                    root,
                    *DONE_1,
                    site=site_dir,
                    match=site.match,
                    fault=fault,
                    ops=site.ops,
                    skip=skip,
                )
                count.runs += 1
                if not ran.fired:
                    assert ran.returncode == 0, ran.output
                    break
                count.fired += 1
                per_site[site.name] = per_site.get(site.name, 0) + 1
                assert_clear_failure(ran)
                outcome(root, before, count)
                doctor = run(root, "doctor")
                assert doctor.exit_code in (0, 1), doctor.output
                ok(root, *DONE_3)  # the project works on
                consistent(root)
    summary = ", ".join(f"{name} {n}" for name, n in per_site.items())
    record_property(
        "campaign",
        f"faults in task done: {count.fired} faults fired in {count.runs} runs "
        f"({', '.join(ERRNOS)}, short write) — {count.untouched} left everything as before, "
        f"{count.completed} completed the checkpoint; {count.repaired} of the {count.fired} "
        "left a journal that doctor --repair finished or undid; "
        f"0 internal errors; by site: {summary}",
    )
    assert set(per_site) == {s.name for s in CHECKPOINT_SITES}


def outcome(root: Path, before: dict[str, bytes], count: Count) -> None:
    """Untouched, completed, or finished by ``doctor --repair``: nothing half-done."""
    if journal(root) is not None:  # the fault came after the commit, or stopped the undo
        repair = run(root, "doctor", "--repair")
        assert repair.exit_code in (0, 1), repair.output
        assert journal(root) is None, repair.output
        count.repaired += 1
    after = snapshot(root)
    if all(after[k] == before[k] for k in ("tasks", "log", "index", "head")):
        count.untouched += 1
        assert task_states(root)["1"] is TaskState.OPEN
        return
    count.completed += 1
    assert task_states(root)["1"] is TaskState.DONE
    assert sum(e.summary.startswith("task 1 done") for e in entries(root)) == 1


# ---------------------------------------------------------------- the other commands


@dataclass(frozen=True)
class Command:
    """A state-changing command, the project it needs, and its write site."""

    name: str
    args: tuple[str, ...]
    site: Site
    prepare: Callable[[Path], None] = lambda root: None
    fresh: bool = False  # a project with approved specs, not yet in implementation


def _unapprove_requirements(root: Path) -> None:
    path = root / ITEM_DIR / "requirements.md"
    path.write_text(path.read_text().replace("status: approved", "status: in-review"))
    git(root, "commit", "-qam", "requirements back in review")


def _open_reset(root: Path) -> None:
    ok(root, *DONE_1)


COMMANDS = (
    Command("task start", ("task", "start", "7", "1"), Site("tasks.md", r"/issue-7/tasks\.md$")),
    Command(
        "phase crossing",
        ("execute-tasks", "7"),
        Site("execution-log.md", r"/issue-7/execution-log\.md$", "open,replace,link"),
        fresh=True,
    ),
    Command(
        "approve",
        ("approve", "7", "requirements", "--by", "@b"),
        Site("requirements.md", r"/issue-7/requirements\.md$"),
        _unapprove_requirements,
    ),
    Command(
        "new",
        ("new", "another item", "--id", "issue-9"),
        Site("staging folder", r"/docs/specs/\.?issue-9"),
    ),
    Command(
        "reset abort",
        ("reset", "abort", "7"),
        Site("history.jsonl", r"/state/resets/history\.jsonl$"),
        _open_reset,
    ),
    Command(
        "init",
        ("init", "--defaults"),
        Site("config.yaml", r"/\.the-loop/config\.yaml$"),
        lambda root: (root / ".the-loop/config.yaml").unlink(),
    ),
)


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_faults_in_other_commands(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    command: Command,
    record_property: Callable[[str, object], None],
) -> None:
    site_dir = fault_site(tmp_path / "site")
    fired = runs = 0
    for fault in ERRNOS:
        for skip in range(MAX_SKIP + 1):
            root = project_copy(tmp_path_factory, tmp_path / f"p{runs}", enter=not command.fresh)
            command.prepare(root)
            ran = run_faulty(
                root,
                *command.args,
                site=site_dir,
                match=command.site.match,
                fault=fault,
                ops=command.site.ops,
                skip=skip,
            )
            runs += 1
            if not ran.fired:
                assert ran.returncode == 0, ran.output
                break
            fired += 1
            assert_clear_failure(ran)
            assert run(root, "doctor").exit_code in (0, 1)
            again = run(root, *command.args)
            assert again.exit_code == 0, (fault, skip, again.output)
            assert [p for p in root.rglob("*.tmp") if ".git" not in p.parts] == []
    record_property(
        "campaign",
        f"faults in {command.name} ({command.site.name}): {fired} faults fired in {runs} runs, "
        "0 internal errors, each retried cleanly",
    )
    assert fired >= len(ERRNOS)
