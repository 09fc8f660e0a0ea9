"""Run one agent process through the one runner, with what an agent run needs on top.

``the_loop.io.processes.run`` gives the process group, the deadline, the TERM
then KILL of the group and the bounded output. An agent run adds: its command
line and stdin come from an :class:`Invocation`; it dies with loop
(``PR_SET_PDEATHSIG`` on Linux), so a killed driver leaves no agent running on;
a longer grace before SIGKILL, so an agent can save its session; room for a long
JSON event stream (its start names the session, its end holds the result); and a
program that cannot start is a failed run (exit 127), not an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from the_loop.driver.agents import Invocation
from the_loop.io.processes import Completed, run

GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL
_TICK = 0.25
_KEEP_TAIL = 8 * 1024 * 1024  # bytes of stdout kept from the end: the result and usage
_KEEP_HEAD = 256 * 1024  # and from the start: the session or thread id


def run_process(
    invocation: Invocation,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    on_line: Callable[[str], None] = lambda line: None,
    on_tick: Callable[[float], None] = lambda elapsed: None,
    on_start: Callable[[int], None] = lambda pid: None,
) -> Completed:
    """Run ``invocation`` until it exits or ``timeout`` seconds pass.

    ``on_line`` gets each stdout line as it arrives (without its newline). A
    ``KeyboardInterrupt`` (or any other exception) while it runs stops the
    process group and is raised again.
    """
    try:
        return run(
            invocation.argv,
            cwd=cwd,
            env=env,
            timeout=timeout,
            stdin=invocation.stdin or None,
            keep=_KEEP_TAIL,
            head=_KEEP_HEAD,
            on_line=on_line,
            on_tick=on_tick,
            tick=_TICK,
            on_start=on_start,
            grace=GRACE_SECONDS,
            die_with_parent=True,
        )
    except OSError as exc:
        return Completed(127, "", f"{invocation.argv[0]}: {exc.strerror or exc}", 0.0)
