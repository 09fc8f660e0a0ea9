#!/usr/bin/env python3
"""Time whole `loop` processes against a plain floor measured in the same run.

    python bench/run.py [--quick] [--sizes 100 10000] [--shapes random ladder]
                        [--runs 5] [--only NAME ...] [--compare-src DIR] [--out bench/out]

Every cell is a separate process (start-up included), one warm-up, then ``--runs``
timed runs; the numbers are medians of the child's CPU time (user + system, its
waited-for children included: the git processes loop runs) and of wall time. Each
loop figure is divided by a floor timed in the same run, the two interleaved (one
run of each per round, so a burst of load on a shared machine lands on both), and
the table puts the target beside the ratio:

- ``startup``: ``loop --version`` against ``python -c pass``;
- ``dag``: ``next --json``, ``check``, ``status``, ``graph --json`` against
  ``bench/reference.py`` on the same tasks.md, per shape and size, warm (loop's
  parse cache filled by the warm-up) and cold (``LOOP_NO_CACHE=1`` and every cache
  removed before each run); also the byte size of ``next --json``;
- ``all``: ``check --all`` over 200 items of 50 tasks against one item's ``check``;
- ``hooks``: ``loop hook PostToolUse`` (after every tool call) and ``loop hook
  SessionStart`` (the resume brief) in a 50-item project, against ``loop --version``;
- ``commit``: ``task done`` on a 20,000-file repository against ``git add -A &&
  git commit`` of an equivalent change (a source file edited, the task ticked,
  a log entry appended), and how many git processes one ``task done`` starts;
- ``log-length``: ``task done`` on that repository with a 100,000-entry execution
  log against the same with 10 entries, and loop's own part of it (the git floor
  of each side taken off);

Results go to stdout (markdown) and OUT/results.json. Fixtures are built once and
cached under OUT/repos/ (see fixtures.py).

``--issue18 --compare-src DIR`` prints issue 18's before/after table instead: this
checkout against the one in DIR, every case interleaved in one run (compare.py).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import fixtures

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference.py"
SHAPES = ("chain", "wide", "random", "ladder")
SIZES = (100, 1_000, 10_000, 100_000)
DAG_COMMANDS = {  # name: loop arguments after the item id
    "next --json": ["next", "--json"],
    "check": ["check"],
    "status": ["status"],
    "graph --json": ["graph", "--json"],
}
NEXT_JSON_LIMIT = 8 * 1024
GIT_CALL_LIMIT = 6


@dataclass(frozen=True)
class Sample:
    """One finished child process."""

    cpu: float  # user + system seconds, the child's waited-for children included
    wall: float
    rss_mib: float
    exit: int
    out_bytes: int


@dataclass(frozen=True)
class Cell:
    """Medians over the timed runs of one command."""

    cpu: float
    wall: float
    rss_mib: float
    exit: int
    out_bytes: int
    runs: int

    @staticmethod
    def of(samples: Sequence[Sample]) -> Cell:
        return Cell(
            cpu=statistics.median(s.cpu for s in samples),
            wall=statistics.median(s.wall for s in samples),
            rss_mib=statistics.median(s.rss_mib for s in samples),
            exit=max(samples, key=lambda s: abs(s.exit)).exit,
            out_bytes=int(statistics.median(s.out_bytes for s in samples)),
            runs=len(samples),
        )


@dataclass
class Row:
    """One line of the table: a measured value, its floor, and the target."""

    case: str
    shape: str
    size: str
    mode: str
    value: float  # loop's median CPU seconds, or a count / byte size
    floor: float | None  # the floor's median CPU seconds (None for counts and sizes)
    limit: float | None  # target: ratio ≤ limit, or value ≤ limit with no floor; None: info
    unit: str  # "ratio", "bytes" or "calls"
    wall: float | None = None
    floor_wall: float | None = None
    exit: int = 0
    note: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def measured(self) -> float:
        return self.value / self.floor if self.floor else self.value

    @property
    def passed(self) -> bool:
        """Within the target (a row without one passes when its command did not fail)."""
        return self.exit == 0 and (self.limit is None or self.measured <= self.limit)


def run_once(
    cmd: Sequence[str], cwd: Path, env: dict[str, str], stdin: str | None = None
) -> Sample:
    """Run ``cmd`` once (``stdin``: what it reads, a hook's JSON); stdout goes to a
    temporary file so its size can be read."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as source:
        if stdin is not None:
            source.write(stdin.encode())
            source.seek(0)
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=source if stdin is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.DEVNULL,
        )
        # wait4 rather than wait: it returns the child's own resource usage, which
        # includes every grandchild it reaped (loop's git calls, sh's git).
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        size = os.fstat(out.fileno()).st_size
    return Sample(
        cpu=usage.ru_utime + usage.ru_stime,
        wall=wall,
        rss_mib=usage.ru_maxrss / 1024,
        exit=proc.returncode,
        out_bytes=size,
    )


@dataclass(frozen=True)
class Spec:
    """One command to time: where it runs, its environment, what it reads, what precedes it."""

    cmd: Sequence[str]
    cwd: Path
    env: dict[str, str]
    stdin: str | None = None
    before: Callable[[], None] | None = None


def interleave(thunks: dict[str, Callable[[], Sample]], runs: int) -> dict[str, Cell]:
    """One warm-up round, then ``runs`` timed rounds of every thunk; the order flips each round.

    Interleaving is what makes a ratio trustworthy on a shared machine: a burst of
    load lands on the command and on its floor alike, instead of on whichever of
    the two happened to be running when it came. The warm-up round fills bytecode,
    the page cache and loop's own caches.
    """
    names = list(thunks)
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    for k in range(runs + 1):
        for name in names if k % 2 == 0 else reversed(names):
            sample = thunks[name]()
            if k:
                samples[name].append(sample)
    return {name: Cell.of(found) for name, found in samples.items()}


def measure_together(specs: Sequence[Spec], runs: int) -> list[Cell]:
    """:func:`interleave` for ``specs``: their cells, in their order."""
    cells = interleave({str(i): functools.partial(_run_spec, s) for i, s in enumerate(specs)}, runs)
    return list(cells.values())


def _run_spec(spec: Spec) -> Sample:
    if spec.before:
        spec.before()  # untimed
    return run_once(spec.cmd, spec.cwd, spec.env, spec.stdin)


def clear_loop_cache(root: Path) -> None:
    """Remove loop's parse cache (anything named ``*cache*`` in its state folder)."""
    state = root / ".the-loop" / "state"
    for path in state.glob("*cache*") if state.is_dir() else ():
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


class Bench:
    """Runs the selected cases and collects their rows."""

    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.out: Path = options.out
        self.runs: int = options.runs
        self.loop = fixtures.loop_command()
        self.env = fixtures.env(self.out)
        self.cold_env = fixtures.env(self.out, LOOP_NO_CACHE="1")
        self.rows: list[Row] = []
        self.checks: list[str] = []  # sanity notes (loop and the floor disagree, …)

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(f"  {render_row(row)}", file=sys.stderr, flush=True)

    # --- start-up --------------------------------------------------------------

    def startup(self) -> None:
        floor, loop = measure_together(
            [
                Spec([sys.executable, "-c", "pass"], self.out, self.env),
                Spec([*self.loop, "--version"], self.out, self.env),
            ],
            self.runs,
        )
        self.add(self._ratio("loop --version", "", "", "", loop, floor, 3.0, "python -c pass"))

    # --- parallel lanes ---------------------------------------------------------

    def parallel(self) -> None:
        """Wall-clock of --parallel 1, 2, 4 against the ideal, and a lane's per-task overhead."""
        import parallel_lanes as lanes

        seconds = self.options.parallel_seconds
        folder = self.out / "parallel"
        agent_wall = self._agent_wall(folder, seconds)
        ideal = 3 * agent_wall  # the critical path: three tasks, one per wave
        for count in (1, 2, 4):
            root = lanes.project(
                folder / f"waves-{count}", self.loop, self.env, seconds, lanes.waves
            )
            wall, code = lanes.timed_run(root, self.loop, self.env, count)
            row = Row(
                "parallel",
                "3 waves of 4",
                "12 tasks",
                f"--parallel {count}",
                wall,
                ideal,
                1.3 if count == 4 else None,
                "ratio",
                wall=wall,
                floor_wall=ideal,
                exit=code,
                note=f"ideal: 3 × {agent_wall:.2f} s",
            )
            self.add(row)
        quick = self._agent_wall(folder, 0.0)
        per_task: dict[int, float] = {}
        for count in (1, 2):
            root = lanes.project(folder / f"chain-{count}", self.loop, self.env, 0.0, lanes.chain)
            wall, code = lanes.timed_run(root, self.loop, self.env, count)
            per_task[count] = (wall - 12 * quick) / 12
        self.add(
            Row(
                "parallel overhead",
                "chain of 12",
                "per task",
                "lane vs serial",
                per_task[2],
                per_task[1],
                None,
                "ratio",
                wall=per_task[2],
                floor_wall=per_task[1],
                note="serial driver's per-task overhead",
            )
        )

    # --- the Temporal backend ------------------------------------------------------

    def temporal(self) -> None:
        """A task through --backend temporal against the same task through a local lane."""
        import temporal_lanes

        missing = temporal_lanes.available()
        if missing:
            sys.stderr.write(f"temporal: skipped ({missing})\n")
            return
        local, remote, code = temporal_lanes.per_task(self.out / "temporal", self.loop, self.env)
        self.add(
            Row(
                "temporal overhead",
                "chain of 12",
                "per task",
                "temporal vs local lane",
                remote,
                local,
                None,
                "ratio",
                wall=remote,
                floor_wall=local,
                exit=code,
                note=f"+{remote - local:.2f} s a task: workflow, fetch, push, result",
            )
        )

    def _agent_wall(self, folder: Path, seconds: float) -> float:
        """What one agent run takes by itself (its sleep plus a Python start)."""
        import parallel_lanes as lanes

        root = lanes.project(folder / "agent-alone", self.loop, self.env, seconds, lanes.waves)
        agent = root.parent / "agent"
        walls = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(
                [str(agent)],
                input=b"",
                cwd=root,
                env={**self.env, "LOOP_TASK": "1"},
                check=True,
                capture_output=True,
            )
            walls.append(time.perf_counter() - start)
        return sorted(walls)[1]

    # --- the hooks' read paths ---------------------------------------------------

    def hooks(self) -> None:
        root = fixtures.hooks_repo(self.out)
        transcript = fixtures.hook_transcript(self.out)
        version = Spec([*self.loop, "--version"], root, self.env)
        for event, extra, limit in (
            ("PostToolUse", {"transcript_path": str(transcript), "tool_name": "Bash"}, 3.0),
            ("SessionStart", {"source": "resume"}, 5.0),
        ):
            stdin = json.dumps(
                {
                    "session_id": fixtures.HOOK_SESSION,
                    "cwd": str(root),
                    "hook_event_name": event,
                    **extra,
                }
            )
            cmd = [*self.loop, "hook", event, "--harness", "claude"]
            floor, loop = measure_together([version, Spec(cmd, root, self.env, stdin)], self.runs)
            name = f"hook {event}"
            self.add(self._ratio(name, "", "50 items", "", loop, floor, limit, "loop --version"))

    # --- the DAG commands --------------------------------------------------------

    def dag(self) -> None:
        for shape in self.options.shapes:
            for n in self.options.sizes:
                root = fixtures.dag_repo(self.out, shape, n)
                self._dag_cell(root, shape, n)

    def _dag_cell(self, root: Path, shape: str, n: int) -> None:
        item = f"bench-{n}"
        tasks_md = root / "docs" / "specs" / item / "tasks.md"
        ref_cmd = [sys.executable, str(REFERENCE), str(tasks_md)]
        self._agree(root, item, ref_cmd, shape, n)
        for name, args in DAG_COMMANDS.items():
            cmd = [*self.loop, args[0], item, *args[1:]]
            floor, warm, cold = measure_together(
                [
                    Spec(ref_cmd, root, self.env),
                    Spec(cmd, root, self.env),
                    Spec(cmd, root, self.cold_env, before=lambda: clear_loop_cache(root)),
                ],
                self.runs,
            )
            self.add(self._ratio(name, shape, f"{n:,}", "warm", warm, floor, 2.0, "reference"))
            self.add(self._ratio(name, shape, f"{n:,}", "cold", cold, floor, 4.0, "reference"))
            if name == "next --json":
                self.add(
                    Row(
                        "next --json output",
                        shape,
                        f"{n:,}",
                        "",
                        warm.out_bytes,
                        None,
                        NEXT_JSON_LIMIT,
                        "bytes",
                        exit=warm.exit,
                    )
                )

    def next_cold(self) -> None:
        """Cold ``next --json`` (every cache off) against the plain-stdlib reader (issue 19).

        The wider reader (sub-tasks, optional tasks, checkpoints, waves, phases) must stay
        fast where plans are large: within 3x of the floor at 10k tasks and 2.5x at 100k
        (and 4x below that, the general cold target).
        """
        for shape in self.options.shapes:
            for n in self.options.sizes:
                root = fixtures.dag_repo(self.out, shape, n)
                item = f"bench-{n}"
                tasks_md = root / "docs" / "specs" / item / "tasks.md"
                cmd = [*self.loop, "next", item, "--json"]
                floor, cold = measure_together(
                    [
                        Spec([sys.executable, str(REFERENCE), str(tasks_md)], root, self.env),
                        Spec(
                            cmd,
                            root,
                            self.cold_env,
                            before=lambda root=root: clear_loop_cache(root),  # type: ignore[misc]
                        ),
                    ],
                    self.runs,
                )
                target = 2.5 if n >= 100_000 else 3.0 if n >= 10_000 else 4.0
                self.add(
                    self._ratio(
                        "next --json", shape, f"{n:,}", "cold", cold, floor, target, "reference"
                    )
                )

    def _agree(self, root: Path, item: str, ref_cmd: list[str], shape: str, n: int) -> None:
        """Note when loop's next task differs from the reference's (a broken floor)."""
        ref = subprocess.run(ref_cmd, cwd=root, env=self.env, capture_output=True, text=True)
        got = subprocess.run(
            [*self.loop, "next", item, "--json"],
            cwd=root,
            env=self.env,
            capture_output=True,
            text=True,
        )
        try:
            ref_next = (json.loads(ref.stdout)["next"] or {}).get("id")
            loop_next = (json.loads(got.stdout).get("next") or {}).get("id")
        except (ValueError, AttributeError):
            ref_next, loop_next = "?", "?"
        if ref_next != loop_next:
            self.checks.append(
                f"{shape} {n:,}: loop's next is {loop_next}, the reference's {ref_next}"
            )

    # --- check --all ---------------------------------------------------------------

    def check_all(self) -> None:
        items, tasks = self.options.all_items, self.options.all_tasks
        root = fixtures.all_repo(self.out, items, tasks)
        one = [*self.loop, "check", fixtures.all_item(1)]
        every = [*self.loop, "check", "--all"]
        size = f"{items}×{tasks}"
        for mode, env in (("warm", self.env), ("cold", self.cold_env)):
            before = (lambda: clear_loop_cache(root)) if mode == "cold" else None
            floor, loop = measure_together(
                [Spec(one, root, env, before=before), Spec(every, root, env, before=before)],
                self.runs,
            )
            self.add(self._ratio("check --all", "random", size, mode, loop, floor, 3.0, "check 1"))

    # --- task done -------------------------------------------------------------------

    def commit(self) -> None:
        runs = self.runs
        compare = self.options.compare_src
        # Each timed run of either side uses a task up; so do the warm-ups and the count.
        need = (runs + 1) * (3 if compare else 2) + 2
        root = fixtures.commit_repo(
            self.out, self.options.commit_files, self.options.commit_tasks, need=need
        )
        size = f"{self.options.commit_files:,} files"
        counter = 0
        # The other tree works on a copy: each writes state in its own version's format.
        other_root = fixtures.copy_for(root, "before") if compare else root

        def change(where: Path = root) -> str:
            """Edit one tracked source file, as the agent's work would; return the task."""
            nonlocal counter
            counter += 1
            path = where / fixtures.source_file(counter * 37 % self.options.commit_files)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"# bench edit {time.time_ns()}\n")
            return fixtures.open_tasks(where)[0]

        def loop_done(env: dict[str, str], where: Path = root) -> Sample:
            task = change(where)
            return run_once(self._task_done(task), where, env)

        def git_commit() -> Sample:
            task = change()
            _tick_and_log(root, task)
            message = f"chore({fixtures.COMMIT_ITEM}): task {task}"
            # One sh, as a user types it; sh's own cost is about a millisecond.
            return run_once(
                ["sh", "-c", 'git add -A && git commit -q -m "$0"', message], root, self.env
            )

        other_env = fixtures.env(self.out, compare) if compare else None
        loop_s, git_s, other_s = [], [], []
        for k in range(runs + 1):  # interleaved, so drift hits both sides alike
            samples = (loop_done(self.env), git_commit())
            other = loop_done(other_env, other_root) if other_env else None
            if k:
                loop_s.append(samples[0])
                git_s.append(samples[1])
                if other:
                    other_s.append(other)
        loop, git = Cell.of(loop_s), Cell.of(git_s)
        self.add(self._ratio("task done", "chain", size, "", loop, git, 1.5, "git add+commit"))
        if other_env:
            before = Cell.of(other_s)
            row = self._ratio(
                "task done vs --compare-src", "chain", size, "", loop, before, 1 / 1.5, "before"
            )
            self.add(row)
        self._count_git_calls(root, change)

    def _task_done(self, task: str) -> list[str]:
        """``loop task done`` of the commit repository's ``task``, as the agent runs it."""
        return [
            *self.loop,
            "task",
            "done",
            fixtures.COMMIT_ITEM,
            task,
            "--did",
            f"wrote the change for task {task}",
            "--next",
            f"implement task {int(task) + 1}: the next edit (tests in tests/test_bench.py)",
        ]

    def _count_git_calls(self, root: Path, change: Callable[[], str]) -> None:
        real = shutil.which("git", path=self.env.get("PATH"))
        if real is None:
            self.checks.append("git not found on PATH: git calls not counted")
            return
        wrap = self.out / "git-wrapper"
        wrap.mkdir(parents=True, exist_ok=True)
        log = self.out / "git-calls.log"
        log.unlink(missing_ok=True)
        script = wrap / "git"
        # A shell script first on PATH: log the arguments, then become the real git.
        script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
        script.chmod(0o755)
        env = {**self.env, "PATH": f"{wrap}{os.pathsep}{self.env.get('PATH', '')}"}
        task = change()
        sample = run_once(self._task_done(task), root, env)
        calls = log.read_text().splitlines() if log.exists() else []
        self.add(
            Row(
                "git processes per task done",
                "chain",
                f"{self.options.commit_files:,} files",
                "",
                len(calls),
                None,
                GIT_CALL_LIMIT,
                "calls",
                exit=sample.exit,
                extra={"calls": calls},
            )
        )

    # --- task done at any log length ---------------------------------------------------

    def log_length(self) -> None:
        """``task done`` with a 100k-entry execution log against one with 10, same run.

        Two copies of the commit repository that differ only in the log's length
        (``--log-entries`` interim entries, committed); the timed runs interleave.
        The git floor (``git add -A && git commit`` of the same change) is timed
        on both too: git hashes the whole log file into the commit, a cost that
        grows with the log whatever loop does, so the row ``loop's own part``
        subtracts it from both sides.
        """
        runs = self.runs
        files, tasks = self.options.commit_files, self.options.commit_tasks
        need = (runs + 1) * 2 + 1
        long_entries = self.options.log_entries
        roots = {
            entries: fixtures.commit_repo(self.out, files, tasks, need=need, log_entries=entries)
            for entries in (10, long_entries)
        }
        counters = dict.fromkeys(roots, 0)

        def change(entries: int) -> tuple[Path, str]:
            root = roots[entries]
            counters[entries] += 1
            path = root / fixtures.source_file(counters[entries] * 37 % files)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"# bench edit {time.time_ns()}\n")
            return root, fixtures.open_tasks(root)[0]

        def loop_done(entries: int) -> Sample:
            root, task = change(entries)
            return run_once(self._task_done(task), root, self.env)

        def git_commit(entries: int) -> Sample:
            root, task = change(entries)
            _tick_and_log(root, task)
            message = f"chore({fixtures.COMMIT_ITEM}): task {task}"
            return run_once(
                ["sh", "-c", 'git add -A && git commit -q -m "$0"', message], root, self.env
            )

        samples: dict[str, list[Sample]] = {
            "short": [],
            "long": [],
            "git-short": [],
            "git-long": [],
        }
        for k in range(runs + 1):  # interleaved, so drift hits both sides alike
            taken = {
                "short": loop_done(10),
                "long": loop_done(long_entries),
                "git-short": git_commit(10),
                "git-long": git_commit(long_entries),
            }
            if k:
                for name, sample in taken.items():
                    samples[name].append(sample)
        cells = {name: Cell.of(found) for name, found in samples.items()}
        size = f"{long_entries:,} entries"
        where = f"{files:,} files"
        self.add(
            self._ratio(
                "task done, long log",
                where,
                size,
                "",
                cells["long"],
                cells["short"],
                1.5,
                "10 entries",
            )
        )
        own_long = replace(cells["long"], cpu=cells["long"].cpu - cells["git-long"].cpu)
        own_short = replace(cells["short"], cpu=cells["short"].cpu - cells["git-short"].cpu)
        self.add(
            self._ratio(
                "task done, long log: loop's own part",
                where,
                size,
                "",
                own_long,
                own_short,
                1.5,
                "10 entries, git floor off both",
            )
        )
        self.add(
            self._ratio(
                "git add+commit, long log",
                where,
                size,
                "",
                cells["git-long"],
                cells["git-short"],
                None,
                "10 entries",
            )
        )

    # --- appending to a long log -----------------------------------------------------

    def append(self) -> None:
        """An append to a log of 100,000 entries against one to a log of 10 (in-process)."""
        sys.path.insert(0, str(fixtures.SOURCE))
        from the_loop.log.execution_log import append_entry

        with tempfile.TemporaryDirectory() as tmp:
            small, large = (_append_cost(append_entry, e, Path(tmp)) for e in (10, 100_000))
        self.add(
            Row(
                "append to a 100k-entry log",
                "",
                "100,000",
                "",
                large,
                small,
                None,
                "ratio",
                note="10 entries",
            )
        )

    # --- helpers -------------------------------------------------------------------------

    @staticmethod
    def _ratio(
        case: str,
        shape: str,
        size: str,
        mode: str,
        loop: Cell,
        floor: Cell,
        limit: float | None,
        floor_name: str,
    ) -> Row:
        return Row(
            case,
            shape,
            size,
            mode,
            loop.cpu,
            floor.cpu,
            limit,
            "ratio",
            wall=loop.wall,
            floor_wall=floor.wall,
            exit=loop.exit or floor.exit,
            note=floor_name,
            extra={"loop": asdict(loop), "floor": asdict(floor)},
        )


def _append_cost(append_entry: Callable[[Path, str], object], entries: int, tmp: Path) -> float:
    """Median seconds to append one entry to a log of ``entries`` entries."""
    log = tmp / f"log-{entries}.md"
    head = "---\ntype: execution-log\nphase: implementation\n---\n\n## Progress entries\n\n"
    entry = (
        "### 2026-11-30T10:00Z — task {i} done\n\n- **Phase:** implementation\n"
        "- **Did:** work\n- **Next:** the next task\n\n"
    )
    with log.open("w") as handle:
        handle.write(head)
        for i in range(entries):
            handle.write(entry.format(i=i))
    samples = []
    for i in range(21):
        start = time.process_time()
        append_entry(log, entry.format(i=entries + i))
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def _tick_and_log(root: Path, task: str) -> None:
    """The files ``task done`` changes, changed by hand: the tick and a log entry."""
    spec = root / "docs" / "specs" / fixtures.COMMIT_ITEM
    tasks_md = spec / "tasks.md"
    text = tasks_md.read_text(encoding="utf-8")
    tasks_md.write_text(text.replace(f"- [ ] {task}. ", f"- [x] {task}. ", 1), encoding="utf-8")
    stamp = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
    with (spec / "execution-log.md").open("a", encoding="utf-8") as handle:
        handle.write(
            f"\n### {stamp} — task {task} done\n\n- **Phase:** implementation\n"
            f"- **Did:** wrote the change for task {task}\n"
            "- **Checkpoint/tests:** not run\n"
            f"- **Next:** implement task {int(task) + 1}\n"
            "- **Context:** none — bench\n- **Blockers:** none\n"
        )


# --- output ----------------------------------------------------------------------------


def render_row(row: Row) -> str:
    """One markdown table line."""
    if row.unit == "ratio":
        value = _ms(row.value)
        floor = f"{_ms(row.floor)} ({row.note})" if row.floor is not None else ""
        measured = f"{row.measured:.2f}×"
        target = "—" if row.limit is None else f"≤ {row.limit:.2f}×"
        wall = f"{(row.wall or 0) * 1000:.0f} / {(row.floor_wall or 0) * 1000:.0f}"
    else:
        value, floor, wall = f"{row.value:,.0f} {row.unit}", "", ""
        measured = f"{row.value:,.0f}"
        target = f"< {row.limit:,.0f}" if row.unit == "bytes" else f"≤ {row.limit:,.0f}"
    verdict = "PASS" if row.passed else ("FAIL" if row.exit == 0 else f"ERR exit {row.exit}")
    if row.limit is None and row.exit == 0:
        verdict = "info"
    return (
        f"| {row.case} | {row.shape} | {row.size} | {row.mode} | {value} | {floor} | "
        f"{measured} | {target} | {verdict} | {wall} |"
    )


def _ms(seconds: float) -> str:
    """Milliseconds, with decimals only where whole ones would read as zero."""
    return f"{seconds * 1000:.0f}" if seconds >= 0.01 else f"{seconds * 1000:.2f}"


def render(rows: Sequence[Row], header: str, checks: Sequence[str]) -> str:
    """The markdown report."""
    targeted = [r for r in rows if r.limit is not None]
    lines = [
        header,
        "",
        "| case | shape | size | cache | loop CPU ms | floor CPU ms | ratio / value | target "
        "| result | wall ms loop / floor |",
        "|---|---|---:|---|---:|---:|---:|---:|---|---:|",
        *(render_row(r) for r in rows),
        "",
        f"{sum(r.passed for r in targeted)} of {len(targeted)} rows with a target pass.",
    ]
    lines += [f"- note: {c}" for c in checks]
    return "\n".join(lines)


def parse_options(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few runs (< 1 min)")
    parser.add_argument("--sizes", type=int, nargs="+", help="task counts for the DAG cases")
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, help="DAG shapes")
    parser.add_argument("--runs", type=int, help="timed runs per cell (after one warm-up)")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=(
            "startup",
            "dag",
            "next-cold",
            "all",
            "commit",
            "log-length",
            "append",
            "hooks",
            "parallel",
            "temporal",
        ),
        help="run only these cases",
    )
    parser.add_argument("--all-items", type=int, default=200)
    parser.add_argument("--all-tasks", type=int, default=50)
    parser.add_argument("--commit-files", type=int, default=20_000)
    parser.add_argument("--commit-tasks", type=int, default=300)
    parser.add_argument("--log-entries", type=int, default=100_000)
    parser.add_argument(
        "--compare-src",
        type=Path,
        help="another checkout (e.g. a worktree of an older commit): time its task done too",
    )
    parser.add_argument(
        "--parallel-seconds",
        type=float,
        default=4.0,
        help="what each agent of the parallel case takes (a fixed sleep)",
    )
    add_issue18_arguments(parser)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    options = parser.parse_args(argv)
    options.given = {k for k in ("sizes", "shapes", "runs", "only") if getattr(options, k)}
    if options.quick:
        options.sizes = options.sizes or [100, 1_000]
        options.runs = options.runs or 1
        options.shapes = options.shapes or ["random", "ladder"]
        options.only = options.only or [
            "startup",
            "dag",
            "all",
            "commit",
            "log-length",
            "append",
            "hooks",
        ]
    options.sizes = options.sizes or list(SIZES)
    options.runs = options.runs or 5
    options.shapes = options.shapes or list(SHAPES)
    options.only = options.only or [
        "startup",
        "dag",
        "all",
        "commit",
        "log-length",
        "append",
        "hooks",
    ]
    if options.compare_src is not None:
        options.compare_src = options.compare_src.resolve()
    options.out = options.out.resolve()
    return options


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; exit 0 when every row meets its target, else 1."""
    options = parse_options(argv)
    options.out.mkdir(parents=True, exist_ok=True)
    bench = Bench(options)
    started = time.perf_counter()
    cases = {
        "startup": bench.startup,
        "dag": bench.dag,
        "next-cold": bench.next_cold,
        "all": bench.check_all,
        "commit": bench.commit,
        "log-length": bench.log_length,
        "append": bench.append,
        "hooks": bench.hooks,
        "parallel": bench.parallel,
        "temporal": bench.temporal,
    }
    for name in options.only if not options.issue18 or "only" in options.given else ():
        print(f"bench: {name}", file=sys.stderr, flush=True)
        cases[name]()
    pairs = issue18_pairs(bench)
    elapsed = time.perf_counter() - started
    header = (
        f"Python {sys.version.split()[0]}; loop from {fixtures.SOURCE}; CPU ms are medians of "
        f"{options.runs} runs after one warm-up (child user+sys, its git calls included); "
        f"ratio = loop CPU / floor CPU from the same run; took {elapsed:.0f} s."
    )
    results = {
        "python": sys.version.split()[0],
        "source": str(fixtures.SOURCE),
        "runs": options.runs,
        "sizes": options.sizes,
        "shapes": options.shapes,
        "seconds": round(elapsed, 1),
        "checks": bench.checks,
        "rows": [{**asdict(r), "measured": r.measured, "passed": r.passed} for r in bench.rows],
    }
    if options.issue18:
        import compare

        results["issue18"] = [compare.as_json(p) for p in pairs]
    (options.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    if bench.rows or not options.issue18:
        print(render(bench.rows, header, bench.checks))
    if options.issue18:
        import compare

        print(compare.render(pairs, options.compare_src, options.runs, bench.checks))
    passed = all(r.passed for r in bench.rows) and all(p.passed for p in pairs)
    return 0 if passed else 1


# --- issue 18: before and after in one run (bench/compare.py) ------------------------------


def add_issue18_arguments(parser: argparse.ArgumentParser) -> None:
    """``--issue18`` and ``--issue18-cases``."""
    import compare

    compare.add_arguments(parser)


def issue18_pairs(bench: Bench) -> list[Any]:
    """Issue 18's before/after rows when ``--issue18`` is given, else none.

    Without ``--compare-src`` this stops with the commands that make the before
    checkout. The cases live in compare.py; they run loop through this module's
    runners (``run_once``, ``Cell``, ``clear_loop_cache``, ``_tick_and_log``).
    """
    if not bench.options.issue18:
        return []
    import compare

    return compare.issue18(bench, sys.modules[__name__])


if __name__ == "__main__":
    raise SystemExit(main())
