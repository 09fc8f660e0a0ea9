"""Drive the bundled example work item through loop, end to end, offline.

Copies examples/greeter into a temporary git repository and runs the real
`loop` CLI on it: init and config validation, status and check, approvals,
the phase boundary into implementation (a checkpoint, then a `clear`), and
every task of the DAG (brief → work → `loop task done --verify` → reset).
This script plays the agent: where an agent would write code, it writes the
files the task asks for.

    python examples/demo.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOOP = [sys.executable, "-m", "the_loop"]

# What the "agent" writes for each task of examples/greeter/docs/specs/issue-1/tasks.md.
WORK = {
    "1": {
        "greet/__init__.py": '''\
        """Greet people by name."""


        def greet(name: str) -> str:
            """Return the greeting for ``name`` (a stranger when it is empty)."""
            return f"Hello, {name or 'stranger'}!"
        '''
    },
    "2": {
        "greet/__main__.py": '''\
        """Print a greeting: python -m greet NAME."""

        import sys

        from greet import greet

        print(greet(sys.argv[1] if len(sys.argv) > 1 else ""))
        '''
    },
    "3": {
        "README.md": """\
        # greeter (loop example project)

        Usage: `python -m greet Ada` prints `Hello, Ada!`.
        """
    },
    "4": {
        "test_greet.py": """\
        import subprocess
        import sys
        import unittest

        from greet import greet


        class GreetTest(unittest.TestCase):
            def test_name(self):
                self.assertEqual(greet("Ada"), "Hello, Ada!")

            def test_stranger(self):
                self.assertEqual(greet(""), "Hello, stranger!")

            def test_command_line(self):
                out = subprocess.run([sys.executable, "-m", "greet", "Ada"],
                                     capture_output=True, text=True, check=True).stdout
                self.assertEqual(out.strip(), "Hello, Ada!")
        """
    },
}


def run(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `loop ARGS` in the demo repo, echoing the command and its output."""
    print(f"\n$ loop {' '.join(_quote(a) for a in args)}", flush=True)
    result = subprocess.run(
        [*LOOP, *args],
        cwd=repo,
        text=True,
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    sys.stdout.write(result.stdout)
    sys.stdout.write(result.stderr)
    if check and result.returncode != 0:
        raise SystemExit(f"demo: `loop {' '.join(args)}` exited {result.returncode}")
    return result


def _quote(arg: str) -> str:
    return f'"{arg}"' if (" " in arg or not arg) else arg


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, text=True, capture_output=True, check=True
    ).stdout


def setup(repo: Path) -> None:
    shutil.copytree(HERE / "greeter", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Loop Demo")
    git(repo, "config", "user.email", "demo@example.invalid")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "greeter: drafted spec for issue-1")


def do_task(repo: Path, task_id: str) -> None:
    """The agent's part: write what the task asks for."""
    for rel, text in WORK[task_id].items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    print(f"  (the agent writes {', '.join(WORK[task_id])})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, help="build the demo repo here and keep it")
    options = parser.parse_args()
    base = options.keep or Path(tempfile.mkdtemp(prefix="loop-demo-"))
    repo = base / "greeter"
    if repo.exists():
        raise SystemExit(f"demo: {repo} already exists")
    setup(repo)
    print(f"demo repository: {repo}")

    run(repo, "init", "--defaults")
    run(repo, "config", "validate")
    run(repo, "status", "1")
    run(repo, "check", "1")
    run(repo, "execute-tasks", "1", check=False)  # refused: nothing is approved yet
    for artifact in ("requirements", "design", "tasks"):
        run(repo, "approve", "1", artifact, "--by", "@demo-reviewer")
    run(repo, "graph", "1")
    run(repo, "work-on", "1", "--session", "session-1")  # crosses into implementation: clear
    session = "session-2"  # the clear ended session-1; a fresh one resumes from disk
    run(repo, "reset", "confirm", "1", "--session", session)
    run(repo, "resume", "1")

    while True:
        step = run(repo, "execute-tasks", "1", "--session", session)
        task_id = _task_of(step.stdout)
        if task_id is None:
            break
        do_task(repo, task_id)
        done = run(
            repo,
            "task",
            "done",
            "1",
            task_id,
            "--verify",
            "--session",
            session,
            "--did",
            f"wrote {', '.join(WORK[task_id])}",
            "--next",
            "hand out the next ready task with `loop execute-tasks 1`",
        )
        if "reset: clear" in done.stdout:
            # the last task also entered needs-review: a clear, so a fresh session
            session = f"session-{int(session.rsplit('-', 1)[1]) + 1}"
        run(repo, "reset", "confirm", "1", "--session", session)  # a compaction keeps it

    run(repo, "status", "1")
    run(repo, "log", "1", "--last", "2")
    run(repo, "check", "1")
    print("\n$ git log --oneline")
    print(git(repo, "log", "--oneline"), end="")
    print(f"\ndemo finished: {repo}")
    if options.keep is None:
        print("(the folder is temporary; pass --keep DIR to keep a copy)")
    return 0


def _task_of(brief: str) -> str | None:
    """The task id a brief hands out (``# issue-1 task 3: …``), if any."""
    for line in brief.splitlines():
        if line.startswith("# issue-1 task "):
            return line.split()[3].rstrip(":")
    return None


if __name__ == "__main__":
    raise SystemExit(main())
