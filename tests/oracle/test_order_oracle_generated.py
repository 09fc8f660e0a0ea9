"""The oracle on a sample of the order generator's plans: a third reading of the same files.

``tests/tasks/test_order_generated.py`` draws Kiro and Spec Kit plans from seeds,
writes them out and works their ready set out in its own shape (a work order and a
look back over it); it holds ``loop`` to that set. Here the same files go through
``order_oracle`` (edges, then reachability), which must give the same set: three
readings written apart that agree.
"""

from __future__ import annotations

import random

import pytest
from order_oracle import KIRO, SPEC_KIT, parse_plan
from tasks import test_order_generated as generated

SAMPLE = range(30)


@pytest.mark.parametrize("seed", SAMPLE)
def test_kiro_plans_nested_and_flat(seed: int) -> None:
    rng = random.Random(seed)
    top = generated.draw_kiro(rng)
    expected = generated.sequential_ready(top)
    for nested in (True, False):
        text = generated.write_kiro(top, rng, nested=nested)
        assert parse_plan(text, KIRO).ready() == expected, text


@pytest.mark.parametrize("seed", SAMPLE)
def test_spec_kit_plans_with_phases_and_parallel_runs(seed: int) -> None:
    rng = random.Random(seed)
    top = generated.draw_spec_kit(rng)
    text = generated.write_spec_kit(top, rng)
    assert parse_plan(text, SPEC_KIT).ready() == generated.spec_kit_ready(top), text


@pytest.mark.parametrize("seed", SAMPLE)
def test_kiro_plans_with_waves(seed: int) -> None:
    top, waves = generated.draw_waves(random.Random(seed))
    text = generated.write_waves(top, waves)
    assert parse_plan(text, KIRO).ready() == generated.wave_ready(top, waves), text
