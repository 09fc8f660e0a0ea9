"""Every path loop writes resolves inside the project, symlinks followed (issue 14, 9 and 12).

A work-item folder (or a file, or the state folder) that is a symlink to a
place outside the repository used to be written through, e.g. by ``task done``
with ``checkpoint.commit: false``. Each write site is driven through the CLI
here with its target outside the project: the command refuses, names the path,
and nothing outside changes. Inside the project a symlinked file is written
*through* (the link stays a link), and a read-only file is refused, not
replaced.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.project import (
    ITEM_DIR,
    LOG,
    NEXT,
    TASKS,
    journal,
    ok,
    project_copy,
    run,
    task_states,
)

from the_loop.errors import RefusedError, WriteError
from the_loop.io import atomic
from the_loop.io.templating import render
from the_loop.tasks import TaskState

DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)
REFUSAL = "refusing to write outside the project"


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(root.rglob("*"))
    }


def move_out(path: Path, outside: Path) -> Path:
    """Move ``path`` outside and leave a symlink to it in its place."""
    target = outside / path.name
    shutil.move(str(path), target)
    path.symlink_to(target)
    return target


def assert_refused(result_output: str, exit_code: int) -> None:
    assert exit_code == 1, result_output
    assert REFUSAL in result_output, result_output
    assert "internal error" not in result_output


# ---------------------------------------------------------------- each write site


def test_item_folder_outside_with_commit_off_is_refused(project: Path, outside: Path) -> None:
    """The reported case: nothing is written through the symlinked item folder."""
    (project / ".the-loop/config.yaml").write_text(
        'version: "0.1.0"\ncheckpoint:\n  commit: false\n'
    )
    move_out(project / ITEM_DIR, outside)
    before = tree(outside)

    result = run(project, *DONE_1)

    assert_refused(result.output, result.exit_code)
    assert tree(outside) == before
    assert journal(project) is None


@pytest.mark.parametrize(
    ("moved", "command"),
    [
        (TASKS, DONE_1),  # the tick
        (LOG, DONE_1),  # the log append
        (TASKS, ("task", "start", "7", "1")),  # task start
        (TASKS, ("execute-tasks", "7")),  # execute-tasks hands a task out
    ],
    ids=["tick", "log-append", "task-start", "execute-tasks"],
)
def test_a_file_outside_is_refused(
    project: Path, outside: Path, moved: Path, command: tuple[str, ...]
) -> None:
    move_out(project / moved, outside)
    before = tree(outside)

    result = run(project, *command)

    assert_refused(result.output, result.exit_code)
    assert tree(outside) == before


def test_phase_mirror_outside_is_refused(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, outside: Path
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "fresh", enter=False)
    log = render("execution-log.md.j2", item="issue-7", title="retries", phase="tasks-breakdown")
    (root / LOG).write_text(log)
    move_out(root / LOG, outside)
    before = tree(outside)

    result = run(root, "execute-tasks", "7")

    assert_refused(result.output, result.exit_code)
    assert tree(outside) == before


def test_log_creation_outside_is_refused(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, outside: Path
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "fresh", enter=False)
    (root / LOG).symlink_to(outside / "execution-log.md")  # dangling: loop would create it

    result = run(root, "execute-tasks", "7")

    assert_refused(result.output, result.exit_code)
    assert list(outside.iterdir()) == []


def test_approve_outside_is_refused(project: Path, outside: Path) -> None:
    design = project / ITEM_DIR / "design.md"
    design.write_text(design.read_text().replace("status: approved", "status: in-review"))
    move_out(design, outside)
    before = tree(outside)

    result = run(project, "approve", "7", "design", "--by", "@b")

    assert_refused(result.output, result.exit_code)
    assert tree(outside) == before


def test_new_item_in_a_spec_folder_outside_is_refused(project: Path, outside: Path) -> None:
    move_out(project / "docs/specs", outside)
    before = tree(outside)

    result = run(project, "new", "a new thing")

    assert_refused(result.output, result.exit_code)
    assert tree(outside) == before


def test_skeleton_in_an_item_folder_outside_is_refused(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, outside: Path
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "fresh", enter=False)
    ok(root, "new", "second item", "--id", "issue-8")
    folder = root / "docs/specs/issue-8"
    (folder / "requirements.md").unlink()  # work-on will render a requirements skeleton
    move_out(folder, outside)
    before = tree(outside)

    result = run(root, "work-on", "8")

    assert result.exit_code == 1, result.output
    assert REFUSAL in result.output
    assert tree(outside) == before


def test_state_folder_outside_is_refused(project: Path, outside: Path) -> None:
    move_out(project / ".the-loop/state", outside)
    before = tree(outside)

    result = run(project, *DONE_1)

    assert_refused(result.output, result.exit_code)
    assert tree(outside) == before
    assert task_states(project)["1"] is TaskState.OPEN


def test_init_into_a_config_folder_outside_is_refused(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".the-loop").symlink_to(outside)

    result = run(root, "init", "--defaults")

    assert result.exit_code == 1, result.output
    assert REFUSAL in result.output
    assert list(outside.iterdir()) == []


# ---------------------------------------------------------------- inside the project


def test_a_symlinked_tasks_md_inside_is_written_through(project: Path) -> None:
    shared = project / "shared"
    shared.mkdir()
    target = shared / "tasks.md"
    shutil.move(str(project / TASKS), target)
    (project / TASKS).symlink_to(os.path.relpath(target, (project / TASKS).parent))

    ok(project, *DONE_1)

    assert (project / TASKS).is_symlink(), "the link must stay a link"
    assert "- [x] 1. config key" in target.read_text()
    assert task_states(project)["1"] is TaskState.DONE


def test_a_read_only_tasks_md_is_refused_for_task_start(project: Path) -> None:
    (project / TASKS).chmod(0o444)
    before = (project / TASKS).read_bytes()

    result = run(project, "task", "start", "7", "1")

    assert result.exit_code == 1
    assert "tasks.md is read-only; loop does not replace a file you made read-only" in (
        result.stderr
    )
    assert "chmod u+w" in result.stderr
    assert (project / TASKS).read_bytes() == before


# ---------------------------------------------------------------- the io layer itself


def test_without_confinement_writes_go_anywhere(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    atomic.write_text(path, "x")
    assert path.read_text() == "x"


def test_confinement_ends_with_its_scope(tmp_path: Path) -> None:
    inside, elsewhere = tmp_path / "in", tmp_path / "else"
    inside.mkdir()
    elsewhere.mkdir()
    with atomic.write_scope():
        atomic.confine_writes(inside)
        with pytest.raises(RefusedError):
            atomic.write_text(elsewhere / "x", "x")
        atomic.write_text(elsewhere / "cache", "x", anywhere=True)  # loop's own cache
    atomic.write_text(elsewhere / "x", "x")


@pytest.mark.parametrize(
    "write",
    [
        lambda p: atomic.write_bytes(p, b"new"),
        lambda p: atomic.append_bytes(p, b"new"),
    ],
    ids=["replace", "append"],
)
def test_read_only_files_are_refused_by_every_writer(
    tmp_path: Path, write: Callable[[Path], object]
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"old")
    path.chmod(0o444)

    with pytest.raises(WriteError, match="read-only"):
        write(path)

    assert path.read_bytes() == b"old"
