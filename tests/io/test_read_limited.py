"""``read_limited``: a file's bytes up to a bound, whatever its size says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from the_loop.errors import UnusableInputError
from the_loop.io import textfile
from the_loop.io.textfile import read_limited


@pytest.mark.parametrize("size", [0, 1, 99, 100])
def test_a_file_within_the_limit_is_read_whole(tmp_path: Path, size: int) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"x" * size)
    assert read_limited(path, 100) == b"x" * size


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"x" * 101)
    with pytest.raises(UnusableInputError):
        read_limited(path, 100)


@pytest.mark.parametrize(("grown", "refused"), [(50, False), (100, False), (101, True)])
def test_a_file_that_grew_after_its_size_was_taken_is_read_to_the_same_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grown: int, refused: bool
) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"x" * grown)
    real = os.fstat

    def smaller(fd: int) -> os.stat_result:
        found = list(real(fd))
        found[6] = 10  # st_size: the file had 10 bytes when it was looked at
        return os.stat_result(found)

    monkeypatch.setattr(textfile.os, "fstat", smaller)
    if refused:
        with pytest.raises(UnusableInputError):
            read_limited(path, 100)
    else:
        assert read_limited(path, 100) == b"x" * grown
