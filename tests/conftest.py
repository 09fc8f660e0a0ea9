"""Shared fixtures: hermetic environment, real git repos, trees, the CLI runner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from helpers import Result, git, invoke, write_tree

from the_loop.io import content_cache


@pytest.fixture(autouse=True)
def hermetic_env(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Path:
    """Point HOME, XDG dirs and git's global config into a temp folder.

    Nothing a test does may read or write the developer's own configuration,
    and a developer's git config (hooks, signing) must not change a test.
    """
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Loop Tester\n\temail = tester@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n"
        "[commit]\n\tgpgsign = false\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in list(os.environ):
        # the harnesses' session variables too: a suite run from inside an agent session
        # must not tag every checkpoint with that session
        if key.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_", "LOOP_")) or key in (
            "CLAUDE_CODE_SESSION_ID",
            "CODEX_THREAD_ID",
            "CLAUDE_ENV_FILE",
            "CLAUDE_PROJECT_DIR",
        ):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    if request.node.get_closest_marker("campaign") is None:
        # No flush to disk (as git's own suite runs with GIT_TEST_FSYNC=0): the temp
        # disk is thrown away and no test can cut the power. The fault campaigns keep
        # every fsync, so each stays a point where a fault is injected.
        monkeypatch.setenv("LOOP_TEST_FSYNC", "0")
    # `--no-cache` switches the caches off for the rest of the process (one process is
    # one command). A test that ran the CLI in-process with it must not leave the next
    # test, in the same xdist worker, with caches that silently keep nothing.
    monkeypatch.setattr(content_cache, "_switched_off", False)
    return home


@pytest.fixture
def build_tree(tmp_path: Path) -> Callable[[Mapping[str, str]], Path]:
    """Write a tree of files into a fresh folder, declaratively."""

    def build(files: Mapping[str, str], root: Path | None = None) -> Path:
        return write_tree(root or tmp_path, files)

    return build


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A fresh git repository with one commit, on branch ``main``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# sample project\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial commit")
    return repo


@pytest.fixture
def loop(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Run the real ``loop`` CLI in-process: ``loop("status", "42", cwd=repo)``."""

    def run(
        *args: str,
        cwd: Path | None = None,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        return invoke(args, env=env, input=input)

    return run


@pytest.fixture
def loop_process() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m the_loop`` as a separate process (for crash and lock tests)."""

    def run(
        *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run(
            [sys.executable, "-m", "the_loop", *args],
            cwd=cwd,
            env=full_env,
            text=True,
            capture_output=True,
            timeout=timeout,
        )

    return run


def pytest_configure(config: pytest.Config) -> None:
    # pytest keeps the test modules it rewrote (for its assert messages) beside them
    # only when bytecode may be written; with PYTHONDONTWRITEBYTECODE set, each xdist
    # worker would rewrite all of them again on every run (~7 s each, here).
    sys.dont_write_bytecode = False
    # A shell that starts the suite in the background (`.ci/run &`) starts it with SIGINT
    # ignored, and an ignored signal stays ignored across exec: the loop processes the
    # Ctrl-C tests interrupt, and the fake model servers they stop, would never see their
    # SIGINT. A handler, unlike an ignore, is reset to the default at exec, so Python's
    # own handler here gives every child the default a terminal would have given.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile loop's modules once, as ``pip install`` does for an installed copy.

    The suite runs ``loop`` in thousands of child processes. An editable install
    has no bytecode, and with ``PYTHONDONTWRITEBYTECODE`` set (CI shells often set
    it) every child would compile all of loop's modules again (~70 ms each). Only
    the controlling process compiles; xdist's workers find the files written.
    """
    if hasattr(session.config, "workerinput"):
        return
    import compileall

    import the_loop

    compileall.compile_dir(Path(the_loop.__file__).parent, quiet=1)
