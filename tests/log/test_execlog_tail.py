"""Tail reads of ``execution-log.md``: ``last_entry`` and ``tail_entries``.

A tail read must agree with reading the whole log (``parse_log(...).entries[-n:]``)
on stamps, summaries and fields, on small logs and on generated logs of
thousands of entries, including entries longer than the tail chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from the_loop.io.templating import render
from the_loop.log import execution_log as execlog
from the_loop.log.execution_log import LogEntry, last_entry, read_log, tail_entries

HEAD = render("execution-log.md.j2", item="issue-5", title="tail reads", phase="implementation")


def entry_text(n: int, did_extra: str = "") -> str:
    return (
        f"### 2026-07-{n % 28 + 1:02d}T{n % 24:02d}:{n % 60:02d}Z — task {n}\n"
        "\n"
        "- **Phase:** implementation\n"
        f"- **Did:** did {n}\n"
        f"  second line of {n}{did_extra}\n"
        f"- **Checkpoint/tests:** `pytest -q` → {n} passed\n"
        f"- **Next:** task {n + 1}\n"
        f"- **Evidence:** run {n}\n"
    )


def write_log(path: Path, count: int, *, first: int = 0) -> Path:
    path.write_text(HEAD + "".join("\n" + entry_text(n) for n in range(first, first + count)))
    return path


def visible(found: Sequence[LogEntry]) -> list[tuple[str, str, dict[str, str]]]:
    """What a tail read must get right: everything but the line number."""
    return [(e.stamp, e.summary, dict(e.fields)) for e in found]


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[LogEntry, ...]]:
    """A log of 20,000 generated entries (about 3.5 MB) and its whole-file reading."""
    path = write_log(tmp_path_factory.mktemp("big") / "execution-log.md", 20_000)
    assert path.stat().st_size > 3 * 1024 * 1024
    return path, read_log(path).entries


# --- small logs: the whole file is the tail --------------------------------------------


def test_small_log_tail_agrees_with_the_whole_read_including_lines(tmp_path: Path) -> None:
    path = write_log(tmp_path / "execution-log.md", 5)
    whole = read_log(path).entries
    assert len(whole) == 5
    for n in range(1, 8):
        # a file smaller than the chunk is read whole: lines are known
        assert tail_entries(path, n) == list(whole[-n:])
    assert last_entry(path) == whole[-1]  # equality includes the line


def test_tail_of_zero_entries(tmp_path: Path) -> None:
    assert tail_entries(write_log(tmp_path / "execution-log.md", 3), 0) == []


def test_last_entry_of_a_missing_log_is_none(tmp_path: Path) -> None:
    assert last_entry(tmp_path / "execution-log.md") is None


def test_last_entry_of_a_log_without_entries_is_none(tmp_path: Path) -> None:
    path = tmp_path / "execution-log.md"
    path.write_text(HEAD)
    assert last_entry(path) is None
    assert tail_entries(path, 3) == []


def test_last_entry_of_an_empty_file_is_none(tmp_path: Path) -> None:
    path = tmp_path / "execution-log.md"
    path.write_bytes(b"")
    assert last_entry(path) is None


def test_last_entry_stops_at_a_following_section(tmp_path: Path) -> None:
    path = tmp_path / "execution-log.md"
    path.write_text(
        HEAD
        + "\n"
        + entry_text(1)
        + "\n## Review cycles\n\n- **Outcome:** pass\n\n## Final validation evidence\n\n"
        + "- **Test suite:** 102 passed\n"
    )
    last = last_entry(path)
    assert last is not None
    assert last.summary == "task 1"
    assert "Outcome" not in last.fields
    assert "Test suite" not in last.fields


# --- large logs ---------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 2, 5, 50, 1_000, 3_000])
def test_big_log_tail_agrees_with_the_whole_read(
    big_log: tuple[Path, tuple[LogEntry, ...]], count: int
) -> None:
    path, whole = big_log
    found = tail_entries(path, count)
    assert visible(found) == visible(whole[-count:])
    # a tail-only read does not know line numbers
    assert [e.line for e in found] == [None] * count


def test_big_log_last_entry(big_log: tuple[Path, tuple[LogEntry, ...]]) -> None:
    path, whole = big_log
    last = last_entry(path)
    assert last is not None
    assert visible([last]) == visible(whole[-1:])
    assert (last.summary, last.next) == ("task 19999", "task 20000")
    assert last.line is None
    assert whole[-1].line is not None


def test_big_log_tail_of_more_than_all_reads_everything_with_lines(
    big_log: tuple[Path, tuple[LogEntry, ...]],
) -> None:
    path, whole = big_log
    found = tail_entries(path, 25_000)
    # the chunk grew until the whole file was read: every entry, with its line
    assert found == list(whole)
    assert len(found) == 20_000


def test_entries_longer_than_the_tail_chunk(tmp_path: Path) -> None:
    long_did = "\n  " + "\n  ".join("x" * 99 for _ in range(1_000))  # ~100 KB per entry
    path = tmp_path / "execution-log.md"
    body = "".join("\n" + entry_text(n) for n in range(200))
    body += "".join("\n" + entry_text(n, did_extra=long_did) for n in range(200, 203))
    path.write_text(HEAD + body)
    entry_size = len(entry_text(202, did_extra=long_did).encode())
    assert entry_size > execlog._TAIL_CHUNK
    whole = read_log(path).entries
    assert len(whole) == 203
    for count in (1, 2, 3, 4, 10):
        found = tail_entries(path, count)
        assert visible(found) == visible(whole[-count:])
    last = last_entry(path)
    assert last is not None
    assert last.fields["did"] == whole[-1].fields["did"]
    assert len(last.fields["did"]) > execlog._TAIL_CHUNK


def test_tail_chunk_boundary_in_a_multibyte_character(tmp_path: Path) -> None:
    # Entries full of 3-byte characters: wherever the chunk starts, the entries
    # read from the tail are whole and identical to the full read.
    path = tmp_path / "execution-log.md"
    text = HEAD + "".join(
        f"\n### 2026-07-24 — étape {n} → suivante\n\n- **Next:** « {'—' * 50} » {n}\n"
        for n in range(2_000)
    )
    path.write_text(text, encoding="utf-8")
    assert path.stat().st_size > 2 * execlog._TAIL_CHUNK
    whole = read_log(path).entries
    for count in (1, 7, 300):
        assert visible(tail_entries(path, count)) == visible(whole[-count:])


def test_tail_read_that_starts_inside_a_code_fence(tmp_path: Path) -> None:
    fake = "".join(
        f"### 2026-01-01 — example {j}\n\n- **Next:** example {j}\n\n" for j in range(400)
    )
    documented = (
        "\n### 2026-07-10 — documented the log format\n\n"
        "- **Did:** wrote an example log:\n\n"
        "```markdown\n" + fake + "```\n\n"
        "- **Next:** task 100\n"
    )
    path = tmp_path / "execution-log.md"
    path.write_text(
        HEAD
        + "".join("\n" + entry_text(n) for n in range(5))
        + documented
        + "".join("\n" + entry_text(n) for n in range(100, 400))
    )
    whole = read_log(path).entries
    assert whole[-1].summary == "task 399"
    # the chunk starts inside the fenced example
    start = path.stat().st_size - execlog._TAIL_CHUNK
    assert path.read_bytes().find(b"```markdown") < start < path.read_bytes().find(b"```\n\n")
    last = last_entry(path)
    assert last is not None
    assert last.summary == "task 399"
