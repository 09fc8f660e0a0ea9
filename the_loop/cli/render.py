"""What commands print: colour, paths as the user sees them, findings, JSON.

The colours are ``click.style``'s; ``click.echo`` drops them when the output is
not a terminal (or ``--no-color`` / ``NO_COLOR`` asks), so commands style freely
and pipes stay clean. Nothing here echoes: ``the_loop.cli.output`` does.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from the_loop.errors import Where
from the_loop.findings import Finding, Level

_LEVEL_COLOURS = {Level.ERROR: "red", Level.WARNING: "yellow", Level.INFO: "cyan"}


def heading(text: str) -> str:
    """A heading: bold."""
    return click.style(text, bold=True)


def dim(text: str) -> str:
    """What is there for reference: dimmed."""
    return click.style(text, dim=True)


def good(text: str) -> str:
    """Good news: green."""
    return click.style(text, fg="green")


def bad(text: str) -> str:
    """An error or a broken state: red."""
    return click.style(text, fg="red")


def warn(text: str) -> str:
    """Something to look at: yellow."""
    return click.style(text, fg="yellow")


def shown_path(path: Path | str) -> str:
    """A path as the user should see it: relative to the current folder when inside it."""
    path = Path(path)
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)
    return str(path)


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
        text += "\n    " + dim("hint: ") + finding.hint
    return text


def json_text(data: Any) -> str:
    """``data`` as indented JSON, one line break at the end."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def json_table_text(data: dict[str, Any]) -> str:
    """A large JSON object: one top-level key per line, each value on that line.

    Indenting every nested value takes Python's slow JSON encoder; this form keeps
    the C one (a 100k-task graph prints in a fraction of the time) and still
    reads line by line.
    """
    rows = [
        f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False, default=str)}"
        for key, value in data.items()
    ]
    return ("{\n" + ",\n".join(rows) + "\n}" if rows else "{}") + "\n"
