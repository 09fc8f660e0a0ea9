"""The global options work before and after the command name (issue 21).

``loop --no-color status 7`` and ``loop status 7 --no-color`` are the same
request; a new user types either. Each option is checked in both places, and
what the command printed is compared, not just its exit code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.project import project_copy

from the_loop.cli import cli

Run = tuple[int, str, str]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return project_copy(tmp_path_factory, tmp_path_factory.mktemp("global") / "p")


def run(args: list[str], *, color: bool = False) -> Run:
    """``loop args…``: exit code, stdout, stderr; on a pretend terminal when ``color``."""
    done = CliRunner().invoke(cli, args, color=color, prog_name="loop")
    return done.exit_code, done.stdout, done.stderr


def placed(where: str, option: list[str], command: list[str]) -> list[str]:
    """``option`` before the command name or after its arguments."""
    return [*option, *command] if where == "before" else [*command, *option]


WHERE = pytest.mark.parametrize("where", ["before", "after"])


@WHERE
@pytest.mark.parametrize(
    "command", [["status", "7"], ["config", "show", "--explain"]], ids=" ".join
)
def test_no_color(root: Path, where: str, command: list[str]) -> None:
    with_root = ["-C", str(root), *command]
    assert "\x1b[" in run(with_root, color=True)[1]  # the control: a terminal gets colour

    code, out, err = run(placed(where, ["--no-color"], with_root), color=True)

    assert code == 0, err
    assert "\x1b[" not in out
    assert out == run(with_root)[1]


@WHERE
def test_repo(root: Path, where: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # not the project: only --repo can find it

    code, out, err = run(placed(where, ["-C", str(root)], ["status", "7"]))

    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("issue-7")


@WHERE
@pytest.mark.parametrize(
    "command",
    [["status", "7"], ["next", "no-such-item"], ["hook", "Stop"]],
    ids=" ".join,
)
def test_json(root: Path, where: str, command: list[str]) -> None:
    """``hook`` has no --json of its own; an error is JSON on stdout, stderr stays empty."""
    args = ["-C", str(root), *command]
    code, out, err = run(placed(where, ["--json"], args), color=False)

    assert err == "", err
    assert (code, out) == run(["--json", *args])[:2]
    if command[0] != "hook":
        json.loads(out)


@WHERE
def test_debug(root: Path, where: str) -> None:
    command = ["-C", str(root), "next", "no-such-item"]
    assert "Traceback" not in run(command)[2]  # the control

    code, _out, err = run(placed(where, ["--debug"], command))

    assert code == 2
    assert "Traceback (most recent call last)" in err
    assert "error: no work item 'no-such-item'" in err


@WHERE
def test_no_cache(root: Path, where: str, tmp_path: Path) -> None:
    copy = project_copy_of(root, tmp_path)
    cache = copy / ".the-loop/state/cache"
    assert run(["-C", str(copy), "check", "7"])[0] == 0
    assert any(cache.glob("*.entry"))  # the control: a check fills the parse cache
    for entry in cache.iterdir():
        entry.unlink()

    code, out, err = run(placed(where, ["--no-cache"], ["-C", str(copy), "check", "7"]))

    assert code == 0, out + err
    assert list(cache.glob("*.entry")) == []


def project_copy_of(root: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)
    return copy
