"""Example config files become test cases: `loop config validate` on each one.

Every ``tests/examples/invalid/*.yaml`` states what it must produce in its own
comment lines, so adding a case means adding a file:

    # expect: LINE[:COL] [$.json.path] substring of the message
    # hint: substring of that finding's hint            (optional, repeatable)
    # xfail: BUG: why this case fails today             (optional)

Each ``expect`` must match one finding printed as ``FILE:LINE:COL: error:
$.json.path: message`` and the findings must be exactly the expected ones, in
file order. A file that cannot hold comments (a zero-byte file) keeps them in
``<name>.expect`` beside it. ``tests/examples/valid/*.yaml`` must validate
cleanly (exit 0, no findings); they may carry an ``# xfail:`` line too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers import Result
from ruamel.yaml import YAML

from the_loop.config import schema

EXAMPLES = Path(__file__).resolve().parent / "examples"
INVALID = sorted((EXAMPLES / "invalid").glob("*.yaml"))
VALID = sorted((EXAMPLES / "valid").glob("*.yaml"))

_DIRECTIVE = re.compile(r"^#\s*(expect|hint|xfail):\s*(.*?)\s*$")
_EXPECT = re.compile(r"^(?P<line>\d+)(?::(?P<col>\d+))?\s+(?:(?P<path>\$\S*)\s+)?(?P<text>.+)$")
# `FILE:LINE:COL: error: message` (line and column each optional), hint lines below it.
_FINDING = re.compile(r"^(?P<loc>.+?): error: (?P<message>.*)$")
_HINT = re.compile(r"^    hint: (?P<hint>.*)$")


@dataclass
class Expected:
    """One finding an example file must produce."""

    line: int
    col: int | None
    json_path: str | None
    text: str
    hints: list[str] = field(default_factory=list)

    def location(self, name: str) -> str:
        return f"{name}:{self.line}" + (f":{self.col}" if self.col is not None else "")

    def __str__(self) -> str:
        path = f" {self.json_path}" if self.json_path else ""
        return f"{self.line}:{self.col}{path} {self.text} (hints: {self.hints})"


@dataclass
class Printed:
    """One finding as `loop config validate` printed it."""

    loc: str
    message: str
    hint: str | None = None


@dataclass
class Example:
    """What an example file says about itself."""

    expected: list[Expected]
    xfail: str | None


def read_example(path: Path) -> Example:
    """The ``# expect:``/``# hint:``/``# xfail:`` lines of ``path`` (or ``path.expect``)."""
    sidecar = path.with_name(path.name + ".expect")
    source = sidecar if sidecar.is_file() else path
    expected: list[Expected] = []
    xfail = None
    for raw in source.read_text(encoding="utf-8-sig").splitlines():
        match = _DIRECTIVE.match(raw.strip())
        if not match:
            continue
        kind, value = match.groups()
        if kind == "xfail":
            xfail = value
        elif kind == "hint":
            assert expected, f"{source}: `# hint:` before any `# expect:`"
            expected[-1].hints.append(value)
        else:
            parts = _EXPECT.match(value)
            assert parts, f"{source}: cannot read `# expect: {value}`"
            col = parts["col"]
            expected.append(
                Expected(
                    int(parts["line"]), int(col) if col else None, parts["path"], parts["text"]
                )
            )
    return Example(expected, xfail)


def parse_findings(stdout: str) -> list[Printed]:
    """The findings in `loop config validate` text output, hints attached."""
    printed: list[Printed] = []
    for line in stdout.splitlines():
        hint = _HINT.match(line)
        if hint and printed:
            printed[-1].hint = hint["hint"]
            continue
        finding = _FINDING.match(line)
        if finding:
            printed.append(Printed(finding["loc"], finding["message"]))
    return printed


def matches(want: Expected, got: Printed, name: str) -> bool:
    if got.loc != want.location(name):
        return False
    message = got.message
    if want.json_path is not None:
        if not message.startswith(f"{want.json_path}: "):
            return False
        message = message[len(want.json_path) + 2 :]
    elif message.startswith("$"):
        return False
    if want.text not in message:
        return False
    return all(got.hint is not None and h in got.hint for h in want.hints)


def _cases(paths: list[Path]) -> list[Any]:
    cases = []
    for path in paths:
        reason = read_example(path).xfail
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        cases.append(pytest.param(path, id=path.name, marks=marks))
    return cases


def _line_col(loc: str) -> tuple[int, int]:
    numbers = [int(p) for p in loc.split(":")[1:] if p.isdigit()]
    return (numbers + [0, 0])[0], (numbers + [0, 0])[1]


@pytest.mark.parametrize("path", _cases(INVALID))
def test_invalid_example_is_rejected_at_the_right_place(
    path: Path, loop: Callable[..., Result]
) -> None:
    example = read_example(path)
    assert example.expected, f"{path.name} has no `# expect:` line"

    result = loop("config", "validate", path.name, cwd=path.parent)

    assert result.exit_code == 1, result.output
    assert result.stderr == ""
    printed = parse_findings(result.stdout)
    for want in example.expected:
        assert any(matches(want, got, path.name) for got in printed), (
            f"expected {want}\nin output:\n{result.stdout}"
        )
    assert len(printed) == len(example.expected), f"unexpected findings:\n{result.stdout}"
    assert [_line_col(p.loc) for p in printed] == sorted(_line_col(p.loc) for p in printed)
    assert result.stdout.endswith(f"invalid: {path.name}\n")


@pytest.mark.parametrize("path", _cases(VALID))
def test_valid_example_passes(path: Path, loop: Callable[..., Result]) -> None:
    result = loop("config", "validate", path.name, cwd=path.parent)

    assert result.exit_code == 0, result.output
    assert result.stdout == f"valid: {path.name}\n"
    assert result.stderr == ""


def test_there_are_enough_examples() -> None:
    assert len(INVALID) >= 15
    assert {"minimal.yaml", "written-by-loop-init-0.1.0.yaml", "full.yaml"} <= {
        p.name for p in VALID
    }


def test_every_invalid_example_states_an_expectation() -> None:
    silent = [p.name for p in INVALID if not read_example(p).expected]
    assert silent == []


def test_the_full_example_sets_every_top_level_key() -> None:
    data = YAML(typ="safe").load((EXAMPLES / "valid" / "full.yaml").read_text())
    assert sorted(data) == sorted(schema.config_schema()["properties"])
