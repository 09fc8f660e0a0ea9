"""Every ``--json`` output has a JSON Schema under ``schema/output/``, and keeps to it.

The schemas are the documentation of the JSON shapes (one file per output,
shared shapes in ``common.schema.json``); objects are closed
(``additionalProperties: false``), so a key the schema does not name fails
here, and every key they name is camelCase. Each command below runs for real
on a project driven into implementation and its output is validated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from helpers import REPO_ROOT
from helpers.project import NEXT, ok, project_copy, run

OUTPUT = REPO_ROOT / "schema" / "output"
CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")


def _schemas() -> dict[str, dict[str, Any]]:
    return {
        p.name.removesuffix(".schema.json"): json.loads(p.read_text())
        for p in OUTPUT.glob("*.json")
    }


def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = _schemas()
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    return Draft202012Validator(schemas[name], registry=registry)


def _valid(name: str, stdout: str) -> Any:
    data = json.loads(stdout)
    errors = sorted(_validator(name).iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, f"{name}: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors
    )
    return data


def _property_names(node: Any, at: str = "$") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            yield at, key
            yield from _property_names(value, f"{at}.{key}")
        for key, value in node.items():
            if key != "properties":
                yield from _property_names(value, f"{at}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _property_names(value, f"{at}[{index}]")


def _json_commands() -> set[str]:
    """Every command (as ``group-sub``) that takes --json."""
    from the_loop.cli import cli

    found: set[str] = set()

    def walk(command: click.Command, path: list[str]) -> None:
        if any(p.name == "json_output" for p in command.params) and path:
            found.add("-".join(path))
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                child = command.get_command(ctx, name)
                assert child is not None
                walk(child, [*path, name])

    walk(cli, [])
    return found


def test_every_json_command_has_a_schema() -> None:
    names = set(_schemas())
    expected = {"reset" if c.startswith("reset-") else c for c in _json_commands()}
    assert expected <= names, sorted(expected - names)
    assert names - expected == {"common"}


def test_every_key_in_every_output_schema_is_camel_case() -> None:
    for name, schema in _schemas().items():
        bad = [f"{at}.{key}" for at, key in _property_names(schema) if not CAMEL.match(key)]
        assert bad == [], name
        assert schema["$id"] == f"https://loop.invalid/schema/output/{name}.schema.json"


def test_the_schemas_are_valid_json_schemas() -> None:
    from jsonschema import Draft202012Validator

    for schema in _schemas().values():
        Draft202012Validator.check_schema(schema)


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def test_reports_keep_to_their_schemas(project: Path) -> None:
    _valid("status", run(project, "status", "7", "--json").stdout)
    _valid("status", run(project, "status", "--all", "--json").stdout)
    _valid("next", run(project, "next", "7", "--json").stdout)
    _valid("check", run(project, "check", "7", "--json").stdout)
    _valid("graph", run(project, "graph", "7", "--json").stdout)
    _valid("log", run(project, "log", "7", "--json").stdout)
    _valid("resume", run(project, "resume", "7", "--json").stdout)
    _valid("pressure", run(project, "pressure", "--percent", "80", "--json").stdout)
    _valid("config-show", run(project, "config", "show", "--explain", "--json").stdout)
    _valid("config-validate", run(project, "config", "validate", "--json").stdout)
    _valid("doctor", run(project, "doctor", "--json").stdout)


def test_task_and_reset_outputs_keep_to_their_schemas(project: Path) -> None:
    step = _valid("execute-tasks", ok(project, "execute-tasks", "7", "--json").stdout)
    assert step["step"] == "task"
    _valid("task-start", ok(project, "task", "start", "7", "3", "--json").stdout)
    mid = ok(
        project,
        "checkpoint",
        "7",
        "--mid-task",
        "--task",
        "1",
        "--percent",
        "80",
        "--did",
        "half of the key",
        "--next",
        NEXT,
        "--session",
        "S",
        "--json",
    )
    _valid("checkpoint", mid.stdout)
    _valid("reset", ok(project, "reset", "confirm", "7", "--session", "S", "--json").stdout)
    done = ["task", "done", "7", "1", "--did", "the key", "--next", NEXT, "--session", "S"]
    _valid("task-done", ok(project, *done, "--json").stdout)
    status = _valid("status", run(project, "status", "7", "--json").stdout)
    assert status["openResets"]  # the shape of an open reset is checked too
    _valid("doctor", run(project, "doctor", "--json").stdout)
    _valid("reset", ok(project, "reset", "abort", "7", "--json").stdout)
    for task in ("3", "2"):
        done = ["task", "done", "7", task, "--did", "it", "--next", "task 2 or review it"]
        last = _valid("task-done", ok(project, *done, "--json").stdout)
    assert last["phase"] == "needs-review"
    _valid("execute-tasks", ok(project, "execute-tasks", "7", "--json").stdout)
    _valid("work-on", ok(project, "work-on", "7", "--json").stdout)
    _valid("finish", ok(project, "finish", "7", "--by", "@lead", "--json").stdout)


def test_lifecycle_outputs_keep_to_their_schemas(loop, git_repo: Path) -> None:  # type: ignore[no-untyped-def]
    from helpers import REQUIREMENTS

    def out(*args: str) -> str:
        result = loop(*args, cwd=git_repo)
        assert result.exit_code == 0, result.output
        return result.stdout

    _valid("init", out("init", "--defaults", "--json"))
    created = _valid("new", out("new", "Retry budget", "--json"))
    promoted = _valid("promote", out("promote", created["item"], "--id", "5", "--json"))
    item = Path(promoted["path"])
    (item / "requirements.md").write_text(REQUIREMENTS.format(item="issue-5", title="x"))
    _valid("approve", out("approve", "5", "requirements", "--by", "@ann", "--json"))
    _valid("work-on", out("work-on", "5", "--dry-run", "--json"))
    _valid("work-on", out("work-on", "5", "--json"))
    _valid("status", out("status", "5", "--json"))


def test_context_output_keeps_to_its_schema(tmp_path: Path) -> None:
    """A real Claude Code transcript (recorded with the pinned CLI) read through `loop context`."""
    from helpers import REPO_ROOT

    transcript = REPO_ROOT / "tests/fixtures/harness/claude-tool-use.jsonl"
    data = _valid(
        "context", run(tmp_path, "context", "--transcript", str(transcript), "--json").stdout
    )
    assert data["state"] == "known" and data["tokensInUse"] > 0


def test_install_output_keeps_to_its_schema(project: Path) -> None:
    _valid("install", ok(project, "install", "claude", "--dry-run", "--json").stdout)
    _valid("install", ok(project, "install", "claude", "--json").stdout)
    _valid("install", ok(project, "install", "claude", "--uninstall", "--json").stdout)
