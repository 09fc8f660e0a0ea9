"""Appending to ``execution-log.md``: where the entry goes, what else changes, undo.

When "Progress entries" is the last section (loop's own template) an append is
one ``O_APPEND`` write: same inode, old bytes untouched, and only the tail is
read. In an older log whose progress section is followed by others, the entry is
inserted at the end of that section by an atomic rewrite, all else byte-identical.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import pathlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from the_loop.io.templating import render
from the_loop.log import execution_log as execlog
from the_loop.log.execution_log import (
    PROGRESS_HEADING,
    Appended,
    append_entry,
    apply_append,
    entry_state,
    last_entry,
    plan_append,
    read_log,
    remove_entry,
)

HEAD = render("execution-log.md.j2", item="issue-5", title="appends", phase="implementation")


def entry_text(n: int) -> str:
    return render(
        "log-entry.md.j2",
        stamp=f"2026-11-30T12:{n % 60:02d}Z",
        summary=f"task {n} done",
        phase="implementation",
        did=f"task {n}\nwith a second line",
        tests="`pytest -q` → 40 passed",
        next=f"task {n + 1}",
        context=f"compacted — task {n} done (contextManagement.taskBoundary: compact)",
        blockers="none",
        wip=f"committed with this entry (Loop-Checkpoint: cp-{n})",
    )


NEW = entry_text(99)

# An older log, shaped like the-loop's own: sections after the progress entries.
OLDER = """\
---
type: execution-log
workItem: issue-32
phase: needs-review
status: in-progress
---

# Execution Log: interactive sessions

## Phase transitions

| Phase | Entered | Reviewed/approved by | Notes |
|-------|---------|----------------------|-------|
| implementation | 2026-07-17 |  | TDD: red → green |
| complete |  |  |  |

## Progress entries

### 2026-07-16 — brainstorm

- **Phase:** brainstorming
- **Did:** answered Q1–Q5.
- **Next:** owner reviews the brainstorm.

### 2026-07-17 — design + tasks + implementation

- **Phase:** implementation → needs-review
- **Did:** derived `design.md` and the 8-task DAG.
- **Checkpoint/tests (red→green evidence):**
  - RED: 2 collection errors.
  - GREEN: **102 passed**.
- **Next:** self-review, then reviewer briefing on PR #35.
- **Blockers:** none.

## Review cycles

| Cycle | Type (self/critic) | Reviewer | Outcome | Link |
|-------|--------------------|----------|---------|------|
| 1 | human (brainstorm) | @owner | Option A chosen | PR #33 |

## Final validation evidence

- **Test suite:** 102 passed.
"""


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "execution-log.md"


# --- fast path: progress is the last section ----------------------------------------------


def test_append_to_loops_own_log_is_one_append_in_place(log: Path) -> None:
    write(log, HEAD + "\n" + entry_text(1))
    before = log.read_bytes()
    inode = os.stat(log).st_ino
    appended = append_entry(log, NEW)
    after = log.read_bytes()
    assert os.stat(log).st_ino == inode  # not rewritten
    assert after[: len(before)] == before  # old bytes untouched
    assert after == before + b"\n" + NEW.encode()
    assert appended == Appended(
        offset=len(before),
        data=b"\n" + NEW.encode(),
        digest=hashlib.sha256(NEW.encode()).hexdigest(),
        size_before=len(before),
        fast=True,
    )
    assert appended.digest == execlog.entry_digest(NEW)
    entries = read_log(log).entries
    assert [e.summary for e in entries] == ["task 1 done", "task 99 done"]
    assert last_entry(log) == entries[-1]


def test_append_to_a_fresh_log_from_the_template(log: Path) -> None:
    write(log, HEAD)
    assert HEAD.endswith(PROGRESS_HEADING + "\n")
    inode = os.stat(log).st_ino
    appended = append_entry(log, NEW)
    assert appended.fast
    assert os.stat(log).st_ino == inode
    assert log.read_text() == HEAD + "\n" + NEW
    (entry,) = read_log(log).entries
    assert entry.next == "task 100"


@pytest.mark.parametrize(
    ("ending", "separator"),
    [
        ("- **Next:** n", "\n\n"),  # no final newline
        ("- **Next:** n\n", "\n"),
        ("- **Next:** n\n\n", ""),  # already a blank line
        ("- **Next:** n\n\n\n", ""),
    ],
)
def test_separator_before_the_appended_entry(log: Path, ending: str, separator: str) -> None:
    text = HEAD + "\n### 2026-11-30T12:00Z — first\n\n" + ending
    write(log, text)
    appended = append_entry(log, NEW)
    assert appended.fast
    assert appended.data == (separator + NEW).encode()
    assert log.read_text() == text + separator + NEW
    assert [e.next for e in read_log(log).entries] == ["n", "task 100"]


def test_consecutive_appends_are_separated_by_one_blank_line(log: Path) -> None:
    write(log, HEAD)
    for n in range(3):
        append_entry(log, entry_text(n))
    assert log.read_text() == HEAD + "".join("\n" + entry_text(n) for n in range(3))
    assert [e.summary for e in read_log(log).entries] == [f"task {n} done" for n in range(3)]


def test_append_to_a_big_log_from_the_tail(log: Path) -> None:
    # bigger than the tail chunk, so the heading is not in the tail
    write(log, HEAD + "".join("\n" + entry_text(n) for n in range(1_000)))
    assert log.stat().st_size > 2 * execlog._TAIL_CHUNK
    before = log.read_bytes()
    inode = os.stat(log).st_ino
    appended = append_entry(log, NEW)
    assert appended.fast
    assert os.stat(log).st_ino == inode
    assert log.read_bytes() == before + b"\n" + NEW.encode()


# --- slow path: sections after the progress entries -------------------------------------


def test_insert_at_the_end_of_the_progress_section(log: Path) -> None:
    write(log, OLDER)
    inode = os.stat(log).st_ino
    appended = append_entry(log, NEW)
    after = log.read_bytes()
    original = OLDER.encode()
    assert not appended.fast
    assert os.stat(log).st_ino != inode  # an atomic rewrite
    assert appended.size_before == len(original)
    # everything else is byte-identical
    assert after[: appended.offset] == original[: appended.offset]
    assert after[appended.offset + len(appended.data) :] == original[appended.offset :]
    assert len(after) == len(original) + len(appended.data)
    # the entry sits right after the last entry, before `## Review cycles`
    assert original[: appended.offset].endswith(b"- **Blockers:** none.\n")
    assert appended.data.startswith(b"\n" + NEW.encode())
    log_after = read_log(log)
    assert [e.summary for e in log_after.entries] == [
        "brainstorm",
        "design + tasks + implementation",
        "task 99 done",
    ]
    assert log_after.entries[-1].next == "task 100"
    assert after.index(NEW.encode()) < after.index(b"## Review cycles")
    assert after.endswith(b"## Final validation evidence\n\n- **Test suite:** 102 passed.\n")


def test_the_rewrite_keeps_the_permission_bits(log: Path) -> None:
    write(log, OLDER)
    log.chmod(0o640)
    assert not append_entry(log, NEW).fast
    assert log.stat().st_mode & 0o777 == 0o640


def test_two_inserts_keep_file_order(log: Path) -> None:
    write(log, OLDER)
    append_entry(log, entry_text(1))
    append_entry(log, entry_text(2))
    text = log.read_text()
    assert [e.summary for e in read_log(log).entries][-2:] == ["task 1 done", "task 2 done"]
    assert text.index("task 2 done") < text.index("## Review cycles")
    assert text.endswith("- **Test suite:** 102 passed.\n")


def test_inserted_entry_is_followed_by_exactly_one_blank_line(log: Path) -> None:
    write(log, OLDER)
    append_entry(log, NEW)
    assert NEW + "\n## Review cycles\n" in log.read_text()


def test_insert_when_the_progress_section_is_empty(log: Path) -> None:
    text = "# L\n\n## Progress entries\n\n## Review cycles\n\nrows\n"
    write(log, text)
    appended = append_entry(log, NEW)
    assert not appended.fast
    after = log.read_text()
    assert after.startswith("# L\n\n## Progress entries\n\n" + NEW)
    assert after.endswith("## Review cycles\n\nrows\n")
    assert [e.summary for e in read_log(log).entries] == ["task 99 done"]


def test_big_older_log_with_sections_after_progress(log: Path) -> None:
    progress_end = OLDER.index("## Review cycles")
    filler = "".join("\n" + entry_text(n) for n in range(1_000))
    text = OLDER[:progress_end] + filler.lstrip("\n") + "\n" + OLDER[progress_end:]
    write(log, text)
    assert log.stat().st_size > 2 * execlog._TAIL_CHUNK
    appended = append_entry(log, NEW)
    assert not appended.fast
    after = log.read_bytes()
    assert after[: appended.offset] == text.encode()[: appended.offset]
    assert after[appended.offset + len(appended.data) :] == text.encode()[appended.offset :]
    summaries = [e.summary for e in read_log(log).entries]
    assert summaries[-2:] == ["task 999 done", "task 99 done"]


def test_tail_without_any_heading_or_entry_falls_back_to_the_whole_file(log: Path) -> None:
    # a huge last section after the progress entries: the tail alone cannot tell
    text = OLDER + "".join(f"- **Run {n}:** ok\n" for n in range(10_000))
    write(log, text)
    assert log.stat().st_size > 2 * execlog._TAIL_CHUNK
    appended = append_entry(log, NEW)
    assert not appended.fast
    assert [e.summary for e in read_log(log).entries][-1] == "task 99 done"
    assert log.read_text().endswith("- **Run 9999:** ok\n")


# --- no progress section ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "separator"),
    [
        ("# Execution Log: x\n\nprose\n", "\n"),
        ("# Execution Log: x\n\nprose", "\n\n"),
        ("# Execution Log: x\n\n## Phase transitions\n\n| a |\n|---|\n", "\n"),
        ("", ""),
    ],
)
def test_a_log_without_a_progress_section_gets_one(log: Path, text: str, separator: str) -> None:
    write(log, text)
    inode = os.stat(log).st_ino
    appended = append_entry(log, NEW)
    assert log.read_text() == text + separator + PROGRESS_HEADING + "\n\n" + NEW
    assert appended.fast
    assert os.stat(log).st_ino == inode
    (entry,) = read_log(log).entries
    assert entry.summary == "task 99 done"
    # the next append finds the section and goes to the end
    second = append_entry(log, entry_text(100))
    assert second.fast
    assert [e.summary for e in read_log(log).entries] == ["task 99 done", "task 100 done"]


# --- crash states and undo -----------------------------------------------------------------


def test_entry_state_and_remove_on_the_fast_path(log: Path) -> None:
    write(log, HEAD + "\n" + entry_text(1))
    original = log.read_bytes()
    planned = plan_append(log, NEW)
    assert log.read_bytes() == original  # planning writes nothing
    assert entry_state(log, planned) == "absent"
    apply_append(log, planned)
    assert entry_state(log, planned) == "present"
    remove_entry(log, planned)
    assert log.read_bytes() == original
    assert entry_state(log, planned) == "absent"


def test_a_torn_append_is_detected_and_removed(log: Path) -> None:
    write(log, HEAD + "\n" + entry_text(1))
    original = log.read_bytes()
    planned = plan_append(log, NEW)
    with log.open("ab") as handle:  # a crash half-way through the write
        handle.write(planned.data[: len(planned.data) // 2])
    assert entry_state(log, planned) == "torn"
    remove_entry(log, planned)
    assert log.read_bytes() == original
    assert entry_state(log, planned) == "absent"


def test_a_different_entry_at_the_offset_is_torn_not_present(log: Path) -> None:
    write(log, HEAD)
    planned = plan_append(log, NEW)
    append_entry(log, entry_text(5))  # something else got there first
    assert entry_state(log, planned) == "torn"


def test_entry_state_and_remove_on_the_slow_path(log: Path) -> None:
    write(log, OLDER)
    original = log.read_bytes()
    planned = plan_append(log, NEW)
    assert not planned.fast
    assert entry_state(log, planned) == "absent"
    remove_entry(log, planned)  # nothing to remove: no change
    assert log.read_bytes() == original
    apply_append(log, planned)
    assert entry_state(log, planned) == "present"
    remove_entry(log, planned)
    assert log.read_bytes() == original
    assert entry_state(log, planned) == "absent"


def test_slow_path_state_after_an_unrelated_change_is_torn(log: Path) -> None:
    write(log, OLDER)
    planned = plan_append(log, NEW)
    write(log, OLDER + "\nedited by hand\n")
    assert entry_state(log, planned) == "torn"


# --- cost: an append reads only the tail -----------------------------------------------------


class CountingReader:
    """A file object that adds what it reads to a shared counter."""

    def __init__(self, handle: Any, counter: list[int]) -> None:
        self._handle = handle
        self._counter = counter

    def read(self, *args: Any) -> Any:
        data = self._handle.read(*args)
        self._counter[0] += len(data)
        return data

    def readinto(self, buffer: Any) -> Any:
        size = self._handle.readinto(buffer)
        self._counter[0] += size or 0
        return size

    def readline(self, *args: Any) -> Any:
        data = self._handle.readline(*args)
        self._counter[0] += len(data)
        return data

    def __iter__(self) -> Iterator[Any]:
        for line in self._handle:
            self._counter[0] += len(line)
            yield line

    def __enter__(self) -> CountingReader:
        self._handle.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        return self._handle.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


@pytest.fixture
def bytes_read(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], Any]], tuple[Any, int]]:
    """Run a function and count every byte it reads through ``open`` or ``Path.open``."""

    def run(action: Callable[[], Any]) -> tuple[Any, int]:
        counter = [0]
        real_path_open = pathlib.Path.open
        real_open = builtins.open
        with monkeypatch.context() as patch:
            patch.setattr(
                pathlib.Path,
                "open",
                lambda self, *a, **k: CountingReader(real_path_open(self, *a, **k), counter),
            )
            patch.setattr(
                builtins, "open", lambda *a, **k: CountingReader(real_open(*a, **k), counter)
            )
            result = action()
        return result, counter[0]

    return run


def test_the_counter_sees_a_whole_read(
    log: Path, bytes_read: Callable[[Callable[[], Any]], tuple[Any, int]]
) -> None:
    write(log, HEAD + "".join("\n" + entry_text(n) for n in range(1_000)))
    _, count = bytes_read(lambda: read_log(log))
    assert count == log.stat().st_size


@pytest.mark.parametrize("entries", [10, 100_000])
def test_an_append_reads_only_the_tail(
    tmp_path: Path,
    bytes_read: Callable[[Callable[[], Any]], tuple[Any, int]],
    entries: int,
) -> None:
    log = tmp_path / "execution-log.md"
    block = "".join("\n" + entry_text(n) for n in range(min(entries, 100)))
    write(log, HEAD + block * max(1, entries // 100))  # 100,000 entries: about 30 MB
    size = log.stat().st_size
    if entries == 100_000:
        assert size > 20 * 1024 * 1024
    inode = os.stat(log).st_ino
    appended, count = bytes_read(lambda: append_entry(log, NEW))
    assert count <= execlog._TAIL_CHUNK
    assert count == min(size, execlog._TAIL_CHUNK)
    assert appended.fast
    assert os.stat(log).st_ino == inode
    assert log.stat().st_size == size + len(appended.data)
    last, count = bytes_read(lambda: last_entry(log))
    assert count <= execlog._TAIL_CHUNK
    assert last is not None
    assert (last.summary, last.next) == ("task 99 done", "task 100")
    if entries == 100_000:
        assert last.line is None


# --- bugs ------------------------------------------------------------------------------------


def test_a_heading_inside_a_fenced_block_of_the_last_entry(log: Path) -> None:
    text = HEAD + (
        "\n### 2026-11-30T11:00Z — proposed a section\n\n"
        "- **Did:** drafted it:\n\n"
        "```markdown\n"
        "## Notes\n"
        "```\n\n"
        "- **Next:** review it\n"
    )
    write(log, text)
    assert [e.next for e in read_log(log).entries] == ["review it"]
    append_entry(log, NEW)
    assert [e.summary for e in read_log(log).entries] == ["proposed a section", "task 99 done"]
    assert log.read_text() == text + "\n" + NEW


def test_insert_after_a_byte_that_is_not_utf8(log: Path) -> None:
    original = OLDER.replace("interactive sessions", "caf\udce9", 1).encode(
        "utf-8", errors="surrogateescape"
    )
    assert b"caf\xe9" in original
    write(log, original)
    appended = append_entry(log, NEW)
    after = log.read_bytes()
    assert after[: appended.offset] == original[: appended.offset]
    assert b"\n## Review cycles\n" in after
    assert [e.summary for e in read_log(log).entries][-1] == "task 99 done"
