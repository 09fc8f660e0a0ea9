"""Text for people and JSON for programs, without click: colours, paths, findings.

The colour codes are the ones ``click.style`` writes, and ``strip_ansi`` removes them
as ``click.echo`` does when output is not a terminal, so a command reads the same
whether click or the quick path (``the_loop.cli.quick``) prints it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path

from the_loop.errors import Where
from the_loop.findings import Finding, Level

TYPE_CHECKING = False  # typing is not imported at run time: it costs every cold start ~2 ms
if TYPE_CHECKING:
    from typing import Any

_COLOURS = {"red": 31, "green": 32, "yellow": 33, "cyan": 36}
_LEVEL_COLOURS = {Level.ERROR: "red", Level.WARNING: "yellow", Level.INFO: "cyan"}
_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")  # click's pattern


def style(text: str, *, fg: str | None = None, bold: bool = False, dim: bool = False) -> str:
    """``text`` with ANSI colour codes, exactly as ``click.style`` writes them."""
    codes = ""
    if fg is not None:
        codes += f"\033[{_COLOURS[fg]}m"
    if bold:
        codes += "\033[1m"
    if dim:
        codes += "\033[2m"
    return f"{codes}{text}\033[0m"


def strip_ansi(text: str) -> str:
    """``text`` without colour codes (what ``click.echo`` prints when not on a terminal)."""
    return _ANSI.sub("", text) if "\033" in text else text


def heading(text: str) -> str:
    return style(text, bold=True)


def dim(text: str) -> str:
    return style(text, dim=True)


def good(text: str) -> str:
    return style(text, fg="green")


def bad(text: str) -> str:
    return style(text, fg="red")


def warn(text: str) -> str:
    return style(text, fg="yellow")


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
    level = style(finding.level.value, fg=_LEVEL_COLOURS[finding.level], bold=True)
    text = f"{place}{level}: {finding.message}"
    if finding.hint:
        text += "\n    " + style("hint: ", dim=True) + finding.hint
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
