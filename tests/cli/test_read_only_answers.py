"""Read-only commands always answer: a bad override is a finding, `--json` is always JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import (
    DESIGN,
    REPO_ROOT,
    REQUIREMENTS,
    SIX_TASKS,
    Result,
    tasks_md,
    write_config,
    write_tree,
)

Loop = Callable[..., Result]
BAD_OVERRIDE = """\
---
type: requirements
status: draft
overrides:
  contextManagement:
    midTask: clear
---

# Requirements: bad override

### R1 — one
1. a
"""
LOG = """\
---
type: execution-log
phase: tasks-breakdown
---

# Execution Log

## Progress entries

### 2026-11-30T12:00Z — entered tasks-breakdown

- **Next:** write tasks.md from the design
"""


def _error_schema_problems(data: object) -> list[str]:
    """Where ``data`` breaks the errorOutput shape of schema/output/common.schema.json."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    common = json.loads((REPO_ROOT / "schema" / "output" / "common.schema.json").read_text())
    registry = Registry().with_resource(common["$id"], Resource.from_contents(common))
    schema = {"$ref": f"{common['$id']}#/$defs/errorOutput"}
    validator = Draft202012Validator(schema, registry=registry)
    return [e.message for e in validator.iter_errors(data)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_config(tmp_path)
    write_tree(
        tmp_path,
        {
            "docs/specs/issue-1/requirements.md": REQUIREMENTS.format(item="issue-1", title="a"),
            "docs/specs/issue-1/design.md": DESIGN.format(item="issue-1", title="a"),
            "docs/specs/issue-1/tasks.md": tasks_md("issue-1", SIX_TASKS),
            "docs/specs/issue-2/requirements.md": BAD_OVERRIDE,
            "docs/specs/issue-2/tasks.md": tasks_md("issue-2", SIX_TASKS[:2]),
            "docs/specs/issue-2/execution-log.md": LOG,
        },
    )
    return tmp_path


def test_one_items_bad_override_is_a_finding_of_that_item(project: Path, loop: Loop) -> None:
    result = loop("-C", str(project), "--json", "check", "--all")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["items"] == ["issue-1", "issue-2"]
    (finding,) = [f for f in data["findings"] if f["code"] == "config.override"]
    assert finding["level"] == "error"
    assert (Path(finding["path"]).parts[-2:], finding["line"]) == (
        ("issue-2", "requirements.md"),
        6,
    )
    assert "midTask" in finding["message"]
    assert loop("-C", str(project), "status", "--all").exit_code == 0


@pytest.mark.parametrize(
    "argv",
    [
        ("graph", "issue-2"),
        ("graph", "issue-2", "--json"),
        ("next", "issue-2", "--json"),
        ("log", "issue-2"),
        ("resume", "issue-2", "--json"),
        ("status", "issue-2", "--json"),
    ],
)
def test_graph_next_log_and_resume_still_answer(
    project: Path, loop: Loop, argv: tuple[str, ...]
) -> None:
    result = loop("-C", str(project), *argv)
    assert result.exit_code == 0, result.output
    if "--json" in argv:
        json.loads(result.stdout)  # stdout holds only JSON
    if argv[0] != "status":
        assert "config.override" not in result.stdout
        assert "invalid override, ignored for this report" in result.stderr


def test_a_command_that_writes_still_refuses_a_bad_override(project: Path, loop: Loop) -> None:
    result = loop("-C", str(project), "approve", "issue-2", "requirements", "--by", "@a")
    assert result.exit_code == 1
    assert "the configuration is invalid" in result.stderr


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (("graph", "issue-9"), 2, "no work item 'issue-9'"),
        (("log", "issue-1"), 2, "issue-1 has no execution-log.md yet"),
        (("next", "issue-1", "--bogus"), 2, "No such option '--bogus'."),
    ],
)
@pytest.mark.parametrize("where", ["global", "command"])
def test_json_errors_are_json_on_stdout(
    project: Path, loop: Loop, argv: tuple[str, ...], code: int, message: str, where: str
) -> None:
    args = ("--json", *argv) if where == "global" else (*argv, "--json")
    result = loop("-C", str(project), *args)
    assert result.exit_code == code
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert _error_schema_problems(data) == []
    assert data["ok"] is False
    assert data["error"]["exitCode"] == code
    assert data["error"]["message"].startswith(message)


def test_a_json_error_keeps_the_place_and_the_hint(project: Path, loop: Loop) -> None:
    (project / ".the-loop" / "config.yaml").write_text('version: "0.1.0"\nsurprise: 1\n')
    result = loop("-C", str(project), "--json", "status", "issue-1")
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert (error["kind"], error["message"]) == ("config", "the configuration is invalid")
    (detail,) = error["details"]
    assert detail.startswith(f"{project / '.the-loop' / 'config.yaml'}:2:1: error: $.surprise")
    assert error["hint"]
