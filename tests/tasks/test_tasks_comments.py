"""Task lines inside HTML comments are not live tasks (issue 14, defect 12).

Templates ship example tasks inside ``<!-- … -->``; people comment tasks out
the same way. A comment block opens at a line starting with ``<!--`` (up to
three spaces in) and ends at the line holding ``-->``, as in CommonMark.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.project import TASKS, project_copy, run

from the_loop.tasks import TaskState, parse_tasks, set_state

COMMENTED = """\
# Tasks

- [ ] 1. live
  - _Test:_ `true`
<!--
- [ ] 2. commented out
  - _Depends on:_ 1
-->
- [ ] 3. live too
  <!--
  - _Test:_ `false`
  -->
  - _Depends on:_ 1
<!-- - [ ] 4. a one-line comment is not a task either -->
```
<!--
```
- [ ] 5. after a fence holding an opener
<!-- an unclosed comment hides the rest
- [ ] 6. hidden
"""


def test_commented_tasks_are_not_tasks() -> None:
    tasks = parse_tasks(COMMENTED, Path("tasks.md"))

    assert [(t.id, t.title) for t in tasks.tasks] == [
        ("1", "live"),
        ("3", "live too"),
        ("5", "after a fence holding an opener"),
    ]
    three = tasks.tasks[1]
    assert three.depends_on == ("1",)
    assert tasks.findings == ()


def test_ticking_a_task_after_a_comment_changes_one_byte(tmp_path: Path) -> None:
    path = tmp_path / "tasks.md"
    path.write_text(COMMENTED)

    set_state(path, "3", TaskState.DONE)

    assert path.read_text() == COMMENTED.replace("- [ ] 3. live too", "- [x] 3. live too")


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def test_a_commented_task_is_neither_counted_nor_doable(project: Path) -> None:
    text = (project / TASKS).read_text()
    (project / TASKS).write_text(text + "\n<!--\n- [ ] 9. an idea for later\n-->\n")
    # the hash ignores nothing but checkboxes: re-approve the edited list
    assert run(project, "approve", "7", "tasks", "--by", "@a").exit_code == 0

    shown = json.loads(run(project, "--json", "next", "7").stdout)
    refused = run(
        project, "task", "done", "7", "9", "--did", "x", "--next", "do the next thing now"
    )

    assert "9" not in json.dumps(shown)
    assert refused.exit_code == 1
    assert "has no task '9'" in refused.stderr
