"""Every damaged file under .the-loop/state is a clear message, never an internal error.

Issue 14, defect 11: 12 of 150 damaged state files gave exit 3. Each kind of
state file (the journal, a reset record, the reset history, the lock, the
state folder's .gitignore) is damaged in many ways — emptied, truncated,
garbage, not UTF-8, the wrong JSON type at every key, nested too deep, a
folder in its place — and the readers run on it: the CLI commands that read
state, and ``loop doctor`` with and without ``--repair``/``--discard``. None may
fail internally; every failure names the file and what to do; and after
``doctor --discard`` the project works again.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.project import (
    JOURNAL,
    NEXT,
    RESETS,
    STATE,
    ok,
    process,
    project_copy,
    run,
)

from the_loop.checkpoint import resets
from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.doctor import diagnose
from the_loop.errors import LoopError

DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)
DONE_2 = ("task", "done", "7", "2", "--did", "the retry ledger", "--next", NEXT)
DONE_3 = ("task", "done", "7", "3", "--did", "the give-up line", "--next", NEXT)
READERS = (
    ("status", "7"),
    ("resume", "7"),
    ("next", "7"),
    ("doctor",),
    ("doctor", "--repair"),
    ("reset", "confirm", "7", "--session", "s2"),
    ("task", "start", "7", "2"),
)

Damage = Callable[[Path], None]


def write(data: bytes) -> Damage:
    def damage(path: Path) -> None:
        path.write_bytes(data)

    return damage


def truncate_to(fraction: float) -> Damage:
    def damage(path: Path) -> None:
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * fraction)])

    return damage


def make_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "x").write_text("x")


GENERIC: dict[str, Damage] = {
    "empty": write(b""),
    "truncated-half": truncate_to(0.5),
    "truncated-1-byte": truncate_to(0.002),
    "garbage": write(bytes(range(256)) * 4),
    "not-utf8": write(b'{"plan": "\xff\xfe"}'),
    "null": write(b"null"),
    "list": write(b"[1, 2, 3]"),
    "number": write(b"42"),
    "string": write(b'"text"'),
    "nested-deep": write(b"[" * 100_000 + b"]" * 100_000),
    "nan": write(b'{"plan": NaN}'),
    "folder": make_folder,
}

# Damage loop shrugs off: the lock's text is only shown, a .gitignore is rewritten,
# and an empty history is a history without lines.
HARMLESS = {("lock", h) for h in GENERIC if h != "folder"} | {("gitignore", h) for h in GENERIC}


def state_files(root: Path) -> dict[str, Path]:
    (record,) = [p for p in (root / RESETS).glob("*.json")] or [None]
    files = {
        "journal": root / JOURNAL,
        "history": root / RESETS / "history.jsonl",
        "lock": root / STATE / "lock",
        "gitignore": root / STATE / ".gitignore",
    }
    if record is not None:
        files["record"] = record
    return files


def assert_clear(result_output: str, exit_code: int, path: Path) -> None:
    """No internal error; a message about damage names the damaged file."""
    assert exit_code != 3, result_output
    assert "internal error" not in result_output, result_output
    assert "Traceback" not in result_output, result_output
    if "damaged" in result_output:
        assert path.name in result_output, result_output


def every_kind(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project holding every kind of state file: a history line (task 1's reset,
    aborted), an open reset (task 3's) and an interrupted checkpoint (task 2, killed)."""
    root = project_copy(tmp_path_factory, tmp_path / "p")
    ok(root, *DONE_1)
    ok(root, "reset", "abort", "7")
    ok(root, *DONE_3)
    killed = process(root, *DONE_2, env={"LOOP_FAULT": "log"})
    assert killed.returncode < 0
    assert (root / JOURNAL).is_file()
    return root


def restored(root: Path, pristine: Path) -> None:
    """Put the project back as ``pristine`` holds it, in place (its journal names these paths)."""
    shutil.rmtree(root)
    shutil.copytree(pristine, root, symlinks=True)


# 60 damaged files, each read by nine commands: about a minute on one busy core
@pytest.mark.slow
@pytest.mark.parametrize("kind", ("journal", "record", "history", "lock", "gitignore"))
def test_generic_damage_through_the_cli(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    record_property: Callable[[str, object], None],
    kind: str,
) -> None:
    root = every_kind(tmp_path, tmp_path_factory)
    pristine = tmp_path / "pristine"
    shutil.copytree(root, pristine, symlinks=True)
    runs = 0
    for how in sorted(GENERIC):
        restored(root, pristine)
        path = state_files(root)[kind]
        GENERIC[how](path)

        found = run(root, "doctor")
        assert_clear(found.output, found.exit_code, path)
        if (kind, how) not in HARMLESS | {("history", "empty")} and kind != "lock":
            assert found.exit_code == 1, how
            assert path.name in found.stdout, (how, found.stdout)
        for command in READERS:
            result = run(root, *command)
            assert_clear(result.output, result.exit_code, path)

        discard = run(root, "doctor", "--discard")
        assert_clear(discard.output, discard.exit_code, path)
        if kind == "lock" and how == "folder":
            shutil.rmtree(path)  # the lock is the one file loop cannot set aside under itself
        healthy = run(root, "doctor")
        assert healthy.exit_code in (0, 1), healthy.output
        assert "damaged" not in healthy.stdout, (how, healthy.stdout)
        for command in (("reset", "abort", "7"), ("doctor",)):
            again = run(root, *command)
            assert_clear(again.output, again.exit_code, path)
        runs += len(READERS) + 5
    record_property(
        "campaign",
        f"damaged state ({kind}): {len(GENERIC)} kinds of damage, {runs} commands, "
        "0 internal errors",
    )


# ---------------------------------------------------------------- every key, every wrong type


WRONG = (None, 0, -1, 1.5, "x", "", [], ["x"], {}, {"a": 1}, True)


def key_paths(data: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from key_paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from key_paths(value, (*prefix, index))


def replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(data))
    node = copy
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return copy


def removed(data: Any, path: tuple[Any, ...]) -> Any:
    copy = json.loads(json.dumps(data))
    node = copy
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    return copy


@pytest.mark.parametrize("kind", ("journal", "record", "history"))
def test_every_key_with_every_wrong_type(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    hermetic_env: Path,
    record_property: Callable[[str, object], None],
    kind: str,
) -> None:
    root = every_kind(tmp_path, tmp_path_factory)
    path = state_files(root)[kind]
    original = path.read_bytes()
    if kind == "history":
        data = json.loads(original.splitlines()[-1])
    else:
        data = json.loads(original)
    cases = 0
    for key in key_paths(data):
        variants = [replaced(data, key, value) for value in WRONG]
        if key:
            variants.append(removed(data, key))
        for variant in variants:
            text = json.dumps(variant)
            if kind == "history":
                path.write_bytes(original + text.encode() + b"\n")
            else:
                path.write_text(text)
            run_readers_tolerantly(root, path, variant == data)
            cases += 1
    path.write_bytes(original)
    record_property(
        "campaign", f"damaged state ({kind}): {cases} wrong-type variants x 5 readers, 0 crashes"
    )
    assert cases > 50


def run_readers_tolerantly(root: Path, path: Path, unchanged: bool) -> None:
    for reader in (
        lambda: checkpoint.pending(root),
        lambda: resets.open_resets(root),
        lambda: resets.scan(root),
        lambda: resets.history_problems(root),
        lambda: diagnose(root).to_json(),
    ):
        try:
            reader()
        except LoopError as exc:
            assert exc.where is not None and Path(exc.where.path).name == path.name, exc.render()
            assert exc.hint and "doctor" in exc.hint, exc.render()


def test_a_damaged_journal_is_set_aside_by_discard_and_kept(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path
) -> None:
    root = project_copy(tmp_path_factory, tmp_path / "p")
    killed = process(root, *DONE_1, env={"LOOP_FAULT": "log"})
    assert killed.returncode < 0
    (root / JOURNAL).write_text('{"plan": 5}')

    status = run(root, "status", "7")
    assert status.exit_code == 1
    assert status.stderr.splitlines()[0].endswith(
        "checkpoint.json: the checkpoint journal is damaged: plan must be a JSON object, "
        "not a number"
    )
    assert "loop doctor --discard" in status.stderr

    discard = run(root, "doctor", "--discard")
    assert discard.exit_code == 0, discard.output
    (kept,) = (root / STATE / "damaged").glob("checkpoint.json.*")
    assert len(list((root / STATE / "damaged").glob("*.orig.*"))) == 2  # the file copies
    assert kept.read_text() == '{"plan": 5}'
    assert (
        f"damaged state file set aside: {kept}" in discard.stdout or "set aside" in discard.stdout
    )
    assert run(root, "doctor").exit_code == 0
