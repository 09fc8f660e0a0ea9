"""What the YAML library raises on hostile input is a finding at its line, never a crash.

Front matter and config.yaml are both read by ruamel through ``the_loop.io.yamlio``;
each case runs the real CLI (``check``, ``status``, ``config validate``) and wants
exit 1 with ``file:line`` of the offending value, never exit 3.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from helpers import Result

Loop = Callable[..., Result]
Build = Callable[[Mapping[str, str]], Path]

BIG = "9" * 4301  # one digit past Python's int-conversion limit: int() raises ValueError
DEEP_ENTRIES = "  " + "- " * 3000 + "x"  # thousands of nested sequences: RecursionError
DEEP_INDENT = "".join(" " * i + f"k{i}:\n" for i in range(200)) + " " * 200 + "v: 1"

REQUIREMENTS = "# Requirements: x\n\n### R1 — one\n\n1. WHEN a THEN b SHALL c.\n"


def item(build_tree: Build, front: str) -> Path:
    return build_tree(
        {
            ".the-loop/config.yaml": 'version: "0.1.0"\n',
            "docs/specs/issue-4/requirements.md": f"---\ntype: requirements\n{front}\n---\n\n"
            + REQUIREMENTS,
        }
    )


@pytest.mark.parametrize(
    ("front", "line", "message"),
    [
        (f"big: {BIG}", 3, "Exceeds the limit (4300 digits)"),
        ("when: 2001-02-30", 3, "day is out of range"),
        (f"deep:\n{DEEP_ENTRIES}", 4, "nested more than 64 levels deep"),
        (DEEP_INDENT, None, "nested more than 64 levels deep"),
    ],
    ids=["huge-integer", "impossible-date", "deep-entries", "deep-indentation"],
)
def test_hostile_front_matter_is_a_finding_at_its_line(
    loop: Loop, build_tree: Build, front: str, line: int | None, message: str
) -> None:
    root = item(build_tree, front)

    result = loop("check", "4", cwd=root)

    assert result.exit_code == 1, result.output
    where = "docs/specs/issue-4/requirements.md:" + (f"{line}" if line else "")
    found = [row for row in result.stdout.splitlines() if "front matter is not valid YAML" in row]
    assert len(found) == 1, result.output
    assert found[0].startswith(where) and message in found[0], found[0]
    status = loop("status", "4", cwd=root)
    assert status.exit_code in (0, 1), status.output  # a report, never a crash
    assert "error(s)" in status.stdout


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        (f"big: {BIG}", 2, "Exceeds the limit (4300 digits)"),
        (f"deep:\n{DEEP_ENTRIES}", 3, "nested more than 64 levels deep"),
    ],
    ids=["huge-integer", "deep-entries"],
)
def test_hostile_config_is_a_finding_at_its_line(
    loop: Loop, build_tree: Build, body: str, line: int, message: str
) -> None:
    root = build_tree({".the-loop/config.yaml": f'version: "0.1.0"\n{body}\n'})

    for args in (("config", "validate"), ("status", "--all")):
        result = loop(*args, cwd=root)
        assert result.exit_code == 1, result.output
        assert f".the-loop/config.yaml:{line}" in result.output, result.output
        assert message in result.output
