"""loop's one cache: hits equal a fresh computation, edits are seen, damage ignored.

Real files in temp folders; planted links and FIFOs; the concurrency test runs
real processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from helpers import REPO_ROOT, Result

from the_loop.config.state_folder import project_cache
from the_loop.dag.analysis import analyze
from the_loop.findings import Finding
from the_loop.io import content_cache
from the_loop.io.content_cache import MISSING, ContentCache, findings_from_plain, findings_to_plain
from the_loop.tasks import parse_tasks

Loop = Callable[..., Result]
Build = Callable[[Mapping[str, str]], Path]

TASKS = """\
---
type: tasks
workItem: issue-3
status: draft
---

# Tasks

- [x] 1. First
  - _Depends on:_ none
- [ ] 2. Second
  - _Depends on:_ 1
- [ ] 3. Third
  - _Depends on:_ 2
"""


def parsed(path: Path) -> dict[str, object]:
    """A plain answer made of a parse, as the reports keep them."""
    tasks = parse_tasks(path.read_text(), path)
    dag = analyze(tasks)
    return {"ready": list(dag.ready), "next": dag.next, "done": dag.done, "total": dag.total}


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{content_cache.SUFFIX}")) if folder.is_dir() else []


@pytest.fixture
def tasks_md(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.md"
    path.write_text(TASKS)
    return path


def test_a_hit_returns_values_equal_to_a_fresh_parse(tmp_path: Path, tasks_md: Path) -> None:
    cache = ContentCache(tmp_path / "cache")
    text = tasks_md.read_text()
    calls = []

    def compute() -> object:
        calls.append(1)
        return parsed(tasks_md)

    first = cache.cached("tasks", tasks_md, text, compute)
    again = ContentCache(tmp_path / "cache").cached("tasks", tasks_md, text, compute)

    assert calls == [1]
    assert again == first == parsed(tasks_md)
    assert again is not first


def test_values_go_through_their_codec(tmp_path: Path, tasks_md: Path) -> None:
    found = analyze(parse_tasks(TASKS.replace("_Depends on:_ 2", "_Depends on:_ 9"), tasks_md))
    assert found.findings
    cache = ContentCache(tmp_path / "cache")
    codec = {"encode": findings_to_plain, "decode": findings_from_plain}

    cache.cached("check", tasks_md, TASKS, lambda: list(found.findings), **codec)  # type: ignore[arg-type]
    again = ContentCache(tmp_path / "cache").cached("check", tasks_md, TASKS, list, **codec)  # type: ignore[arg-type]

    assert again == list(found.findings)
    assert all(isinstance(f, Finding) for f in again)


def test_only_plain_data_is_stored(tmp_path: Path, tasks_md: Path) -> None:
    cache = ContentCache(tmp_path / "cache")
    cache.store("tasks", tasks_md, TASKS, {"a": object()})

    assert entries(tmp_path / "cache") == []
    assert cache.load("tasks", tasks_md, TASKS) is MISSING


def test_an_entry_keyed_by_content_alone(tmp_path: Path) -> None:
    cache = ContentCache(tmp_path / "cache")
    calls: list[str] = []

    def compute(text: str) -> list[str]:
        calls.append(text)
        return [text.upper()]

    for text in ("one", "two", "one"):
        cache.by_content("upper", text, lambda text=text: compute(text))  # type: ignore[misc]

    assert calls == ["one", "two"]
    assert len(entries(tmp_path / "cache")) == 2


def test_an_edit_of_the_same_size_and_mtime_is_seen(tmp_path: Path, tasks_md: Path) -> None:
    cache = ContentCache(tmp_path / "cache")
    cache.store("tasks", tasks_md, tasks_md.read_text(), parsed(tasks_md))
    before = os.stat(tasks_md)

    edited = TASKS.replace("[ ] 2. Second", "[x] 2. Second")
    assert len(edited) == len(TASKS)
    tasks_md.write_text(edited)
    os.utime(tasks_md, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same mtime, to the ns
    assert os.stat(tasks_md).st_mtime_ns == before.st_mtime_ns

    assert ContentCache(tmp_path / "cache").load("tasks", tasks_md, edited) is MISSING


def test_the_hash_decides_when_the_stat_cannot(
    tmp_path: Path, tasks_md: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry written moments after its file changed never trusts the file's stat."""
    cache = ContentCache(tmp_path / "cache")
    cache.store("tasks", tasks_md, TASKS, "value for TASKS")
    other = TASKS.replace("First", "Fir5t")

    # Just written: racy, so the text given is hashed, and it is not the one stored.
    assert cache.load("tasks", tasks_md, other) is MISSING
    assert cache.load("tasks", tasks_md, TASKS) == "value for TASKS"
    # Had the entry been written long after the change, the unchanged stat is enough.
    monkeypatch.setattr(content_cache, "RACY_NS", -(10**18))
    assert ContentCache(tmp_path / "cache").load("tasks", tasks_md, other) == "value for TASKS"


def test_the_same_content_under_a_new_mtime_still_hits(tmp_path: Path, tasks_md: Path) -> None:
    cache = ContentCache(tmp_path / "cache")
    cache.store("tasks", tasks_md, TASKS, "stored")
    tasks_md.write_text(TASKS)  # rewritten: new mtime and ctime, same bytes
    os.utime(tasks_md, ns=(1, 1))

    assert ContentCache(tmp_path / "cache").load("tasks", tasks_md, TASKS) == "stored"


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"LOOPCACHE3\n",
        b"not a cache entry at all",
        b"LOOPCACHE3\n\xff\xff\xff\x7f",  # no header
        b'LOOPCACHE3\n["x","tasks"]\n"good"',  # a header of another shape
    ],
)
def test_a_damaged_entry_is_ignored_and_replaced(
    tmp_path: Path, tasks_md: Path, damage: bytes
) -> None:
    cache = ContentCache(tmp_path / "cache")
    cache.store("tasks", tasks_md, TASKS, "good")
    [entry] = entries(tmp_path / "cache")
    entry.write_bytes(damage)

    assert cache.load("tasks", tasks_md, TASKS) is MISSING
    assert cache.cached("tasks", tasks_md, TASKS, lambda: "again") == "again"
    assert cache.load("tasks", tasks_md, TASKS) == "again"


def test_a_truncated_entry_is_ignored(tmp_path: Path, tasks_md: Path) -> None:
    cache = ContentCache(tmp_path / "cache")
    cache.store("tasks", tasks_md, TASKS, parsed(tasks_md))
    [entry] = entries(tmp_path / "cache")
    entry.write_bytes(entry.read_bytes()[:-10])

    assert cache.load("tasks", tasks_md, TASKS) is MISSING


def test_a_planted_fifo_or_device_link_is_a_miss(tmp_path: Path, tasks_md: Path) -> None:
    """Entries are opened without following links or blocking: neither hangs nor fails."""
    cache = ContentCache(tmp_path / "cache")
    cache.store("tasks", tasks_md, TASKS, "good")
    [entry] = entries(tmp_path / "cache")
    entry.unlink()
    os.mkfifo(entry)

    assert cache.load("tasks", tasks_md, TASKS) is MISSING  # no writer: would block if opened so
    entry.unlink()
    entry.symlink_to("/dev/zero")
    assert cache.load("tasks", tasks_md, TASKS) is MISSING  # would read forever if followed
    assert cache.cached("tasks", tasks_md, TASKS, lambda: "again") == "again"
    assert not entry.is_symlink()  # replaced by a real entry, /dev/zero untouched
    assert cache.load("tasks", tasks_md, TASKS) == "again"


def test_an_entry_over_the_size_cap_is_a_miss(
    tmp_path: Path, tasks_md: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ContentCache(tmp_path / "cache")
    cache.store("tasks", tasks_md, TASKS, "x" * 1000)
    monkeypatch.setattr(content_cache, "MAX_ENTRY_BYTES", 500)

    assert cache.load("tasks", tasks_md, TASKS) is MISSING


def test_an_entry_from_other_code_is_not_reused(
    tmp_path: Path, tasks_md: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ContentCache(tmp_path / "cache")
    cache.store("tasks", tasks_md, TASKS, "old code's value")
    monkeypatch.setattr(content_cache, "_stamp", "another-build")

    assert cache.load("tasks", tasks_md, TASKS) is MISSING


def test_the_folder_is_bounded(
    tmp_path: Path, tasks_md: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(content_cache, "MAX_ENTRIES", 5)
    cache = ContentCache(tmp_path / "cache")
    for number in range(12):
        path = tmp_path / f"file-{number}.md"
        path.write_text(f"text {number}\n")
        cache.store("tasks", path, path.read_text(), number)
        os.utime(entries(tmp_path / "cache")[-1], ns=(number, number * 10**9))

    kept = entries(tmp_path / "cache")
    assert len(kept) == 5
    newest = tmp_path / "file-11.md"
    assert cache.load("tasks", newest, newest.read_text()) == 11


def test_switching_it_off(tmp_path: Path, tasks_md: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("LOOP_NO_CACHE", "1")
    ContentCache(folder).store("tasks", tasks_md, TASKS, "value")
    assert entries(folder) == []

    monkeypatch.delenv("LOOP_NO_CACHE")
    content_cache.switch_off()
    try:
        ContentCache(folder).store("tasks", tasks_md, TASKS, "value")
        assert entries(folder) == []
        assert ContentCache(folder).by_content("x", "text", lambda: 1) == 1
        assert not folder.exists()
    finally:
        content_cache.switch_off(False)


# --- through the CLI -------------------------------------------------------------------


def item(build_tree: Build, *, with_loop_folder: bool = True) -> Path:
    files = {"docs/specs/issue-3/tasks.md": TASKS}
    if with_loop_folder:
        files[".the-loop/config.yaml"] = 'version: "0.1.0"\n'
    return build_tree(files)


def cache_folder(root: Path) -> Path:
    return root / ".the-loop" / "state" / "cache"


def test_reports_from_the_cache_equal_fresh_ones(loop: Loop, build_tree: Build) -> None:
    root = item(build_tree)
    fresh = loop("--no-cache", "next", "3", "--json", cwd=root)
    assert entries(cache_folder(root)) == []

    filled = loop("next", "3", "--json", cwd=root)
    # The task summary (whether a task is ticked decides if the log's checkpoints are
    # part of the answer) and the answer itself; not every parsed task.
    names = [e.name.split("-")[0] for e in entries(cache_folder(root))]
    assert names == ["next", "summary"]
    warm = loop("next", "3", "--json", cwd=root)

    assert fresh.stdout == filled.stdout == warm.stdout
    assert json.loads(warm.stdout)["next"]["id"] == "2"
    gitignore = root / ".the-loop" / "state" / ".gitignore"
    assert gitignore.is_file()  # the cache never ends up in a checkpoint commit


def test_an_edit_is_seen_by_the_next_report(loop: Loop, build_tree: Build) -> None:
    root = item(build_tree)
    path = root / "docs/specs/issue-3/tasks.md"
    assert json.loads(loop("next", "3", "--json", cwd=root).stdout)["next"]["id"] == "2"
    before = os.stat(path)

    path.write_text(TASKS.replace("[ ] 2. Second", "[x] 2. Second"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    assert json.loads(loop("next", "3", "--json", cwd=root).stdout)["next"]["id"] == "3"


def test_no_loop_folder_means_no_cache(loop: Loop, build_tree: Build, git_repo: Path) -> None:
    build_tree({"docs/specs/issue-3/tasks.md": TASKS}, git_repo)

    result = loop("next", "3", "--json", cwd=git_repo)

    assert result.exit_code == 0, result.output
    assert not (git_repo / ".the-loop").exists()


def test_a_state_folder_outside_the_project_gets_no_cache(
    loop: Loop, build_tree: Build, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = item(build_tree)
    outside = tmp_path_factory.mktemp("outside")
    (outside / ".gitignore").write_text("keep me\n")
    (root / ".the-loop" / "state").symlink_to(outside)

    for args in (("status", "3"), ("next", "3", "--json"), ("check", "3")):
        result = loop(*args, cwd=root)
        assert result.exit_code in (0, 1), result.output

    assert (outside / ".gitignore").read_text() == "keep me\n"
    assert sorted(p.name for p in outside.iterdir()) == [".gitignore"]


def test_a_read_only_loop_folder_gets_no_cache(build_tree: Build) -> None:
    root = item(build_tree)
    folder = root / ".the-loop"
    folder.chmod(0o555)
    try:
        assert project_cache(root).folder is None
    finally:
        folder.chmod(0o755)


# --- concurrency ------------------------------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from the_loop.io.content_cache import ContentCache

    folder, source = Path(sys.argv[1]), Path(sys.argv[2])
    label, rounds = sys.argv[3], int(sys.argv[4])
    text = source.read_text()
    value = [label] * 200_000  # large enough that a write takes a while
    cache = ContentCache(folder)
    for _ in range(rounds):
        cache.store("tasks", source, text, value)
    """
)


def test_two_writers_never_leave_a_torn_entry(tmp_path: Path, tasks_md: Path) -> None:
    """Two processes store at once while this one reads: every read is a whole entry."""
    folder = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(folder), str(tasks_md), label, "25"], env=env
        )
        for label in ("a", "b")
    ]
    seen: set[str] = set()
    reads = 0
    while any(w.poll() is None for w in writers) or reads == 0:
        for entry in entries(folder):
            data = entry.read_bytes()  # one read of whatever is in place right now
            entry_copy = tmp_path / "copy" / entry.name
            entry_copy.parent.mkdir(exist_ok=True)
            entry_copy.write_bytes(data)
            value = ContentCache(entry_copy.parent).load("tasks", tasks_md, TASKS)
            assert value is not MISSING, "a torn or unreadable entry"
            assert value in (["a"] * 200_000, ["b"] * 200_000)
            seen.add(value[0])
            reads += 1
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    assert reads > 0 and seen <= {"a", "b"}
    assert not list(folder.glob("*.tmp"))  # every temporary file was renamed into place


def test_a_changed_template_or_schema_is_a_new_code_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries are keyed by loop's shipped data too: an edited template is never stale."""
    from the_loop.io import resources

    shipped = resources.resource_dir
    copies = {}
    for kind in ("templates", "schema"):
        copies[kind] = tmp_path / kind
        shutil.copytree(shipped(kind), copies[kind])
    monkeypatch.setattr(resources, "resource_dir", lambda kind: copies.get(kind) or shipped(kind))
    stamps = []
    for changed in (None, "templates/log-entry.md.j2", "schema/config.schema.json"):
        if changed is not None:
            target = tmp_path / changed
            target.write_text(target.read_text() + "\n")
        monkeypatch.setattr(content_cache, "_stamp", None)
        stamps.append(content_cache.code_stamp())

    assert len(set(stamps)) == 3


def test_planted_fifos_and_device_links_do_not_hang_a_command(
    build_tree: Build, hermetic_env: Path
) -> None:
    """Every entry of both caches replaced by a FIFO or a link to /dev/zero: same answer."""
    from helpers.project import process

    root = item(build_tree)
    first = process(root, "status", "3", "--json")
    assert first.returncode == 0, first.stderr
    planted = [*entries(cache_folder(root)), *entries(hermetic_env / ".cache" / "loop")]
    assert len(planted) >= 4  # the answers, the config and the front matter
    for number, entry in enumerate(planted):
        entry.unlink()
        if number % 2:
            os.mkfifo(entry)
        else:
            entry.symlink_to("/dev/zero")

    again = process(root, "status", "3", "--json", timeout=60)

    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
