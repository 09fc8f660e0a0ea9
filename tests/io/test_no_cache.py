"""``LOOP_NO_CACHE=1`` turns every cache off: no cache file anywhere, project or home.

The commands run as separate processes, with HOME and the XDG folders in a
temp folder, so the config cache, ruamel's front matter, the schema check and
Jinja's bytecode (all in the user's cache) are covered with the project's own.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers.project import NEXT, git, init_git, process, project_copy


def cache_files(*tops: Path) -> list[str]:
    """Every file or folder under ``tops`` that belongs to a cache (git's own folder aside)."""
    found = []
    for top in tops:
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in [*dirs, *files]:
                if "cache" in name.lower() or name.endswith(".entry") or name == "answers":
                    found.append(os.path.relpath(os.path.join(folder, name), top))
    return sorted(found)


@pytest.mark.slow
def test_no_command_writes_a_cache_file(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    home = tmp_path / "home"
    env = {
        "LOOP_NO_CACHE": "1",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "GIT_CONFIG_GLOBAL": str(hermetic_env / ".gitconfig"),
    }
    home.mkdir()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    init_git(fresh)
    project = project_copy(tmp_path_factory, tmp_path / "p")
    for leftover in cache_files(project):  # the shared template was built with caches on
        target = project / leftover
        if target.is_dir():
            shutil.rmtree(target)
    assert cache_files(project) == []
    (project / "src.txt").write_text("the work of task 1\n")

    runs = [
        (fresh, ("init", "--defaults")),
        (fresh, ("new", "a first item", "--id", "issue-1")),
        (fresh, ("status", "1")),
        (project, ("status", "7")),
        (project, ("next", "7", "--json")),
        (project, ("check", "7")),
        (project, ("graph", "7", "--json")),
        (project, ("task", "done", "7", "1", "--did", "the work", "--next", NEXT)),
    ]
    for root, args in runs:
        done = process(root, *args, env=env)
        assert done.returncode in (0, 1), f"loop {' '.join(args)}: {done.stderr}"

    assert "task 1" in git(project, "log", "-1", "--format=%s")
    assert cache_files(project, fresh, home) == []
    # The same read with caches on does write them, where this test looks.
    del env["LOOP_NO_CACHE"]
    assert process(project, "next", "7", "--json", env=env).returncode == 0
    assert cache_files(project) and cache_files(home)
