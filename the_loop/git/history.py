"""Loop's questions to the history: which commits carry a checkpoint, and their messages.

The commits are walked in Python through GitPython's object model, newest first
(by committer date, as ``git log`` lists them), and their messages matched
here: no ``--grep`` whose pattern syntax the user's ``grep.patternType``
decides, no ``log`` formatting the user's config changes, and never through
replace refs. A task's checkpoint names its commit by the ``Loop-Checkpoint``
trailer; a rebase that keeps the messages keeps the trailers, so the id is
looked for, not the sha; a squash folds the messages into one, so a
``Loop-Checkpoint:`` line anywhere in a message counts, not only in its
trailer block.

A question about one file's history (the execution log's: every checkpoint
appends to it) asks git's own path-limited walk which commits changed the file,
``rev-list HEAD -- <path>``, and reads only those: the object model alone would
read every commit of a repository's history, tens of thousands in a long-lived
one, on every ``status``.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import GitError, Where
from the_loop.git.head import read_head
from the_loop.git.opening import find_repo_root, git_dirs, repo_relative

if TYPE_CHECKING:
    import git

_LINE = re.compile(r"^Loop-Checkpoint:[ \t]*(?P<id>\S+)[ \t]*$", re.MULTILINE | re.IGNORECASE)
_TRAILER = re.compile(r"^(?P<key>[A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(?P<value>.*)$")


def checkpoint_commits(
    root: Path, wanted: Collection[str] | None = None, *, log: Path | None = None
) -> dict[str, str] | None:
    """``{checkpoint id: sha}`` for the commits on HEAD naming a checkpoint.

    ``None`` when there is no repository (nothing can be looked up); ``{}``
    before the first commit. When a checkpoint id appears in several commits
    (a cherry-pick), the newest wins. With ``wanted``, the walk stops once
    every id in it is found (the rest of the history is not read). With
    ``log`` (an item's execution log), only the commits that changed it are
    read: a checkpoint commit always does.
    """
    top = find_repo_root(root)
    if top is None:
        return None
    found: dict[str, str] = {}
    missing = set(wanted) if wanted is not None else None
    commits = _walk(top) if log is None else _changed_by(top, repo_relative(top, root, log))
    for sha, message in commits:
        for match in _LINE.finditer(message):
            found.setdefault(match["id"], sha)
            if missing is not None:
                missing.discard(match["id"])
        if missing is not None and not missing:
            break
    return found


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
    key, value = trailer.lower(), value.strip()
    for count, (sha, message) in enumerate(_walk(top), start=1):
        if any((k.lower(), v) == (key, value) for k, v in parse_trailers(message)):
            return sha
        if count >= max_count:
            break
    return None


def commit_message(root: Path, sha: str) -> str:
    """The full message of commit ``sha``, exactly as stored (decoded as its encoding says)."""
    top = find_repo_root(root)
    if top is None:
        raise GitError(
            "not a git repository (nor any parent folder)",
            where=Where(Path(root)),
            hint="run `git init` there, or point loop at the project with --repo",
        )
    repo = git_dirs(top).repo
    # GitPython's error for a name that is no object (gitdb's, re-exported by git.exc)
    from git.exc import ODBError

    try:
        commit = repo.commit(sha)
        return _message(commit)
    except (ODBError, ValueError, OSError) as e:  # no such commit
        raise GitError(
            f"no commit {sha!r} in this repository",
            where=Where(top),
            details=(str(e),),
            hint="check the sha (`git log --oneline` lists recent commits)",
        ) from e


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
    which loop's own messages never need. (GitPython's ``Commit.trailers_list``
    would start ``git interpret-trailers`` for each message.)
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


def _walk(top: Path) -> Iterator[tuple[str, str]]:
    """``(sha, message)`` of every commit reachable from HEAD, newest first (:func:`_commits`)."""
    for sha, message, _commit in _commits(top):
        yield sha, message


# Shas per `rev-list`, growing: git stops walking once a page is full, and the
# answer is most often the newest change; 1000 shas (~41 KB) stay well inside what
# the runner keeps of stdout.
_PAGES = (4, 64, 1000)


def _changed_by(top: Path, spec: str) -> Iterator[tuple[str, str]]:
    """``(sha, message)`` of the commits on HEAD that changed ``spec``, newest first."""
    for sha, message, _commit in _changing(top, spec):
        yield sha, message


def _changing(top: Path, spec: str) -> Iterator[tuple[str, str, git.Commit]]:
    """``(sha, message, commit)`` of the commits on HEAD that changed ``spec``, newest first.

    git's path-limited walk names them (page by page, so no output is ever cut);
    GitPython reads each one. No commit yet (exit 128) or none changed it: nothing.
    """
    from the_loop.git.commands import run_git

    skip, page = 0, 0
    while True:
        size = _PAGES[min(page, len(_PAGES) - 1)]
        ran = run_git(
            top,
            ["rev-list", f"--max-count={size}", f"--skip={skip}", "HEAD", "--", spec],
            ok=(0, 128),
            global_options=("--literal-pathspecs",),  # a path, never a pattern
        )
        shas = ran.out.split() if ran.status == 0 else []
        if not shas:
            return
        # GitPython's object model: the commit class and its binary sha
        from git import Commit
        from git.util import hex_to_bin

        repo = git_dirs(top).repo
        for sha in shas:
            commit = Commit(repo, hex_to_bin(sha))
            yield sha, _message(commit), commit
        if len(shas) < size:
            return
        skip, page = skip + size, page + 1


def _commits(top: Path) -> Iterator[tuple[str, str, git.Commit]]:
    """``(sha, message, commit)`` of every commit reachable from HEAD, newest first.

    Newest by committer date, ties in the order met, as ``git log`` without
    options lists them. A parent that is not in the object store (the edge of
    a shallow clone) ends that line of history.
    """
    dirs = git_dirs(top)
    head = read_head(dirs).sha
    if head is None:
        return
    # GitPython's object model: the commit class and the error for a missing object
    from git import Commit
    from git.util import hex_to_bin

    repo = dirs.repo
    start = Commit(repo, hex_to_bin(head))
    date = _date(start)
    if date is None:
        return
    queue: list[tuple[int, int, str, git.Commit]] = [(-date, 0, head, start)]
    seen = {head}
    order = 1
    while queue:
        _, _, sha, commit = heapq.heappop(queue)
        yield sha, _message(commit), commit
        for parent in commit.parents:
            if parent.hexsha in seen:
                continue
            seen.add(parent.hexsha)
            parent_date = _date(parent)
            if parent_date is not None:
                heapq.heappush(queue, (-parent_date, order, parent.hexsha, parent))
                order += 1


def _date(commit: git.Commit) -> int | None:
    """The committer date, reading the commit; None when the object is not there."""
    try:
        return commit.committed_date
    except (ValueError, LookupError, OSError):  # BadObject: cut off (a shallow clone)
        return None


def _message(commit: git.Commit) -> str:
    message = commit.message
    return message if isinstance(message, str) else message.decode("utf-8", errors="replace")


def checkpoint_version(root: Path, path: Path) -> tuple[str, str] | None:
    """``(sha, text)`` of ``path`` in the newest checkpoint commit on HEAD that changed it.

    The text a checkpoint committed is the authority a later hand edit is
    compared with (issue 21). ``None`` without a repository, a commit, or a
    checkpoint commit of that file.
    """
    top = find_repo_root(root)
    if top is None:
        return None
    spec = repo_relative(top, root, path)
    for sha, message, commit in _changing(top, spec):
        if not _LINE.search(message):
            continue
        blob = _blob(commit, spec)
        if blob is None:
            continue  # the commit deleted the file
        data = blob.data_stream.read()
        return sha, data.decode("utf-8", errors="replace")
    return None


def task_files(root: Path, item: str, log: Path) -> dict[str, tuple[str, ...]] | None:
    """``{task id: files}`` each task checkpoint commit of ``item`` on HEAD changed.

    Read from git, not from what an agent remembers: the resume brief lists them
    so a fresh session knows where the finished work lives. Only the commits that
    changed the item's ``log`` are read (every checkpoint appends to it); they are
    matched by their ``Loop-Item`` and ``Loop-Task`` trailers (in Python, as every
    query here); the newest commit of a task comes first. ``None`` without a
    repository.
    """
    top = find_repo_root(root)
    if top is None:
        return None
    found: dict[str, list[str]] = {}
    for _sha, message, commit in _changing(top, repo_relative(top, root, log)):
        pairs = {k.lower(): v for k, v in parse_trailers(message)}
        task = pairs.get("loop-task")
        if pairs.get("loop-item") != item or not task:
            continue
        files = found.setdefault(task, [])
        files += [name for name in _changed(commit) if name not in files]
    return {task: tuple(files) for task, files in found.items()}


def tracked_at_head(root: Path, path: Path) -> bool:
    """Whether HEAD's tree holds ``path`` (False without a repository or a commit).

    One ``git cat-file -e`` rather than GitPython: ``status`` asks this of an item whose
    log is missing, and a report on an item without checkpoints loads no GitPython.
    """
    from the_loop.git.commands import run_git

    top = find_repo_root(root)
    if top is None:
        return False
    spec = repo_relative(top, root, path)
    return run_git(top, ["cat-file", "-e", f"HEAD:{spec}"], ok=(0, 128)).status == 0


def _blob(commit: git.Commit, spec: str) -> git.Blob | None:
    """The blob at ``spec`` in ``commit``'s tree, or None (absent, or not a file)."""
    try:
        item = commit.tree / spec
    except KeyError:
        return None
    from git import Blob  # GitPython's blob class: only the history queries use it

    return item if isinstance(item, Blob) else None


def _changed(commit: git.Commit) -> list[str]:
    """Paths whose blob differs between ``commit`` and its first parent (all, for a root)."""
    parent = commit.parents[0] if commit.parents else None
    return sorted(_tree_diff(commit.tree, parent.tree if parent is not None else None))


def _tree_diff(mine: git.Tree | None, theirs: git.Tree | None) -> Iterator[str]:
    """Changed file paths under two trees, descending only where a subtree's id differs."""
    from git import Blob, Tree  # GitPython's object classes: only the history queries use them

    def entries(tree: git.Tree | None) -> dict[str, Blob | Tree]:
        if tree is None:
            return {}
        return {o.name: o for o in (*tree.trees, *tree.blobs)}

    a, b = entries(mine), entries(theirs)
    for name in sorted(set(a) | set(b)):
        one, other = a.get(name), b.get(name)
        if one is not None and other is not None and one.hexsha == other.hexsha:
            continue
        if isinstance(one, Tree) or isinstance(other, Tree):
            yield from _tree_diff(
                one if isinstance(one, Tree) else None, other if isinstance(other, Tree) else None
            )
            for side in (one, other):
                if isinstance(side, Blob):
                    yield str(side.path)
        else:
            yield str((one or other).path)  # type: ignore[union-attr]
