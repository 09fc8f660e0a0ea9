"""A task's ``_Test:_`` command: whether it can run as written, and running it.

loop runs a test command as an argument list, without a shell, unless
``testing.shell`` is true or the command asks for one itself (``sh -c '…'``).
A command written for a shell (``cd x && pytest``, ``FOO=1 pytest``,
``pytest | tee out``) then fails in a way that says nothing about the test, so
``loop check`` reports it where it is written, and ``loop task done --verify``
refuses it before anything runs.

Running is split from planning so that every check that takes milliseconds
happens before a test that may take minutes, and so that the CLI can show the
command and a live elapsed time while it runs (core code never prints).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import RefusedError, Where
from the_loop.findings import Finding, Level
from the_loop.io.processes import run as run_child
from the_loop.tasks import Task, test_command
from the_loop.tasks.values import test_text

if TYPE_CHECKING:
    from the_loop.workflow.item_view import ItemView

_OUTPUT_TAIL = 2000  # characters of a failing test's output kept for the message
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
_SHELL_WORDS = frozenset({"cd", "export", "source", ".", "set", "alias", "ulimit", "umask"})
_SINGLE_QUOTED = re.compile(r"'[^']*'")
_DOUBLE_QUOTED = re.compile(r'"(?:\\.|[^"\\])*"')
_EXPANSION = re.compile(r"\$[({]|\$[A-Za-z_]\w*|`")
_OPERATOR = re.compile(r"&&|\|\||[|;<>&]")
_GLOB = re.compile(r"(?<![\\\w])~|[*?]")
_NAME = re.compile(r"[A-Za-z_]\w*")
# Anything shell_features could find holds one of these characters or starts with one of
# these words (a code span's backtick may come before it in the raw _Test:_ value).
_MAYBE_SHELL = re.compile(
    r"[&|;<>$*?~=]|(?:^|[`\s])(?:cd|export|source|\.|set|alias|ulimit|umask)\s"
)


def shell_features(text: str) -> tuple[str, ...]:
    """What in ``text`` only a shell understands (``&&``, ``cd``, ``VAR=…``, ``$X``, globs)."""
    unquoted_single = _SINGLE_QUOTED.sub("''", text)
    found = [m.group() for m in _EXPANSION.finditer(unquoted_single)]
    bare = _DOUBLE_QUOTED.sub('""', unquoted_single)
    found += [m.group() for m in _OPERATOR.finditer(bare)]
    found += ["~" if m.group() == "~" else "glob" for m in _GLOB.finditer(bare)]
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    if words:
        name, eq, _ = words[0].partition("=")
        if words[0] in _SHELL_WORDS:
            found.append(words[0])
        elif eq and _NAME.fullmatch(name):
            found.append(f"{name}=…")
    return tuple(dict.fromkeys(found))


def explicit_shell(argv: list[str]) -> bool:
    """``sh -c '…'`` and the like: the command brings its own shell."""
    return len(argv) >= 3 and Path(argv[0]).name in _SHELLS and argv[1] == "-c"


def needs_shell(task: Task, *, shell: bool) -> tuple[str, ...]:
    """The shell-only features of ``task``'s test command, when it would run without one."""
    if shell or task.test is None or not _MAYBE_SHELL.search(task.test):
        return ()  # the common case, decided without parsing (tasks.md may hold 100k)
    text = test_text(task)
    if text is None:
        return ()
    features = shell_features(text)
    argv = test_command(task) if features else None
    if argv is None or explicit_shell(argv):
        return ()
    return features


def _shell_hint(item: str) -> str:
    return (
        "loop runs a test as an argument list, without a shell: set `testing.shell: true` in "
        ".the-loop/config.yaml (or in this item's overrides), or write the command as "
        f"`sh -c '…'`; then `loop check {item}`"
    )


def test_command_findings(report: ItemView) -> list[Finding]:
    """A warning for every ``_Test:_`` command that needs a shell it will not get."""
    if report.tasks is None:
        return []
    shell = report.config.testing.shell
    found = []
    for task in report.tasks.tasks:
        features = needs_shell(task, shell=shell)
        if features:
            found.append(
                Finding(
                    Level.WARNING,
                    "tasks.test-needs-shell",
                    f"task {task.id}'s test `{test_text(task)}` needs a shell "
                    f"({', '.join(features)}), but loop runs it without one: "
                    "`loop task done --verify` would fail",
                    Where(report.tasks.path, task.test_line or task.line),
                    hint=_shell_hint(report.id),
                )
            )
    return found


@dataclass(frozen=True)
class TestRun:
    """A test command ready to run: decided, checked, not started."""

    task: str
    argv: tuple[str, ...]
    shown: str  # the command as tasks.md writes it
    cwd: Path
    timeout: int


@dataclass(frozen=True)
class Verification:
    """The result of running a task's ``_Test:_`` command."""

    command: tuple[str, ...]
    returncode: int | None
    output: str
    timed_out: bool = False
    shown: str = ""

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def summary(self) -> str:
        shown = self.shown or shlex.join(self.command)
        if self.timed_out:
            return f"`{shown}` timed out"
        return f"`{shown}` exited {self.returncode} ({'pass' if self.passed else 'fail'})"


def plan_test(report: ItemView, task: Task) -> TestRun:
    """The test ``task`` names, ready to run; refused when it cannot run as written."""
    path = report.item.artifacts["tasks"].path
    argv = test_command(task)
    text = test_text(task)
    if argv is None or text is None:
        raise RefusedError(
            f"task {task.id} names no test command to verify",
            where=Where(path, task.test_line or task.line),
            hint="write the command in backticks: _Test:_ `pytest tests/test_x.py`",
        )
    shell = report.config.testing.shell
    features = needs_shell(task, shell=shell)
    if features:
        raise RefusedError(
            f"task {task.id}'s test `{text}` needs a shell ({', '.join(features)}); "
            "nothing was run",
            where=Where(path, task.test_line or task.line),
            hint=_shell_hint(report.id),
        )
    run = ("sh", "-c", text) if shell and not explicit_shell(argv) else tuple(argv)
    timeout = report.config.checkpoint.test_timeout_seconds
    return TestRun(task.id, run, text, report.ctx.project.root, timeout)


def run_test(run: TestRun) -> Verification:
    """Run a planned test with its timeout; its output is captured, never shown live.

    The test runs in its own process group: at the timeout the whole group is
    stopped (a test's children too), and a background job the test leaves
    behind holding the output pipe is never waited for.
    """

    try:
        ran = run_child(run.argv, cwd=run.cwd, timeout=run.timeout, merge_stderr=True)
    except FileNotFoundError:
        return Verification(run.argv, 127, f"{run.argv[0]}: command not found", shown=run.shown)
    except PermissionError:
        return Verification(run.argv, 126, f"{run.argv[0]}: permission denied", shown=run.shown)
    output = ran.stdout[-_OUTPUT_TAIL:]
    if ran.timed_out:
        return Verification(run.argv, None, output, True, shown=run.shown)
    return Verification(run.argv, ran.returncode, output, shown=run.shown)
