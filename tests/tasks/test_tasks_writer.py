"""The line-local writer: one checkbox character changes, every other byte stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from the_loop import tasks
from the_loop.errors import DagError, SpecError, UnusableInputError, Where
from the_loop.io import atomic
from the_loop.tasks import TaskState, read_tasks, set_state, with_state

SAMPLE = (
    "---\nstatus: approved\n---\n\n# Tasks\n\n"
    "- [ ] 1. First\n  - _Depends on:_ none\n"
    "- [x] 2. Second\n  - _Depends on:_ 1\n"
    "- [X] T3. Third\n  - _Depends on:_ 2\n"
    "- [-] 4. Fourth\n"
)


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "tasks.md"
    path.write_bytes(data)
    return path


def changed_bytes(before: bytes, after: bytes) -> list[int]:
    assert len(before) == len(after)
    return [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]


@pytest.mark.parametrize(
    ("task_id", "state", "mark"),
    [
        ("1", TaskState.DONE, b"x"),
        ("1", TaskState.IN_PROGRESS, b"-"),
        ("2", TaskState.OPEN, b" "),
        ("T3", TaskState.OPEN, b" "),
        ("3", TaskState.IN_PROGRESS, b"-"),
        ("4", TaskState.DONE, b"x"),
    ],
)
def test_set_state_changes_exactly_one_byte(
    tmp_path: Path, task_id: str, state: TaskState, mark: bytes
) -> None:
    before = SAMPLE.encode()
    path = write(tmp_path, before)
    assert set_state(path, task_id, state) is True
    after = path.read_bytes()
    (index,) = changed_bytes(before, after)
    assert after[index : index + 1] == mark
    assert after[index - 1 : index] == b"[" and after[index + 1 : index + 2] == b"]"
    wanted = task_id.lstrip("T")
    assert next(t for t in read_tasks(path).tasks if t.id == wanted).state is state


@pytest.mark.parametrize(
    ("task_id", "state"),
    [
        ("1", TaskState.OPEN),
        ("2", TaskState.DONE),
        ("3", TaskState.DONE),
        ("4", TaskState.IN_PROGRESS),
    ],
)
def test_set_state_to_the_current_state_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task_id: str, state: TaskState
) -> None:
    path = write(tmp_path, SAMPLE.encode())
    writes: list[Path] = []
    monkeypatch.setattr(atomic, "write_bytes", lambda p, d: writes.append(p))
    assert set_state(path, task_id, state) is False
    assert writes == []
    assert path.read_bytes() == SAMPLE.encode()  # the existing `X` stays upper case


def test_set_state_writes_through_atomic_write_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, SAMPLE.encode())
    calls: list[tuple[Path, bytes]] = []
    real = atomic.write_bytes

    def spy(target: Path, data: bytes) -> None:
        calls.append((target, data))
        real(target, data)

    monkeypatch.setattr(atomic, "write_bytes", spy)
    assert set_state(path, "1", TaskState.DONE)
    assert [target for target, _ in calls] == [path]
    assert not list(tmp_path.glob(".tasks.md.*"))  # no temp file left behind


def test_tick_then_untick_restores_the_file(tmp_path: Path) -> None:
    before = SAMPLE.encode()
    path = write(tmp_path, before)
    set_state(path, "1", TaskState.IN_PROGRESS)
    set_state(path, "1", TaskState.DONE)
    set_state(path, "1", TaskState.OPEN)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "data",
    [
        b"# T\r\n\r\n- [ ] 1. One\r\n  - _Depends on:_ none\r\n- [ ] 2. Two\r\n",
        b"- [ ] 1. One\n- [ ] 2. Two",
        "# Tâches ünïcode — 🚀 ✓\n- [ ] 1. Première\n- [ ] 2. Zweite — ß\n".encode(),
        "\ufeff- [ ] 1. One\n- [ ] 2. Two\n".encode(),
        b"- [ ] 1. One\n- [ ] 2. Two\n\n\n   \n",
    ],
    ids=["crlf", "no-trailing-newline", "multibyte-before", "bom", "trailing-blanks"],
)
def test_every_other_byte_is_preserved(tmp_path: Path, data: bytes) -> None:
    path = write(tmp_path, data)
    assert set_state(path, "2", TaskState.DONE)
    after = path.read_bytes()
    (index,) = changed_bytes(data, after)
    assert after[index : index + 1] == b"x"
    assert set_state(path, "2", TaskState.OPEN)
    assert path.read_bytes() == data


def test_unknown_mark_is_replaced_whole(tmp_path: Path) -> None:
    path = write(tmp_path, "- [✓] 1. Odd mark\n- [~] 2. Other\n".encode())
    assert set_state(path, "1", TaskState.DONE)
    assert set_state(path, "2", TaskState.IN_PROGRESS)
    assert path.read_bytes() == b"- [x] 1. Odd mark\n- [-] 2. Other\n"


def test_permission_bits_are_kept(tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE.encode())
    path.chmod(0o640)
    set_state(path, "1", TaskState.DONE)
    assert path.stat().st_mode & 0o777 == 0o640


def test_unknown_id_is_a_dag_error(tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE.encode())
    with pytest.raises(DagError) as info:
        set_state(path, "9", TaskState.DONE)
    assert info.value.where == Where(path)
    assert info.value.message == "no task 9 in tasks.md"
    assert info.value.hint == "tasks in this file: 1, 2, T3, 4"


def test_duplicated_id_is_a_dag_error_at_the_first_line(tmp_path: Path) -> None:
    path = write(tmp_path, b"- [ ] 1. A\n- [ ] 2. B\n- [ ] 1. C\n")
    with pytest.raises(DagError) as info:
        set_state(path, "1", TaskState.DONE)
    assert info.value.where == Where(path, 1)
    assert "lines 1, 3" in info.value.message
    assert info.value.hint
    assert path.read_bytes() == b"- [ ] 1. A\n- [ ] 2. B\n- [ ] 1. C\n"


def test_with_state_is_pure_and_refuses_a_stale_task() -> None:
    data = SAMPLE.encode()
    task = tasks.parse_tasks(SAMPLE, Path("tasks.md")).tasks[0]
    assert with_state(data, task, TaskState.OPEN) is data
    assert with_state(data, task, TaskState.DONE).count(b"[x]") == data.count(b"[x]") + 1
    with pytest.raises(SpecError, match="changed after it was read"):
        with_state(b"short", task, TaskState.DONE)
    with pytest.raises(SpecError):
        with_state(data.replace(b"- [ ] 1.", b"-  [ ]1."), task, TaskState.DONE)


def test_read_tasks_of_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UnusableInputError) as info:
        read_tasks(tmp_path / "tasks.md")
    assert info.value.where == Where(tmp_path / "tasks.md")
    assert info.value.hint


def test_read_tasks_of_a_folder(tmp_path: Path) -> None:
    (tmp_path / "tasks.md").mkdir()
    with pytest.raises(UnusableInputError) as info:
        read_tasks(tmp_path / "tasks.md")
    assert info.value.where == Where(tmp_path / "tasks.md")


def test_non_utf8_names_the_line_of_the_bad_byte(tmp_path: Path) -> None:
    path = write(tmp_path, b"- [ ] 1. One\n- [ ] 2. Caf\xe9 au lait\n")
    with pytest.raises(UnusableInputError) as info:
        read_tasks(path)
    assert info.value.where == Where(path, 2, 13)
    assert "0xe9" in info.value.message
    assert info.value.hint == "save the file as UTF-8"
    with pytest.raises(UnusableInputError):
        set_state(path, "1", TaskState.DONE)


def test_a_tick_as_read_needs_no_second_parse_while_the_file_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, SAMPLE.encode())
    first = read_tasks(path).tasks[0]
    as_read = (first.mark_offset, tasks.text_digest(SAMPLE))
    from the_loop.tasks import writer

    parses: list[Path] = []
    real = writer.parse_tasks
    monkeypatch.setattr(writer, "parse_tasks", lambda text, p: parses.append(p) or real(text, p))

    assert set_state(path, "1", TaskState.DONE, as_read=as_read)

    assert parses == []
    assert read_tasks(path).tasks[0].state is TaskState.DONE
    assert changed_bytes(SAMPLE.encode(), path.read_bytes()) == [first.mark_offset]


def test_a_tick_as_read_of_a_file_changed_since_reads_it_again(tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE.encode())
    first = read_tasks(path).tasks[0]
    as_read = (first.mark_offset, tasks.text_digest(SAMPLE))
    moved = SAMPLE.replace("# Tasks\n", "# Tasks\n\nA line added above the tasks.\n")
    path.write_text(moved)  # every mark has moved: the offset read before is stale

    assert set_state(path, "1", TaskState.DONE, as_read=as_read)

    states = {t.id: t.state for t in read_tasks(path).tasks}
    assert states == {
        "1": TaskState.DONE,
        "2": TaskState.DONE,
        "3": TaskState.DONE,
        "4": TaskState.IN_PROGRESS,
    }
    assert path.read_text() == moved.replace("- [ ] 1. First", "- [x] 1. First")
