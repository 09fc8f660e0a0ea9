"""``loop context``: how full a session's context window is, read from its transcript."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from the_loop.cli.app import Env
from the_loop.cli.output import dim, emit_json, heading, json_option, wants_json, warn

if TYPE_CHECKING:
    from the_loop.checkpoint.policy import PressureReading
    from the_loop.telemetry.reading import ContextReading


@click.command()
@click.option(
    "--transcript",
    type=click.Path(path_type=Path),
    help="The transcript or rollout file (a hook's transcript_path).",
)
@click.option(
    "--session",
    "session_id",
    envvar="LOOP_SESSION_ID",
    metavar="ID",
    help="Find the transcript by session id (env LOOP_SESSION_ID).",
)
@click.option(
    "--harness",
    type=click.Choice(["claude", "codex"]),
    help="Which agent wrote it (default: detected).",
)
@json_option
@click.pass_obj
def context(
    env: Env,
    transcript: Path | None,
    session_id: str | None,
    harness: str | None,
    json_output: bool,
) -> None:
    """How full a session's context window is, from its transcript.

    Tokens in use and the window size, read from the tail of the harness's own
    transcript (Claude Code) or rollout (Codex); writes nothing. When the count
    is known, also prints the pressure verdict of the project's thresholds. An
    unknown count (no reply yet, or just compacted) is said so, never as zero.

    With neither --transcript nor --session, the live session: the one whose
    id the harness puts in the agent's environment, else the one live session
    loop's hooks recorded in this project (its transcript as the hooks saw it).
    """
    from the_loop.telemetry import Harness, ReadingState, read_context

    if transcript is None and session_id is None:
        transcript, session_id, harness = _live_session(env, harness)
    reading = read_context(
        transcript=transcript,
        session_id=session_id,
        harness=Harness(harness) if harness else None,
        cwd=env.cwd,
        env=os.environ,
    )
    verdict = _verdict(env, reading) if reading.state is ReadingState.KNOWN else None
    if wants_json(env, json_output):
        emit_json({**reading.to_json(), "pressure": verdict.to_json() if verdict else None})
        return
    click.echo(_reading_line(reading))
    for note in reading.notes:
        click.echo(warn("note: ") + note)
    if verdict is not None:
        _echo_verdict(verdict)


def _live_session(env: Env, harness: str | None) -> tuple[Path | None, str | None, str | None]:
    """``(transcript, session id, harness)`` of the session running now, from what loop knows.

    The transcript the hooks recorded for it when there is one on disk (no search
    needed), else its id for the harness's own folders.
    """
    from the_loop.checkpoint import seen_sessions as sessions
    from the_loop.errors import LoopError, UsageError

    try:
        root: Path | None = env.root
    except LoopError:
        root = None  # outside a project only the harness's variables can tell
    found = sessions.resolve_session(root, None)
    if found is None:
        raise UsageError(
            "no live session found: say which session to read",
            hint="give --transcript PATH (a hook's transcript_path) or --session ID; inside "
            "Claude Code or Codex, or with loop's hooks installed, loop finds it by itself",
        )
    record = sessions.load(root, found) if root is not None else None
    if record is None or not record.transcript or not Path(record.transcript).is_file():
        return None, found, harness
    seen_by = record.harness if record.harness in ("claude", "codex") else None
    return Path(record.transcript), None, harness or seen_by


def _verdict(env: Env, reading: ContextReading) -> PressureReading:
    """The policy's verdict for a known reading (the policy does the arithmetic)."""
    from the_loop.checkpoint.policy import pressure_verdict
    from the_loop.spec.project import open_project

    pressure = open_project(env.root).config.context.pressure
    tokens, window = reading.tokens_in_use, reading.window
    if tokens is not None and window is not None and tokens > window:
        # The policy refuses a count above the window as a typing mistake; from a
        # transcript it is a real overflow (or a wrong window), so the window is full.
        return pressure_verdict(pressure, tokens=tokens, percent=100.0)
    return pressure_verdict(pressure, tokens=tokens, window=window)


def _reading_line(reading: ContextReading) -> str:
    who = f"{reading.harness.value} {reading.session_id or '(no session id)'}"
    where = dim(f"  [{reading.source}]")
    if reading.tokens_in_use is None:
        text = f"{who}: tokens in use unknown — {reading.reason}"
        sizes = []
        if reading.pre_tokens is not None:
            sizes.append(f"{reading.pre_tokens:,} tokens before compaction")
        if reading.post_tokens is not None:
            sizes.append(f"about {reading.post_tokens:,} after, by the harness's estimate")
        if sizes:
            text += f" ({'; '.join(sizes)})"
        return text + where
    text = f"{who}: {heading(f'{reading.tokens_in_use:,}')} tokens in use"
    percent = reading.percent
    if reading.window is not None and percent is not None:
        text += f" of {reading.window:,} ({percent:.1f}%, {reading.window_words()})"
    else:
        text += " (window unknown)"
    return text + where


def _echo_verdict(verdict: PressureReading) -> None:
    word = verdict.verdict.value if verdict.verdict else "unknown"
    arms = f"tokens arm: {_arm(verdict.token_arm)}, percent arm: {_arm(verdict.percent_arm)}"
    click.echo(heading("pressure: ") + word + dim(f"  ({arms})"))
    for gap in verdict.gaps:
        click.echo(warn("gap: ") + gap)


def _arm(value: object) -> str:
    return getattr(value, "value", "n/a")
