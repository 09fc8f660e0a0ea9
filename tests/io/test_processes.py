"""The one process runner: exit, bounded output, lines, stdin, the deadline, the group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import REPO_ROOT

from the_loop.io.processes import run


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes: it only waits to be reaped by its parent
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def wait_until_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_exit_status_and_separate_streams(tmp_path: Path) -> None:
    done = run(["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path, timeout=30)

    assert (done.returncode, done.timed_out, done.ok) == (3, False, False)
    assert (done.stdout, done.stderr) == ("out\n", "err\n")


def test_merged_output_keeps_the_order(tmp_path: Path) -> None:
    script = "echo out; echo err >&2; echo more"
    done = run(["sh", "-c", script], cwd=tmp_path, timeout=30, merge_stderr=True)

    assert done.ok
    assert done.stdout.splitlines() == ["out", "err", "more"] and done.stderr == ""


def test_output_keeps_the_end_of_a_long_stream(tmp_path: Path) -> None:
    done = run(["sh", "-c", "seq 1 200000"], cwd=tmp_path, timeout=30)

    assert done.returncode == 0
    assert done.stdout.endswith("199999\n200000\n")
    assert len(done.stdout) <= 64 * 1024
    assert done.dropped == len("".join(f"{n}\n" for n in range(1, 200001))) - len(done.stdout)


def test_head_and_tail_are_whole_lines_around_the_gap(tmp_path: Path) -> None:
    done = run(["sh", "-c", "seq 1 100000"], cwd=tmp_path, timeout=30, keep=1000, head=1000)

    lines = done.stdout.splitlines()
    assert lines[:3] == ["1", "2", "3"] and lines[-1] == "100000"
    assert done.dropped > 0
    numbers = [int(line) for line in lines]  # no line cut in two at either edge
    assert numbers == sorted(numbers)
    gap = [b for a, b in zip(numbers, numbers[1:], strict=False) if b != a + 1]
    assert len(gap) == 1


def test_every_line_is_handed_over_as_it_comes(tmp_path: Path) -> None:
    seen: list[str] = []
    done = run(
        ["sh", "-c", "seq 1 50000; printf 'no end'"],
        cwd=tmp_path,
        timeout=30,
        keep=100,
        on_line=seen.append,
    )

    assert done.ok
    assert seen == [str(n) for n in range(1, 50001)] + ["no end"]  # all of it, kept or not


def test_nul_separated_records(tmp_path: Path) -> None:
    seen: list[str] = []
    run(["printf", "a b\\0c\\nd\\0"], cwd=tmp_path, timeout=30, on_line=seen.append, line_end=b"\0")

    assert seen == ["a b", "c\nd"]


def test_stdin_is_written_then_closed(tmp_path: Path) -> None:
    text = "x" * 300_000 + "\nlast\n"  # more than a pipe holds: written as the child reads
    done = run(["sh", "-c", "cat; echo done"], cwd=tmp_path, timeout=30, stdin=text)

    assert done.ok and done.stdout.endswith("x\nlast\ndone\n")


def test_a_child_that_does_not_read_its_stdin(tmp_path: Path) -> None:
    done = run(["true"], cwd=tmp_path, timeout=30, stdin=b"y" * 1_000_000)

    assert done.ok


def test_without_stdin_the_child_reads_an_empty_one(tmp_path: Path) -> None:
    done = run(["cat"], cwd=tmp_path, timeout=10)  # would wait forever on a terminal

    assert done.returncode == 0 and done.stdout == ""


def test_the_environment_is_the_one_given(tmp_path: Path) -> None:
    done = run(["sh", "-c", 'echo "$ONLY"'], cwd=tmp_path, timeout=30, env={"ONLY": "this"})

    assert done.stdout == "this\n"


def test_ticks_and_the_pid(tmp_path: Path) -> None:
    ticks: list[float] = []
    pids: list[int] = []
    done = run(
        ["sleep", "0.6"],
        cwd=tmp_path,
        timeout=30,
        on_tick=ticks.append,
        tick=0.1,
        on_start=pids.append,
    )

    assert done.ok and len(pids) == 1
    assert len(ticks) >= 3 and ticks == sorted(ticks)


@pytest.mark.slow
def test_the_timeout_stops_a_command_that_ignores_sigterm(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run(["sh", "-c", "trap '' TERM; sleep 30"], cwd=tmp_path, timeout=0.5, grace=0.5)

    assert done.timed_out and done.returncode is None and not done.ok
    assert time.monotonic() - started < 10


def test_the_timeout_stops_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    script = f"sleep 30 & echo $! > {pid_file}; wait"
    done = run(["sh", "-c", script], cwd=tmp_path, timeout=0.5)

    assert done.timed_out
    assert wait_until_gone(int(pid_file.read_text())), "the child's child outlived the timeout"


def test_a_background_job_holding_the_pipe_is_not_waited_for(tmp_path: Path) -> None:
    pid_file = tmp_path / "job"
    started = time.monotonic()
    done = run(["sh", "-c", f"sleep 30 & echo $! > {pid_file}; echo ok"], cwd=tmp_path, timeout=60)

    assert done.ok and done.stdout == "ok\n"
    assert time.monotonic() - started < 10
    os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_a_missing_program_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run(["no-such-program-xyz"], cwd=tmp_path, timeout=5)


def test_an_interrupt_stops_the_group_and_is_raised(tmp_path: Path) -> None:
    pid_file = tmp_path / "child"

    def interrupt(elapsed: float) -> None:
        if pid_file.exists() and pid_file.read_text().strip():
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(
            ["sh", "-c", f"sleep 30 & echo $! > {pid_file}; wait"],
            cwd=tmp_path,
            timeout=60,
            on_tick=interrupt,
            tick=0.05,
        )
    assert wait_until_gone(int(pid_file.read_text()))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_die_with_parent_takes_the_child_along(tmp_path: Path) -> None:
    """A loop killed with SIGKILL cannot stop its child; the kernel does, when asked to."""
    pid_file = tmp_path / "child"
    parent = textwrap.dedent(
        f"""
        from pathlib import Path
        from the_loop.io.processes import run
        run(["sh", "-c", "echo $$ > {pid_file}; exec sleep 30"], cwd=Path("."), timeout=60,
            die_with_parent=True)
        """
    )
    with subprocess.Popen([sys.executable, "-c", parent], cwd=REPO_ROOT) as loop:
        deadline = time.monotonic() + 20
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "the child never started"
            time.sleep(0.05)
        loop.kill()
    assert wait_until_gone(int(pid_file.read_text()))
