"""Jinja renders every template; a template from config runs sandboxed and bounded.

The unit tests call the renderer; the CLI tests run ``loop task done`` with a
``checkpoint.messageTemplate`` in a real project and look at the commit it made,
or at the error and the untouched files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.project import NEXT, commits, journal, process, project_copy, run, snapshot

from the_loop.errors import TemplateError
from the_loop.io import templating

DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)


def test_a_shipped_template_renders_with_jinja() -> None:
    text = templating.render(
        "commit-message.txt.j2",
        subject="s",
        summary="sum",
        trailers=True,
        item="issue-1",
        task="2",
        phase="implementation",
        reset="compact",
        checkpoint="c-1",
    )

    assert text.startswith("s\n\nsum\n")
    assert "Loop-Task: 2\n" in text


def test_a_config_template_may_use_any_jinja_filter() -> None:
    text = templating.render_string(
        "{{ subject | title }} / {{ words | wordwrap(10) }}",
        what="checkpoint.messageTemplate",
        subject="task one",
        words="a few words to wrap",
    )

    assert text == "Task One / a few\nwords to\nwrap"


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("{% for i in range(10**9) %}x{% endfor %}", "Range too big"),
        (
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            f"more than {templating.MAX_ITERATIONS} iterations",
        ),
        (
            "{% set s = 'x' * 9999 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
            f"more than {templating.MAX_ITERATIONS} iterations",
        ),
        ("{% for i in range(1000) %}{{ 'x' * 9999 }}{% endfor %}", "output is over"),
        ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError"),
    ],
    ids=["huge-range", "nested-loops", "nested-string-loops", "huge-output", "recursion"],
)
def test_unbounded_work_fails_at_once(template: str, reason: str) -> None:
    with pytest.raises(TemplateError) as caught:
        templating.render_string(template, what="checkpoint.messageTemplate", subject="s")

    assert caught.value.message.startswith("checkpoint.messageTemplate failed to render")
    assert reason in caught.value.message


def test_the_budget_is_per_render() -> None:
    template = "{% for i in range(6000) %}{% endfor %}ok"
    for _ in range(3):  # 18,000 iterations in all, 6,000 in each render
        assert templating.render_string(template, what="t") == "ok"


# --- through the CLI -------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def _configure(project: Path, template: str) -> None:
    (project / ".the-loop/config.yaml").write_text(
        f"version: \"0.1.0\"\ncheckpoint:\n  messageTemplate: '{template}'\n"
    )


def test_task_done_renders_a_jinja_only_filter(project: Path) -> None:
    _configure(project, "chore({{ item }}): {{ subject | title }}")

    done = process(project, *DONE_1)

    assert done.returncode == 0, done.stderr
    assert commits(project)[0].splitlines()[0] == "chore(issue-7): Task 1"


def test_task_done_keeps_compiled_templates_in_the_cache(project: Path, hermetic_env: Path) -> None:
    done = process(project, *DONE_1)

    assert done.returncode == 0, done.stderr
    assert list((hermetic_env / ".cache" / "loop").glob("jinja-*.entry"))


def test_an_unbounded_template_fails_fast_and_changes_nothing(project: Path) -> None:
    _configure(project, "{% for i in range(10**9) %}{{ subject }}{% endfor %}")
    before = snapshot(project)

    result = run(project, *DONE_1)

    assert result.exit_code == 1, result.output
    first = result.stderr.splitlines()[0]
    assert ".the-loop/config.yaml:3:" in first and "checkpoint.messageTemplate" in first, first
    assert "Range too big" in first
    after = snapshot(project)
    for key in ("tasks", "log", "index", "head", "resets"):
        assert after[key] == before[key], key
    assert journal(project) is None
