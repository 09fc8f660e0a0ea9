"""The exit-code table and the one handler that applies it.

0 ok, 1 findings or failure, 2 usage error or unusable input, 3 internal error
(a bug in loop), 130 interrupted. No traceback without ``--debug``. The table in
docs/exit-codes.md is checked against ``ExitCode`` too.
"""

from __future__ import annotations

import inspect
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import click
import pytest
from helpers import Result

from the_loop import __version__, errors
from the_loop.cli import cli
from the_loop.cli.handler import guarded
from the_loop.errors import ExitCode, LoopError, Where

Loop = Callable[..., Result]

EXIT_CODES = {
    "OK": 0,
    "FAILURE": 1,
    "USAGE": 2,
    "INTERNAL": 3,
    "INTERRUPTED": 130,
}

# Every error class loop raises on purpose, with the code it maps to.
ERROR_CODES = {
    "LoopError": 1,
    "UsageError": 2,
    "UnusableInputError": 2,
    "ConfigError": 1,
    "SpecError": 1,
    "RefusedError": 1,
    "DagError": 1,
    "GitError": 1,
    "TemplateError": 1,
    "LockError": 1,
    "StateError": 1,
    "FileSystemError": 1,
    "WriteError": 1,
}


def test_the_exit_code_table_is_pinned() -> None:
    assert {code.name: int(code) for code in ExitCode} == EXIT_CODES


def test_every_error_class_has_a_pinned_exit_code() -> None:
    classes = {
        name: cls
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, LoopError) and cls.__module__ == errors.__name__
    }
    assert sorted(classes) == sorted(ERROR_CODES), "a new error class needs a row in ERROR_CODES"
    assert {name: int(cls.exit_code) for name, cls in classes.items()} == ERROR_CODES


# --- guarded(), called directly ------------------------------------------------------


def _raises(exc: BaseException) -> Callable[[], NoReturn]:
    def call() -> NoReturn:
        raise exc

    return call


def _run_guarded(
    call: Callable[[], object], *, debug: bool = False, crash_dir: Path | None = None
) -> int:
    with pytest.raises(click.exceptions.Exit) as exc:
        guarded(call, debug=debug, crash_dir=lambda: crash_dir)
    return exc.value.exit_code


def _only_report(folder: Path) -> Path:
    reports = list(folder.glob("loop-crash-*.txt"))
    assert len(reports) == 1, reports
    return reports[0]


def test_guarded_returns_the_value_when_nothing_fails() -> None:
    assert guarded(lambda: 42, debug=False) == 42


@pytest.mark.parametrize(("name", "code"), sorted(ERROR_CODES.items()))
def test_a_loop_error_exits_with_its_code_and_message(
    name: str, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    cls = getattr(errors, name)
    error = cls("the thing broke", where=Where("notes.md", 3), hint="do the other thing")

    assert _run_guarded(_raises(error)) == code

    out, err = capsys.readouterr()
    assert out == ""
    assert err == "error: notes.md:3: the thing broke\nhint: do the other thing\n"


def test_a_loop_error_lists_its_details_between_message_and_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = errors.ConfigError("bad", details=("a.yaml:1:1: error: x", "a.yaml:2:1: error: y"))

    assert _run_guarded(_raises(error)) == 1

    assert capsys.readouterr().err == "error: bad\n  a.yaml:1:1: error: x\n  a.yaml:2:1: error: y\n"


def test_a_loop_error_with_debug_also_shows_the_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _run_guarded(_raises(errors.SpecError("nope")), debug=True) == 1

    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.endswith("error: nope\n")


def test_an_unexpected_exception_is_an_internal_error_without_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert _run_guarded(_raises(ZeroDivisionError("division by zero")), crash_dir=tmp_path) == 3

    out, err = capsys.readouterr()
    report = _only_report(tmp_path)
    assert out == ""
    assert err == (
        "internal error: ZeroDivisionError: division by zero\n"
        f"this is a bug in loop; details in {report}; run the command again with --debug "
        "for the traceback\n"
    )
    text = report.read_text()
    assert text.startswith(f"loop {__version__}, Python ")
    assert "\ncommand: " in text
    assert text.rstrip().endswith("ZeroDivisionError: division by zero")


def test_an_unexpected_exception_with_debug_shows_the_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert _run_guarded(_raises(KeyError("pressure")), debug=True, crash_dir=tmp_path) == 3

    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert "KeyError: 'pressure'" in err
    assert err.endswith(
        "internal error: KeyError: 'pressure'\n"
        f"this is a bug in loop; details in {_only_report(tmp_path)}; run the command again "
        "with --debug for the traceback\n"
    )


@pytest.mark.parametrize(
    ("error", "message", "hint"),
    [
        (
            PermissionError(13, "Permission denied", "/p/execution-log.md"),
            "/p/execution-log.md: cannot use this file: Permission denied",
            "check the file's and its folder's permissions (ls -l)",
        ),
        (
            OSError(28, "No space left on device", "/p/tasks.md"),
            "/p/tasks.md: cannot use this file: No space left on device",
            "the disk is full; free some space and run the command again",
        ),
        (
            OSError(30, "Read-only file system", "/p/tasks.md"),
            "/p/tasks.md: cannot use this file: Read-only file system",
            "the file system is read-only; run loop where the project can be written",
        ),
    ],
    ids=["EACCES", "ENOSPC", "EROFS"],
)
def test_a_file_system_error_is_a_clear_error_not_a_bug(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, error: OSError, message: str, hint: str
) -> None:
    assert _run_guarded(_raises(error), crash_dir=tmp_path) == 1

    assert capsys.readouterr().err == f"error: {message}\nhint: {hint}\n"
    assert not list(tmp_path.iterdir())  # not a bug: no crash report


def test_ctrl_c_exits_130(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_guarded(_raises(KeyboardInterrupt())) == 130

    out, err = capsys.readouterr()
    assert out == ""
    assert err == "interrupted\n"


@pytest.mark.parametrize(
    "exc",
    [click.exceptions.Exit(5), click.UsageError("bad option"), click.exceptions.Abort()],
    ids=["exit", "usage", "abort"],
)
def test_click_control_flow_passes_through(exc: Exception) -> None:
    with pytest.raises(type(exc)):
        guarded(_raises(exc), debug=False)


# --- through the real CLI ------------------------------------------------------------


@pytest.fixture
def boom(monkeypatch: pytest.MonkeyPatch) -> Callable[[BaseException], None]:
    """Register a throwaway `loop boom` command that raises what the test says."""

    def install(exc: BaseException) -> None:
        @click.command("boom")
        def command() -> None:
            raise exc

        monkeypatch.setitem(cli.commands, "boom", command)

    return install


def test_cli_ok_is_0(tmp_path: Path, loop: Loop) -> None:
    assert loop("--version", cwd=tmp_path).exit_code == 0


def test_cli_findings_are_1(tmp_path: Path, loop: Loop) -> None:
    (tmp_path / "c.yaml").write_text("version: 1\n")

    assert loop("config", "validate", "c.yaml", cwd=tmp_path).exit_code == 1


def test_cli_a_missing_repo_folder_is_a_usage_error(tmp_path: Path, loop: Loop) -> None:
    result = loop("--repo", str(tmp_path / "nonexistent"), "status", "x", cwd=tmp_path)

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"error: --repo: {tmp_path / 'nonexistent'} is not a folder\n"


def test_cli_an_unknown_command_is_a_usage_error(tmp_path: Path, loop: Loop) -> None:
    result = loop("frobnicate", cwd=tmp_path)

    assert result.exit_code == 2
    assert "No such command 'frobnicate'" in result.stderr


def test_cli_an_unknown_option_is_a_usage_error(tmp_path: Path, loop: Loop) -> None:
    result = loop("config", "validate", "--frobnicate", cwd=tmp_path)

    assert result.exit_code == 2
    assert "No such option '--frobnicate'" in result.stderr


def test_cli_a_loop_error_shows_message_and_hint_without_traceback(
    git_repo: Path, loop: Loop
) -> None:
    (git_repo / ".the-loop").mkdir()
    (git_repo / ".the-loop" / "config.yaml").write_text('version: "0.1.0"\ntdd:\n  mode: x\n')

    result = loop("config", "show", cwd=git_repo)

    assert result.exit_code == 1
    assert result.stderr.startswith("error: the configuration is invalid\n")
    assert result.stderr.endswith(
        "hint: fix the findings above; `loop config validate` checks the file alone\n"
    )
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("exc", "code", "stderr"),
    [
        (
            errors.RefusedError("design.md is not approved", hint="run `loop approve 7 design`"),
            1,
            "error: design.md is not approved\nhint: run `loop approve 7 design`\n",
        ),
        (errors.UsageError("no such item"), 2, "error: no such item\n"),
        (
            RuntimeError("surprise"),
            3,
            "internal error: RuntimeError: surprise\n"
            "this is a bug in loop; details in {report}; run the command again with --debug "
            "for the traceback\n",
        ),
        (KeyboardInterrupt(), 130, "interrupted\n"),
    ],
    ids=["loop-error", "usage", "internal", "interrupted"],
)
def test_cli_maps_each_failure_to_its_code(
    exc: BaseException,
    code: int,
    stderr: str,
    boom: Callable[[BaseException], None],
    tmp_path: Path,
    loop: Loop,
    hermetic_env: Path,
) -> None:
    boom(exc)

    result = loop("boom", cwd=tmp_path)

    assert result.exit_code == code
    assert result.stdout == ""
    reports = list((hermetic_env / ".local/state/loop/crashes").glob("*.txt"))
    assert len(reports) == (1 if code == 3 else 0)
    assert result.stderr == stderr.format(report=reports[0] if reports else "")


def test_cli_debug_shows_the_traceback_of_an_internal_error(
    boom: Callable[[BaseException], None], tmp_path: Path, loop: Loop
) -> None:
    boom(RuntimeError("surprise"))

    plain = loop("boom", cwd=tmp_path)
    debug = loop("--debug", "boom", cwd=tmp_path)

    assert plain.exit_code == debug.exit_code == 3
    assert "Traceback" not in plain.stderr
    assert debug.stderr.startswith("Traceback (most recent call last):")
    assert "raise exc" in debug.stderr
    assert debug.stderr.endswith("run the command again with --debug for the traceback\n")
    assert "internal error: RuntimeError: surprise\nthis is a bug in loop; details in " in (
        debug.stderr
    )


def test_a_real_process_exits_with_the_code(
    tmp_path: Path, loop_process: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    (tmp_path / "c.yaml").write_text("- a list\n")

    invalid = loop_process("config", "validate", "c.yaml", cwd=tmp_path)
    missing = loop_process("config", "validate", "nope.yaml", cwd=tmp_path)

    assert invalid.returncode == 1
    assert missing.returncode == 2
    assert missing.stderr == (
        "error: nope.yaml: config file not found\n"
        "hint: run `loop init` to create one, or pass the file to check\n"
    )


def test_the_documented_table_matches_the_codes() -> None:
    import re

    from helpers import REPO_ROOT

    doc = (REPO_ROOT / "docs" / "exit-codes.md").read_text()
    rows = dict(re.findall(r"^\| (\d+) \| `([A-Z]+)` \|", doc, re.MULTILINE))
    assert rows == {str(int(code)): code.name for code in ExitCode}
