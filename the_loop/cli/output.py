"""Echoing what commands print: JSON, findings, and the ``--json`` option.

The text itself is made by ``the_loop.cli.render`` (re-exported here, so a command
imports its output helpers from one place). click strips colour codes when output
is not a terminal, so commands style freely and pipes stay clean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

from the_loop.cli.app import Env
from the_loop.cli.render import (
    bad,
    dim,
    finding_line,
    good,
    heading,
    json_table_text,
    json_text,
    relative_finding,
    shown_path,
    warn,
)
from the_loop.findings import Finding

__all__ = [
    "bad",
    "dim",
    "echo_findings",
    "echo_problems",
    "emit_json",
    "emit_json_table",
    "finding_line",
    "good",
    "heading",
    "json_option",
    "relative_finding",
    "shown_path",
    "wants_json",
    "warn",
]

F = TypeVar("F", bound=Callable[..., Any])


def json_option(func: F) -> F:
    """Add ``--json`` to a reporting command (the global ``loop --json`` works too)."""
    return click.option("--json", "json_output", is_flag=True, help="Print the result as JSON.")(
        func
    )


def wants_json(env: Env, flag: bool) -> bool:
    return flag or env.json


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout."""
    click.echo(json_text(data), nl=False)


def emit_json_table(data: dict[str, Any]) -> None:
    """Print a large JSON object with one top-level key per line (see ``json_table_text``)."""
    click.echo(json_table_text(data), nl=False)


def echo_findings(findings: Iterable[Finding]) -> None:
    for finding in findings:
        click.echo(finding_line(finding))


def echo_problems(problems: Iterable[Finding]) -> None:
    """Findings that did not stop a read-only command (an item's bad override), on stderr.

    stdout keeps only the command's own answer, so ``--json`` output stays JSON.
    """
    for finding in problems:
        click.echo(finding_line(finding), err=True)
