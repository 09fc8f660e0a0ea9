"""Writes are flushed to disk unless a test suite says ``LOOP_TEST_FSYNC=0``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from the_loop.io import atomic


@pytest.mark.parametrize(("setting", "flushes"), [(None, True), ("0", False), ("1", True)])
def test_every_write_is_flushed_unless_the_suite_opts_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, flushes: bool
) -> None:
    if setting is None:
        monkeypatch.delenv("LOOP_TEST_FSYNC", raising=False)
    else:
        monkeypatch.setenv("LOOP_TEST_FSYNC", setting)
    flushed: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        flushed.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    target = tmp_path / "notes.md"
    atomic.write_text(target, "one\n")
    atomic.append_bytes(target, b"two\n")
    assert atomic.create_exclusive(tmp_path / "new.md", "three\n")

    assert target.read_text() == "one\ntwo\n"
    # write_text and create_exclusive: the file and its folder; append_bytes: the file
    assert len(flushed) == (5 if flushes else 0)
