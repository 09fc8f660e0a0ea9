"""Reading ``execution-log.md``: the forms real logs use, and the rendered entry.

Entries are retyped in the shapes the-loop's own logs use (date-only headings,
``HH:MM UTC``, ISO stamps; ``Checkpoint/tests`` variants; nested bullets), then
every corpus log is read with facts checked by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CORPUS, requires_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from the_loop.errors import UnusableInputError, Where
from the_loop.findings import Level
from the_loop.io.templating import render
from the_loop.log.execution_log import LogEntry, parse_log, read_log

PATH = Path("docs/specs/issue-5/execution-log.md")


def entries(text: str) -> tuple[LogEntry, ...]:
    return parse_log(text, PATH).entries


# --- headings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "stamp", "summary"),
    [
        ("### 2026-07-24 — spec drafted", "2026-07-24", "spec drafted"),
        ("### 2026-07-24 14:05 UTC — review round 2", "2026-07-24 14:05 UTC", "review round 2"),
        (
            "### 2026-07-23T17:35Z — first implementation (PR #71, `docs-site/`)",
            "2026-07-23T17:35Z",
            "first implementation (PR #71, `docs-site/`)",
        ),
        ("### 2026-07-23T17:35:09Z — with seconds", "2026-07-23T17:35:09Z", "with seconds"),
        ("### 2026-07-23 9:05 — one-digit hour", "2026-07-23 9:05", "one-digit hour"),
        ("### 2026-07-24 – en dash", "2026-07-24", "en dash"),
        ("### 2026-07-24 - hyphen", "2026-07-24", "hyphen"),
        ("### 2026-07-24 -- two hyphens", "2026-07-24", "two hyphens"),
        ("###   2026-07-24   —   spaced out   ", "2026-07-24", "spaced out"),
        ("### 2026-07-24 — ", "2026-07-24", ""),
        ("### 2026-07-24 — a — b", "2026-07-24", "a — b"),
    ],
)
def test_heading_forms(heading: str, stamp: str, summary: str) -> None:
    found = entries(f"## Progress entries\n\n{heading}\n\n- **Next:** go on\n")
    assert [(e.stamp, e.summary) for e in found] == [(stamp, summary)]


@pytest.mark.parametrize(
    "heading",
    [
        "### Notes",  # no date
        "## 2026-07-24 — level two",  # not an entry heading (it ends entries)
        "#### 2026-07-24 — level four",
        "### 2026-07-24 no separator",
        "### 24-07-2026 — day first",
        "    ### 2026-07-24 — indented code",
    ],
)
def test_not_entry_headings(heading: str) -> None:
    assert entries(f"## Progress entries\n\n{heading}\n\n- **Next:** x\n") == ()


# --- fields --------------------------------------------------------------------------

REAL_FORMS = """\
---
type: execution-log
workItem: issue-5
phase: implementation
---

# Execution Log: checkpoints

## Phase transitions

| Phase | Entered | Reviewed/approved by | Notes |
|-------|---------|----------------------|-------|
| design | 2026-07-20 | @owner | |

## Progress entries

### 2026-07-24 — spec drafted, implementation started

- **Phase:** requirements → design → tasks → implementation
- **Did:** Confirmed the two linked root causes. Drafted the 3-phase spec.
- **Next:** implement T1–T10.
- **Blockers:** none. Human approval happens at the PR.

### 2026-07-24 14:05 UTC — design + implementation

- **Phase:** implementation → needs-review
- **Did:** derived `design.md` and the 8-task DAG, then implemented end-to-end:
  `runner.py` (spawn + deliver), registry fields, and the docs fold-in
  (capability doc, decision-021).
- **Checkpoint/tests (red→green evidence):**
  - RED: `pytest tests/test_runner.py`
    → 2 collection errors.
  - GREEN: full suite → **102 passed**.
- **Next:** self-review, then reviewer briefing on PR #35
  (`needs-review`; tier 3+ → human-approves-pr).
- **Blockers/caveat:** the release job pushes to `main`.
- **Evidence:** run 28758938779
- **Decided**: keep the tmux runner

### 2026-07-25T09:30Z — loop's own entry

- **Phase:** implementation
- **Did:** task 3
- **Checkpoint/tests:** `pytest -q` → 40 passed
- **Next:** task 4: wire the lock into `loop task done`
- **Context:** compacted — task 3 done (contextManagement.taskBoundary: compact)
- **Blockers:** none
- **WIP:** committed with this entry (Loop-Checkpoint: 20260725T093000Z-abc123)

## Review cycles

| Cycle | Type (self/critic) | Reviewer | Outcome | Link |
|-------|--------------------|----------|---------|------|
| 1 | self | claude | 6 findings fixed | commit |
"""


def test_real_forms_entries_stamps_and_lines() -> None:
    log = parse_log(REAL_FORMS, PATH)
    assert [(e.stamp, e.summary, e.line) for e in log.entries] == [
        ("2026-07-24", "spec drafted, implementation started", 17),
        ("2026-07-24 14:05 UTC", "design + implementation", 24),
        ("2026-07-25T09:30Z", "loop's own entry", 40),
    ]
    lines = REAL_FORMS.split("\n")
    for entry in log.entries:
        assert entry.line is not None
        assert lines[entry.line - 1].startswith(f"### {entry.stamp}")
    assert log.findings == ()
    assert log.path == PATH


def test_canonical_keys_for_the_known_fields() -> None:
    first, second, third = entries(REAL_FORMS)
    assert dict(first.fields) == {
        "phase": "requirements → design → tasks → implementation",
        "did": "Confirmed the two linked root causes. Drafted the 3-phase spec.",
        "next": "implement T1–T10.",
        "blockers": "none. Human approval happens at the PR.",
    }
    assert dict(third.fields) == {
        "phase": "implementation",
        "did": "task 3",
        "tests": "`pytest -q` → 40 passed",
        "next": "task 4: wire the lock into `loop task done`",
        "context": "compacted — task 3 done (contextManagement.taskBoundary: compact)",
        "blockers": "none",
        "wip": "committed with this entry (Loop-Checkpoint: 20260725T093000Z-abc123)",
    }
    assert third.next == "task 4: wire the lock into `loop task done`"
    assert third.context == "compacted — task 3 done (contextManagement.taskBoundary: compact)"
    assert second.context is None


def test_multi_line_values_nested_bullets_and_unknown_keys() -> None:
    second = entries(REAL_FORMS)[1]
    assert dict(second.fields) == {
        "phase": "implementation → needs-review",
        "did": (
            "derived `design.md` and the 8-task DAG, then implemented end-to-end:\n"
            "`runner.py` (spawn + deliver), registry fields, and the docs fold-in\n"
            "(capability doc, decision-021)."
        ),
        # the variant label maps to `tests`; the value starts on the next line
        "tests": (
            "- RED: `pytest tests/test_runner.py`\n"
            "  → 2 collection errors.\n"
            "- GREEN: full suite → **102 passed**."
        ),
        "next": (
            "self-review, then reviewer briefing on PR #35\n"
            "(`needs-review`; tier 3+ → human-approves-pr)."
        ),
        # `Blockers/…` variants are blockers; any other bold key is kept as written
        "blockers": "the release job pushes to `main`.",
        "Evidence": "run 28758938779",
        "Decided": "keep the tmux runner",
    }


@pytest.mark.parametrize(
    ("label", "key"),
    [
        ("Phase", "phase"),
        ("PHASE", "phase"),
        ("Did", "did"),
        ("Checkpoint/tests", "tests"),
        ("Checkpoint/tests (red→green evidence)", "tests"),
        ("Checkpoint", "tests"),
        ("Tests", "tests"),
        ("Next", "next"),
        ("next", "next"),
        ("Context", "context"),
        ("Blockers", "blockers"),
        ("WIP", "wip"),
        ("Evidence", "Evidence"),
        ("Node", "Node"),
        ("R1 (name)", "R1 (name)"),
    ],
)
@pytest.mark.parametrize("form", ["- **{label}:** v", "- **{label}**: v", "* **{label}:** v"])
def test_field_labels(label: str, key: str, form: str) -> None:
    text = "### 2026-07-24 — e\n\n" + form.format(label=label) + "\n"
    assert dict(entries(text)[0].fields) == {key: "v"}


def test_blank_lines_inside_a_value_are_kept_between_paragraphs() -> None:
    text = (
        "### 2026-07-24 — e\n\n- **Did:** first paragraph\n\n  second paragraph\n\n- **Next:** n\n"
    )
    assert dict(entries(text)[0].fields) == {
        "did": "first paragraph\n\nsecond paragraph",
        "next": "n",
    }


def test_tab_indented_continuation() -> None:
    text = "### 2026-07-24 — e\n\n- **Did:** one\n\ttwo\n- **Next:** n\n"
    assert entries(text)[0].fields["did"] == "one\ntwo"


def test_a_plain_line_ends_a_value_and_is_not_a_field() -> None:
    text = "### 2026-07-24 — e\n\n- **Did:** one\nstray paragraph\n  indented after it\n"
    assert dict(entries(text)[0].fields) == {"did": "one"}


def test_windows_line_endings() -> None:
    text = "### 2026-07-24 — e\r\n\r\n- **Did:** one\r\n  two\r\n- **Next:** n\r\n"
    (entry,) = entries(text)
    assert (entry.stamp, entry.summary) == ("2026-07-24", "e")
    assert dict(entry.fields) == {"did": "one\ntwo", "next": "n"}


def test_a_repeated_field_keeps_the_last_value() -> None:
    text = "### 2026-07-24 — e\n\n- **Next:** first\n- **Next:** second\n"
    assert entries(text)[0].next == "second"


def test_entry_without_fields() -> None:
    (entry,) = entries("## Progress entries\n\n### 2026-07-24 — bare\n\nsome prose\n")
    assert entry.fields == {}
    assert entry.next is None


# --- code fences --------------------------------------------------------------------

FENCED = """\
## Progress entries

### 2026-07-24 — documents the format

- **Did:** wrote an example:

```markdown
### 2026-01-01 — not an entry

- **Next:** not a next
## Not a section
```

- **Next:** the real next

Raw notes (a plain paragraph ends the value):
~~~~
### 2026-01-02 — also not an entry
```
### 2026-01-03 — still inside the tilde fence
~~~~

### 2026-07-25 — after the fences

- **Did:** ran

  ```bash
  pytest -q
  ```

- **Next:** done
"""


def test_entries_inside_code_fences_are_ignored() -> None:
    found = entries(FENCED)
    assert [(e.stamp, e.summary, e.line) for e in found] == [
        ("2026-07-24", "documents the format", 3),
        ("2026-07-25", "after the fences", 23),
    ]
    assert found[0].next == "the real next"
    assert found[1].fields["did"] == "ran\n\n```bash\npytest -q\n```"
    assert found[1].next == "done"


def test_a_column_zero_fence_after_next_is_not_part_of_next() -> None:
    text = "### 2026-07-24 — a\n\n- **Next:** task 4\n\n```\nraw output\n```\n"
    assert entries(text)[0].next == "task 4"


# --- where entries end -------------------------------------------------------------


def test_entries_end_at_a_level_two_heading() -> None:
    text = (
        "## Progress entries\n\n"
        "### 2026-07-24 — last\n\n"
        "- **Next:** n\n\n"
        "## Review cycles\n\n"
        "- **Outcome:** pass\n"
        "  still the review section\n\n"
        "## Final validation evidence\n\n"
        "- **Test suite:** 102 passed\n"
    )
    (entry,) = entries(text)
    assert dict(entry.fields) == {"next": "n"}


def test_entries_end_at_a_level_one_heading() -> None:
    text = "### 2026-07-24 — a\n\n- **Next:** n\n# Appendix\n- **Did:** elsewhere\n"
    assert dict(entries(text)[0].fields) == {"next": "n"}


def test_a_level_three_heading_without_a_date_does_not_end_an_entry() -> None:
    text = "### 2026-07-24 — a\n\n- **Did:** d\n\n### Notes\n\n- **Next:** n\n"
    (entry,) = entries(text)
    assert dict(entry.fields) == {"did": "d", "next": "n"}


# --- findings -------------------------------------------------------------------------


def test_no_next_on_the_last_entry_is_a_finding() -> None:
    text = (
        "## Progress entries\n\n"
        "### 2026-07-24 — a\n\n- **Next:** n\n\n"
        "### 2026-07-25 — b\n\n- **Did:** d\n"
    )
    log = parse_log(text, PATH)
    (finding,) = log.findings
    assert finding.level is Level.WARNING
    assert finding.code == "log.no-next"
    assert finding.message == (
        "the last log entry has no **Next:**, so a fresh session has no resume anchor"
    )
    assert finding.where == Where(PATH, 7)
    assert finding.hint == "the next checkpoint (`loop task done … --next`) writes one"


def test_an_empty_next_on_the_last_entry_is_a_finding() -> None:
    text = "### 2026-07-24 — a\n\n- **Next:**   \n"
    assert [f.code for f in parse_log(text, PATH).findings] == ["log.no-next"]


def test_only_the_last_entry_needs_a_next() -> None:
    text = "### 2026-07-24 — a\n\n- **Did:** d\n\n### 2026-07-25 — b\n\n- **Next:** n\n"
    assert parse_log(text, PATH).findings == ()


def test_a_log_without_entries_has_no_findings() -> None:
    log = parse_log(render("execution-log.md.j2", item="issue-5", title="T", phase="design"), PATH)
    assert log.entries == ()
    assert log.findings == ()


# --- never raises ---------------------------------------------------------------------

MARKDOWNISH = st.lists(
    st.sampled_from(
        [
            "### 2026-07-24 — a",
            "### 2026-07-24T10:00Z — b",
            "### 2026-07-24 14:05 UTC -",
            "## Progress entries",
            "## Review cycles",
            "# Title",
            "- **Next:** n",
            "- **Did:**",
            "- **Checkpoint/tests (x):** y",
            "* **Other**: z",
            "  continued",
            "\tcontinued",
            "",
            "```",
            "~~~",
            "````md",
            "   ```",
            "text",
            "\r",
            "- **",
            "**:**",
        ]
    )
    | st.text(max_size=40),
    max_size=60,
).map("\n".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text() | MARKDOWNISH)
def test_parse_log_never_raises(text: str) -> None:
    log = parse_log(text, PATH)
    lines = text.split("\n")
    for entry in log.entries:
        assert entry.line is not None
        assert 1 <= entry.line <= len(lines)
        assert lines[entry.line - 1].lstrip("\r").startswith("###")
    assert len(log.findings) <= 1


def test_read_log_of_a_missing_file_is_unusable_input(tmp_path: Path) -> None:
    with pytest.raises(UnusableInputError, match="cannot read"):
        read_log(tmp_path / "nope.md")


def test_read_log_replaces_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "execution-log.md"
    path.write_bytes(b"### 2026-07-24 \xe2\x80\x94 caf\xe9\n\n- **Next:** n\n")
    (entry,) = read_log(path).entries
    assert entry.summary == "caf\ufffd"


# --- the rendered entry ---------------------------------------------------------------


def render_entry(**overrides: str) -> str:
    values = {
        "stamp": "2026-11-30T12:05Z",
        "summary": "task 3: the lock",
        "phase": "implementation",
        "did": "wrote `lock.py`",
        "tests": "`pytest -q tests/test_lock.py` → 12 passed",
        "next": "task 4: use the lock in `loop task done`",
        "context": "compacted — task 3 done (contextManagement.taskBoundary: compact)",
        "blockers": "none",
        "wip": "committed with this entry (Loop-Checkpoint: 20261130T120500Z-abc123)",
    }
    values.update(overrides)
    return render("log-entry.md.j2", **values)


def test_rendered_entry_text_is_pinned() -> None:
    assert render_entry() == (
        "### 2026-11-30T12:05Z — task 3: the lock\n"
        "\n"
        "- **Phase:** implementation\n"
        "- **Did:** wrote `lock.py`\n"
        "- **Checkpoint/tests:** `pytest -q tests/test_lock.py` → 12 passed\n"
        "- **Next:** task 4: use the lock in `loop task done`\n"
        "- **Context:** compacted — task 3 done (contextManagement.taskBoundary: compact)\n"
        "- **Blockers:** none\n"
        "- **WIP:** committed with this entry (Loop-Checkpoint: 20261130T120500Z-abc123)\n"
    )


def test_rendered_entry_round_trips() -> None:
    did = (
        "split the journal into steps:\n"
        "- tick\n"
        "  - with a nested bullet\n"
        "\n"
        "- append\n"
        "```python\n"
        "## not a heading, inside a fence\n"
        "```"
    )
    tests = "RED: 2 failed\nGREEN: 14 passed"
    nxt = "task 4\n### 2026-01-01 — not an entry"
    text = render_entry(did=did, tests=tests, next=nxt, blockers="")
    log = parse_log(text, PATH)
    (entry,) = log.entries
    assert (entry.stamp, entry.summary, entry.line) == ("2026-11-30T12:05Z", "task 3: the lock", 1)
    assert dict(entry.fields) == {
        "phase": "implementation",
        "did": did,
        "tests": tests,
        "next": nxt,
        "context": "compacted — task 3 done (contextManagement.taskBoundary: compact)",
        "blockers": "",
        "wip": "committed with this entry (Loop-Checkpoint: 20261130T120500Z-abc123)",
    }
    assert log.findings == ()


LINE = st.text(
    alphabet=st.characters(
        whitelist_categories=("L", "N", "P", "S", "Zs"), blacklist_characters="\r\x85\u2028\u2029"
    ),
    max_size=30,
).map(str.strip)
VALUE = st.lists(LINE, min_size=1, max_size=5).map("\n".join).map(str.strip)


@settings(max_examples=150, deadline=None)
@given(did=VALUE, tests=VALUE, nxt=VALUE, blockers=VALUE)
def test_rendered_entry_round_trips_any_plain_text(
    did: str, tests: str, nxt: str, blockers: str
) -> None:
    # plain text, no fence markers (an unclosed fence in a value is out of scope)
    for value in (did, tests, nxt, blockers):
        if "```" in value or "~~~" in value:
            return
    from the_loop.log.entry_fields import encode

    # values go into the template encoded, as the checkpoint's plan does (a literal
    # ``\u{`` in the text is escaped, so it reads back as written)
    rendered = render_entry(
        did=encode(did), tests=encode(tests), next=encode(nxt), blockers=encode(blockers)
    )
    (entry,) = parse_log(rendered, PATH).entries
    assert entry.fields["did"] == did
    assert entry.fields["tests"] == tests
    assert entry.fields["next"] == nxt
    assert entry.fields["blockers"] == blockers


def test_rendered_entries_appended_to_the_rendered_log_parse_in_order() -> None:
    text = render("execution-log.md.j2", item="issue-5", title="T", phase="implementation")
    for n in range(3):
        text += "\n" + render_entry(summary=f"task {n}", next=f"task {n + 1}")
    log = parse_log(text, PATH)
    assert [(e.summary, e.next) for e in log.entries] == [
        ("task 0", "task 1"),
        ("task 1", "task 2"),
        ("task 2", "task 3"),
    ]


def test_entry_to_json() -> None:
    (entry,) = entries("### 2026-07-24 — a\n\n- **Next:** n\n- **Evidence:** e\n")
    assert entry.to_json() == {
        "stamp": "2026-07-24",
        "summary": "a",
        "line": 1,
        "fields": {"next": "n", "Evidence": "e"},
    }


# --- the corpus -------------------------------------------------------------------------

SPECS = CORPUS / "docs" / "specs"
COUNTS = {
    "issue-1": 13,
    "issue-11": 1,
    "issue-12": 2,
    "issue-15": 8,
    "issue-17": 1,
    "issue-18": 1,
    "issue-21": 4,
    "issue-25": 3,
    "issue-32": 6,
    "issue-36": 1,
    "issue-37": 1,
    "issue-70": 4,
    "issue-78": 1,
    "issue-80": 2,
}


@requires_corpus()
def test_every_corpus_log_is_known_and_parses() -> None:
    found = sorted(p.parent.name for p in SPECS.glob("*/execution-log.md"))
    assert found == sorted(COUNTS)


@requires_corpus()
@pytest.mark.parametrize(("item", "count"), sorted(COUNTS.items()))
def test_corpus_entry_counts(item: str, count: int) -> None:
    log = read_log(SPECS / item / "execution-log.md")
    assert len(log.entries) == count
    # every corpus log ends on an entry with a Next:
    assert log.findings == ()
    for entry in log.entries:
        assert {"phase", "did", "next"} <= set(entry.fields)


@requires_corpus()
def test_corpus_issue_1() -> None:
    log = read_log(SPECS / "issue-1" / "execution-log.md")
    first, last = log.entries[0], log.entries[-1]
    assert (first.stamp, first.summary, first.line) == (
        "2026-06-27",
        "v0 skeleton scaffolded",
        23,
    )
    assert first.next == "Adapt to the Kiro 3-phase spec model after the issue update."
    assert (last.stamp, last.line) == ("2026-07-01", 213)
    assert last.summary == "Retro: mandatory user-education never triggered on this PR"
    assert last.next == "Push; post the briefing + update the PR description; reply to the retro."


@requires_corpus()
def test_corpus_issue_70_iso_stamps() -> None:
    log = read_log(SPECS / "issue-70" / "execution-log.md")
    assert [e.stamp for e in log.entries] == [
        "2026-07-23T17:35Z",
        "2026-07-23T18:10Z",
        "2026-07-23T18:30Z",
        "2026-07-23T19:00Z",
    ]
    assert log.entries[0].summary == "first implementation (PR #71, `docs-site/`)"
    assert log.entries[-1].next == "push, reply on the two review threads."


@requires_corpus()
def test_corpus_issue_32_red_green_evidence() -> None:
    last = read_log(SPECS / "issue-32" / "execution-log.md").entries[-1]
    assert last.line == 102
    assert last.fields["tests"].startswith("- RED: `pytest cli/tests/test_tmux_runner.py")
    assert "- GREEN: full suite" in last.fields["tests"]
    assert last.next == (
        "self-review, then reviewer briefing on PR #35 and owner review\n"
        "(`needs-review`; tier 3+ → human-approves-pr)."
    )
    assert last.fields["blockers"] == "none."


@requires_corpus()
def test_corpus_issue_21_blockers_variant_and_multi_line_next() -> None:
    log = read_log(SPECS / "issue-21" / "execution-log.md")
    assert "Blockers/caveat" not in log.entries[1].fields
    assert (
        log.entries[1]
        .fields["blockers"]
        .startswith("the release job pushes to `main` — protected `main` must allow\n")
    )
    assert log.entries[-1].next == (
        "on merge, the run seeds the local baseline, bumps to `0.2.1`, pushes the bump\n"
        "commit + `v0.2.1` tag, cuts the Release, and publishes **`0.2.1`** to PyPI. (The `pypi`\n"
        "environment may pause for a required-reviewer approval if one is configured.)"
    )


@requires_corpus()
@pytest.mark.parametrize(
    ("item", "next_"),
    [
        ("issue-11", "human review of the PR."),
        ("issue-12", "self-review, raise PR"),
        ("issue-36", "open PR, request review."),
        ("issue-37", "human review on PR #41."),
        ("issue-80", "open PR with the reviewer briefing; request review."),
    ],
)
def test_corpus_last_next(item: str, next_: str) -> None:
    assert read_log(SPECS / item / "execution-log.md").entries[-1].next == next_


@requires_corpus()
def test_corpus_issue_80_first_entry_has_no_checkpoint_field() -> None:
    first, second = read_log(SPECS / "issue-80" / "execution-log.md").entries
    assert first.summary == "spec drafted, implementation started"
    assert set(first.fields) == {"phase", "did", "next", "blockers"}
    assert "tests" in second.fields
