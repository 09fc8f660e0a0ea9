"""Kept answers (the_loop.cli.answer_memo): reused while their inputs hold, never after.

The end-to-end half runs the real ``python -m the_loop`` in real projects. An
answer is only kept once every file it read is two seconds old (the racy
rule), so the module builds one project per scenario, waits once, and has each
copy answer (and keep) the four reports. Each test then changes one kind of
input in its own copy and checks that the next answer is the one a run without
any cache gives, not the kept one. Whether a run was answered from the memo is
read from ``python -X importtime``: a kept answer loads none of loop's workflow.

The in-process half checks the rules for what is not kept (a write, a
process, the clock, a file changed moments ago) on :meth:`Memo.compute`.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.project import ITEM_DIR, LOG, TASKS, make_project

from the_loop.cli import answer_memo
from the_loop.cli.answer_memo import Memo

REPORTS = (
    ("status", "7"),
    ("status", "7", "--json"),
    ("status", "--all"),
    ("next", "7", "--json"),
    ("check", "7"),
    ("check", "--all", "--json"),
    ("graph", "7", "--json"),
)


def _hand_tick(root: Path) -> None:
    """Tick task 3 by hand: the same size, so only the timestamps tell."""
    text = (root / TASKS).read_text()
    (root / TASKS).write_text(text.replace("- [ ] 3.", "- [x] 3.", 1))


def _second_item(root: Path) -> None:
    other = root / "docs/specs/issue-8"
    other.mkdir(parents=True)
    (other / "requirements.md").write_text("---\ntype: requirements\n---\n\n# Requirements\n")


def _harness_config(root: Path) -> None:
    """A second config file beside config.yaml: an error every report must show."""
    (root / ".the-loop/harness-config.yaml").write_text('version: "0.1.0"\n')


def _history_rewritten(root: Path) -> None:
    """The checkpoint commit of task 1 loses its trailer: HEAD moves, the tick loses evidence."""
    message = _git(root, "log", "-1", "--format=%B")
    kept = "\n".join(line for line in message.splitlines() if "Loop-Checkpoint" not in line)
    _git(root, "commit", "-q", "--amend", "-m", kept or "squashed")


def _log_appended(root: Path) -> None:
    """A newer entry by hand: its Next is where ``status`` says to resume."""
    with (root / LOG).open("a") as handle:
        handle.write(
            "\n### 2026-11-30T23:59Z — notes\n\n- **Phase:** implementation\n"
            "- **Did:** read the retry code\n"
            "- **Next:** task 2: the retry ledger in retry/ledger.py\n"
            "- **Context:** compact (about to): notes\n"
        )


CHANGES: dict[str, Callable[[Path], None]] = {
    "hand tick": _hand_tick,
    "new item": _second_item,
    "second config": _harness_config,
    "history rewritten": _history_rewritten,
    "log appended": _log_appended,
}


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, text=True, capture_output=True, check=True)
    return done.stdout


class Loop:
    """``python -m the_loop`` in a fixed, hermetic environment (part of every memo's key)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def run(
        self, root: Path, *args: str, cwd: Path | None = None, **extra: str
    ) -> tuple[str, str, int, bool]:
        """stdout, stderr, exit code, and whether the answer was the kept one."""
        env = {**self.env, **extra, "PYTHONPROFILEIMPORTTIME": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "the_loop", *args],
            cwd=cwd or root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = done.stderr.splitlines(keepends=True)
        imports = [line for line in lines if line.startswith("import time:")]
        err = "".join(line for line in lines if not line.startswith("import time:"))
        kept = not any("the_loop.workflow" in line for line in imports)
        return done.stdout, err, done.returncode, kept

    def fresh(self, root: Path, *args: str, cwd: Path | None = None) -> tuple[str, str, int]:
        """The answer computed without any cache."""
        out, err, code, kept = self.run(root, *args, cwd=cwd, LOOP_NO_CACHE="1")
        assert not kept
        return out, err, code


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> Loop:
    home = tmp_path_factory.mktemp("memo-home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Loop Tester\n\temail = tester@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LOOP_", "GIT_", "CLAUDE_", "CODEX_", "PYTHONPROFILE"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        NO_COLOR="1",
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode kept
    return Loop(env)


@pytest.fixture(scope="module")
def kept_projects(loop: Loop, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One project per scenario, every report answered once and kept."""
    base = tmp_path_factory.mktemp("memo")
    roots: dict[str, Path] = {}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in loop.env.items():
            patch.setenv(name, value)
        for key in [k for k in os.environ if k not in loop.env]:
            patch.delenv(key)
        for name in [*CHANGES, "env", "cwd", "racy", "control"]:
            root = make_project(base / name.replace(" ", "-"))
            done = loop.run(
                root,
                "task",
                "done",
                "7",
                "1",
                "--did",
                "the key",
                "--next",
                "task 3: write the give-up log line (tests/test_retry.py)",
            )
            assert done[2] == 0, done[1]
            roots[name] = root
    time.sleep(answer_memo.RACY_NS / 1e9 + 0.2)  # every input now older than the racy window
    for root in roots.values():
        for report in REPORTS:
            first = loop.run(root, *report)
            again = loop.run(root, *report)
            assert not first[3], report
            assert again[3], f"{report} was not kept: {first[1]}"
            assert again[:3] == first[:3]
    return roots


@pytest.mark.slow  # real processes in a dozen projects, after a 2 s wait
@pytest.mark.parametrize("report", REPORTS, ids=" ".join)
def test_a_kept_answer_is_what_a_run_without_cache_prints(
    loop: Loop, kept_projects: dict[str, Path], report: tuple[str, ...]
) -> None:
    root = kept_projects["control"]
    out, err, code, kept = loop.run(root, *report)
    assert kept
    assert (out, err, code) == loop.fresh(root, *report)


@pytest.mark.slow  # real processes in a dozen projects, after a 2 s wait
@pytest.mark.parametrize("change", CHANGES)
def test_a_changed_input_is_never_answered_from_the_memo(
    loop: Loop, kept_projects: dict[str, Path], change: str
) -> None:
    root = kept_projects[change]
    before = {report: loop.run(root, *report)[:3] for report in REPORTS}
    CHANGES[change](root)
    differs = 0
    for report in REPORTS:
        # A report that did not read the changed file may be kept; none may be stale.
        out, err, code, _kept = loop.run(root, *report)
        assert (out, err, code) == loop.fresh(root, *report), report
        differs += (out, err, code) != before[report]
    assert differs, f"{change} changed no report: the scenario tests nothing"


@pytest.mark.slow  # real processes in a dozen projects, after a 2 s wait
def test_another_environment_or_folder_is_another_question(
    loop: Loop, kept_projects: dict[str, Path]
) -> None:
    root = kept_projects["env"]
    assert loop.run(root, "next", "7", "--json")[3]
    assert not loop.run(root, "next", "7", "--json", LOOP_SESSION_ID="s-2")[3]
    sub = kept_projects["cwd"] / ITEM_DIR
    out, err, code, kept = loop.run(kept_projects["cwd"], "status", "7", cwd=sub)
    assert not kept
    assert (out, err, code) == loop.fresh(kept_projects["cwd"], "status", "7", cwd=sub)


@pytest.mark.slow  # real processes in a dozen projects, after a 2 s wait
def test_no_cache_switches_kept_answers_off(loop: Loop, kept_projects: dict[str, Path]) -> None:
    root = kept_projects["env"]
    assert loop.run(root, "check", "7")[3]
    assert not loop.run(root, "--no-cache", "check", "7")[3]
    assert not loop.run(root, "check", "7", LOOP_NO_CACHE="1")[3]


@pytest.mark.slow  # real processes in a dozen projects, after a 2 s wait
def test_an_input_changed_moments_ago_is_not_trusted(
    loop: Loop, kept_projects: dict[str, Path]
) -> None:
    root = kept_projects["racy"]
    _hand_tick(root)
    for _ in range(2):  # within the racy window: computed both times, kept neither
        out, err, code, kept = loop.run(root, "next", "7", "--json")
        assert not kept
        assert (out, err, code) == loop.fresh(root, "next", "7", "--json")


@pytest.mark.slow  # real processes in a dozen projects, after a 2 s wait
def test_the_memo_names_loops_modules_and_the_project_files_it_read(
    kept_projects: dict[str, Path],
) -> None:
    folder = kept_projects["control"] / ".the-loop/state/cache/answers"
    inputs: set[str] = set()
    for kept in folder.glob("*.answer"):
        inputs.update(path for path, _sig in marshal.loads(kept.read_bytes())[2])
    root = kept_projects["control"].resolve()
    package = Path(answer_memo.__file__).resolve().parent.parent
    assert str(root / TASKS) in inputs
    assert str(root / ".the-loop/config.yaml") in inputs
    assert str(root / ".the-loop/harness-config.yaml") in inputs  # absent, and must stay so
    assert str(package / "workflow/item_report.py") in inputs
    assert not any("/cache/" in path and path.startswith(str(root)) for path in inputs)


# ------------------------------------------------------------- what is never kept


@pytest.fixture
def memo(tmp_path: Path) -> Iterator[Memo]:
    (tmp_path / ".the-loop").mkdir()
    found = Memo.find(["status", "--all"], str(tmp_path))
    assert found is not None
    yield found


ANSWER = ("out\n", "", "", 0)


def _kept(memo: Memo, answer: Callable[[], object]) -> bool:
    def compute() -> tuple[str, str, str, int]:
        answer()
        return ANSWER

    assert memo.compute(compute) == ANSWER
    return memo.load() == ANSWER


def test_an_answer_that_looked_at_nothing_new_is_kept(memo: Memo) -> None:
    assert _kept(memo, lambda: None)


def test_an_answer_that_wrote_a_file_is_not_kept(memo: Memo, tmp_path: Path) -> None:
    assert not _kept(memo, lambda: (tmp_path / "note.txt").write_text("x"))


def test_an_answer_that_ran_a_process_is_not_kept(memo: Memo, tmp_path: Path) -> None:
    assert not _kept(memo, lambda: subprocess.run(["git", "--version"], capture_output=True))


def test_an_answer_that_ran_git_log_without_reading_head_is_not_kept(
    memo: Memo, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    log = ["git", "-C", str(tmp_path), "log", "HEAD"]
    assert not _kept(memo, lambda: subprocess.run(log, capture_output=True))


def test_an_answer_that_read_the_clock_is_not_kept(memo: Memo) -> None:
    from the_loop.io import clock

    assert not _kept(memo, clock.utc_now)


def test_an_answer_that_read_a_fresh_file_is_not_kept(memo: Memo, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.md"
    fresh.write_text("just written\n")
    assert not _kept(memo, fresh.read_text)


def test_reading_loops_own_cache_does_not_make_it_an_input(memo: Memo, tmp_path: Path) -> None:
    cache = tmp_path / ".the-loop/state/cache"
    cache.mkdir(parents=True)
    (cache / "x.entry").write_bytes(b"value")
    assert _kept(memo, (cache / "x.entry").read_bytes)


def test_a_damaged_memo_is_a_miss(memo: Memo) -> None:
    assert _kept(memo, lambda: None)
    Path(memo.path).write_bytes(b"\x00garbage")
    assert memo.load() is None
    Path(memo.path).write_bytes(marshal.dumps((answer_memo.FORMAT, "another key", (), *ANSWER)))
    assert memo.load() is None
