"""``run_bounded``: a command's exit, the end of its output, and a hard time bound."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from the_loop.io.child_process import run_bounded


def test_exit_status_and_merged_output(tmp_path: Path) -> None:
    done = run_bounded(["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path, timeout=30)

    assert (done.returncode, done.timed_out) == (3, False)
    assert done.output.splitlines() == ["out", "err"]


def test_output_keeps_the_end_of_a_long_stream(tmp_path: Path) -> None:
    done = run_bounded(["sh", "-c", "seq 1 200000"], cwd=tmp_path, timeout=30)

    assert done.returncode == 0
    assert done.output.endswith("199999\n200000\n")
    assert len(done.output) <= 64 * 1024


def test_the_timeout_stops_a_command_that_ignores_sigterm(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run_bounded(["sh", "-c", "trap '' TERM; sleep 30"], cwd=tmp_path, timeout=0.5)

    assert done.timed_out and done.returncode is None
    assert time.monotonic() - started < 10


def test_a_missing_program_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_bounded(["no-such-program-xyz"], cwd=tmp_path, timeout=5)


def test_stdin_is_closed(tmp_path: Path) -> None:
    done = run_bounded(["cat"], cwd=tmp_path, timeout=10)  # would wait forever on a terminal

    assert done.returncode == 0 and done.output == ""
