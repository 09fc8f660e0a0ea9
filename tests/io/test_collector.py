"""The collector is paused around bulk work, restored after it, and told to skip large results."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from the_loop.io import collector


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    # Before too: an in-process `loop next` earlier in this worker froze what was alive.
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.enable()


def test_paused_inside_and_restored_after() -> None:
    gc.enable()
    with collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector.paused(expected_objects=collector.LARGE):
        pass
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_restored_when_the_work_fails() -> None:
    gc.enable()
    with pytest.raises(ValueError), collector.paused():
        raise ValueError("the parse failed")
    assert gc.isenabled()


def test_only_large_results_are_frozen() -> None:
    gc.enable()
    gc.unfreeze()
    with collector.paused(expected_objects=10):
        kept = [[] for _ in range(100)]
    assert gc.get_freeze_count() == 0
    with collector.paused(expected_objects=collector.LARGE):
        kept += [[] for _ in range(100)]
    assert gc.get_freeze_count() >= len(kept)
