"""Reading the task checkpoints out of an execution log: one scan, no other parsing."""

from __future__ import annotations

from pathlib import Path

from the_loop.log.task_checkpoints import read_task_checkpoints, scan_task_checkpoints

LOOP_LOG = """\
---
type: execution-log
phase: implementation
---

# Execution Log: retries

> Append-only record of the work, written by `loop` at every checkpoint.

## Progress entries

### 2026-11-30T12:00Z — task 1 done: config key

- **Phase:** implementation
- **WIP:** committed with this entry (Loop-Checkpoint: 20261130T120000Z-aaaaaa)

```markdown
### 2026-11-30T12:01Z — task 2 done: inside a fence, not an entry
- **WIP:** committed with this entry (Loop-Checkpoint: fenced)
```

### 2026-11-30T12:02Z — task 3.1 done: no repository here

- **WIP:** WIP noted: not a git repository

### 2026-11-30T12:03Z — interim checkpoint during task 4

- **WIP:** committed with this entry (Loop-Checkpoint: 20261130T120300Z-bbbbbb)

### 2026-11-30T12:04Z — task 1 done: config key (adopted: it was ticked by hand)

- **WIP:** committed with this entry (Loop-Checkpoint: 20261130T120400Z-cccccc)
"""


def test_task_done_entries_and_their_checkpoints() -> None:
    found = scan_task_checkpoints(LOOP_LOG)

    assert found.kept_by_loop
    assert sorted(found.done) == ["1", "3.1"]
    assert found.done["1"].checkpoint == "20261130T120400Z-cccccc"  # the latest entry wins
    heading = "### 2026-11-30T12:04Z — task 1 done: config key (adopted: it was ticked by hand)"
    assert found.done["1"].line == LOOP_LOG.split("\n").index(heading) + 1
    assert found.done["1"].stamp == "2026-11-30T12:04Z"
    assert found.done["3.1"].checkpoint is None  # nothing committed: the entry is the evidence


def test_a_log_loop_never_wrote_is_not_kept_by_loop() -> None:
    foreign = "# Log\n\n### 2026-07-24 — task 1 done\n\n- **Did:** it\n"

    found = scan_task_checkpoints(foreign)

    assert not found.kept_by_loop
    assert found.done == {}  # no WIP line, so no checkpoint: nothing loop could judge


def test_a_missing_log_records_nothing(tmp_path: Path) -> None:
    found = read_task_checkpoints(tmp_path / "execution-log.md")

    assert not found.kept_by_loop and not found.done


# Logs without a code fence take the fast path; each must read as the line scan reads it.
UNFENCED = (
    LOOP_LOG.split("```")[0],
    "### 2026-11-30 — task 1 done\n- **WIP:** committed (Loop-Checkpoint: first-line)\n",
    "intro\r\n### 2026-11-30T10:00Z -- task 2 done: crlf\r\n- **WIP:** committed "
    "(Loop-Checkpoint: c-1)\r\n",
    # a heading between the entry and its WIP line: the entry records nothing
    "### 2026-11-30 — task 3 done\n#### notes\n- **WIP:** committed (Loop-Checkpoint: x)\n",
    # the latest entry wins; a WIP line without an id; an entry with no WIP line at all
    "### 2026-11-30 — task 4 done\n- **WIP:** committed (Loop-Checkpoint: old)\n"
    "### 2026-12-01 — task 4 done\n- **WIP:** noted: not a git repository\n"
    "### 2026-12-01 — task 5 done\n- **Did:** no WIP line\n",
    # not WIP lines: a bare dash before a line break, a longer key
    "### 2026-11-30 — task 6 done\n-\n**WIP:** no\n* **WIPE:** no\n",
    "### 2026-11-30 — undone task 7 done\n- **WIP:** (Loop-Checkpoint: y)\n",
    "no entries at all; done\n",
    "",
)


def test_the_fast_path_reads_an_unfenced_log_as_the_line_scan_does() -> None:
    from the_loop.log import task_checkpoints

    for text in UNFENCED:
        assert "```" not in text and "~~~" not in text
        fast = task_checkpoints._scan_unfenced(text)
        assert fast == task_checkpoints._scan_lines(text), text
        assert scan_task_checkpoints(text) == fast
    assert set(scan_task_checkpoints(UNFENCED[4]).done) == {"4"}
    assert scan_task_checkpoints(UNFENCED[4]).done["4"].checkpoint is None
