"""Printing a checkpoint and the reset directive that follows it.

The directive is the last thing a checkpointing command prints. ``task done``
and ``checkpoint`` get their reset already marked dispatched by the core (under
the same lock as the checkpoint); a phase crossing is still marked here.
"""

from __future__ import annotations

from pathlib import Path

import click

from the_loop.checkpoint.policy import Decision, Reset
from the_loop.checkpoint.transaction import Outcome
from the_loop.cli.output import bad, dim, good, heading, warn


def resolve_session_option(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> str | None:
    """``--session`` (or LOOP_SESSION_ID), else the session loop can tell is running.

    The harness's own variable (Claude Code, Codex) or the one live session the
    hooks recorded; see ``the_loop.checkpoint.seen_sessions.resolve_session``.
    """
    if value:
        return value
    from the_loop.checkpoint.seen_sessions import resolve_session
    from the_loop.cli.app import Env
    from the_loop.errors import LoopError

    env = ctx.find_object(Env)
    try:
        root = env.root if env is not None else None
    except LoopError:
        root = None  # the command itself reports a missing project
    return resolve_session(root, None)


SESSION = click.option(
    "--session",
    envvar="LOOP_SESSION_ID",
    metavar="ID",
    callback=resolve_session_option,
    help="The agent session taking this checkpoint (env LOOP_SESSION_ID; inside Claude "
    "Code or Codex found by itself); lets loop tell a compaction (same session) from a "
    "clear (new one).",
)

_FILES_SHOWN = 10  # the rest are counted; --json lists them all

_HOW = {
    Reset.CLEAR: "clear the context now: end this session and start a fresh one "
    "(Claude Code: /clear; Codex: /new)",
    Reset.COMPACT: "compact the context now (Claude Code and Codex: /compact), keeping the "
    "design constraints and conventions, dropping finished work",
    Reset.NONE: "no reset: carry on in this session",
}


def checkpoint_lines(outcome: Outcome) -> list[str]:
    """What the checkpoint did, in one or two lines."""
    parts = []
    if outcome.task and outcome.ticked:
        parts.append(f"task {outcome.task} ticked")
    parts.append("log entry written")
    if outcome.phase:
        parts.append(f"phase {outcome.phase}")
    if outcome.commit:
        parts.append(f"committed {outcome.commit[:10]}")
    elif outcome.commit_status == "skipped":
        parts.append("not committed (see the entry's WIP line)")
    else:
        parts.append(outcome.commit_status)
    lines = [good("checkpoint ") + outcome.id + dim(": " + ", ".join(parts))]
    files = outcome.committed_files
    if files:
        shown = ", ".join(files[:_FILES_SHOWN])
        more = f" and {len(files) - _FILES_SHOWN} more" if len(files) > _FILES_SHOWN else ""
        lines.append(dim(f"  committed files: {shown}{more}"))
    lines += [warn("corrected: ") + s.sentence() for s in outcome.settled]
    lines += [warn("warning: ") + w for w in outcome.warnings]
    return lines


def directive_lines(decision: Decision, item: str, *, then: str) -> list[str]:
    """The reset directive and what to run after it."""
    colour = {"clear": "red", "compact": "yellow", "none": "green"}[decision.reset.value]
    lines = [
        heading("reset: ")
        + click.style(decision.reset.value, fg=colour, bold=True)
        + dim(f" — {decision.reason}"),
        f"  {_HOW[decision.reset]}",
    ]
    if decision.reset is not Reset.NONE:
        same = "the same" if decision.reset is Reset.COMPACT else "the new"
        lines.append(f"  then, from {same} session: loop reset confirm {item} --session <id>")
    lines.append(f"  then: {then}")
    return lines


def echo_outcome(outcome: Outcome, root: Path | None = None, *, then: str) -> None:
    """Print the checkpoint and its directive.

    ``task done`` and ``checkpoint`` come with the reset marked dispatched by the
    core; a phase crossing passes ``root`` and is marked here, after printing.
    """
    for line in checkpoint_lines(outcome):
        click.echo(line)
    for line in directive_lines(outcome.reset, outcome.item, then=then):
        click.echo(line)
    if root is not None:
        mark_dispatched(outcome, root)


def mark_dispatched(outcome: Outcome, root: Path) -> None:
    """For a phase crossing, whose core does not mark its reset dispatched yet."""
    if outcome.record is not None:
        from the_loop.checkpoint.resets import mark_dispatched as dispatched

        dispatched(root, outcome.record)


def echo_dry(decision: Decision, what: str) -> None:
    click.echo(
        warn("dry run: ")
        + f"would {what}; then reset: {decision.reset.value} "
        + dim(f"({decision.reason})")
    )


def refused(text: str) -> str:
    return bad(text)
