"""The flat front-matter reader agrees with ruamel wherever it answers.

``read_flat`` may decline any block (the caller then uses ruamel), but what it
does return must equal ruamel's round-trip load made plain: on a table of
tricky cases, on generated blocks, and on every front matter of the corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, REPO_ROOT, requires_corpus
from hypothesis import given, settings
from hypothesis import strategies as st

from the_loop.io import yamlio
from the_loop.io.flat_yaml import read_flat
from the_loop.spec.front_matter import parse_front_matter


def ruamel_plain(block: str) -> Any:
    """What the full reader makes of ``block`` (an exception when it fails)."""
    node, problem = yamlio.parse(block)
    if problem is not None:
        raise ValueError(problem.message)
    return {} if node is None else yamlio.to_plain(node)


def assert_agrees(block: str) -> bool:
    """``read_flat`` declines or equals ruamel; True when it answered."""
    flat = read_flat(block)
    if flat is None:
        return False
    assert flat[0] == ruamel_plain(block), block
    return True


LOOP_WRITES = """\
type: tasks
phase: tasks-breakdown
workItem: "bench-100"
status: approved  # draft | in-review | approved
approvedBy: ["@bench-generator", 'it''s', plain-name]
overrides: {}
approval:
  hash: sha256:87fac739527cb35e
  at: 2026-11-30T10:00Z
  upstream:
    requirements.md: sha256:df25a1789ffef250
    design.md: sha256:84376818fcef9850
"""


def test_the_block_loop_writes_is_read_without_ruamel() -> None:
    data, lines = read_flat(LOOP_WRITES) or ({}, {})
    assert data == ruamel_plain(LOOP_WRITES)
    assert data["approval"]["upstream"]["design.md"] == "sha256:84376818fcef9850"
    assert data["approvedBy"] == ["@bench-generator", "it's", "plain-name"]
    assert lines["status"] == 3 and lines["approval"] == 6


@pytest.mark.parametrize(
    "block",
    [
        "a: 0.1.0\nb: yes\nc: no\nd: ~\ne:\nf: True\ng: FALSE\nh: Null\n",
        "a: 0\nb: 12\nc: 12abc\nd: +x\ne: .hidden\nf: x#y\ng: a, b\n",
        "list:\n- x\n- 'y'\n- 3\nnext: 1\n",
        "list:\n  - x\n  - [a, b]\n  - {}\n",
        "a:   # comment\n  b: 1\n\n  # between\n  c: two\nd: end\n",
        "key  : spaced\nempty: []\nblank: ''\n",
        'a: "esc\\"aped \\\\ \\/"\nb: ["x (PR #3: \\"go\\", ok)", \']\', c]  # note\n',
        "# only a comment\n",
        "",
    ],
)
def test_simple_blocks_are_read_as_ruamel_reads_them(block: str) -> None:
    assert assert_agrees(block)


@pytest.mark.parametrize(
    "block",
    [
        "a: 1.5\n",  # a float
        "a: 1e3\n",
        "a: 012\n",  # an octal-looking int
        "a: 1_000\n",
        "a: 2026-11-30\n",  # a date
        "a: 2026-11-30T10:00:00Z\n",  # a timestamp
        "a: -1\n",
        "a: .inf\n",
        "a: &x 1\nb: *x\n",  # anchors and aliases
        "a: !tag x\n",
        "a: |\n  text\n",  # a block scalar
        "a: long\n  continued\n",  # a multi-line plain scalar
        'a: "new\\nline"\n',  # an escape other than \" \\ \/
        "a: {b: 1}\n",  # a flow mapping
        "a: [a, b, ]\n",  # a trailing comma
        "a: [x, [y]]\n",
        "a: 1\na: 2\n",  # a duplicate key (ruamel reports it)
        "true: x\n",  # a key YAML reads as a boolean
        "1: x\n",
        '"quoted": x\n',
        "a: b: c\n",  # invalid YAML
        "- x\n",  # not a mapping
        "a:\n\t- x\n",  # a tab
        "a: 1\r\nb: 2\r\n",
        "a:\n  - b: 1\n",  # a mapping inside a list
        "a:\n  - - x\n",
        "? complex\n: key\n",
        "%YAML 1.2\n---\na: 1\n",
        "a: @x\n",
        "a: `x`\n",
        "a: <<\n",
        "a: 'unterminated\n",
        "a: x # c\n  b: 1\n",
    ],
)
def test_everything_else_is_left_to_ruamel(block: str) -> None:
    assert read_flat(block) is None


# --- generated blocks -------------------------------------------------------------

_WORDS = st.sampled_from(
    [
        "draft",
        "approved",
        "yes",
        "no",
        "true",
        "True",
        "null",
        "~",
        "0",
        "7",
        "007",
        "1.5",
        "1e3",
        "0.1.0",
        "2026-11-30",
        "2026-11-30T10:00Z",
        "2026-11-30T10:00:00Z",
        "sha256:abc",
        "a b",
        "a: b",
        "a #b",
        "a # b",
        "x#y",
        "@me",
        "-x",
        "- x",
        ".x",
        "+1",
        "[x]",
        "{}",
        "'q'",
        "'it''s'",
        '"d"',
        '"a, b"',
        '"a]b"',
        '"q\\"x"',
        '"n\\nx"',
        "it's",
        "",
        "é",
    ]
)
_KEYS = st.sampled_from(["type", "status", "a", "b.md", "x_y", "k-1", "true", "1", "a b"])


@st.composite
def _blocks(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        indent = " " * draw(st.sampled_from([0, 0, 0, 2, 4]))
        key = draw(_KEYS)
        shape = draw(st.sampled_from(["scalar", "flow", "nested", "comment", "blank"]))
        if shape == "scalar":
            comment = draw(st.sampled_from(["", "  # note", "#x"]))
            lines.append(f"{indent}{key}: {draw(_WORDS)}{comment}")
        elif shape == "flow":
            items = draw(st.lists(_WORDS, max_size=3))
            lines.append(f"{indent}{key}: [{', '.join(items)}]")
        elif shape == "nested":
            lines.append(f"{indent}{key}:")
            child = " " * draw(st.sampled_from([0, 2, 4]))
            for _ in range(draw(st.integers(0, 3))):
                if draw(st.booleans()):
                    lines.append(f"{indent}{child}- {draw(_WORDS)}")
                else:
                    lines.append(f"{indent}{child}{draw(_KEYS)}: {draw(_WORDS)}")
        elif shape == "comment":
            lines.append(f"{indent}# {draw(_WORDS)}")
        else:
            lines.append("")
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None)
@given(_blocks())
def test_generated_blocks_agree_with_ruamel(block: str) -> None:
    flat = read_flat(block)
    if flat is None:
        return
    assert flat[0] == ruamel_plain(block)


# --- real front matter --------------------------------------------------------------


def _front_blocks(root: Path) -> list[tuple[Path, str]]:
    found = []
    for path in sorted(root.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.startswith("---\n"):
            continue
        end = text.find("\n---\n", 3)
        if end > 0:
            found.append((path, text[4 : end + 1]))
    return found


@requires_corpus()
def test_every_front_matter_of_the_corpus_agrees_and_nearly_all_skip_ruamel() -> None:
    blocks = _front_blocks(CORPUS.parent)
    assert len(blocks) > 100
    read = sum(assert_agrees(block) for _path, block in blocks)
    assert read >= 0.9 * len(blocks), f"only {read} of {len(blocks)} read without ruamel"


def test_front_matter_lines_match_a_round_trip_read() -> None:
    text = "---\n" + LOOP_WRITES + "---\n\n# Tasks\n"
    path = REPO_ROOT / "tasks.md"
    flat = parse_front_matter(text, path)
    full = parse_front_matter(text, path, round_trip=True)
    assert not flat.positioned and full.positioned
    assert flat.data == full.data
    assert (flat.end_line, flat.body_offset) == (full.end_line, full.body_offset)
    for key in ("type", "status", "approval", "overrides", "missing"):
        assert flat.line_of(key) == full.line_of(key)
