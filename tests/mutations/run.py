"""Prove the suite still catches feature-breaking changes: apply each mutation, run its tests.

    python tests/mutations/run.py [--only NAME] [--list] [--jobs N] [--keep]

Each mutation (``catalog.py``) breaks one feature in a copy of the working
tree; the tests it names must then fail. Results: CAUGHT (the tests failed),
MISSED (they passed: the suite no longer guards that feature), STALE (the
function or snippet is gone: update the mutation), ERROR (the mutation or the
run itself went wrong; the output says how). The unmutated copy runs first and
must pass, or nothing else means anything (BROKEN BASELINE). Exit 0 only when
every mutation is CAUGHT.

The copy is run with ``PYTHONPATH`` pointing at it, so both the tests'
in-process imports and the ``python -m the_loop`` processes they start load
the mutated package (the ``subprocess-sanity`` mutation proves the latter).
Standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from catalog import MUTATIONS, Mutation
from splice import Stale, replace_body, replace_text

REPO = Path(__file__).resolve().parents[2]
COPIED = ("the_loop", "tests", "templates", "schema", "commands", "pyproject.toml", "README.md")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")
TIMEOUT = 600.0  # seconds for one pytest run; a hang is reported, not waited out
TAIL = 25  # lines of pytest output shown for an unexpected result


@dataclass(frozen=True)
class Result:
    """What one run found."""

    name: str
    verdict: str  # CAUGHT | MISSED | STALE | ERROR | TIMEOUT | PASSED | BROKEN BASELINE
    seconds: float
    detail: str = ""  # the failing test that caught it, or why it is not CAUGHT
    output: str = ""


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run the baseline and the mutations, print the table."""
    args = _parser().parse_args(argv)
    chosen = _choose(args.only)
    if args.list:
        for m in chosen:
            print(f"{m.name:32} {m.path}:{m.function or 'text'}\n{'':32} {m.feature}")
        return 0
    python = _python()
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="loop-mutations-"))
    try:
        baseline = _baseline(python, workdir, chosen)
        print(_row(baseline, "(unmutated)", _union(chosen)), flush=True)
        if baseline.verdict != "PASSED":
            print(baseline.output)
            print("BROKEN BASELINE: the unmutated tree fails its own selection; fix that first")
            return 2
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(_mutate, python, workdir, m, args.keep) for m in chosen]
            results = []
            for m, future in zip(chosen, futures, strict=True):
                result = future.result()
                results.append(result)
                print(_row(result, m.feature, m.selection), flush=True)
    finally:
        if args.keep:
            print(f"copies kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    _report(results, time.monotonic() - started)
    return 0 if all(r.verdict == "CAUGHT" for r in results) else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this mutation (repeatable, or comma-separated)",
    )
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="mutations run at once (default 1: the machine is shared)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the mutated copies")
    return parser


def _choose(only: list[str]) -> list[Mutation]:
    names = [n for item in only for n in item.split(",") if n]
    known = {m.name for m in MUTATIONS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown mutation(s): {', '.join(unknown)}; see --list")
    return [m for m in MUTATIONS if not names or m.name in names]


def _python() -> str:
    """An interpreter with pytest: this one, else the worktree's ``.venv``."""
    for candidate in (sys.executable, str(REPO / ".venv" / "bin" / "python")):
        probe = subprocess.run([candidate, "-c", "import pytest"], capture_output=True)
        if probe.returncode == 0:
            return candidate
    raise SystemExit("no python with pytest: install the test extras ('.[test]') and retry")


# ---------------------------------------------------------------- copies and runs


def _copy(workdir: Path, name: str) -> Path:
    """A fresh copy of the working tree, with ``../shared`` beside it as in the real layout."""
    place = workdir / name
    root = place / "repo"
    root.mkdir(parents=True)
    for entry in COPIED:
        source = REPO / entry
        if source.is_dir():
            shutil.copytree(source, root / entry, ignore=SKIPPED, symlinks=True)
        elif source.exists():
            shutil.copy2(source, root / entry)
    shared = REPO.parent / "shared"
    if shared.is_dir():
        (place / "shared").symlink_to(shared)  # the corpus tests read ../shared
    return root


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _pytest(
    python: str, root: Path, selection: Sequence[str], *, first_failure: bool
) -> tuple[int | None, str]:
    """Run pytest on ``selection`` in ``root``; (exit status or None on timeout, output)."""
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-x"] if first_failure else []
    try:
        done = subprocess.run(
            [*command, *selection],
            cwd=root,
            env=_env(root),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else ""
        return None, out
    return done.returncode, done.stdout + done.stderr


def _imports_from(python: str, root: Path) -> str:
    """Where a child python started with the runner's environment finds ``the_loop``."""
    probe = subprocess.run(
        [python, "-c", "import the_loop; print(the_loop.__file__)"],
        cwd=root.parent,  # not the copy itself: only PYTHONPATH may point there
        env=_env(root),
        capture_output=True,
        text=True,
    )
    return probe.stdout.strip() or probe.stderr.strip()


def _baseline(python: str, workdir: Path, chosen: Sequence[Mutation]) -> Result:
    started = time.monotonic()
    root = _copy(workdir, "baseline")
    found = _imports_from(python, root)
    if not found.startswith(str(root)):
        detail = f"a child python imports the_loop from {found}, not from the copy"
        return Result("baseline", "BROKEN BASELINE", 0.0, detail, detail)
    status, output = _pytest(python, root, _union(chosen), first_failure=False)
    seconds = time.monotonic() - started
    if status == 0:
        return Result("baseline", "PASSED", seconds)
    return Result("baseline", "BROKEN BASELINE", seconds, _first_failure(output), _tail(output))


def _mutate(python: str, workdir: Path, mutation: Mutation, keep: bool) -> Result:
    started = time.monotonic()
    root = _copy(workdir, mutation.name)
    try:
        try:
            _apply(root, mutation)
        except Stale as exc:
            return Result(mutation.name, "STALE", 0.0, f"{mutation.path}: {exc}")
        except (ValueError, SyntaxError) as exc:
            return Result(mutation.name, "ERROR", 0.0, f"{mutation.path}: {exc}")
        status, output = _pytest(python, root, mutation.selection, first_failure=True)
        seconds = time.monotonic() - started
        if status is None:
            return Result(mutation.name, "TIMEOUT", seconds, f"over {TIMEOUT:g}s", output)
        if status == 1:
            return Result(mutation.name, "CAUGHT", seconds, _first_failure(output))
        if status == 0:
            return Result(mutation.name, "MISSED", seconds, "every selected test passed", output)
        # 2: interrupted (a collection error), 3: internal, 4: usage, 5: nothing collected
        return Result(mutation.name, "ERROR", seconds, f"pytest exited {status}", _tail(output))
    finally:
        if not keep:
            shutil.rmtree(root.parent, ignore_errors=True)


def _apply(root: Path, mutation: Mutation) -> None:
    path = root / mutation.path
    if not path.is_file():
        raise Stale("file not found")
    source = path.read_text(encoding="utf-8")
    if mutation.function is not None:
        assert mutation.body is not None
        mutated = replace_body(source, mutation.function, mutation.body)
    else:
        assert mutation.old is not None and mutation.new is not None
        mutated = replace_text(source, mutation.old, mutation.new)
    if mutated == source:
        raise ValueError("the mutation changes nothing")
    path.write_text(mutated, encoding="utf-8")


# ---------------------------------------------------------------- reporting


def _union(chosen: Sequence[Mutation]) -> list[str]:
    """Every selected test target once, narrower targets dropped when their file is in."""
    targets = list(dict.fromkeys(t for m in chosen for t in m.selection))
    covered = {t for t in targets if "::" not in t}
    return [
        t
        for t in targets
        if not any(
            t != c and (t.startswith(c.rstrip("/") + "/") or t.startswith(c + "::"))
            for c in covered
        )
    ]


def _first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0]
    return ""


def _tail(output: str) -> str:
    return "\n".join(output.rstrip().splitlines()[-TAIL:])


def _row(result: Result, feature: str, selection: Sequence[str]) -> str:
    """One table row: verdict, name, time and feature; then what ran and what failed."""
    pad = " " * 10
    lines = [f"{result.verdict:9} {result.name:31} {result.seconds:6.1f}s  {feature}"]
    lines += [f"{pad}runs:   {target}" for target in selection]
    if result.detail:
        label = "caught:" if result.verdict == "CAUGHT" else "why:   "
        lines.append(f"{pad}{label} {result.detail.removeprefix('FAILED ')}")
    return "\n".join(lines)


def _report(results: list[Result], seconds: float) -> None:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    print()
    for r in results:
        if r.verdict != "CAUGHT":
            print(f"--- {r.verdict} {r.name}: {r.detail}")
            if r.output:
                print(_tail(r.output))
    summary = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
    print(f"{len(results)} mutations: {summary}; {seconds:.0f}s in all")


if __name__ == "__main__":
    sys.exit(main())
