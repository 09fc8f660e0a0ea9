"""Before and after in one run: issue 18's budgets, this checkout against an older one.

    git worktree add /tmp/loop-before 61d1ac9
    python bench/run.py --issue18 --compare-src /tmp/loop-before [--sizes 100 10000] [--runs 3]
    git worktree remove --force /tmp/loop-before

Both sides run with the same interpreter and fixtures; only ``PYTHONPATH`` differs
(see ``fixtures.env``), and :func:`check_sources` makes sure each child imports the
checkout it is meant to. Every comparison interleaves the two sides run by run
(the order flips each round), so load on a shared machine hits both alike; the
numbers are medians of the child's CPU time, which a busy machine distorts far
less than wall time.

The cases, each with its budget from issue 18:

- **reads**: ``next --json``, ``status``, ``check``, ``graph --json`` at each size,
  ``cold`` (``LOOP_NO_CACHE=1`` and loop's state caches deleted before each run)
  and ``edit`` (just after an edit: caches warm from the previous run, then one
  more ready task ticked in tasks.md before each run, so the parse cache misses
  and is rewritten, and the before side's answer memo cannot replay). The edit
  is dated three seconds back, as an agent's next call comes a few seconds after
  ``task done``: both sides' two-second racy rules then let them write their
  caches, and that write is part of what is measured. Budget: after ≤ 1.5× before.
- **hooks**: ``loop hook PostToolUse`` and ``SessionStart`` against this checkout's
  ``loop --version``. Budget: PostToolUse ≤ 3× (SessionStart ≤ 5×, the bench's
  standing target).
- **task done** on the 20,000-file repository against ``git add -A && git commit``
  of the same change. Budget: ≤ 3× the bare commit.
- **log length**: ``task done`` with a 100,000-entry execution log against one
  with 10 entries. Budget: ≤ 1.5×; loop's own part (each side's git floor taken
  off) is shown beside it, for information.

Neither side gets a kept answer in any row with a budget: cold turns every cache
off, the edit invalidates whatever was kept.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import fixtures
import reference

BEFORE_COMMIT = "61d1ac9"
ISSUE18_SIZES = (100, 10_000, 100_000)
ISSUE18_SHAPE = "random"
CASES = ("reads", "hooks", "task-done", "log-length")
READ_COMMANDS = {  # name: loop arguments after the item id
    "next --json": ["next", "--json"],
    "status": ["status"],
    "check": ["check"],
    "graph --json": ["graph", "--json"],
}
HOW_TO_BEFORE = (
    "make the before checkout and pass it:\n"
    f"    git worktree add /tmp/loop-before {BEFORE_COMMIT}\n"
    "    python bench/run.py --issue18 --compare-src /tmp/loop-before\n"
    "    git worktree remove --force /tmp/loop-before   # afterwards"
)


class CellLike(Protocol):
    """What this module reads of ``run.Cell`` (medians of one command's runs)."""

    @property
    def cpu(self) -> float: ...
    @property
    def wall(self) -> float: ...
    @property
    def exit(self) -> int: ...


Thunk = Callable[[], object]  # runs one timed process, returns a run.Sample


@dataclass
class Pair:
    """One row of the before/after table."""

    case: str
    size: str
    mode: str
    after: CellLike
    before: CellLike
    reference: CellLike | None = None
    reference_name: str = ""
    limit: float | None = None  # the budget
    against: str = "before"  # what the budget divides by: "before" or "reference"
    note: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def vs_before(self) -> float:
        return self.after.cpu / self.before.cpu if self.before.cpu else float("inf")

    @property
    def vs_reference(self) -> float | None:
        if self.reference is None or not self.reference.cpu:
            return None
        return self.after.cpu / self.reference.cpu

    @property
    def measured(self) -> float | None:
        """The ratio the budget applies to."""
        return self.vs_before if self.against == "before" else self.vs_reference

    @property
    def failed_exit(self) -> int:
        """A crash on the after side (exit ≥ 2; ``check`` exits 1 on findings)."""
        return self.after.exit if self.after.exit >= 2 or self.after.exit < 0 else 0

    @property
    def sides_differ(self) -> bool:
        """The two trees ended differently: they did not do the same work, so no ratio."""
        return self.before.exit != self.after.exit

    @property
    def passed(self) -> bool:
        measured = self.measured
        if self.failed_exit or self.sides_differ:
            return False
        return self.limit is None or (measured is not None and measured <= self.limit)


def check_sources(bench: Any, before_src: Path | None) -> dict[str, str]:
    """The before checkout's environment, once both sides are shown to import their own code.

    Exits with the commands that make the checkout when ``--compare-src`` is
    missing or is not a loop checkout.
    """
    if before_src is None:
        raise SystemExit(
            "bench: --issue18 compares against the code before issue 18; " + HOW_TO_BEFORE
        )
    if not (before_src / "the_loop" / "__init__.py").is_file():
        raise SystemExit(
            f"bench: --compare-src {before_src} is not a loop checkout; " + HOW_TO_BEFORE
        )
    before_env = fixtures.env(bench.out, before_src)
    probe = "import the_loop, pathlib; print(pathlib.Path(the_loop.__file__).resolve())"
    for side, env, src in (
        ("after", bench.env, fixtures.SOURCE),
        ("before", before_env, before_src),
    ):
        found = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=bench.out
        ).stdout.strip()
        if not found.startswith(str(src.resolve())):
            raise SystemExit(f"bench: the {side} side imports loop from {found!r}, not {src}")
    if before_src.resolve() == fixtures.SOURCE:
        bench.checks.append("--compare-src is this checkout: after and before are the same code")
    head = subprocess.run(
        ["git", "-C", str(before_src), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if head and not BEFORE_COMMIT.startswith(head[: len(BEFORE_COMMIT)]):
        bench.checks.append(f"the before checkout is at {head}, not {BEFORE_COMMIT}")
    return before_env


class TickEdits:
    """Edits of one tasks.md that each tick one more ready task, then put the file back.

    A tick keeps the approval hash (loop reads every checkbox as ``[ ]`` when it
    hashes), so ``check`` stays clean; a ready task keeps the graph consistent (no
    done task waits on an open one); and every edit gives new bytes, so no
    content-keyed cache entry of an earlier edit can answer.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.original = path.read_text(encoding="utf-8")
        self.lines = self.original.split("\n")
        tasks, _ = reference.parse(self.original)
        where: dict[str, int] = {}
        for index, line in enumerate(self.lines):
            match = reference.TASK.match(line)
            if match and match.group(1) == " ":
                where.setdefault(match.group(2), index)
        self.order = _ready_order(tasks)
        self.where = where
        self.done = 0

    def next(self) -> None:
        """Tick the next ready task, dated three seconds back (a distinct time each edit)."""
        if self.done >= len(self.order):
            raise SystemExit(f"bench: {self.path} has no open task left to tick")
        index = self.where[self.order[self.done]]
        self.lines[index] = self.lines[index].replace("- [ ] ", "- [x] ", 1)
        self.done += 1
        self.path.write_text("\n".join(self.lines), encoding="utf-8")
        stamp = time.time() - 3
        os.utime(self.path, (stamp, stamp))

    def restore(self) -> None:
        self.path.write_text(self.original, encoding="utf-8")
        self.lines = self.original.split("\n")
        self.done = 0


def _ready_order(tasks: dict[str, tuple[str, str, list[str]]]) -> list[str]:
    """Open tasks in an order where each one's dependencies are done before it."""
    done = {tid for tid, (mark, _, _) in tasks.items() if mark.lower() == "x"}
    order: list[str] = []
    pending = [tid for tid, (mark, _, _) in tasks.items() if mark == " "]
    while pending and len(order) < 500:
        ready = [tid for tid in pending if all(d in done for d in tasks[tid][2])]
        if not ready:
            break
        for tid in ready[: 500 - len(order)]:
            done.add(tid)
            order.append(tid)
        pending = [tid for tid in pending if tid not in done]
    return order


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of this comparison, on run.py's parser."""
    parser.add_argument(
        "--issue18",
        action="store_true",
        help="issue 18's before/after table (needs --compare-src DIR, a checkout of "
        f"{BEFORE_COMMIT}); only it runs unless --only names other cases",
    )
    parser.add_argument(
        "--issue18-cases",
        nargs="+",
        choices=CASES,
        default=list(CASES),
        help="with --issue18: only these comparisons (default: all)",
    )


# --- the cases ---------------------------------------------------------------------------


def issue18(bench: Any, tools: Any) -> list[Pair]:
    """Every case of issue 18, before and after; ``tools`` is run.py's module (its runners)."""
    options = bench.options
    before_env = check_sources(bench, options.compare_src)
    sizes = options.sizes if "sizes" in options.given else list(ISSUE18_SIZES)
    pairs: list[Pair] = []
    cases: dict[str, Callable[[], list[Pair]]] = {
        "reads": lambda: reads(bench, tools, before_env, sizes),
        "hooks": lambda: hooks(bench, tools, before_env),
        "task-done": lambda: task_done(bench, tools, before_env),
        "log-length": lambda: log_length(bench, tools, before_env),
    }
    for name in options.issue18_cases:
        print(f"bench: issue18 {name}", file=sys.stderr, flush=True)
        pairs += cases[name]()
    return pairs


def reads(bench: Any, tools: Any, before_env: dict[str, str], sizes: Sequence[int]) -> list[Pair]:
    """The four reads at each size, cold and just after an edit, after against before."""
    pairs: list[Pair] = []
    before_cold = {**before_env, "LOOP_NO_CACHE": "1"}
    for n in sizes:
        root = fixtures.dag_repo(bench.out, ISSUE18_SHAPE, n)
        item = f"bench-{n}"
        edits = TickEdits(root / "docs" / "specs" / item / "tasks.md")
        for name, args in READ_COMMANDS.items():
            cmd = [*bench.loop, args[0], item, *args[1:]]

            def cold(env: dict[str, str], cmd: list[str] = cmd, root: Path = root) -> object:
                tools.clear_loop_cache(root)
                return tools.run_once(cmd, root, env)

            cells = tools.interleave(
                {"after": lambda: cold(bench.cold_env), "before": lambda: cold(before_cold)},
                bench.runs,
            )
            pairs.append(_read_pair(name, n, "cold", cells))

            def edited(
                env: dict[str, str],
                cmd: list[str] = cmd,
                root: Path = root,
                tick: Thunk = edits.next,
            ) -> object:
                tick()
                return tools.run_once(cmd, root, env)

            tools.clear_loop_cache(root)
            for env in (bench.env, before_env):  # caches warm from a previous run
                tools.run_once(cmd, root, env)
            try:
                cells = tools.interleave(
                    {"after": lambda: edited(bench.env), "before": lambda: edited(before_env)},
                    bench.runs,
                )
                if name == "next --json":
                    _agree_after_edit(bench, tools, before_env, root, item, edits)
            finally:
                edits.restore()
                tools.clear_loop_cache(root)  # a 100k-task entry can be tens of MB
            pairs.append(_read_pair(name, n, "after an edit", cells))
    return pairs


def _agree_after_edit(
    bench: Any, tools: Any, before_env: dict[str, str], root: Path, item: str, edits: TickEdits
) -> None:
    """Note when either side's ``next`` after one more edit is not the reference's answer.

    A kept answer replayed after the edit would name the task the edit just ticked:
    this is what shows the edit rows time parse work, not replay.
    """
    edits.next()
    tasks_md = edits.path
    ref = subprocess.run(
        [sys.executable, str(reference.__file__), str(tasks_md)],
        capture_output=True,
        text=True,
    )
    want = (json.loads(ref.stdout)["next"] or {}).get("id")
    for side, env in (("after", bench.env), ("before", before_env)):
        got = subprocess.run(
            [*bench.loop, "next", item, "--json"], cwd=root, env=env, capture_output=True, text=True
        )
        try:
            found = (json.loads(got.stdout).get("next") or {}).get("id")
        except (ValueError, AttributeError):
            found = "?"
        if found != want:
            bench.checks.append(
                f"{item} after an edit: the {side} side's next is {found}, the reference's {want}"
            )


def _read_pair(name: str, n: int, mode: str, cells: dict[str, CellLike]) -> Pair:
    pair = Pair(name, f"{n:,} tasks", mode, cells["after"], cells["before"], limit=1.5)
    _print(pair)
    return pair


def hooks(bench: Any, tools: Any, before_env: dict[str, str]) -> list[Pair]:
    """PostToolUse and SessionStart, both sides, against this checkout's ``loop --version``."""
    root = fixtures.hooks_repo(bench.out)
    # Each tree on its own copy: a session record holds the PostToolUse memo, stamped
    # with the code that wrote it, so on one shared project each side would throw the
    # other's away on every call and both would pay for the config at every tool call.
    roots = {"after": fixtures.copy_for(root, "after"), "before": fixtures.copy_for(root, "before")}
    transcript = fixtures.hook_transcript(bench.out)
    version = [*bench.loop, "--version"]
    thunks: dict[str, Thunk] = {
        "version after": lambda: tools.run_once(version, root, bench.env),
        "version before": lambda: tools.run_once(version, root, before_env),
    }
    for event, extra in (
        ("PostToolUse", {"transcript_path": str(transcript), "tool_name": "Bash"}),
        ("SessionStart", {"source": "resume"}),
    ):
        cmd = [*bench.loop, "hook", event, "--harness", "claude"]
        for side, env in (("after", bench.env), ("before", before_env)):
            where = roots[side]
            stdin = json.dumps(
                {"session_id": fixtures.HOOK_SESSION, "cwd": str(where), "hook_event_name": event}
                | extra
            )
            thunks[f"{event} {side}"] = functools.partial(tools.run_once, cmd, where, env, stdin)
    cells = tools.interleave(thunks, bench.runs)
    ref = cells["version after"]
    pairs = [Pair("loop --version", "", "", ref, cells["version before"])]
    _print(pairs[0])
    for event, limit in (("PostToolUse", 3.0), ("SessionStart", 5.0)):
        pair = Pair(
            f"hook {event}",
            "50 items",
            "",
            cells[f"{event} after"],
            cells[f"{event} before"],
            ref,
            "loop --version",
            limit,
            "reference",
            note="" if event == "PostToolUse" else "the bench's target; issue 18 sets none",
        )
        _print(pair)
        pairs.append(pair)
    return pairs


class CommitSides:
    """``task done``, or the hand-made commit, on one commit repository.

    The two trees never share one: each writes state files (reset records, the
    ledger) in its own version's format, and a newer loop rightly refuses an older
    one's records. The before side works on a copy made for the run.
    """

    def __init__(self, bench: Any, tools: Any, root: Path) -> None:
        self.bench, self.tools, self.root = bench, tools, root
        self.files: int = bench.options.commit_files
        self.counter = 0

    def change(self) -> str:
        """Edit one tracked source file, as the agent's work would; return the task."""
        self.counter += 1
        path = self.root / fixtures.source_file(self.counter * 37 % self.files)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"# bench edit {time.time_ns()}\n")
        return fixtures.open_tasks(self.root)[0]

    def loop_done(self, env: dict[str, str]) -> object:
        task = self.change()
        return self.tools.run_once(self.bench._task_done(task), self.root, env)

    def git_commit(self) -> object:
        task = self.change()
        self.tools._tick_and_log(self.root, task)
        message = f"chore({fixtures.COMMIT_ITEM}): task {task}"
        return self.tools.run_once(
            ["sh", "-c", 'git add -A && git commit -q -m "$0"', message], self.root, self.bench.env
        )


def task_done(bench: Any, tools: Any, before_env: dict[str, str]) -> list[Pair]:
    """``task done`` of both sides on the 20,000-file repository against the bare commit."""
    options = bench.options
    root = fixtures.commit_repo(
        bench.out, options.commit_files, options.commit_tasks, need=(bench.runs + 1) * 3 + 1
    )
    sides = CommitSides(bench, tools, root)
    before = CommitSides(bench, tools, fixtures.copy_for(root, "before"))
    cells = tools.interleave(
        {
            "after": lambda: sides.loop_done(bench.env),
            "before": lambda: before.loop_done(before_env),
            "git": sides.git_commit,
        },
        bench.runs,
    )
    pair = Pair(
        "task done",
        f"{options.commit_files:,} files",
        "",
        cells["after"],
        cells["before"],
        cells["git"],
        "git add -A && git commit",
        3.0,
        "reference",
    )
    _print(pair)
    return [pair]


def log_length(bench: Any, tools: Any, before_env: dict[str, str]) -> list[Pair]:
    """``task done`` with a long execution log against one with 10 entries, both sides."""
    options = bench.options
    entries = options.log_entries
    need = (bench.runs + 1) * 3 + 1
    roots = {
        length: fixtures.commit_repo(
            bench.out, options.commit_files, options.commit_tasks, need=need, log_entries=count
        )
        for length, count in (("short", 10), ("long", entries))
    }
    thunks: dict[str, Thunk] = {}
    for length, root in roots.items():
        side = CommitSides(bench, tools, root)
        before = CommitSides(bench, tools, fixtures.copy_for(root, "before"))
        thunks[f"after {length}"] = functools.partial(side.loop_done, bench.env)
        thunks[f"before {length}"] = functools.partial(before.loop_done, before_env)
        thunks[f"git {length}"] = side.git_commit
    cells = tools.interleave(thunks, bench.runs)
    size = f"{entries:,} entries"
    before_ratio = cells["before long"].cpu / cells["before short"].cpu
    pair = Pair(
        "task done, long log",
        size,
        "",
        cells["after long"],
        cells["before long"],
        cells["after short"],
        "after, 10 entries",
        1.5,
        "reference",
        note=f"before: {before_ratio:.2f}× its own 10-entry run",
    )
    _print(pair)

    def own(side: str, length: str) -> float:
        return cells[f"{side} {length}"].cpu - cells[f"git {length}"].cpu

    own_after = own("after", "long") / own("after", "short")
    own_before = own("before", "long") / own("before", "short")
    git_ratio = cells["git long"].cpu / cells["git short"].cpu
    own_pair = Pair(
        "task done, long log: loop's own part",
        size,
        "",
        _Cpu(own("after", "long"), cells["after long"].wall, cells["after long"].exit),
        _Cpu(own("before", "long"), cells["before long"].wall, cells["before long"].exit),
        _Cpu(own("after", "short"), cells["after short"].wall, 0),
        "after, 10 entries",
        None,
        "reference",
        note=(
            f"git floor off each side; after {own_after:.2f}×, before {own_before:.2f}×; "
            f"git add+commit alone {git_ratio:.2f}×"
        ),
    )
    _print(own_pair)
    return [pair, own_pair]


@dataclass(frozen=True)
class _Cpu:
    """A derived cell: CPU seconds left after a floor is taken off."""

    cpu: float
    wall: float
    exit: int


# --- output ------------------------------------------------------------------------------


def render_pair(pair: Pair) -> str:
    """One markdown line of the before/after table."""
    ref = pair.vs_reference
    if pair.limit is None:
        budget = "—"
    elif pair.against == "before":
        budget = f"after/before ≤ {pair.limit:g}×"
    else:
        budget = f"after/ref ≤ {pair.limit:g}×"
    if pair.failed_exit:
        verdict = f"ERR exit {pair.failed_exit}"
    elif pair.sides_differ:
        verdict = f"ERR before exit {pair.before.exit}, after {pair.after.exit}"
    elif pair.limit is None:
        verdict = "info"
    else:
        verdict = "PASS" if pair.passed else "FAIL"
    reference_ms = _ms(pair.reference.cpu) if pair.reference else ""
    return (
        f"| {pair.case} | {pair.size} | {pair.mode} | {_ms(pair.after.cpu)} | "
        f"{_ms(pair.before.cpu)} | {pair.vs_before:.2f}× | {pair.reference_name} | "
        f"{reference_ms} | {'' if ref is None else f'{ref:.2f}×'} | {budget} | {verdict} | "
        f"{pair.after.wall * 1000:.0f} / {pair.before.wall * 1000:.0f} | {pair.note} |"
    )


def render(pairs: Sequence[Pair], before_src: Path, runs: int, checks: Sequence[str]) -> str:
    """The before/after table, with a count of the budgets met and the bench's notes."""
    budgeted = [p for p in pairs if p.limit is not None]
    return "\n".join(
        [
            f"Issue 18, after ({fixtures.SOURCE}) against before ({before_src}); CPU ms are "
            f"medians of {runs} interleaved runs after one warm-up (child user+sys, git included).",
            "",
            "| case | size | cache | after CPU ms | before CPU ms | after/before | reference "
            "| ref CPU ms | after/ref | budget | result | wall ms after / before | note |",
            "|---|---|---|---:|---:|---:|---|---:|---:|---|---|---:|---|",
            *(render_pair(p) for p in pairs),
            "",
            f"{sum(p.passed for p in budgeted)} of {len(budgeted)} issue-18 budgets met.",
            *(f"- note: {c}" for c in checks),
        ]
    )


def as_json(pair: Pair) -> dict[str, object]:
    """A row of results.json."""
    return {
        "case": pair.case,
        "size": pair.size,
        "mode": pair.mode,
        "after": _cell_json(pair.after),
        "before": _cell_json(pair.before),
        "reference": _cell_json(pair.reference) if pair.reference else None,
        "reference_name": pair.reference_name,
        "after_over_before": pair.vs_before,
        "after_over_reference": pair.vs_reference,
        "limit": pair.limit,
        "against": pair.against,
        "passed": pair.passed,
        "note": pair.note,
    }


def _cell_json(cell: CellLike) -> dict[str, object]:
    try:
        return asdict(cell)  # type: ignore[call-overload]
    except TypeError:
        return {"cpu": cell.cpu, "wall": cell.wall, "exit": cell.exit}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}" if abs(seconds) >= 0.01 else f"{seconds * 1000:.2f}"


def _print(pair: Pair) -> None:
    print(f"  {render_pair(pair)}", file=sys.stderr, flush=True)
