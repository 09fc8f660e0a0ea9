"""``loop graph ID --format svg``: a valid SVG document with one node per task."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from board_project import TWELVE, twelve
from helpers.project import ok

SVG = "{http://www.w3.org/2000/svg}"
pytestmark = pytest.mark.slow  # a real project, approved through loop itself


def graph_svg(root: Path) -> ET.Element:
    done = subprocess.run(
        [sys.executable, "-m", "the_loop", "-C", str(root), "graph", "7", "--format", "svg"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return ET.fromstring(done.stdout)


def test_svg_has_one_node_per_task_by_waves_with_the_critical_path(tmp_path: Path) -> None:
    root = twelve(tmp_path / "p")
    ok(root, "work-on", "7")  # into implementation
    ok(root, "task", "start", "7", "1")

    svg = graph_svg(root)

    assert svg.tag == f"{SVG}svg"
    nodes = svg.findall(f".//{SVG}g[@class]")
    tasks = [g for g in nodes if "task" in g.get("class", "").split()]
    assert sorted(g.get("data-task") for g in tasks) == sorted(t.id for t in TWELVE)
    assert {g.get("data-task"): g.get("data-state") for g in tasks}["1"] == "active"
    edges = svg.findall(f".//{SVG}path[@data-from]")
    assert len(edges) == sum(len(t.depends) for t in TWELVE)
    critical = [
        (e.get("data-from"), e.get("data-to")) for e in edges if "critical" in e.get("class", "")
    ]
    assert ("10", "11") in critical and ("11", "12") in critical
    # Columns are waves: a task is always right of what it depends on.
    x = {g.get("data-task"): float(g.find(f"{SVG}rect").get("x")) for g in tasks}  # type: ignore[union-attr, arg-type]
    assert all(x[d] < x[t.id] for t in TWELVE for d in t.depends)
    labels = [t.text for t in svg.findall(f"{SVG}text") if "wave-label" in t.get("class", "")]
    assert labels[0] == "wave 1" and len(labels) == len(set(labels))  # one label per wave
