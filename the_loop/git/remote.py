"""Moving commits between a clone and the shared remote: fetch, push a branch.

The Temporal backend's machines share work only through a git remote: a worker
fetches the base commit it was given and pushes its attempt's branch; the
coordinator pushes the integration branch and fetches finished attempts. Each is
one git process (``repo.git``), so the user's credentials and transport settings
apply as they do to their own pushes.
"""

from __future__ import annotations

from pathlib import Path

from the_loop.errors import GitError

_QUIET_ENV = {"GIT_TERMINAL_PROMPT": "0"}


def _git(root: Path, *args: str, what: str) -> str:
    from git import Repo  # GitPython: only the commands that move commits load it
    from git.exc import GitCommandError

    repo = Repo(root)
    try:
        with repo.git.custom_environment(**_QUIET_ENV):
            return str(repo.git.execute(["git", *args]))
    except GitCommandError as exc:
        said = (exc.stderr or exc.stdout or "").strip().splitlines()[-3:]
        raise GitError(f"{what} failed: " + " / ".join(s.strip() for s in said)) from exc
    finally:
        repo.close()


def remote_url(root: Path, remote: str) -> str:
    """The URL ``remote`` names in the clone at ``root`` (the remote's name when it has none)."""
    try:
        return _git(root, "remote", "get-url", remote, what=f"reading remote {remote}")
    except GitError:
        return remote


def fetch(root: Path, remote: str) -> None:
    """Every branch of ``remote`` into ``refs/remotes/<remote>/``, and its objects."""
    _git(root, "fetch", "--quiet", "--prune", remote, what=f"git fetch {remote}")


def fetch_branch(root: Path, remote: str, branch: str) -> str:
    """``remote``'s ``branch`` as the local branch of that name (forced); its head."""
    _git(
        root,
        "fetch",
        "--quiet",
        remote,
        f"+refs/heads/{branch}:refs/heads/{branch}",
        what=f"fetching {branch} from {remote}",
    )
    return _git(root, "rev-parse", "--verify", f"refs/heads/{branch}^{{commit}}", what="rev-parse")


def push(root: Path, remote: str, commit: str, branch: str, *, force: bool = True) -> None:
    """``commit`` as ``branch`` on ``remote`` (an attempt's branch is replaced: forced)."""
    spec = f"{'+' if force else ''}{commit}:refs/heads/{branch}"
    _git(root, "push", "--quiet", remote, spec, what=f"git push {remote} {branch}")
