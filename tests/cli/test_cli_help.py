"""Help reads well to someone who has never seen loop: every command explains itself."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest
from helpers import Result

from the_loop import __version__
from the_loop.cli import COMMANDS, cli

Loop = Callable[..., Result]
# The in-process runner names the program after the click object (`cli`); the console
# script and `python -m the_loop` call it `loop` (checked in a real process below).
USAGE = re.compile(r"^Usage: (?:loop|cli) ")


def _walk(
    group: click.Group, ctx: click.Context, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, f"{' '.join((*prefix, name))} is listed but cannot be loaded"
        if command.hidden:
            continue
        path = (*prefix, name)
        yield path
        if isinstance(command, click.Group):
            yield from _walk(command, click.Context(command, info_name=name, parent=ctx), path)


def all_command_paths() -> list[tuple[str, ...]]:
    return list(_walk(cli, click.Context(cli, info_name="loop")))


def _groups() -> list[tuple[str, ...]]:
    ctx = click.Context(cli, info_name="loop")
    groups: list[tuple[str, ...]] = [()]
    for path in all_command_paths():
        command: click.Command | None = cli
        for part in path:
            assert isinstance(command, click.Group)
            command = command.get_command(ctx, part)
        if isinstance(command, click.Group):
            groups.append(path)
    return groups


def description(help_text: str) -> str:
    """The paragraph(s) between the usage line and the first section."""
    body = help_text.split("\n\n", 1)[1] if "\n\n" in help_text else ""
    return body.split("\nOptions:", 1)[0].strip()


def short_help_rows(help_text: str) -> dict[str, str]:
    """``name → short help`` for the command listings of a group's help, wrapped lines joined."""
    rows: dict[str, str] = {}
    current: str | None = None
    in_commands = False
    for line in help_text.splitlines():
        if line and not line.startswith(" "):
            in_commands = line.endswith(":") and line != "Options:"
            current = None
            continue
        if not in_commands or not line.strip():
            continue
        match = re.match(r"^  (\S+)\s{2,}(.*)$", line)
        if match:
            current = match[1]
            rows[current] = match[2].strip()
        elif current is not None:
            rows[current] += " " + line.strip()
    return rows


def test_every_registered_command_is_listed() -> None:
    top = {path[0] for path in all_command_paths()}
    assert set(COMMANDS) <= top


def test_top_level_help(tmp_path: Path, loop: Loop) -> None:
    result = loop("--help", cwd=tmp_path)

    assert result.exit_code == 0
    assert USAGE.match(result.stdout)
    assert description(result.stdout).startswith(
        "loop keeps an AI coding agent's work on a spec, one checkpoint at a time."
    )
    for option in ("--repo", "--json", "--debug", "--version", "--help"):
        assert option in result.stdout
    assert set(short_help_rows(result.stdout)) == set(COMMANDS)


def test_short_h_is_help(tmp_path: Path, loop: Loop) -> None:
    assert loop("-h", cwd=tmp_path).stdout == loop("--help", cwd=tmp_path).stdout


@pytest.mark.parametrize("path", all_command_paths(), ids=" ".join)
def test_every_command_has_help(path: tuple[str, ...], tmp_path: Path, loop: Loop) -> None:
    result = loop(*path, "--help", cwd=tmp_path)

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert re.match(USAGE.pattern + re.escape(" ".join(path)) + " ", result.stdout)
    text = description(result.stdout)
    assert len(text) >= 20, f"`loop {' '.join(path)} --help` has no real description:\n{text!r}"
    assert "Options:" in result.stdout
    assert "Traceback" not in result.output


@pytest.mark.parametrize("path", all_command_paths(), ids=" ".join)
def test_every_option_is_explained(path: tuple[str, ...], tmp_path: Path, loop: Loop) -> None:
    ctx = click.Context(cli, info_name="loop")
    command: click.Command | None = cli
    for part in path:
        assert isinstance(command, click.Group)
        command = command.get_command(ctx, part)
    assert command is not None
    silent = [
        param.name
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert silent == [], f"`loop {' '.join(path)}` options without help: {silent}"


def _truncated(help_text: str) -> list[str]:
    return sorted(name for name, text in short_help_rows(help_text).items() if text.endswith("..."))


def test_no_short_help_in_loop_help_is_truncated(tmp_path: Path, loop: Loop) -> None:
    result = loop("--help", cwd=tmp_path)

    assert _truncated(result.stdout) == []


def test_no_short_help_in_a_group_listing_is_truncated(tmp_path: Path, loop: Loop) -> None:
    truncated = {}
    for group in _groups():
        if group:
            names = _truncated(loop(*group, "--help", cwd=tmp_path).stdout)
            if names:
                truncated[" ".join(group)] = names

    assert truncated == {}


def test_version_option(tmp_path: Path, loop: Loop) -> None:
    for flag in ("--version", "-V"):
        result = loop(flag, cwd=tmp_path)
        assert result.exit_code == 0
        assert result.stdout == f"loop, version {__version__}\n"


def test_python_dash_m_the_loop_version(
    tmp_path: Path, loop_process: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    proc = loop_process("--version", cwd=tmp_path)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"loop, version {__version__}\n"
    assert proc.stderr == ""


def test_python_dash_m_the_loop_help(
    tmp_path: Path, loop_process: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    proc = loop_process("--help", cwd=tmp_path)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: loop [OPTIONS] COMMAND [ARGS]...\n")
