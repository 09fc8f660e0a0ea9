"""``loop config``: validate, show and explain the configuration."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from the_loop.cli.app import Env
from the_loop.cli.output import (
    echo_findings,
    emit_json,
    good,
    json_option,
    wants_json,
)
from the_loop.config.loader import check_file, config_path
from the_loop.config.loader import explain as explain_rows
from the_loop.config.schema import schema_bytes
from the_loop.errors import ExitCode, UnusableInputError
from the_loop.findings import failing
from the_loop.io import yamlio
from the_loop.spec.project import open_item, open_project


@click.group()
def config() -> None:
    """Check and inspect .the-loop/config.yaml."""


@config.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path, dir_okay=False))
@json_option
@click.pass_obj
def validate(env: Env, files: tuple[Path, ...], json_output: bool) -> None:
    """Check config files against the schema (default: the project's).

    Exit 0 when every file is valid, 1 when any is invalid, 2 when a file is
    missing or unreadable.
    """

    targets = list(files) or [config_path(env.root)]
    reports = []
    worst = ExitCode.OK
    for path in targets:
        try:
            findings = check_file(path)
        except UnusableInputError as exc:
            reports.append(
                {
                    "path": str(path),
                    "usable": False,
                    "valid": False,
                    "error": exc.render(),
                    "findings": [],
                }
            )
            worst = ExitCode.USAGE
            if not wants_json(env, json_output):
                click.echo(click.style("error: ", fg="red", bold=True) + exc.render(), err=True)
            continue
        valid = not failing(findings)
        if not valid and worst is ExitCode.OK:
            worst = ExitCode.FAILURE
        reports.append(
            {
                "path": str(path),
                "usable": True,
                "valid": valid,
                "findings": [f.to_json() for f in findings],
            }
        )
        if not wants_json(env, json_output):
            echo_findings(findings)
            click.echo(f"{good('valid') if valid else click.style('invalid', fg='red')}: {path}")
    if wants_json(env, json_output):
        emit_json({"valid": worst is ExitCode.OK, "files": reports})
    raise click.exceptions.Exit(int(worst))


@config.command()
@click.option(
    "--item", "item_ref", metavar="ID", help="Apply this work item's front-matter overrides."
)
@click.option("--explain", is_flag=True, help="Say where each value came from.")
@json_option
@click.pass_obj
def show(env: Env, item_ref: str | None, explain: bool, json_output: bool) -> None:
    """Print the effective config (defaults, config.yaml, overrides)."""

    if item_ref:
        cfg = open_item(env.root, item_ref, cwd=env.cwd).config
    else:
        cfg = open_project(env.root).config
    rows = [(key, value, _origin_text(origin)) for key, value, origin in explain_rows(cfg)]
    if wants_json(env, json_output):
        payload: dict[str, object] = {"config": cfg.data}
        if explain:
            payload["origins"] = {key: origin for key, _value, origin in rows}
        emit_json(payload)
        return
    if explain:
        width = max(len(key) for key, _v, _o in rows)
        for key, value, origin in rows:
            click.echo(
                f"{key.ljust(width)}  {_scalar(value)}  {click.style('# ' + origin, dim=True)}"
            )
        return

    click.echo(yamlio.dump(cfg.data), nl=False)


def _origin_text(origin: str) -> str:
    """``schema default`` or ``file:line``, the file shown relative to here when inside it."""
    prefix = str(Path.cwd()) + os.sep
    return origin[len(prefix) :] if origin.startswith(prefix) else origin


def _scalar(value: object) -> str:

    return json.dumps(value, ensure_ascii=False)


@config.command()
def schema() -> None:
    """Print the config JSON Schema (point your editor at it)."""

    click.echo(schema_bytes().decode("utf-8"), nl=False)
