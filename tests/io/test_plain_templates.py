"""The Jinja-free renderer gives Jinja's bytes wherever it answers.

``the_loop.io.plain_templates`` may decline any template or value (Jinja then
renders it), but what it returns must equal what the Jinja environments of
``the_loop.io.templating`` make of the same template: for the checkpoint's
shipped templates on tricky and generated values, and for subject templates.
It must also answer for the shipped ones, or a ``task done`` pays for Jinja again.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from the_loop.errors import TemplateError
from the_loop.io import plain_templates, templating
from the_loop.log import entry_fields

# Line breaks of every kind str.splitlines knows, spaces and braces: what indent() sees.
TEXT = st.text(
    alphabet=st.sampled_from(list("ab {}%#|-\n\t\r\x0b\x0c\x1c\x85\u2028é—")), max_size=40
)


def jinja_shipped(name: str, **context: Any) -> str:
    return str(templating._environment().get_template(name).render(**context))


def jinja_source(source: str, **context: Any) -> str:
    return str(templating._sandbox().from_string(source).render(**context))


def entry_context(**changes: Any) -> dict[str, Any]:
    context: dict[str, Any] = {
        "stamp": "2026-11-30 23:59",
        "summary": "task 3 done: the parser",
        "phase": "implementation",
        "did": "wrote it\nand tested it\n\n  indented",
        "tests": "pytest -q: 4 passed",
        "next": "implement task 4 (tests in tests/test_x.py)",
        "context": "compact at the task boundary",
        "blockers": "none",
        "wip": "committed with this entry (Loop-Checkpoint: x)",
        "corrections": [],
    }
    context.update(changes)
    return context


def message_context(**changes: Any) -> dict[str, Any]:
    context: dict[str, Any] = {
        "subject": "chore(a): checkpoint task 3",
        "summary": "task 3 done: the parser",
        "trailers": True,
        "item": "a",
        "task": "3",
        "phase": "implementation",
        "reset": "compact",
        "checkpoint": "20261130T235900Z-abcdef",
    }
    context.update(changes)
    return context


@pytest.mark.parametrize(
    "context",
    [
        entry_context(),
        entry_context(corrections=["one reset skipped", "another\nover two lines"]),
        entry_context(did="", tests="\n", next="a\n\nb\n"),
        entry_context(did="x\r\ny\x85z\u2028w"),
    ],
)
def test_log_entry_matches_jinja(context: dict[str, Any]) -> None:
    plain = plain_templates.render_shipped("log-entry.md.j2", context)
    assert plain is not None
    assert plain == jinja_shipped("log-entry.md.j2", **context)


def test_log_entry_without_corrections_name_matches_jinja() -> None:
    context = entry_context()
    del context["corrections"]  # `is defined and`: an absent name is false
    assert plain_templates.render_shipped("log-entry.md.j2", context) == jinja_shipped(
        "log-entry.md.j2", **context
    )


@pytest.mark.parametrize(
    "context",
    [
        message_context(),
        message_context(task=None),
        message_context(task=""),
        message_context(trailers=False),
    ],
)
def test_commit_message_matches_jinja(context: dict[str, Any]) -> None:
    plain = plain_templates.render_shipped("commit-message.txt.j2", context)
    assert plain is not None
    assert plain == jinja_shipped("commit-message.txt.j2", **context)


@settings(max_examples=200, deadline=None)
@given(did=TEXT, next_step=TEXT, corrections=st.lists(TEXT, max_size=3), wip=TEXT)
def test_generated_entries_match_jinja(
    did: str, next_step: str, corrections: list[str], wip: str
) -> None:
    # Encoded as the checkpoint encodes them, and raw: both must agree or decline.
    for value in (did, entry_fields.encode(did)):
        context = entry_context(did=value, next=next_step, corrections=corrections, wip=wip)
        plain = plain_templates.render_shipped("log-entry.md.j2", context)
        if plain is not None:
            assert plain == jinja_shipped("log-entry.md.j2", **context)


def test_values_it_does_not_take_go_to_jinja() -> None:
    assert plain_templates.render_shipped("log-entry.md.j2", entry_context(did=3)) is None
    assert plain_templates.render_shipped("log-entry.md.j2", entry_context(corrections=[1])) is None
    assert plain_templates.render_shipped("execution-log.md.j2", {}) is None
    context = entry_context()
    del context["did"]
    assert plain_templates.render_shipped("log-entry.md.j2", context) is None
    with pytest.raises(TemplateError, match="failed to render"):
        templating.render("log-entry.md.j2", **context)  # Jinja's strict undefined


@pytest.mark.parametrize(
    "source",
    [
        "chore({{ item }}): checkpoint {{ subject }}",
        "{{item}}:{{  subject  }}",
        "[{{ task }}] {{ phase }}\n",
        "plain text",
    ],
)
def test_subject_templates_match_jinja(source: str) -> None:
    names = {"item": "a", "subject": "task 3", "task": "", "phase": "design", "reset": "none"}
    plain = plain_templates.render_source(source, names)
    assert plain is not None
    assert plain == jinja_source(source, **names)


@pytest.mark.parametrize(
    "source",
    [
        "{{ item | upper }}",
        "{{ none }}",
        "{% if item %}x{% endif %}",
        "{# note #}{{ item }}",
        "{{ item }}}",
        "a{b",
        "{{ item.title }}",
        "{{ missing }}",
        "{{- item }}",
        "line\r\n{{ item }}",
    ],
)
def test_other_subject_templates_go_to_jinja(source: str) -> None:
    names = {"item": "a", "subject": "task 3"}
    assert plain_templates.render_source(source, names) is None
