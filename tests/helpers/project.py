"""Builders shared by the checkpoint, concurrency and ``loop task`` tests.

``make_project`` drives a real
project through the real CLI (approve requirements, design and tasks, then
``loop execute-tasks`` across the implementation boundary), so every test
starts where an agent starts: in implementation, with a clean git tree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import Result, invoke
from the_loop.log.execution_log import LogEntry, read_log
from the_loop.tasks import TaskState, read_tasks

ITEM = "issue-7"
ITEM_DIR = Path("docs/specs/issue-7")
TASKS = ITEM_DIR / "tasks.md"
LOG = ITEM_DIR / "execution-log.md"
STATE = Path(".the-loop/state")
JOURNAL = STATE / "checkpoint.json"
RESETS = STATE / "resets"
NOW = "2026-11-30T12:00Z"
NEXT = "implement task 2: the next concrete thing"

REQUIREMENTS = """\
---
type: requirements
status: draft
---

# Requirements: retries

### R1 — bounded retries

1. The system SHALL retry a failed dispatch up to the budget.
"""

DESIGN = """\
---
type: design
status: draft
---

# Design: retries

A retry ledger in the poller.
"""


Ran = Result  # the same value under the name these suites use


@dataclass(frozen=True)
class Spec:
    """One task of the generated tasks.md."""

    id: str
    title: str
    depends: tuple[str, ...] = ()
    test: str | None = "true"


# 1 and 3 are ready from the start; 2 waits for 1.
THREE_TASKS = (
    Spec("1", "config key"),
    Spec("2", "retry ledger", ("1",)),
    Spec("3", "give-up log line"),
)


def tasks_md(tasks: Sequence[Spec]) -> str:
    """A draft tasks.md with ``tasks``."""
    lines = ["---", "type: tasks", "status: draft", "---", "", "# Tasks: retries", ""]
    for task in tasks:
        lines.append(f"- [ ] {task.id}. {task.title}")
        lines.append(f"  - _Depends on:_ {', '.join(task.depends) or 'none'}")
        lines.append("  - _Requirements:_ R1")
        if task.test is not None:
            lines.append(f"  - _Test:_ `{task.test}`")
    return "\n".join(lines) + "\n"


def run(root: Path, *args: str, env: Mapping[str, str] | None = None) -> Ran:
    """``loop -C root args…`` in-process (fast; for setup and non-crashing commands)."""
    return invoke(["-C", str(root), *args], env=env)


def ok(root: Path, *args: str, env: Mapping[str, str] | None = None) -> Ran:
    """``run`` that must succeed."""
    ran = run(root, *args, env=env)
    assert ran.exit_code == 0, f"loop {' '.join(args)} failed:\n{ran.output}"
    return ran


def spawn(root: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """``python -m the_loop -C root args…`` as a separate process, not yet waited for."""
    return subprocess.Popen(
        [sys.executable, "-m", "the_loop", "-C", str(root), *args],
        cwd=root,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def process(
    root: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``loop`` in a separate process (crash injection needs a process to kill)."""
    child = spawn(root, *args, env=env)
    out, err = child.communicate(timeout=timeout)
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def git(root: Path, *args: str, check: bool = True) -> str:
    """The real git's stdout."""
    done = subprocess.run(["git", *args], cwd=root, text=True, capture_output=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def init_git(root: Path, *, commit: bool = True) -> None:
    """A repository on ``main``; with ``commit``, one initial commit of a README."""
    git(root, "init", "-q", "-b", "main")
    if commit:
        (root / "README.md").write_text("# sample project\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial commit")


def make_project(
    root: Path,
    *,
    config: str = "",
    tasks: Sequence[Spec] = THREE_TASKS,
    repo: bool = True,
    enter: bool = True,
) -> Path:
    """A project whose item ``issue-7`` has approved specs and (``enter``) is in implementation.

    The phase crossing's own reset is confirmed (from a fresh session, as
    after a clear), so ``loop doctor`` starts healthy, and whatever the
    crossing did not commit is committed, so the tree starts clean.
    """
    root.mkdir(parents=True, exist_ok=True)
    if repo:
        init_git(root)
    (root / ".the-loop").mkdir(exist_ok=True)
    (root / ".the-loop/config.yaml").write_text('version: "0.1.0"\n' + config)
    folder = root / ITEM_DIR
    folder.mkdir(parents=True, exist_ok=True)
    env = {"LOOP_NOW": NOW}
    for name, text in (
        ("requirements", REQUIREMENTS),
        ("design", DESIGN),
        ("tasks", tasks_md(tasks)),
    ):
        (folder / f"{name}.md").write_text(text)
        ok(root, "approve", "7", name, "--by", "@a", env=env)
    if enter:
        ok(root, "execute-tasks", "7", env=env)
        if (root / RESETS).is_dir() and list((root / RESETS).glob("*.json")):
            ok(root, "reset", "confirm", "7", "--session", "setup-session", env=env)
    if repo and git(root, "status", "--porcelain"):
        # the crossing committed only what checkpoint.stage allows (or nothing)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "project setup")
    return root


_TEMPLATES: dict[str, Path] = {}


def project_copy(factory: pytest.TempPathFactory, dest: Path, **kwargs: object) -> Path:
    """A copy of a ``make_project(**kwargs)`` project built once per session.

    ``factory`` is pytest's ``tmp_path_factory``. Copying a finished project
    (its ``.git`` included) costs milliseconds; building one runs the CLI
    four times.
    """
    key = repr(sorted(kwargs.items()))
    template = _TEMPLATES.get(key)
    if template is None or not template.is_dir():
        template = make_project(factory.mktemp("template") / "p", **kwargs)  # type: ignore[arg-type]
        _TEMPLATES[key] = template
    shutil.copytree(template, dest, symlinks=True)
    return dest


# ------------------------------------------------------------------ reading state


def task_states(root: Path) -> dict[str, TaskState]:
    """Every task's checkbox, parsed by loop's own reader (so the file must parse)."""
    return {t.id: t.state for t in read_tasks(root / TASKS).tasks}


def entries(root: Path) -> tuple[LogEntry, ...]:
    """Every log entry, parsed by loop's own reader."""
    return read_log(root / LOG).entries


def entries_for(root: Path, summary_prefix: str) -> list[LogEntry]:
    return [e for e in entries(root) if e.summary.startswith(summary_prefix)]


def commits(root: Path) -> list[str]:
    """Full messages of every commit on HEAD, newest first ([] before the first commit)."""
    if git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip() == "":
        return []
    out = git(root, "log", "-z", "--format=%B", "HEAD")
    return [m for m in out.split("\0") if m.strip()]


def commits_with(root: Path, trailer: str) -> list[str]:
    """Commit messages carrying the trailer line ``trailer`` exactly."""
    return [m for m in commits(root) if trailer in m.splitlines()]


def journal(root: Path) -> dict[str, object] | None:
    path = root / JOURNAL
    return json.loads(path.read_text()) if path.exists() else None


def reset_records(root: Path) -> list[dict[str, object]]:
    folder = root / RESETS
    if not folder.is_dir():
        return []
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def every_reset_record(root: Path) -> list[dict[str, object]]:
    """Open reset records and the closed ones in ``history.jsonl`` (oldest closed first).

    A reset left open by a checkpoint without a session id is closed as skipped by the
    next such checkpoint (issue 21), so "recorded once" looks in both places.
    """
    history = root / RESETS / "history.jsonl"
    lines = history.read_text().splitlines() if history.is_file() else []
    return [*(json.loads(line) for line in lines if line.strip()), *reset_records(root)]


def snapshot(root: Path) -> dict[str, bytes]:
    """The bytes of everything a checkpoint may touch."""
    files = {
        "tasks": root / TASKS,
        "log": root / LOG,
    }
    snap = {name: path.read_bytes() for name, path in files.items() if path.exists()}
    index = root / ".git/index"
    if index.exists():
        snap["index"] = index.read_bytes()
    head = root / ".git/HEAD"
    if head.exists():
        snap["head"] = git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False).encode()
    snap["resets"] = (
        "\n".join(sorted(p.name for p in (root / RESETS).glob("*"))).encode()
        if (root / RESETS).is_dir()
        else b""
    )
    return snap
