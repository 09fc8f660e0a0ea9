"""What ``loop execute-tasks --agent`` shows while it runs and when it ends.

* On a terminal: one live progress line on stderr (task, run, session,
  tokens in use, elapsed), rewritten in place, and a line per event on stdout.
* Without a terminal: the event lines only.
* ``--json``: one JSON object per line and event (``task-started``,
  ``agent-finished``, ``checkpoint``, ``reset``, ``task-failed``, ``done``).
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

import click

from the_loop.cli.output import bad, dim, good, heading, warn
from the_loop.driver.dry_run import DryRunPlan
from the_loop.driver.events import (
    AgentFinished,
    CheckpointTaken,
    Event,
    Progress,
    ResetDone,
    RetryWait,
    RunSummary,
    TaskFailed,
    TaskStarted,
)
from the_loop.ledger.cost_text import tally_words


class EventPrinter:
    """A listener for the driver's events (pass the instance as the callback)."""

    def __init__(self, *, as_json: bool, live: TextIO | None = None) -> None:
        self.as_json = as_json
        self.live = live if live is not None and live.isatty() else None
        self._shown = False
        self._last = ""

    def __call__(self, event: Event) -> None:
        if isinstance(event, Progress):
            if self.live is not None and not self.as_json:
                self._progress(event)
            return
        self._clear()
        if self.as_json:
            click.echo(json.dumps(event.to_json(), ensure_ascii=False, default=str))
            sys.stdout.flush()
            return
        for line in event_lines(event):
            click.echo(line)

    def _progress(self, event: Progress) -> None:
        assert self.live is not None
        session = f"session {_short(event.session)}" if event.session else "new session"
        parts = [
            f"task {event.task}",
            f"run {event.run}",
            session,
            f"{_tokens(event.tokens)} tokens",
            _clock(event.seconds),
        ]
        if event.doing != "running":
            parts.append(event.doing)
        text = " · ".join(parts)
        if text == self._last:
            return  # ticks come four times a second; redraw only what changed
        self.live.write("\r\033[K" + text)
        self.live.flush()
        self._shown = True
        self._last = text

    def _clear(self) -> None:
        if self._shown and self.live is not None:
            self.live.write("\r\033[K")
            self.live.flush()
            self._shown = False
            self._last = ""


def event_lines(event: Event) -> list[str]:
    """An event in words, for a terminal or a log."""
    if isinstance(event, TaskStarted):
        how = {"new": "new session", "resume": "resumed", "compact": "compacted, then resumed"}
        session = f" {_short(event.session)}" if event.session and event.start != "new" else ""
        return [
            heading(f"task {event.task}: {event.title}")
            + dim(f"  run {event.run}/{event.max_runs}")
            + dim(f", {how.get(event.start, event.start)}{session}")
        ]
    if isinstance(event, AgentFinished):
        colour = {"done": good, "done-by-agent": good, "failed": bad}.get(event.outcome, warn)
        facts = f"{event.seconds:.1f}s, exit {event.exit_code}, {_tokens(event.tokens)} tokens"
        return [f"  agent: {colour(event.outcome)} " + dim(f"({facts})") + f" — {event.detail}"]
    if isinstance(event, RetryWait):
        return [
            warn(f"  retry in {event.seconds:g}s") + dim(f" (run {event.run} failed: {event.why})")
        ]
    if isinstance(event, CheckpointTaken):
        commit = f", committed {event.commit[:10]}" if event.commit else ""
        what = {"task": "task done", "interim": "interim", "phase": "phase", "stop": "stopped"}
        by = " (by the agent)" if event.by == "agent" else ""
        return [
            f"  checkpoint {event.checkpoint or '?'}: {what.get(event.kind, event.kind)}{by}"
            + commit
            + dim(f"; reset {event.reset}")
        ]
    if isinstance(event, ResetDone):
        if event.state == "completed":
            before = _short(event.session_before)
            after = _short(event.session_after)
            return [f"  reset {event.mode}: " + good("done") + dim(f" ({before} → {after})")]
        return [f"  reset {event.mode}: " + warn(event.state) + f" — {event.how}"]
    if isinstance(event, TaskFailed):
        return [bad(f"task {event.task} stopped after {event.runs} run(s): ") + event.reason]
    if isinstance(event, RunSummary):
        return summary_lines(event)
    return []


def summary_lines(summary: RunSummary) -> list[str]:
    """The table printed when the run ends."""
    colour = {"done": good, "stopped": good, "failed": bad}.get(summary.status, warn)
    resets = ", ".join(f"{mode} {n}" for mode, n in sorted(summary.resets.items())) or "none"
    if summary.resets_aborted:
        resets += f" ({summary.resets_aborted} not performed)"
    rows = [
        ("tasks done", f"{len(summary.tasks_done)}" + _ids(summary.tasks_done)),
        ("agent runs", str(summary.runs)),
        ("sessions", str(len(summary.sessions))),
        ("resets", resets),
        ("tokens (peak)", _tokens(summary.tokens_peak)),
        *_cost_rows(summary.cost),
        ("wall time", _clock(summary.seconds)),
    ]
    lines = ["", heading("summary: ") + colour(summary.status) + f" — {summary.reason}"]
    lines += [f"  {name:<14} {value}" for name, value in rows]
    if summary.open_reset:
        lines.append(f"  {'open reset':<14} {summary.open_reset}")
        confirm = f"`loop reset confirm {summary.item} --session <id>`"
        who = "the review session" if summary.status == "done" else "a rerun"
        lines.append(dim(f"  {who} performs it (by hand: do it, then {confirm})"))
    if summary.status in ("failed", "interrupted"):
        lines.append(
            f"  rerun `loop execute-tasks {summary.item} --agent {summary.agent}` to go on "
            "(docs/agents.md: when a run stops)"
        )
    return lines


def _cost_rows(cost: dict[str, object] | None) -> list[tuple[str, str]]:
    """The ledger's totals (the numbers `loop cost` prints), when it has runs."""
    if not cost:
        return []

    return [
        ("ledger: work", tally_words(cost.get("work"))),
        ("  compaction", tally_words(cost.get("compaction"))),
        ("  item total", tally_words(cost.get("total"))),
    ]


def echo_plan(plan: DryRunPlan) -> None:
    """A dry run, in words."""
    click.echo(warn("dry run: ") + f"{plan.agent} would drive {plan.item}")
    if plan.crossing is not None:
        click.echo(
            f"  first a checkpoint into {plan.crossing['to']}; reset {plan.crossing['reset']}"
            + dim(f" ({plan.crossing['reason']})")
        )
    if plan.task is None:
        click.echo("  no task to run now")
        return
    start = f"resume session {plan.session}" if plan.session else "a new session"
    click.echo(f"  task {plan.task}: {plan.title} — {start}")
    click.echo(f"  command: {plan.command}")
    policy = plan.policy
    click.echo(
        dim(
            f"  resets: taskBoundary {policy['taskBoundary']}, midTask {policy['midTask']}; "
            f"at most {plan.max_attempts} runs per task, {plan.timeout_seconds}s each"
        )
    )
    if plan.brief:
        click.echo("")
        click.echo(plan.brief, nl=False)


def _short(session: str | None) -> str:
    """The end of a session id: time-ordered ids (Codex threads) share their start."""
    if not session:
        return "?"
    return session if len(session) <= 8 else "…" + session[-8:]


def _tokens(value: int | None) -> str:
    if value is None:
        return "?"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def _ids(ids: tuple[str, ...]) -> str:
    return f" ({', '.join(ids)})" if ids else ""
