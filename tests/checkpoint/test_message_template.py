"""A broken ``checkpoint.messageTemplate`` is a config error at its line, never a crash.

Issue 14, defect 8: ``{% include %}`` in the template raised TypeError (exit 3).
The sandbox now has no loader and bounds its arithmetic, and every failure to
render is reported at the template's line in config.yaml, with nothing changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.project import NEXT, commits, journal, project_copy, run, snapshot

DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("{% include 'x.txt' %}", "TemplateNotFound: x.txt"),
        ("{% extends '/etc/passwd' %}", "TemplateNotFound: /etc/passwd"),
        ("{% import 'macros' as m %}", "TemplateNotFound: macros"),
        ("{{ 1 / 0 }}", "ZeroDivisionError: division by zero"),
        ("{{ 10 ** 100000 }}", "the power is too large"),
        ("{{ 'x' * 100000000 }}", "the product is too large"),
        ("{{ ().__class__.__bases__ }}", "is unsafe"),
        ("{{ nosuchname }}", "'nosuchname' is undefined"),
    ],
    ids=[
        "include",
        "extends",
        "import",
        "zero-division",
        "power",
        "product",
        "escape",
        "undefined",
    ],
)
def test_bad_message_template_is_a_config_error_at_its_line(
    project: Path, template: str, reason: str
) -> None:
    config = project / ".the-loop/config.yaml"
    config.write_text(f'version: "0.1.0"\ncheckpoint:\n  messageTemplate: "{template}"\n')
    before = snapshot(project)

    result = run(project, *DONE_1)

    assert result.exit_code == 1, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: ") and ".the-loop/config.yaml:3:" in first, first
    assert "checkpoint.messageTemplate failed to render" in first
    assert reason in first
    assert "no include, import or extends" in result.stderr
    after = snapshot(project)
    for key in ("tasks", "log", "index", "head", "resets"):
        assert after[key] == before[key], key
    assert journal(project) is None


def test_a_multi_line_subject_is_folded_into_one_line(project: Path) -> None:
    config = project / ".the-loop/config.yaml"
    config.write_text(
        'version: "0.1.0"\ncheckpoint:\n  messageTemplate: "{{ subject }}\\nLoop-Task: 99"\n'
    )

    result = run(project, *DONE_1)

    assert result.exit_code == 0, result.output
    message = commits(project)[0]
    assert message.splitlines()[0] == "task 1 Loop-Task: 99"
    assert "Loop-Task: 1" in message.splitlines()
    assert "Loop-Task: 99" not in message.splitlines()
