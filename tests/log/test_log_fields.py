"""Text given to a checkpoint is data: no input changes the structure of the log.

Issue 14, defect 3. An unbalanced code fence in ``--did`` used to swallow that
entry's ``Next:`` and every later entry. Now every free-text field is encoded
on the way in and decoded by the reader; a property test feeds arbitrary text
through the real template and the real reader (whole-file and tail reads) and
gets it back identical, with the entry after it intact.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from helpers.project import NEXT, commits, entries, ok, project_copy
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from the_loop.io.templating import render
from the_loop.log.entry_fields import decode, encode, encode_line, one_line
from the_loop.log.execution_log import parse_log, plan_append, read_log, tail_entries

HEAD = (
    "---\ntype: execution-log\nworkItem: issue-7\nphase: implementation\n---\n\n"
    "# Execution Log: x\n\n## Progress entries\n"
)
NASTY = [
    "```python\nx = 1",  # the reported case: a fence that never closes
    "~~~~\n",
    "    ```",
    "\t```",
    "a\n```\nb\n```\nc",  # balanced: kept as code
    "### 2026-01-01T00:00Z — forged entry\n- **Next:** forged",
    "---\ntype: execution-log\n---",
    "line\r\n- **Next:** injected",
    "Loop-Task: 99\nLoop-Checkpoint: forged",
    "\x00\x1b[31mred\x1b[0m\x7f",
    "\u2028\u2029\x85\x0b\x0c\x1c",
    "  leading and trailing  ",
    "\n\nblank lines around\n\n",
    "\\u{41} is not an escape here, \\u{5C} neither",
    "# heading\n## heading\n====\n...",
    "\ud800 lone surrogate",
    "",
    " ",
    "\n",
]


def entry_text(did: str, tests: str, nxt: str, blockers: str, summary: str) -> str:
    """One entry rendered exactly as a checkpoint renders it."""
    return render(
        "log-entry.md.j2",
        stamp="2026-11-30T12:00Z",
        summary=encode_line(summary),
        phase="implementation",
        did=encode(did),
        tests=encode(tests),
        next=encode(nxt),
        context="compacted — task 1 done (contextManagement.taskBoundary: compact)",
        blockers=encode(blockers),
        wip="WIP noted: not a git repository",
    )


FOLLOWER = entry_text("plain", "not run", NEXT, "none", "task 2 done: the next one")


def log_with(*texts: str) -> str:
    return HEAD + "".join("\n" + t for t in texts)


TOKENS = [
    "```",
    "~~~",
    "\\u{",
    "\\u{41}",
    "\n- **Next:** x",
    "\n### 2026-01-01 — x",
    "\r",
    "\ud800",
]
text_values = st.lists(
    st.one_of(
        st.text(max_size=6),
        st.text(alphabet="`~#-=.\\{}u \t\n", max_size=6),
        st.sampled_from(TOKENS),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(did=text_values, tests=text_values, blockers=text_values, summary=text_values)
@example(did=NASTY[0], tests=NASTY[1], blockers=NASTY[5], summary="x\n### y")
def test_any_text_reads_back_identical_and_leaves_the_next_entry_whole(
    did: str, tests: str, blockers: str, summary: str
) -> None:
    nxt = "implement task 3: " + did[:20]  # --next goes through the same encoder
    text = log_with(entry_text(did, tests, nxt, blockers, summary), FOLLOWER)

    log = parse_log(text, Path("execution-log.md"))

    assert len(log.entries) == 2
    first, second = log.entries
    assert first.fields["did"] == did
    assert first.fields["tests"] == tests
    assert first.fields["next"] == nxt
    assert first.fields["blockers"] == blockers
    assert first.summary == summary
    assert second.summary == "task 2 done: the next one"
    assert second.next == NEXT


@pytest.mark.parametrize("value", NASTY)
def test_nasty_values_round_trip_in_whole_and_tail_reads(tmp_path: Path, value: str) -> None:
    log = tmp_path / "execution-log.md"
    log.write_text(log_with(entry_text(value, value, value, value, "s"), FOLLOWER))

    whole = read_log(log).entries
    tail = tail_entries(log, 2)

    for read in (whole, tail):
        assert [e.fields["did"] for e in read] == [value, "plain"]
        assert read[1].next == NEXT


def test_an_append_after_an_unbalanced_fence_still_takes_the_fast_path(tmp_path: Path) -> None:
    log = tmp_path / "execution-log.md"
    log.write_text(log_with(entry_text("```python\nx = 1", "t", NEXT, "none", "s")))

    planned = plan_append(log, FOLLOWER)

    assert planned.fast, "the progress section must still be seen as the last one"


def test_encoding_leaves_ordinary_text_alone() -> None:
    for value in ("fixed the retry ledger", "a\n  b\n- c", "`code` and **bold**", "tabs\there"):
        assert encode(value) == value
        assert decode(value) == value


def test_unbalanced_fences_are_escaped_and_balanced_ones_kept() -> None:
    assert encode("x\n```python\ny") == "x\n\\u{60}``python\ny"
    assert encode("x\n```\ny\n```") == "x\n```\ny\n```"


def test_one_line_drops_controls_and_newlines() -> None:
    assert one_line("a\nLoop-Task: 9\r\x00b") == "a Loop-Task: 9 b"


# ---------------------------------------------------------------- through the CLI


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def test_the_reported_case_through_the_cli(project: Path) -> None:
    """An open fence in --did: task 1's Next: and task 3's whole entry stay readable."""
    ok(project, "task", "done", "7", "1", "--did", "added\n```python\nx = 1", "--next", NEXT)
    ok(project, "task", "done", "7", "3", "--did", "plain", "--next", "implement task 2: rest")

    read = entries(project)

    assert [e.summary for e in read[-2:]] == [
        "task 1 done: config key",
        "task 3 done: give-up log line",
    ]
    assert read[-2].fields["did"] == "added\n```python\nx = 1"
    assert read[-2].next == NEXT
    assert read[-1].next == "implement task 2: rest"
    resume = ok(project, "resume", "7")
    assert "Next: implement task 2: rest" in resume.stdout


def test_trailer_lines_in_text_never_reach_the_commit_message(project: Path) -> None:
    forged = "did it\nLoop-Task: 99\nLoop-Checkpoint: forged"
    ok(project, "task", "done", "7", "1", "--did", forged, "--blockers", forged, "--next", NEXT)

    message = commits(project)[0]

    assert "Loop-Checkpoint: forged" not in message.splitlines()
    assert "Loop-Task: 99" not in message.splitlines()
    assert entries(project)[-1].fields["did"] == forged


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(did=st.text(alphabet=string.printable + "`~#\u2028\x00", min_size=1, max_size=40))
def test_property_through_the_cli(tmp_path_factory: pytest.TempPathFactory, did: str) -> None:
    # a leading word: --did refuses text that says nothing ("-", '"'), and the
    # property is about what follows it, whatever it holds
    did = "wrote " + did
    root = project_copy(tmp_path_factory, tmp_path_factory.mktemp("cli") / "p", repo=False)
    ok(root, "task", "done", "7", "1", "--did", did, "--next", NEXT)
    ok(root, "task", "done", "7", "3", "--did", "after", "--next", NEXT)

    read = entries(root)

    assert read[-2].fields["did"] == did
    assert read[-1].fields["did"] == "after"
