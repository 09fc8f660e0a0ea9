"""The exact ``loop`` commands the hooks name, spelled so the agent can run them.

A hook runs as ``<absolute loop entry point> hook …`` (``loop install`` writes
that path). The commands it tells the agent to run use plain ``loop`` when the
``loop`` on the agent's PATH is that same program, and the absolute path
otherwise (a virtual environment that is not activated).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

# Single quotes: pasted into a shell, nothing inside them is expanded.
_DID = "'<what is done so far>'"
_NEXT = "'<the concrete next step>'"


def entry_point(argv0: str | None = None, executable: str | None = None) -> list[str]:
    """The running loop as an argument list: its console script, or ``python -m the_loop``.

    Paths are made absolute but symlinks are kept: a virtual environment's
    ``python`` is a symlink whose path is what selects the environment.
    """
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = sys.executable if executable is None else executable
    path = Path(argv0)
    if path.name in ("loop", "loop.exe") and path.exists():
        return [os.path.abspath(argv0)]
    return [os.path.abspath(executable), "-m", "the_loop"]


def loop_words(env: Mapping[str, str], argv0: str | None = None) -> str:
    """How the agent should spell ``loop`` in a command line."""
    entry = entry_point(argv0)
    if len(entry) == 1:
        import shutil  # (a few ms of imports most hook calls never need)

        found = shutil.which("loop", path=env.get("PATH"))
        if found and Path(found).resolve() == Path(entry[0]).resolve():
            return "loop"
    return shlex.join(entry)


def mid_task_command(loop: str, item: str, task: str | None) -> str:
    """``loop checkpoint ITEM --mid-task [--task N] --did "…" --next "…"``."""
    words = [loop, "checkpoint", item, "--mid-task"]
    if task:
        words += ["--task", task]
    return " ".join([*words, "--did", _DID, "--next", _NEXT])


def task_done_command(loop: str, item: str, task: str) -> str:
    """``loop task done ITEM N --did "…" --next "…"``."""
    return " ".join([loop, "task", "done", item, task, "--did", _DID, "--next", _NEXT])


def hook_command(entry: Sequence[str], event: str, harness: str) -> str:
    """The command line a harness runs for ``event`` (what ``loop install`` writes)."""
    return shlex.join([*entry, "hook", event, "--harness", harness])
