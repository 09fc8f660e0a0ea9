#!/usr/bin/env python3
"""Time whole `loop` processes on generated work items of 1k, 10k and 100k tasks.

    python bench/run.py [--n 1000 10000 100000] [--runs 5] [--out bench/out]

Each cell is one command run as a separate process (start-up included): one
warm-up, then ``--runs`` timed runs; the table shows the median wall time and
the median peak RSS of that process. It also times an append to execution
logs of 10 and 100,000 entries in-process, to show that an append does not
grow with the log. Results go to stdout (markdown) and OUT/results.json.

Run it from a checkout where loop is installed (`pip install -e .`). Python
writes bytecode caches on the first run; the warm-up absorbs that.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOOP = [sys.executable, "-m", "the_loop"]


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, int]:
    """Run ``cmd`` once: (wall seconds, peak RSS in MiB, exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, proc.returncode


def measure(cmd: list[str], cwd: Path, runs: int) -> dict[str, float]:
    timed(cmd, cwd)  # warm-up: bytecode caches, the config validation cache
    samples = [timed(cmd, cwd) for _ in range(runs)]
    return {
        "wall_s": statistics.median(s[0] for s in samples),
        "rss_mib": statistics.median(s[1] for s in samples),
        "exit": samples[-1][2],
    }


def commands(n: int) -> dict[str, list[str]]:
    item = f"bench-{n}"
    return {
        "next --json": ["next", item, "--json"],
        "status": ["status", item],
        "check": ["check", item],
        "graph --format mermaid": ["graph", item, "--format", "mermaid"],
    }


def append_cost(entries: int, tmp: Path) -> float:
    """Median seconds to append one entry to a log of ``entries`` entries."""
    from the_loop.log.execution_log import append_entry

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
        start = time.perf_counter()
        append_entry(log, entry.format(i=entries + i))
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    repos = options.out / "repos"
    subprocess.run(
        [sys.executable, str(HERE / "gen.py"), str(repos), "--n", *map(str, options.n)],
        check=True,
        stdout=subprocess.DEVNULL,
    )

    results: dict[str, object] = {"python": sys.version.split()[0], "runs": options.runs}
    floor = measure([*LOOP, "--version"], options.out, options.runs)
    results["startup"] = floor
    rows = []
    for n in options.n:
        repo = repos / f"n-{n}"
        for name, args in commands(n).items():
            cell = measure([*LOOP, *args], repo, options.runs)
            rows.append({"n": n, "command": f"loop {name}", **cell})
    results["commands"] = rows
    with tempfile.TemporaryDirectory() as tmp:
        results["append"] = {str(e): append_cost(e, Path(tmp)) for e in (10, 1_000, 100_000)}
    (options.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(render(results))
    return 0


def render(results: dict) -> str:
    start = results["startup"]
    lines = [
        f"Python {results['python']}; median of {results['runs']} runs after one warm-up.",
        "",
        f"`loop --version` (start-up floor): {start['wall_s']:.3f} s, {start['rss_mib']:.0f} MiB",
        "",
        "| command | tasks | wall s | peak MiB | exit |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in results["commands"]:
        lines.append(
            f"| `{row['command']}` | {row['n']:,} | {row['wall_s']:.3f} | "
            f"{row['rss_mib']:.0f} | {row['exit']} |"
        )
    append = results["append"]
    lines += [
        "",
        "Append one entry to an execution log (in-process): "
        + ", ".join(f"{int(k):,} entries: {v * 1000:.2f} ms" for k, v in append.items()),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
