"""The repositories the benchmark runs on, built once and cached by their parameters.

Three kinds, each a folder under ``OUT/repos/`` named after what it was built from
(``dag-random-n10000-s7``, ``all-i200-t50-s7``, ``commit-f20000-t300-s7``):

- a DAG repository: one approved work item ``bench-N`` whose tasks.md has N tasks
  of one shape (see gen.py), its locks recorded with the hashes loop would write;
- the ``--all`` repository: 200 approved items of 50 random-shape tasks each;
- the hooks repository: 50 approved items of 100 tasks, the first taken into
  implementation with a task in progress, and a Claude Code transcript beside it
  (what ``loop hook`` reads on its read paths);
- the commit repository: a git repository of 20,000 tracked files plus one item
  ``bench-commit`` (a chain of tasks) that real ``loop approve`` calls locked and
  ``loop execute-tasks`` took into implementation, so ``loop task done`` works on
  its lowest open task. Each ``task done`` uses a task up; :func:`commit_repo`
  rebuilds the repository when too few open tasks remain.

A fixture is built in a temporary folder and renamed into place; a stamp file
beside it (``NAME.json``) records the parameters and :data:`FIXTURE_VERSION`, so
a half-built or outdated fixture is never reused. The stamp lives outside the
folder so that ``git add -A`` in the commit repository never picks it up.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import gen

FIXTURE_VERSION = 1  # bump when a builder's output changes
BENCH = Path(__file__).resolve().parent
SOURCE = BENCH.parent  # the checkout whose loop is measured
COMMIT_ITEM = "bench-commit"
_OPEN_TASK = re.compile(r"^- \[ \] (\d+)\. ", re.MULTILINE)


def loop_command() -> list[str]:
    """How to run loop: this interpreter, ``-m the_loop``; :func:`env` picks the checkout."""
    return [sys.executable, "-m", "the_loop"]


def env(out: Path, source: Path = SOURCE, **extra: str) -> dict[str, str]:
    """The environment of every child: hermetic git identity and caches, no colour.

    ``PYTHONPATH`` puts ``source`` first, so the loop measured is that checkout's
    even where another loop is installed. Git reads a config file of the bench's
    own (identity, no signing) instead of the user's; loop's config-validation
    cache goes to ``OUT/xdg-cache`` so that it starts empty and stays the bench's.
    """
    gitconfig = out / "gitconfig"
    if not gitconfig.is_file():
        out.mkdir(parents=True, exist_ok=True)
        gitconfig.write_text(
            "[user]\n\tname = loop bench\n\temail = bench@loop.invalid\n"
            "[commit]\n\tgpgsign = false\n[init]\n\tdefaultBranch = main\n"
        )
    result = dict(os.environ)
    # PYTHONDONTWRITEBYTECODE would make every run recompile loop's modules, a
    # cost no installed loop pays (pip compiles the wheel's bytecode at install).
    drop = (
        "LOOP_NO_CACHE",
        "LOOP_SESSION_ID",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "PYTHONDONTWRITEBYTECODE",
    )
    for name in drop:
        result.pop(name, None)
    pythonpath = [str(source), *filter(None, [os.environ.get("PYTHONPATH")])]
    result.update(
        PYTHONPATH=os.pathsep.join(pythonpath),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        XDG_CACHE_HOME=str(out / "xdg-cache"),
        NO_COLOR="1",
        **extra,
    )
    return result


def _cached(out: Path, name: str, params: dict[str, object], build: Callable[[Path], None]) -> Path:
    """``OUT/repos/NAME``, built by ``build(folder)`` unless its stamp matches."""
    repos = out / "repos"
    root = repos / name
    stamp = repos / f"{name}.json"
    want = {"version": FIXTURE_VERSION, **params}
    try:
        if root.is_dir() and json.loads(stamp.read_text()) == want:
            return root
    except (OSError, ValueError):
        pass
    stamp.unlink(missing_ok=True)
    shutil.rmtree(root, ignore_errors=True)
    building = repos / f"{name}.building"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    build(building)
    building.rename(root)
    stamp.write_text(json.dumps(want, indent=2) + "\n")
    # loop keeps no answer computed from files changed in the last 2 s (its racy rule,
    # docs/decisions/0014): measured at once, a new fixture's warm rows would time the
    # first calls after a change instead of an agent asking again.
    time.sleep(2.1)
    return root


def dag_repo(out: Path, shape: str, n: int, seed: int = 7) -> Path:
    """One approved, hash-locked item ``bench-N`` with an N-task graph of ``shape``."""
    params: dict[str, object] = {"kind": "dag", "shape": shape, "n": n, "seed": seed}

    def build(root: Path) -> None:
        gen.write_files(root, gen.render_repo(gen.make_plan(n, seed, shape), "hashed"))

    return _cached(out, f"dag-{shape}-n{n}-s{seed}", params, build)


def all_repo(out: Path, items: int = 200, tasks: int = 50, seed: int = 7) -> Path:
    """``items`` approved items ``item-001``… of ``tasks`` random-shape tasks each.

    Each item has its own seed, so no two items share a task graph or a file's bytes
    (a content-keyed cache must not get 200 hits out of one parse).
    """
    params: dict[str, object] = {"kind": "all", "items": items, "tasks": tasks, "seed": seed}

    def build(root: Path) -> None:
        files = {".the-loop/config.yaml": 'version: "0.1.0"\n'}
        for k in range(1, items + 1):
            plan = gen.make_plan(tasks, seed * 1000 + k, "random", item=all_item(k))
            files.update(gen.render_item(plan, "hashed"))
        gen.write_files(root, files)

    return _cached(out, f"all-i{items}-t{tasks}-s{seed}", params, build)


def all_item(k: int) -> str:
    """The id of the k-th item (1-based) of the ``--all`` repository."""
    return f"item-{k:03d}"


def commit_repo(
    out: Path,
    files: int = 20_000,
    tasks: int = 300,
    seed: int = 7,
    need: int = 0,
    log_entries: int = 0,
) -> Path:
    """The git repository for ``task done``; rebuilt when fewer than ``need`` tasks are open.

    ``log_entries``: interim checkpoint entries written into the execution log
    (and committed) before the first ``task done``, for the log-length case.
    """
    name = f"commit-f{files}-t{tasks}-s{seed}" + (f"-l{log_entries}" if log_entries else "")
    params: dict[str, object] = {
        "kind": "commit",
        "files": files,
        "tasks": tasks,
        "seed": seed,
        "config": "version only",
    }
    if log_entries:
        params["log_entries"] = log_entries
    root = out / "repos" / name
    if root.is_dir() and len(open_tasks(root)) < need:
        (out / "repos" / f"{name}.json").unlink(missing_ok=True)

    def build(folder: Path) -> None:
        _build_commit_repo(out, folder, files, tasks, seed, log_entries)

    root = _cached(out, name, params, build)
    if len(open_tasks(root)) < need:
        raise SystemExit(f"bench: {root} has fewer than {need} open tasks; raise --commit-tasks")
    return root


def copy_for(root: Path, side: str) -> Path:
    """A fresh copy of the fixture ``root`` for one side of a comparison (``ROOT-SIDE``)."""
    copy = root.with_name(f"{root.name}-{side}")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, symlinks=True)
    return copy


def open_tasks(root: Path) -> list[str]:
    """The open task ids of the commit repository's item, in file order."""
    path = root / "docs" / "specs" / COMMIT_ITEM / "tasks.md"
    try:
        return _OPEN_TASK.findall(path.read_text(encoding="utf-8"))
    except OSError:
        return []


def source_file(k: int) -> str:
    """The path of the k-th (0-based) tracked source file: 100 files per package."""
    return f"src/pkg{k // 100:04d}/mod{k % 100:03d}.py"


def _build_commit_repo(
    out: Path, root: Path, files: int, tasks: int, seed: int, log_entries: int = 0
) -> None:
    for k in range(files):
        path = root / source_file(k)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(
            f'"""Module {k} of the benchmark tree."""\n\n\n'
            f"def value_{k}() -> int:\n    return {k * 7919 % 10007}\n".encode()
        )
    plan = gen.make_plan(tasks, seed, "chain", item=COMMIT_ITEM, done_fraction=0.0)
    gen.write_files(root, gen.render_item(plan, "draft"))
    child_env = env(out)
    git = ["git", "-C", str(root)]
    _run([*git, "init", "-q"], root, child_env)
    _run([*git, "add", "-A"], root, child_env)
    _run(
        [*git, "commit", "-q", "-m", "bench: source tree and a drafted work item"], root, child_env
    )
    loop = loop_command()
    _run([*loop, "init", "--defaults"], root, child_env)
    # The schema's defaults, written as the one required key: a config both trees of a
    # `--compare-src` run accept (init's template grows keys an older loop refuses, and
    # a refused config makes the older `task done` fail fast, not commit).
    (root / ".the-loop" / "config.yaml").write_text('version: "0.1.0"\n')
    _run([*git, "add", "-A"], root, child_env)
    _run([*git, "commit", "-q", "-m", "bench: loop init"], root, child_env)
    for artifact in ("requirements", "design", "tasks"):
        _run([*loop, "approve", COMMIT_ITEM, artifact, "--by", "@bench"], root, child_env)
    # Enters implementation: a checkpoint commit, then the phase-boundary reset.
    _run([*loop, "execute-tasks", COMMIT_ITEM, "--session", "bench"], root, child_env)
    _run([*loop, "reset", "confirm", COMMIT_ITEM, "--session", "bench-2"], root, child_env)
    if log_entries:
        _grow_log(root / "docs" / "specs" / COMMIT_ITEM / "execution-log.md", log_entries)
        _run([*git, "add", "-A"], root, child_env)
        _run([*git, "commit", "-q", "-m", f"bench: {log_entries} log entries"], root, child_env)
    status = _run([*git, "status", "--porcelain"], root, child_env)
    if status.strip():
        raise SystemExit(f"bench: the commit repository is not clean after set-up:\n{status}")


def _grow_log(log: Path, entries: int) -> None:
    """Append ``entries`` interim checkpoint entries, as a long-running item collects them.

    Each has loop's own fields and a WIP line naming a checkpoint commit, like the
    entries ``loop checkpoint --mid-task`` writes; none records a task as done, so
    the tasks ``task done`` finishes in the timed runs are still open.
    """
    with log.open("a", encoding="utf-8") as handle:
        for k in range(entries):
            day, minute = divmod(k, 1440)
            hour, minute = divmod(minute, 60)
            stamp = f"2027-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}T{hour:02d}:{minute:02d}Z"
            handle.write(
                f"\n### {stamp} — interim checkpoint during task 1\n\n"
                "- **Phase:** implementation\n"
                f"- **Did:** step {k} of the long task\n"
                "- **Checkpoint/tests:** not run\n"
                "- **Next:** continue task 1 from this interim checkpoint\n"
                "- **Context:** none — the window is not under pressure\n"
                "- **Blockers:** none\n"
                f"- **WIP:** committed with this entry (Loop-Checkpoint: bench-{k:06d})\n"
            )


HOOK_ITEM = "item-001"
HOOK_SESSION = "6b1f0c2e-0000-4d2a-9c3e-bench0000001"


def hooks_repo(out: Path, items: int = 50, tasks: int = 100, seed: int = 7) -> Path:
    """A git repository of ``items`` approved items; :data:`HOOK_ITEM` in implementation
    with its first task in progress; ``transcript.jsonl`` (in ``OUT``) at 120,000 tokens of
    a 200,000-token window (below the soft threshold: the every-tool-call path)."""
    params: dict[str, object] = {"kind": "hooks", "items": items, "tasks": tasks, "seed": seed}

    def build(root: Path) -> None:
        files = {".the-loop/config.yaml": 'version: "0.1.0"\n'}
        for k in range(1, items + 1):
            plan = gen.make_plan(tasks, seed * 1000 + k, "random", item=all_item(k))
            files.update(gen.render_item(plan, "hashed"))
        gen.write_files(root, files)
        child_env = env(out)
        git = ["git", "-C", str(root)]
        _run([*git, "init", "-q"], root, child_env)
        _run([*git, "add", "-A"], root, child_env)
        _run([*git, "commit", "-q", "-m", "bench: approved items"], root, child_env)
        loop = loop_command()
        _run([*loop, "execute-tasks", HOOK_ITEM, "--session", "bench"], root, child_env)
        _run([*loop, "doctor", "--repair"], root, child_env)  # closes the crossing's reset
        _run([*loop, "execute-tasks", HOOK_ITEM, "--session", HOOK_SESSION], root, child_env)

    return _cached(out, f"hooks-i{items}-t{tasks}-s{seed}", params, build)


def hook_transcript(out: Path, tokens: int = 120_000) -> Path:
    """A Claude Code transcript whose last reply used ``tokens`` (model with a 200k window)."""
    usage = {
        "input_tokens": 2,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": tokens - 2,
        "output_tokens": 10,
    }
    line = {
        "type": "assistant",
        "sessionId": HOOK_SESSION,
        "isSidechain": False,
        "message": {
            "id": "msg_1",
            "model": "claude-sonnet-4-5-20250929",
            "role": "assistant",
            "content": [{"type": "text", "text": "Working."}],
            "usage": usage,
        },
    }
    path = out / "transcript.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def _run(cmd: list[str], cwd: Path, child_env: dict[str, str]) -> str:
    result = subprocess.run(cmd, cwd=cwd, env=child_env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(
            f"bench: `{' '.join(cmd)}` exited {result.returncode} in {cwd}:\n"
            f"{result.stdout}{result.stderr}"
        )
    return result.stdout
