"""Rendering helpers shared by commands: JSON, findings, and a little colour.

click strips colour codes when output is not a terminal, so commands style
freely and pipes stay clean.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import click

from the_loop.cli.app import Env
from the_loop.cli.handler import shown_path
from the_loop.errors import Where
from the_loop.findings import Finding, Level

F = TypeVar("F", bound=Callable[..., Any])
_LEVEL_COLOURS = {Level.ERROR: "red", Level.WARNING: "yellow", Level.INFO: "cyan"}


def json_option(func: F) -> F:
    """Add ``--json`` to a reporting command (the global ``loop --json`` works too)."""
    return click.option("--json", "json_output", is_flag=True, help="Print the result as JSON.")(
        func
    )


def wants_json(env: Env, flag: bool) -> bool:
    return flag or env.json


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def emit_json_table(data: dict[str, Any]) -> None:
    """Print a large JSON object: one top-level key per line, each value on that line.

    Indenting every nested value takes Python's slow JSON encoder; this form keeps
    the C one (a 100k-task graph prints in a fraction of the time) and still
    reads line by line.
    """
    rows = [
        f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False, default=str)}"
        for key, value in data.items()
    ]
    click.echo("{\n" + ",\n".join(rows) + "\n}" if rows else "{}")


def relative_finding(finding: Finding) -> Finding:
    """The same finding with paths shown relative to the current folder.

    Paths inside the message and the hint (a cycle lists each member's
    ``file:line``) are shortened the same way as the finding's own place.
    """
    prefix = str(Path.cwd()) + os.sep
    message = finding.message.replace(prefix, "")
    hint = finding.hint.replace(prefix, "") if finding.hint else finding.hint
    where = finding.where
    if where is not None:
        where = Where(shown_path(where.path), where.line, where.col)
    return replace(finding, where=where, message=message, hint=hint)


def finding_line(finding: Finding) -> str:
    """One finding as ``file:line: level: message`` with its hint indented below."""
    finding = relative_finding(finding)
    place = f"{finding.where}: " if finding.where else ""
    level = click.style(finding.level.value, fg=_LEVEL_COLOURS[finding.level], bold=True)
    text = f"{place}{level}: {finding.message}"
    if finding.hint:
        text += "\n    " + click.style("hint: ", dim=True) + finding.hint
    return text


def echo_findings(findings: Iterable[Finding]) -> None:
    for finding in findings:
        click.echo(finding_line(finding))


def heading(text: str) -> str:
    return click.style(text, bold=True)


def dim(text: str) -> str:
    return click.style(text, dim=True)


def good(text: str) -> str:
    return click.style(text, fg="green")


def bad(text: str) -> str:
    return click.style(text, fg="red")


def warn(text: str) -> str:
    return click.style(text, fg="yellow")
