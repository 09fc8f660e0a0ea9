"""The reverse line reader: newest line first, exact offsets, a hard byte budget."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from the_loop.telemetry.tail import TailReader


def lines_of(path: Path, **kw: int) -> list[tuple[bytes, int, bool]]:
    return [(ln.data, ln.offset, ln.complete) for ln in TailReader(path, **kw).lines()]


def test_lines_come_newest_first_with_their_offsets(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    assert lines_of(path, block_size=3) == [
        (b"three", 8, True),
        (b"two", 4, True),
        (b"one", 0, True),
    ]


def test_a_torn_newest_line_is_marked_incomplete(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    found = lines_of(path, block_size=4)
    assert found == [(b'{"b":', 8, False), (b'{"a":1}', 0, True)]


def test_blank_lines_are_passed_over(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"a\n\n  \nb\n\n")
    assert [d for d, _, _ in lines_of(path, block_size=2)] == [b"b", b"a"]


def test_an_empty_file_has_no_lines_and_reads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    reader = TailReader(path)
    assert list(reader.lines()) == []
    assert reader.bytes_read == 0
    assert reader.reached_start


def test_the_budget_stops_the_walk_and_drops_the_line_it_cuts(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"a" * 100 + b"\n" + b"b" * 10 + b"\n" + b"c" * 10 + b"\n")
    reader = TailReader(path, budget=30, block_size=8)
    found = [ln.data for ln in reader.lines()]
    # c and b fit in 30 bytes; the a-line's start was never read, so it is not yielded.
    assert found == [b"c" * 10, b"b" * 10]
    assert reader.bytes_read == 30
    assert reader.budget_exhausted and not reader.reached_start


def test_stopping_early_reads_only_the_blocks_needed(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"x" * 10_000 + b"\nlast\n")
    reader = TailReader(path, block_size=16)
    first = next(iter(reader.lines()))
    assert first.data == b"last"
    assert reader.bytes_read == 16


def test_a_line_longer_than_many_blocks_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    long = b"y" * 5000
    path.write_bytes(b"head\n" + long + b"\ntail")
    assert lines_of(path, block_size=7) == [
        (b"tail", 5006, False),
        (long, 5, True),
        (b"head", 0, True),
    ]


def test_line_numbers_are_counted_only_for_a_small_front(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"a\nb\nc\n")
    reader = TailReader(path)
    assert reader.line_number(4) == 3
    assert reader.line_number(0) == 1
    assert reader.line_number(2 * 1024 * 1024) is None


def test_bad_sizes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        TailReader(tmp_path / "x", budget=0)


@settings(max_examples=200, deadline=None)
@given(
    content=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"  ", b"{}", b"\xff"]), max_size=60),
    block=st.integers(min_value=1, max_value=9),
)
def test_reverse_reading_matches_a_forward_split(
    tmp_path_factory: pytest.TempPathFactory, content: list[bytes], block: int
) -> None:
    data = b"".join(content)
    path = tmp_path_factory.mktemp("prop") / "t"
    path.write_bytes(data)
    expected = []
    offset = 0
    for piece in data.split(b"\n"):
        if piece and not piece.isspace():
            expected.append((piece, offset))
        offset += len(piece) + 1
    reader = TailReader(path, block_size=block)
    got = list(reader.lines())
    assert [(ln.data, ln.offset) for ln in got] == expected[::-1]
    assert reader.bytes_read == len(data)
    if got:
        newest, at = expected[-1]
        assert got[0].complete == (at + len(newest) < len(data))  # a newline follows it
        assert all(ln.complete for ln in got[1:])
