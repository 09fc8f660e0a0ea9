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
