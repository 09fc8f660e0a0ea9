"""Everything loop does with git, and the only module that runs it (through GitPython).

The last step of a checkpoint commits the work in progress. That commit goes
through the real ``git commit`` (by way of GitPython), so the user's hooks,
identity, signing and config all apply; loop never bypasses a hook. A commit
that git refuses leaves nothing half-done: the index is put back byte for byte
as it was before loop staged anything (``the_loop.git.index`` keeps the bytes).
A checkpoint is refused outright while a merge, rebase or the like is half-way
(``the_loop.git.operations`` reads the markers). Both are plain file work that
never starts git; everything that does is here.

GitPython costs about a tenth of a second to import and loop is a CLI that
agents call very often, so it is imported lazily, inside the functions that
need it, and never on a path that can answer from the file system alone (no
repository at all). Every GitPython exception becomes a :class:`GitError`.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Literal

from the_loop.errors import GitError, Where
from the_loop.git.index import IndexSnapshot
from the_loop.git.operations import Operation, operation_in_progress, refuse_during

if TYPE_CHECKING:
    from git import Git, Repo

CommitStatus = Literal["committed", "nothing-to-commit", "not-a-repo"]

STAGES = ("all", "tracked", "paths")

IDENTITY_HINT = (
    'tell git who you are: `git config --global user.name "Your Name"` and '
    '`git config --global user.email "you@example.com"` '
    "(or set GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL)"
)
_INSTALL_HINT = "install git and make sure `git --version` works in this shell"
_IDENT = re.compile(r"^(?P<name>.*) <(?P<email>[^<>]*)> \d+ [+-]\d{4}$")
_TRAILER = re.compile(r"^(?P<key>[A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(?P<value>.*)$")
_MAX_DETAIL_LINES = 40  # hook output can be a whole test run; keep its tail


@dataclass(frozen=True)
class RepoStatus:
    """Where a repository stands, as far as a checkpoint cares.

    ``branch`` is ``None`` when HEAD is detached (or there is no repository);
    ``head`` is ``None`` until the first commit. ``dirty`` counts staged,
    unstaged and untracked (not ignored) changes.
    """

    is_repo: bool
    has_commits: bool = False
    branch: str | None = None
    detached: bool = False
    operation: Operation | None = None
    dirty: bool = False
    head: str | None = None


@dataclass(frozen=True)
class CommitOutcome:
    """What a checkpoint commit did.

    ``sha`` is the new commit, ``None`` unless ``status == "committed"``.
    ``warnings`` are sentences for the user (a commit on no branch, a path
    left out because git ignores it).
    """

    status: CommitStatus
    sha: str | None
    branch: str | None
    detached: bool
    warnings: tuple[str, ...] = ()


# --------------------------------------------------------------------------- queries


def find_repo_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds a ``.git``, else ``None``.

    ``.git`` may be a folder or a file (linked worktrees and submodules point
    to their git dir with a ``.git`` file). Pure path work: no git, no GitPython.
    """
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        # os.path.exists, unlike Path.exists, answers "no" for an unreadable folder
        if os.path.exists(folder / ".git"):
            return folder
    return None


def repo_status(root: Path) -> RepoStatus:
    """Branch, HEAD, operation in progress and dirtiness of the repository at ``root``.

    Outside a repository this answers ``is_repo=False`` without starting git.
    """
    top = find_repo_root(root)
    if top is None:
        return RepoStatus(is_repo=False)
    with _open_repo(top) as repo:
        # a status reader must not take index.lock from a command the user runs
        args = ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal"]
        out = _git(repo.git, top, args, options={"no_optional_locks": True}).out
        operation = operation_in_progress(Path(repo.git_dir))
    head, branch, dirty = _parse_status(out)
    return RepoStatus(
        is_repo=True,
        has_commits=head is not None,
        branch=branch,
        detached=branch is None,
        operation=operation,
        dirty=dirty,
        head=head,
    )


def identity(root: Path) -> tuple[str, str]:
    """The ``(name, email)`` git would record as the author of a commit made in ``root``.

    Resolved by git itself (``git var``), so ``GIT_AUTHOR_*`` variables, the
    repository's and the global config all count. Guessing from the user and
    host name is switched off: a checkpoint recorded as ``root@container`` is
    worse than a clear error. The committer is checked too; a commit needs both.
    """
    folder = Path(root)
    if not folder.is_dir():
        # GitPython would quietly run git in the current folder instead
        raise GitError("cannot ask git who you are: no such folder", where=Where(folder))
    cmd = _gitpython().Git(str(folder))
    author = _ident(cmd, folder, "author")
    _ident(cmd, folder, "committer")
    return author


def head_sha(root: Path) -> str | None:
    """The full sha of HEAD, or ``None`` before the first commit or outside a repository."""
    top = find_repo_root(root)
    if top is None:
        return None
    with _open_repo(top) as repo:
        return _head(repo.git, top)


def is_ignored(root: Path, path: Path) -> bool:
    """Whether git ignores ``path`` (relative to ``root``, or absolute).

    A tracked file is never ignored, whatever ``.gitignore`` says: git keeps
    committing its changes. Outside a repository nothing is ignored.
    """
    top = find_repo_root(root)
    if top is None:
        return False
    with _open_repo(top) as repo:
        return bool(_ignored(repo.git, top, [_repo_relative(top, Path(root), Path(path))]))


def commit_message(root: Path, sha: str) -> str:
    """The full message of commit ``sha``, exactly as stored (re-encoded to UTF-8)."""
    top = find_repo_root(root)
    if top is None:
        raise GitError(
            "not a git repository (nor any parent folder)",
            where=Where(Path(root)),
            hint="run `git init` there, or point loop at the project with --repo",
        )
    with _open_repo(top) as repo:
        # %B is the raw message; the newline git adds after the format is the
        # one GitPython strips, so what remains is the message byte for byte
        args = ["log", "-1", "--no-show-signature", "--format=%B", f"{sha}^{{commit}}", "--"]
        return _git(
            repo.git,
            top,
            args,
            failure=f"no commit {sha!r} in this repository",
            hint="check the sha (`git log --oneline` lists recent commits)",
        ).out


def trailers(root: Path, sha: str) -> dict[str, str]:
    """The trailers of commit ``sha`` (:func:`parse_trailers`); a repeated key's last value wins."""
    return dict(parse_trailers(commit_message(root, sha)))


def parse_trailers(message: str) -> list[tuple[str, str]]:
    """The ``(key, value)`` trailers ending a commit message, in order.

    The trailer block is the last paragraph, never the subject's, and each of
    its lines must be a ``Key: value`` trailer, an indented continuation
    (folded into the value before it), a ``#`` comment or git's
    ``(cherry picked from commit …)`` note; else there are no trailers. That is
    git's rule without its allowance for prose beside well-known trailers,
    which loop's own messages never need.
    """
    lines = message.strip().splitlines()
    blanks = [i for i, line in enumerate(lines) if not line.strip()]
    if not blanks:
        return []  # a single paragraph is the subject
    pairs: list[tuple[str, str]] = []
    for line in lines[blanks[-1] + 1 :]:
        if line[:1] in (" ", "\t") and pairs:
            key, value = pairs[-1]
            pairs[-1] = (key, f"{value} {line.strip()}")
        elif match := _TRAILER.match(line):
            pairs.append((match["key"], match["value"].strip()))
        elif not line.startswith(("#", "(cherry picked from commit ")):
            return []
    return pairs


def find_checkpoint_commit(
    root: Path, trailer: str, value: str, *, max_count: int = 50
) -> str | None:
    """The newest of the last ``max_count`` commits on HEAD with the trailer ``trailer: value``.

    The key matches case-insensitively, as git's trailer keys do; the value
    exactly, so ``ck-1`` does not find ``ck-10``. ``None`` when there is no
    such commit, no commit at all or no repository: the commit of an
    interrupted checkpoint has not happened yet.
    """
    top = find_repo_root(root)
    if top is None or max_count < 1:
        return None
    with _open_repo(top) as repo:
        if _head(repo.git, top) is None:
            return None
        args = ["log", "-z", f"-n{max_count}", "--no-show-signature", "--format=%H%n%B", "HEAD"]
        out = _git(repo.git, top, [*args, "--"]).out
    key, value = trailer.lower(), value.strip()
    for entry in filter(None, out.split("\0")):
        sha, _, message = entry.partition("\n")
        if any((k.lower(), v) == (key, value) for k, v in parse_trailers(message)):
            return sha
    return None


# --------------------------------------------------------------------------- commit


def commit_checkpoint(
    root: Path, *, message: str, stage: str = "all", paths: Sequence[Path] = ()
) -> CommitOutcome:
    """Stage the work in progress and commit it with ``message``.

    ``stage`` says what to stage: ``"all"`` is ``git add -A`` (tracked and
    untracked files, .gitignore respected; ``paths`` is not needed),
    ``"tracked"`` is ``git add -u`` plus ``paths``, ``"paths"`` only ``paths``.
    ``paths`` are relative to ``root`` or absolute; one git ignores is left out
    with a warning. What the user had staged already is part of the commit.
    The message is committed verbatim (trailers, ``#`` lines and all), with a
    final newline added when missing.

    Outside a repository this returns ``status="not-a-repo"``. It raises
    :class:`GitError` without touching the index when a merge, rebase,
    cherry-pick, revert or ``git am`` is in progress or git does not know who
    the user is; and, after putting the index back exactly as it was, when
    ``git add`` or ``git commit`` fails (a hook, signing).
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, not {stage!r}")
    if not message.strip() or "\0" in message:
        raise ValueError("a checkpoint commit needs a non-empty message without NUL characters")
    text = message if message.endswith("\n") else message + "\n"
    top = find_repo_root(root)
    if top is None:
        return CommitOutcome(status="not-a-repo", sha=None, branch=None, detached=False)
    with _open_repo(top) as repo:
        operation = operation_in_progress(Path(repo.git_dir))
        refuse_during(operation, top)
        _ident(repo.git, top, "author")
        _ident(repo.git, top, "committer")
        outcome = _stage_and_commit(repo.git, top, Path(root), text, stage, paths)
    if outcome.sha is not None and operation == "bisect":
        warning = (
            "a bisect is in progress: the checkpoint commit sits on the commit under test "
            "and is not part of the bisect; keep it on a branch before `git bisect reset`"
        )
        outcome = replace(outcome, warnings=(*outcome.warnings, warning))
    return outcome


def _stage_and_commit(
    cmd: Git, top: Path, root: Path, text: str, stage: str, paths: Sequence[Path]
) -> CommitOutcome:
    """The transaction: snapshot the index, stage, commit; roll back on any failure."""
    head_before = _head(cmd, top)
    branch = _branch(cmd, top)
    snapshot = IndexSnapshot.take(top / _git(cmd, top, ["rev-parse", "--git-path", "index"]).out)
    try:
        warnings = _stage(cmd, top, root, stage, paths)
        # 1 means "differs"; before the first commit git compares with the empty tree
        if _git(cmd, top, ["diff", "--cached", "--quiet"], ok=(0, 1)).status == 0:
            return CommitOutcome("nothing-to-commit", None, branch, branch is None, warnings)
        _commit(cmd, top, text)
    except BaseException:
        # Ctrl-C included: whatever stopped us, the user's staging area comes back
        _roll_back(cmd, top, head_before, snapshot)
        raise
    sha = _head(cmd, top)
    assert sha is not None  # git commit succeeded, so HEAD names a commit
    if branch is None:
        warnings += (
            f"HEAD is detached: checkpoint commit {sha[:12]} is on no branch; "
            "keep it with `git switch -c <name>` before checking out anything else",
        )
    return CommitOutcome("committed", sha, branch, branch is None, warnings)


def _stage(cmd: Git, top: Path, root: Path, stage: str, paths: Sequence[Path]) -> tuple[str, ...]:
    """Stage as ``stage`` says; return warnings about paths left out."""
    hint = "see git's message above; nothing was committed"
    if stage == "all":
        # without a pathspec, -A covers the whole working tree wherever git runs
        _git(cmd, top, ["add", "-A"], hint=hint)
        return ()
    if stage == "tracked":
        _git(cmd, top, ["add", "-u"], hint=hint)
    specs = [_repo_relative(top, root, Path(p)) for p in paths]
    ignored = set(_ignored(cmd, top, specs))
    if wanted := [spec for spec in specs if spec not in ignored]:
        # literal pathspecs: a file named "a*.md" means that file, not a glob
        _git(cmd, top, ["add", "--", *wanted], options={"literal_pathspecs": True}, hint=hint)
    return tuple(
        f"{spec} was not committed: git ignores it (.gitignore or .git/info/exclude)"
        for spec in specs
        if spec in ignored
    )


def _commit(cmd: Git, top: Path, text: str) -> None:
    """Run ``git commit`` on the index; raise with git's (and the hooks') output on failure."""
    # The message goes in on stdin rather than through -m (argv limits, git's
    # paragraph handling); --cleanup=verbatim keeps every byte whatever the
    # user's commit.cleanup says. GitPython runs git with LC_ALL=C; an empty
    # LC_ALL / LANGUAGE counts as unset, which gives hooks their locale back.
    _git(
        cmd,
        top,
        ["commit", "--quiet", "--cleanup=verbatim", "--file=-"],
        stdin=text.encode("utf-8"),
        env={key: os.environ.get(key, "") for key in ("LC_ALL", "LANGUAGE")},
        failure="git commit failed, so nothing was committed and the index is as it was "
        "before the checkpoint",
        hint="a hook or commit signing refused the commit; fix what it reports "
        "and checkpoint again (loop never skips hooks)",
    )


def _roll_back(cmd: Git, top: Path, head_before: str | None, snapshot: IndexSnapshot) -> None:
    """Put the index back as it was, unless the commit happened after all."""
    if _head(cmd, top) != head_before:
        return  # interrupted after git committed: the index belongs to that commit now
    try:
        snapshot.restore()
    except OSError as e:
        raise GitError(
            "the checkpoint failed, and loop could not put the index back",
            where=Where(snapshot.path),
            details=(str(e),),
            hint=snapshot.recovery_hint(),
        ) from e


# --------------------------------------------------------------------------- running git


@dataclass(frozen=True)
class _Ran:
    """A finished git command: exit status and decoded output."""

    status: int
    out: str
    err: str


def _gitpython() -> ModuleType:
    """Import GitPython on first use (about 0.1 s that most commands never pay)."""
    try:
        import git
    except ImportError as e:  # GitPython raises this too when it cannot run git
        raise GitError(f"cannot use git: {e}", hint=_INSTALL_HINT) from e
    return git


@contextmanager
def _open_repo(top: Path) -> Iterator[Repo]:
    """Open the repository at ``top``, turning GitPython's errors into ours."""
    git = _gitpython()
    try:
        repo = git.Repo(str(top))
    except (git.exc.GitError, OSError) as e:
        raise GitError(
            "found .git here, but git cannot open it as a repository",
            where=Where(top),
            details=(f"{type(e).__name__}: {e}",),
            hint="run `git status` there; a broken .git needs repairing or removing",
        ) from e
    try:
        yield repo
    finally:
        repo.close()


def _git(
    cmd: Git,
    top: Path,
    args: Sequence[str],
    *,
    ok: tuple[int, ...] | None = (0,),
    options: Mapping[str, object] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    failure: str | None = None,
    hint: str | None = None,
) -> _Ran:
    """Run ``git [options] args`` through GitPython.

    An exit status outside ``ok`` (``None``: any status is fine) is a
    :class:`GitError` saying ``failure`` (or which command failed) with git's
    output as details; so is any GitPython exception.
    """
    git = _gitpython()
    try:
        with _stdin_file(stdin) as handle:
            if options:
                cmd = cmd(**options)  # options before the subcommand, for the next call only
            status, out, err = getattr(cmd, args[0].replace("-", "_"))(
                *args[1:], with_extended_output=True, with_exceptions=False, env=env, istream=handle
            )
    except git.exc.GitCommandNotFound as e:
        raise GitError("git could not be started", details=(str(e),), hint=_INSTALL_HINT) from e
    except (git.exc.GitError, OSError) as e:
        raise GitError(f"git {args[0]} could not run", where=Where(top), details=(str(e),)) from e
    ran = _Ran(status, out, err)
    if ok is not None and status not in ok:
        what = failure or f"`git {' '.join(args)}` failed"
        raise GitError(
            f"{what} (exit {status})", where=Where(top), details=_output_lines(ran), hint=hint
        )
    return ran


@contextmanager
def _stdin_file(data: bytes | None) -> Iterator[IO[bytes] | None]:
    """``data`` in an anonymous temporary file: GitPython's stdin must be a real file."""
    if data is None:
        yield None
        return
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.seek(0)
        yield handle


def _output_lines(ran: _Ran) -> tuple[str, ...]:
    """Git's (and its hooks') output as detail lines; the tail when it is long."""
    lines = [line.rstrip() for line in (ran.err + "\n" + ran.out).splitlines() if line.strip()]
    if len(lines) <= _MAX_DETAIL_LINES:
        return tuple(lines)
    dropped = len(lines) - _MAX_DETAIL_LINES
    return (f"… {dropped} earlier lines not shown", *lines[-_MAX_DETAIL_LINES:])


def _parse_status(out: str) -> tuple[str | None, str | None, bool]:
    """``(head, branch, dirty)`` from ``git status --porcelain=v2 --branch -z``."""
    head: str | None = None
    branch: str | None = None
    dirty = False
    for record in filter(None, out.split("\0")):
        if record.startswith("# branch.oid "):
            oid = record.removeprefix("# branch.oid ")
            head = None if oid == "(initial)" else oid
        elif record.startswith("# branch.head "):
            name = record.removeprefix("# branch.head ")
            branch = None if name == "(detached)" else name
        elif not record.startswith("# "):
            dirty = True  # any entry: changed, unmerged or untracked
    return head, branch, dirty


def _head(cmd: Git, top: Path) -> str | None:
    """HEAD's sha; ``None`` before the first commit."""
    ran = _git(cmd, top, ["rev-parse", "--verify", "--quiet", "HEAD"], ok=(0, 1))
    return ran.out.strip() if ran.status == 0 else None


def _branch(cmd: Git, top: Path) -> str | None:
    """The branch HEAD is on, with or without commits; ``None`` when detached."""
    ran = _git(cmd, top, ["symbolic-ref", "--quiet", "HEAD"], ok=(0, 1))
    return ran.out.strip().removeprefix("refs/heads/") if ran.status == 0 else None


def _ident(cmd: Git, top: Path, role: Literal["author", "committer"]) -> tuple[str, str]:
    """``(name, email)`` for ``role`` as ``git var`` resolves it, without guessing."""
    args = ["var", f"GIT_{role.upper()}_IDENT"]
    ran = _git(cmd, top, args, ok=None, options={"c": "user.useConfigOnly=true"})
    match = _IDENT.match(ran.out.strip()) if ran.status == 0 else None
    if match is None:
        raise GitError(
            f"git does not know who you are, so it cannot record a commit {role}",
            where=Where(top),
            details=tuple(line for line in _output_lines(ran) if line.startswith("fatal:")),
            hint=IDENTITY_HINT,
        )
    return match["name"], match["email"]


def _ignored(cmd: Git, top: Path, specs: Sequence[str]) -> list[str]:
    """Which of ``specs`` (repository-relative) git ignores; tracked files never are."""
    if not specs:
        return []
    # -z needs --stdin, and only -z output never quotes unusual names
    stdin = "".join(f"{spec}\0" for spec in specs).encode("utf-8")
    ran = _git(cmd, top, ["check-ignore", "-z", "--stdin"], ok=(0, 1), stdin=stdin)
    return [spec for spec in ran.out.split("\0") if spec]


def _repo_relative(top: Path, root: Path, path: Path) -> str:
    """``path`` (absolute, or relative to ``root``) as a repository-relative POSIX path."""
    absolute = Path(os.path.abspath(root.resolve() / path))
    # as given, then with its folder's symlinks resolved (/tmp → /private/tmp);
    # never the last part: a symlink in the repository is committed as a link
    for candidate in (absolute, absolute.parent.resolve() / absolute.name):
        if candidate.is_relative_to(top):
            return candidate.relative_to(top).as_posix()
    raise GitError(
        "path is outside the repository, so a checkpoint cannot commit it",
        where=Where(path),
        hint=f"pass paths inside {top}",
    )
