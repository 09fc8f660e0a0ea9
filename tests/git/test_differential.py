"""Loop's git layer against git itself, in every repository layout it meets.

For each layout (packed refs, a symbolic or detached HEAD, an unborn branch, a
linked worktree, ``GIT_DIR``/``GIT_WORK_TREE``, a hook's environment, a ``.git``
file) the same questions go to loop's git layer and to the real git in the same
folder with the same environment: HEAD's commit, the branch, the git dir, the
common dir, the top of the working tree, the index file, who the author and
committer are, and which commits carry a checkpoint. They must agree. Then end
to end: packing the refs and running in a linked worktree change nothing in
``loop task done``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.project import NEXT, commits, project_copy, run

from the_loop.git.head import read_head
from the_loop.git.history import checkpoint_commits, find_checkpoint_commit
from the_loop.git.identity import identity
from the_loop.git.opening import find_repo_root, git_dirs


def real_git(cwd: Path, env: Mapping[str, str], *args: str, ok: tuple[int, ...] = (0,)) -> str:
    """The real git's stdout, run with the environment loop sees."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True
    )
    assert done.returncode in ok, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def commit(cwd: Path, message: str, env: Mapping[str, str] | None = None) -> None:
    real_git(cwd, env or {}, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message)


def checkpoint(cwd: Path, ident: str, env: Mapping[str, str] | None = None) -> None:
    commit(cwd, f"chore(issue-1): checkpoint {ident}\n\nLoop-Checkpoint: {ident}\n", env)


def history(cwd: Path) -> None:
    """Two checkpoints, a plain commit between and after them."""
    commit(cwd, "start")
    checkpoint(cwd, "ck-1")
    commit(cwd, "between\n\nsome prose: not a trailer block\n")
    checkpoint(cwd, "ck-2")
    commit(cwd, "after")


@dataclass(frozen=True)
class Layout:
    """A repository laid out one way: where loop runs, and the environment it runs with."""

    work: Path
    env: Mapping[str, str]


def plain(tmp: Path) -> Layout:
    work = tmp / "plain"
    real_git(tmp, {}, "init", "-q", "-b", "main", str(work))
    history(work)
    return Layout(work, {})


def packed(tmp: Path) -> Layout:
    layout = plain(tmp)
    real_git(layout.work, {}, "branch", "side", "HEAD~2")
    real_git(layout.work, {}, "pack-refs", "--all")
    assert not (layout.work / ".git/refs/heads/main").exists()  # only packed-refs knows it
    return layout


def packed_then_moved(tmp: Path) -> Layout:
    """A packed branch that moved on: its loose ref is newer than its packed line."""
    layout = packed(tmp)
    commit(layout.work, "after packing")
    assert (layout.work / ".git/refs/heads/main").exists()
    return layout


def symbolic_elsewhere(tmp: Path) -> Layout:
    """HEAD names a packed branch other than the one the repository started on."""
    layout = packed(tmp)
    real_git(layout.work, {}, "symbolic-ref", "HEAD", "refs/heads/side")
    return layout


def detached(tmp: Path) -> Layout:
    layout = packed(tmp)
    real_git(layout.work, {}, "checkout", "-q", "--detach", "HEAD~1")
    return layout


def unborn(tmp: Path) -> Layout:
    work = tmp / "unborn"
    real_git(tmp, {}, "init", "-q", "-b", "trunk", str(work))
    return Layout(work, {})


def unborn_after_packing(tmp: Path) -> Layout:
    """HEAD on a branch with no commit yet, while other branches live in packed-refs."""
    layout = packed(tmp)
    real_git(layout.work, {}, "checkout", "-q", "--orphan", "fresh")
    return layout


def linked_worktree(tmp: Path) -> Layout:
    main = packed(tmp).work
    work = tmp / "linked"
    real_git(main, {}, "worktree", "add", "-q", "-b", "lane", str(work), "HEAD~1")
    checkpoint(work, "ck-lane")
    return Layout(work, {})


def linked_worktree_subfolder(tmp: Path) -> Layout:
    layout = linked_worktree(tmp)
    sub = layout.work / "a" / "b"
    sub.mkdir(parents=True)
    return Layout(sub, {})


def git_dir_and_work_tree(tmp: Path) -> Layout:
    """The repository's files moved away from its tree, found through the environment."""
    source = packed(tmp).work
    store = tmp / "store" / "repo.git"
    store.parent.mkdir()
    shutil.move(source / ".git", store)
    tree = tmp / "tree"
    source.rename(tree)
    return Layout(tree, {"GIT_DIR": str(store), "GIT_WORK_TREE": str(tree)})


def hook_in_a_linked_worktree(tmp: Path) -> Layout:
    """What git hands a hook it runs in a linked worktree: GIT_DIR, GIT_INDEX_FILE, no tree."""
    work = linked_worktree(tmp).work
    admin = Path(real_git(work, {}, "rev-parse", "--absolute-git-dir").strip())
    return Layout(work, {"GIT_DIR": str(admin), "GIT_INDEX_FILE": str(admin / "index")})


def git_file(tmp: Path) -> Layout:
    """A ``.git`` file pointing at the git dir (``git init --separate-git-dir``)."""
    work = tmp / "separate"
    store = tmp / "separate-store"
    real_git(tmp, {}, "init", "-q", "-b", "main", f"--separate-git-dir={store}", str(work))
    history(work)
    real_git(work, {}, "pack-refs", "--all")
    assert (work / ".git").is_file()
    return Layout(work, {})


def git_file_relative(tmp: Path) -> Layout:
    """A ``.git`` file whose ``gitdir:`` is relative to the working tree."""
    layout = git_file(tmp)
    (layout.work / ".git").write_text("gitdir: ../separate-store\n")
    return layout


LAYOUTS: dict[str, Callable[[Path], Layout]] = {
    f.__name__: f
    for f in (
        plain,
        packed,
        packed_then_moved,
        symbolic_elsewhere,
        detached,
        unborn,
        unborn_after_packing,
        linked_worktree,
        linked_worktree_subfolder,
        git_dir_and_work_tree,
        hook_in_a_linked_worktree,
        git_file,
        git_file_relative,
    )
}


@pytest.fixture(params=sorted(LAYOUTS))
def layout(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Layout]:
    built = LAYOUTS[request.param](tmp_path)
    for key, value in built.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(built.work)  # git with GIT_DIR runs where it is started
    yield built


def git_says(layout: Layout) -> dict[str, object]:
    """What the real git answers in the layout."""
    work, env = layout.work, layout.env

    def ask(*args: str, ok: tuple[int, ...] = (0,)) -> str:
        return real_git(work, env, *args, ok=ok).strip()

    sha = ask("rev-parse", "-q", "--verify", "HEAD^{commit}", ok=(0, 1)) or None
    found: dict[str, str] = {}
    if sha is not None:
        listing = ask("log", "--format=%H %(trailers:key=Loop-Checkpoint,valueonly,separator=%x20)")
        for line in listing.splitlines():
            commit_sha, _, ids = line.partition(" ")
            for ident in ids.split():
                found.setdefault(ident, commit_sha)
    return {
        "sha": sha,
        "branch": ask("symbolic-ref", "-q", "--short", "HEAD", ok=(0, 1)) or None,
        "git_dir": Path(ask("rev-parse", "--absolute-git-dir")).resolve(),
        "common_dir": (work / ask("rev-parse", "--git-common-dir")).resolve(),
        "top": Path(ask("rev-parse", "--show-toplevel")).resolve(),
        "index": (work / ask("rev-parse", "--git-path", "index")).resolve(),
        "author": _ident(ask("var", "GIT_AUTHOR_IDENT")),
        "committer": _ident(ask("var", "GIT_COMMITTER_IDENT")),
        "checkpoints": found,
    }


def loop_says(layout: Layout) -> dict[str, object]:
    """What loop's git layer answers in the layout."""
    dirs = git_dirs(layout.work)
    head = read_head(dirs)
    ident = identity(layout.work)
    return {
        "sha": head.sha,
        "branch": head.branch,
        "git_dir": dirs.git_dir,
        "common_dir": dirs.common_dir,
        "top": find_repo_root(layout.work),
        "index": dirs.index.resolve(),
        "author": ident,
        "committer": ident,  # the layouts use one identity for both roles
        "checkpoints": checkpoint_commits(layout.work) or {},
    }


def _ident(line: str) -> tuple[str, str]:
    match = re.match(r"^(.*) <([^<>]*)> \d+ [+-]\d{4}$", line)
    assert match, line
    return match[1], match[2]


def test_loop_and_git_agree(layout: Layout) -> None:
    assert loop_says(layout) == git_says(layout)


def test_the_newest_checkpoint_is_found_by_its_trailer(layout: Layout) -> None:
    expected = git_says(layout)["checkpoints"]
    assert isinstance(expected, dict)
    for ident, sha in expected.items():
        assert find_checkpoint_commit(layout.work, "Loop-Checkpoint", ident) == sha
    assert find_checkpoint_commit(layout.work, "Loop-Checkpoint", "ck-none") is None


# --------------------------------------------------------------------------- identity


IDENTITIES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    # name: (repository config, environment)
    "global": ({}, {}),
    "repository wins": ({"user.name": "Repo Person", "user.email": "repo@example.invalid"}, {}),
    "author.* wins over user.*": (
        {"author.name": "Auth Only", "author.email": "auth@example.invalid"},
        {},
    ),
    "environment wins": ({}, {"GIT_AUTHOR_NAME": "Env Person", "GIT_AUTHOR_EMAIL": "e@x.invalid"}),
    "committer from the environment": ({}, {"GIT_COMMITTER_NAME": "Com Person"}),
    "a number-like name": ({"user.name": "1e3"}, {}),
    "an empty email": ({}, {"GIT_AUTHOR_EMAIL": ""}),
    "git -c from a hook or alias": ({}, {"GIT_CONFIG_PARAMETERS": "'user.name'='Dash C'"}),
    "a trailing dot is crud to git": ({"user.name": "Dot Person."}, {}),
}


@pytest.mark.parametrize("case", sorted(IDENTITIES))
def test_identity_agrees_with_git_var(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, env = IDENTITIES[case]
    work = plain(tmp_path).work
    for key, value in config.items():
        real_git(work, {}, "config", key, value)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    expected = _ident(
        real_git(work, {}, "-c", "user.useConfigOnly=true", "var", "GIT_AUTHOR_IDENT")
    )
    real_git(work, {}, "-c", "user.useConfigOnly=true", "var", "GIT_COMMITTER_IDENT")
    found, calls = git_calls_during(lambda: identity(work), tmp_path, monkeypatch)

    assert found == expected
    asked_git = case in ("git -c from a hook or alias", "a trailing dot is crud to git")
    assert bool(calls) == asked_git, calls  # git answers only what the files cannot settle


def _global_elsewhere(work: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = home / "other-gitconfig"
    other.write_text("[user]\n\tname = Other Global\n\temail = other@example.invalid\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(other))


def _xdg_below_home_file(work: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git reads $XDG_CONFIG_HOME/git/config, then ~/.gitconfig (which wins)."""
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    xdg = home / ".config" / "git" / "config"
    xdg.parent.mkdir(parents=True)
    xdg.write_text("[user]\n\tname = Xdg Name\n\temail = xdg@example.invalid\n")
    (home / ".gitconfig").write_text("[user]\n\temail = home@example.invalid\n")


def _per_worktree(work: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_git(work, {}, "config", "extensions.worktreeConfig", "true")
    real_git(work, {}, "config", "--worktree", "user.name", "Tree Person")


def _system_file(work: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    system = home / "system-gitconfig"
    system.write_text("[author]\n\tname = System Author\n")
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM")
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(system))


CONFIG_FILES = {
    f.__name__.strip("_"): f
    for f in (_global_elsewhere, _xdg_below_home_file, _per_worktree, _system_file)
}


def git_calls_during(
    call: Callable[[], object], tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[object, list[str]]:
    """``call()``'s value and the git commands it started (a logging git first on PATH)."""
    real = shutil.which("git")
    assert real is not None
    wrap = tmp / "logging-git"
    wrap.mkdir()
    log = tmp / "git-calls.log"
    (wrap / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    (wrap / "git").chmod(0o755)
    with monkeypatch.context() as patch:
        patch.setenv("PATH", f"{wrap}{os.pathsep}{os.environ['PATH']}")
        value = call()
    calls = log.read_text().splitlines() if log.exists() else []
    return value, [c for c in calls if c != "version"]  # GitPython's own, on its first import


@pytest.mark.parametrize("case", sorted(CONFIG_FILES))
def test_identity_reads_the_config_files_git_reads(
    case: str, tmp_path: Path, hermetic_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = plain(tmp_path).work
    CONFIG_FILES[case](work, hermetic_env, monkeypatch)

    expected = _ident(
        real_git(work, {}, "-c", "user.useConfigOnly=true", "var", "GIT_AUTHOR_IDENT")
    )
    found, calls = git_calls_during(lambda: identity(work), tmp_path, monkeypatch)

    assert found == expected
    assert calls == []  # read from the files: no `git var`


def test_identity_through_an_include_for_this_folder(
    tmp_path: Path, hermetic_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = plain(tmp_path).work
    extra = tmp_path / "work-identity"
    extra.write_text("[user]\n\tname = Work Person\n\temail = work@example.invalid\n")
    with (hermetic_env / ".gitconfig").open("a") as handle:
        handle.write(f'[includeIf "gitdir:{work}/"]\n\tpath = {extra}\n')

    assert identity(work) == ("Work Person", "work@example.invalid")
    assert _ident(real_git(work, {}, "var", "GIT_AUTHOR_IDENT")) == identity(work)


# --------------------------------------------------------------------------- end to end

DONE_1 = ("task", "done", "7", "1", "--did", "wrote the config key", "--next", NEXT)
_VOLATILE = re.compile(r"\b(\d{8}T\d{6}Z-[0-9a-f]{6}|[0-9a-f]{7,40})\b")


def normalised(text: str) -> str:
    """Output with checkpoint ids and shas blanked: what must not differ between layouts."""
    return _VOLATILE.sub("<id>", text)


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hermetic_env: Path) -> Path:
    return project_copy(tmp_path_factory, tmp_path / "p")


def test_packed_refs_change_nothing_in_task_done(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "packed"
    shutil.copytree(project, other, symlinks=True)
    real_git(other, {}, "pack-refs", "--all")
    assert not (other / ".git/refs/heads/main").exists()

    loose, packed_run = run(project, *DONE_1), run(other, *DONE_1)

    assert (loose.exit_code, packed_run.exit_code) == (0, 0), packed_run.output
    assert normalised(packed_run.output) == normalised(loose.output)
    assert normalised(commits(other)[0]) == normalised(commits(project)[0])
    head = real_git(other, {}, "rev-parse", "HEAD").strip()
    assert real_git(other, {}, "rev-parse", "refs/heads/main").strip() == head  # branch moved
    assert real_git(other, {}, "status", "--porcelain") == ""


def test_a_linked_worktree_changes_nothing_in_task_done(project: Path, tmp_path: Path) -> None:
    plain_copy = tmp_path / "plain"
    shutil.copytree(project, plain_copy, symlinks=True)
    lane = tmp_path / "lane"
    real_git(project, {}, "pack-refs", "--all")
    real_git(project, {}, "worktree", "add", "-q", "-b", "lane", str(lane))
    main_before = real_git(project, {}, "rev-parse", "main").strip()
    index_before = (project / ".git/index").read_bytes()

    in_lane, in_plain = run(lane, *DONE_1), run(plain_copy, *DONE_1)

    assert (in_lane.exit_code, in_plain.exit_code) == (0, 0), in_lane.output
    assert normalised(in_lane.output) == normalised(in_plain.output)
    assert normalised(commits(lane)[0]) == normalised(commits(plain_copy)[0])
    lane_head = real_git(lane, {}, "rev-parse", "HEAD").strip()
    assert real_git(project, {}, "rev-parse", "lane").strip() == lane_head  # the lane's branch
    assert real_git(project, {}, "rev-parse", "main").strip() == main_before  # not main's
    assert (project / ".git/index").read_bytes() == index_before  # the main tree's index
    assert real_git(lane, {}, "status", "--porcelain") == ""
