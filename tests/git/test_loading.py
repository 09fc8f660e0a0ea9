"""GitPython is loaded where a command touches git, and only there.

Importing it costs start-up time and starts ``git version`` twice, so a report
on an item with no checkpoint to look up (``next``, ``status``, ``graph``) must
not load it, cold or warm; ``task done``, which commits, does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO_ROOT
from helpers.project import NEXT, project_copy

_PROBE = """
import json, sys
from the_loop.cli import main
sys.argv = ["loop", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m == "git" or m.startswith("git."))),
      file=sys.stderr)
"""


def gitpython_modules(root: Path, *args: str, cold: bool = False) -> list[str]:
    """Run ``loop -C root args…`` in a fresh interpreter; the GitPython modules it loaded."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    if cold:
        env["LOOP_NO_CACHE"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(["-C", str(root), *args])],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    loaded: list[str] = json.loads(proc.stderr.strip().splitlines()[-1])
    return loaded


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    """issue-7 in implementation in a git repository, no task done yet."""
    return project_copy(tmp_path_factory, tmp_path / "p")


@pytest.mark.parametrize("args", [("next", "7"), ("status", "7"), ("graph", "7"), ("check", "7")])
def test_reports_without_a_checkpoint_never_load_gitpython(
    project: Path, args: tuple[str, ...]
) -> None:
    assert gitpython_modules(project, *args, cold=True) == []
    assert gitpython_modules(project, *args) == []  # warm, after the cold run filled caches


def test_task_done_loads_gitpython(project: Path) -> None:
    (project / "src.txt").write_text("the work of task 1\n")
    done = ("task", "done", "7", "1", "--did", "wrote it", "--next", NEXT)

    assert "git" in gitpython_modules(project, *done)  # the probe sees an import when there is one
