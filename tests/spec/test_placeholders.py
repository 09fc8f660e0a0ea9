"""Template placeholders: what counts as a slot left unfilled, and what does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CORPUS, REPO_ROOT, requires_corpus, write_tree

from the_loop.findings import Level
from the_loop.spec.front_matter import body_offset, parse_front_matter
from the_loop.spec.items import load_item
from the_loop.spec.placeholders import (
    artifact_placeholders,
    placeholder_findings,
    placeholders,
    template_slots,
)


def _slots(text: str) -> list[str]:
    return [slot for _line, _col, slot in placeholders(text)]


@pytest.mark.parametrize(
    ("template", "count"),
    [("requirements", 8), ("bugfix", 2), ("design", 7), ("tasks", 5), ("brainstorm", 3)],
)
def test_every_artifact_template_marks_its_slots(template: str, count: int) -> None:
    text = (REPO_ROOT / "templates" / f"{template}.md.j2").read_text()
    front = parse_front_matter(text, Path(template))

    assert len(list(placeholders(text, front.body_offset))) == count


def test_code_comments_fences_and_tags_are_not_slots() -> None:
    text = (
        "A path `docs/specs/<id>/` and a span over\n`two <lines>` lines.\n"
        "<!-- a <comment> -->\n<br> <details> and a link <https://x.invalid>\n\n"
        "```\n<in a fence>\n```\n"
    )
    assert _slots(text) == []


def test_prose_slots_and_a_span_that_is_only_a_slot_are_found() -> None:
    text = "As a <role>, I want it.\n\n  - _Test:_ `<command>`\n"

    assert list(placeholders(text)) == [(1, 6, "<role>"), (3, 14, "<command>")]


@requires_corpus()
def test_the_corpus_has_none() -> None:
    for path in sorted((CORPUS / "docs" / "specs").glob("*/*.md")):
        if path.name == "execution-log.md":
            continue
        text = path.read_text()
        front = parse_front_matter(text, path)
        offset = front.body_offset if front.present and not front.findings else 0
        assert list(placeholders(text, offset)) == [], path


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no front matter\n",
        "---\ntype: x\n---\nbody <role>\n",
        "\ufeff---\r\nstatus: draft\r\n...\r\nbody\r\n",
        "---\nkey: {{ jinja }}\n  - [not: valid\n---\nbody\n",
        "---\n- a list\n---\nbody\n",
        "---\nnever closed\n",
        "---\n" + "k: v\n" * 20_000 + "---\nbody\n",
        "---\n---",
    ],
)
def test_the_body_is_found_from_the_fences_alone(text: str) -> None:
    # template_slots skips the front matter this way, without reading it.
    assert body_offset(text) == parse_front_matter(text, Path("x.md")).body_offset


def test_the_slots_of_loops_own_templates_are_known() -> None:
    assert {"<role>", "<command>", "<task summary>"} <= template_slots()


def test_the_level_of_a_slot_follows_the_confidence_rule(tmp_path: Path) -> None:
    folder = tmp_path / "docs" / "specs" / "issue-1"
    write_tree(
        folder,
        {
            "requirements.md": "---\nstatus: in-review\n---\n\nAs a <role>, I want it.\n\n"
            "Signed off by @handle, <date>.\n\nThe pointer `<node>` is a metavariable.\n",
        },
    )
    item = load_item(folder, folder.parent)
    assert [(f.level, f.code, f.where and f.where.line) for f in placeholder_findings(item)] == [
        (Level.ERROR, "artifact.placeholder", 5),
        (Level.WARNING, "artifact.angle-brackets", 7),
    ]
    assert [slot for _l, _c, slot in artifact_placeholders(item.requirements)] == ["<role>"]


def test_a_draft_s_template_slots_are_warnings_until_it_is_submitted(tmp_path: Path) -> None:
    folder = tmp_path / "docs" / "specs" / "issue-1"
    text = "---\nstatus: {status}\n---\n\nAs a <role>, I want it.\n"
    levels = {}
    for status in ("draft", "in-review", "approved"):
        write_tree(folder, {"requirements.md": text.format(status=status)})
        item = load_item(folder, folder.parent)
        levels[status] = [(f.level, f.code) for f in placeholder_findings(item)]
    assert levels == {
        "draft": [(Level.WARNING, "artifact.placeholder")],
        "in-review": [(Level.ERROR, "artifact.placeholder")],
        "approved": [(Level.ERROR, "artifact.placeholder")],
    }
