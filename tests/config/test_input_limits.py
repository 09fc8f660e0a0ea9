"""Unbounded input is refused at its line, cheaply: YAML bombs, deep nesting, huge files.

Issue 14, defect 4. A ~400-byte alias bomb in front matter made every read
command burn CPU and memory; 1,000 nested flow sequences raised RecursionError
(exit 3); a 1.6 MB config cost seconds per command. Every case is now a clear
error (file:line, what is wrong, what to do) that costs milliseconds.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from helpers.project import TASKS, project_copy, run

from the_loop.io import yamlio
from the_loop.io.textfile import CONFIG_LIMIT, SPEC_LIMIT


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """Each anchor repeats the one before ``width`` times: ``width ** levels`` values."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


DEEP_FLOW = "deep: " + "[" * 1000 + "]" * 1000 + "\n"


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def with_front_matter(path: Path, extra: str) -> None:
    text = path.read_text()
    assert text.startswith("---\n")
    path.write_text("---\n" + extra + text[4:])


@pytest.mark.parametrize(
    "command", (("status", "7"), ("check", "7"), ("next", "7"), ("graph", "7"))
)
def test_alias_bomb_in_front_matter_is_a_finding_not_a_furnace(
    project: Path, command: tuple[str, ...]
) -> None:
    with_front_matter(project / TASKS, alias_bomb())
    assert len(alias_bomb()) < 500

    started = time.monotonic()
    result = run(project, *command)
    elapsed = time.monotonic() - started

    assert result.exit_code in (0, 1, 2), result.output
    assert "internal error" not in result.output
    assert elapsed < 5, f"{command} took {elapsed:.1f}s"


def test_alias_bomb_finding_names_the_file_and_line(project: Path) -> None:
    with_front_matter(project / TASKS, alias_bomb())

    result = run(project, "check", "7")

    assert result.exit_code == 1
    line = next(x for x in result.stdout.splitlines() if "aliases expand" in x)
    assert line.startswith("docs/specs/issue-7/tasks.md:") or "/tasks.md:" in line
    assert "(loop reads at most 20000)" in line


def test_deeply_nested_front_matter_is_a_finding(project: Path) -> None:
    with_front_matter(project / TASKS, DEEP_FLOW)

    result = run(project, "check", "7")

    assert result.exit_code == 1, result.output
    assert "tasks.md:2:" in result.stdout
    assert "nested more than 64 levels deep" in result.stdout


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (alias_bomb(), "aliases expand this document to"),
        (DEEP_FLOW, "nested more than 64 levels deep"),
        ("a:\n" + "- " * 1000 + "x\n", "nested more than 64 levels deep"),
        ("a: &a [1]\nb: 2001-02-30\n", "cannot be read as YAML: day is out of range for month"),
    ],
    ids=["alias-bomb", "deep-flow", "deep-block", "bad-date"],
)
def test_config_problems_are_config_errors(project: Path, body: str, message: str) -> None:
    (project / ".the-loop/config.yaml").write_text('version: "0.1.0"\n' + body)

    result = run(project, "status", "7")

    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: the configuration is invalid\n")
    assert ".the-loop/config.yaml:" in result.stderr
    assert message in result.stderr


def test_an_oversized_config_is_refused_quickly(project: Path) -> None:
    filler = "".join(f"# filler line {i:06d} " + "x" * 60 + "\n" for i in range(25_000))
    (project / ".the-loop/config.yaml").write_text('version: "0.1.0"\n' + filler)
    assert (project / ".the-loop/config.yaml").stat().st_size > CONFIG_LIMIT

    started = time.monotonic()
    result = run(project, "status", "7")

    assert time.monotonic() - started < 5
    assert result.exit_code == 2, result.output
    size = (project / ".the-loop/config.yaml").stat().st_size / 1024 / 1024
    assert result.stderr.splitlines()[0].endswith(
        f"config.yaml: this config file is {size:.1f} MiB; loop reads config files up to 256 KiB"
    )
    assert result.stderr.splitlines()[1].startswith("hint: ")


def test_an_oversized_spec_file_is_refused(project: Path) -> None:
    with (project / TASKS).open("ab") as handle:
        handle.truncate(SPEC_LIMIT + 1)  # sparse: no disk is used

    result = run(project, "check", "7")

    assert result.exit_code == 1, result.output
    assert "tasks.md: error: this spec file is 32.0 MiB; loop reads spec files up to 32 MiB" in (
        result.stdout
    )
    assert "internal error" not in result.output
    started = run(project, "task", "start", "7", "3")
    assert started.exit_code in (1, 2), started.output
    assert "internal error" not in started.output


def test_a_fifo_in_place_of_tasks_md_does_not_hang(project: Path) -> None:
    import os

    (project / TASKS).unlink()
    os.mkfifo(project / TASKS)

    for command in (("next", "7"), ("check", "7"), ("task", "start", "7", "3")):
        result = run(project, *command)  # a blocking read would hang here forever
        assert result.exit_code in (0, 1, 2), result.output
        assert "internal error" not in result.output


def test_oversized_front_matter_is_a_finding(project: Path) -> None:
    with_front_matter(project / TASKS, "".join(f"k{i}: {'v' * 80}\n" for i in range(1000)))

    result = run(project, "check", "7")

    assert result.exit_code == 1
    assert re.search(
        r"tasks.md:2: error: front matter is 8\d KiB; loop reads front matter up to 64 KiB",
        result.stdout,
    )


def test_a_recursive_alias_is_a_problem() -> None:
    data, problem = yamlio.parse("a: &a\n  b: *a\n")
    assert data is None or problem is None or "recursive" in problem.message
