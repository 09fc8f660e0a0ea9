"""The quick path: the reports an agent asks for on every step, answered without click.

Importing click costs about 40 ms, more than everything else a warm ``loop next
--json`` does on a small plan. So ``main`` first offers the command line to
:func:`run`, which answers the read-only reports (``status``, ``next``, ``check``,
``graph``) itself when their command line is in the plain form agents and
scripts use and stdout is not a terminal. It computes the same
:class:`~the_loop.cli.item_answers.Answer` as the click command and prints it as
``click.echo`` would to a pipe (no colour codes).

Anything else goes to click, unchanged: another command, ``--help``, an option
or a form not listed below, a terminal (colours), and every error: these
commands only read, so click simply runs the command again and reports the
error its usual way. tests/cli/test_quick_path.py holds both paths to the same
output and exit code.
"""

from __future__ import annotations

import os
import sys

# Not `typing.TYPE_CHECKING`, nor pathlib: each would cost more start-up than a
# kept answer (the_loop.cli.answer_memo) takes to print.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from the_loop.cli.answer_memo import Kept
    from the_loop.cli.item_answers import Answer

# command: (options it takes after its name, whether its ID is required)
_COMMANDS: dict[str, tuple[frozenset[str], bool]] = {
    "status": (frozenset({"--json", "--full", "--all"}), False),
    "next": (frozenset({"--json", "--all-ready", "--full"}), True),
    "check": (frozenset({"--json", "--strict", "--all"}), False),
    "graph": (frozenset({"--json"}), True),
}
_GLOBAL_FLAGS = frozenset({"--json", "--no-cache"})


class _Line:
    """A command line in the plain form the quick path answers."""

    def __init__(self) -> None:
        self.repo: str | None = None
        self.no_cache = False
        self.command = ""
        self.item: str | None = None
        self.flags: set[str] = set()


def parse(argv: list[str]) -> _Line | None:
    """The command line, or None when it is not in a form this path answers."""
    line = _Line()
    args = iter(argv)
    for arg in args:
        if arg in _GLOBAL_FLAGS:
            line.flags.add(arg)
        elif arg in ("-C", "--repo"):
            value = next(args, None)
            if value is None or value.startswith("-"):
                return None
            line.repo = value
        elif arg.startswith("--repo=") and len(arg) > len("--repo="):
            line.repo = arg[len("--repo=") :]
        elif arg in _COMMANDS:
            line.command = arg
            break
        else:
            return None
    if not line.command:
        return None
    line.no_cache = "--no-cache" in line.flags
    options, needs_item = _COMMANDS[line.command]
    for arg in args:
        if arg in options:
            line.flags.add(arg)
        elif not arg.startswith("-") and line.item is None:
            line.item = arg
        else:
            return None
    if needs_item and line.item is None:
        return None
    return line


def run(argv: list[str]) -> int | None:
    """Print the answer to ``argv`` and return the exit code; None: click must handle it."""
    if argv[:1] == ["hook"]:
        from the_loop.cli.hook_quick import run as run_hook

        return run_hook(argv)
    line = parse(argv)
    if line is None or sys.stdout.isatty():
        return None
    from the_loop.io import collector

    try:
        with collector.paused_for_command():
            kept = _kept_or_computed(argv, line)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except Exception:  # a usage error, a bad file, a bug: click reports it, as always
        return None
    out, before, after, code = kept
    try:
        _err(before)
        sys.stdout.write(out)
        sys.stdout.flush()
        _err(after)
    except BrokenPipeError:
        # The reader went away (`loop graph --json | head`); nothing left to say.
        sys.stderr.close()
        return 1
    return code


def _kept_or_computed(argv: list[str], line: _Line) -> Kept:
    """The kept answer while its inputs hold; else computed (and kept when it may be)."""
    from the_loop.cli.answer_memo import Memo

    try:
        memo = None if line.no_cache else Memo.find(argv, line.repo)
    except OSError:
        memo = None
    if memo is None:
        return _printed(line)
    return memo.load() or memo.compute(lambda: _printed(line))


def _printed(line: _Line) -> Kept:
    """What the command prints: stdout, stderr before and after it, and the exit code."""
    from the_loop.cli.text import strip_ansi

    answer = _answer(line)
    plain_err = bool(os.environ.get("NO_COLOR")) or not sys.stderr.isatty()
    notes, errors = (strip_ansi(t) if plain_err else t for t in (answer.notes, answer.errors))
    return strip_ansi(answer.text), notes, errors, answer.exit


def _err(text: str) -> None:
    """``text`` on stderr as ``click.echo(err=True)`` prints it."""
    if not text:
        return
    sys.stdout.flush()  # what came before on stdout stays before
    sys.stderr.write(text)
    sys.stderr.flush()


def _answer(line: _Line) -> Answer:
    from pathlib import Path

    from the_loop.cli import item_answers
    from the_loop.config.project_root import find_project_root
    from the_loop.io import content_cache

    content_cache.switch_off(line.no_cache)
    cwd = Path.cwd()
    root = find_project_root(cwd, None if line.repo is None else Path(line.repo))
    flags, item = line.flags, line.item
    as_json = "--json" in flags
    if line.command == "status":
        return item_answers.status_answer(
            root, cwd, item, all_items="--all" in flags, as_json=as_json, full="--full" in flags
        )
    if line.command == "next":
        assert item is not None
        return item_answers.next_answer(
            root,
            cwd,
            item,
            all_ready="--all-ready" in flags,
            as_json=as_json,
            full="--full" in flags,
        )
    if line.command == "check":
        return item_answers.check_answer(
            root, cwd, item, all_items="--all" in flags, strict="--strict" in flags, as_json=as_json
        )
    assert item is not None
    return item_answers.graph_answer(root, cwd, item, fmt="text", as_json=as_json)
