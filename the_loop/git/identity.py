"""Who git would record as a commit's author and committer, known before anything is staged.

git resolves each role in this order, never guessing when ``user.useConfigOnly``
is set (loop sets it for its commit): ``GIT_AUTHOR_NAME``/``GIT_AUTHOR_EMAIL``
(``GIT_COMMITTER_*``), then ``author.name``/``author.email``
(``committer.*``), then ``user.name``/``user.email``, from the system, global
(``$XDG_CONFIG_HOME/git/config`` then ``~/.gitconfig``, or ``GIT_CONFIG_GLOBAL``),
repository and worktree config files, includes included. GitPython's config
reader reads those files, so the common answer costs no process. Where
configuration also comes from elsewhere (``git -c`` and ``GIT_CONFIG_COUNT``
reach a loop run from a git alias or hook) and whenever the answer is not a
plain name and address, git itself answers (``git var``), and its message is
the one the user sees.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import GitError, Where
from the_loop.git.commands import run_git
from the_loop.git.opening import find_repo_root, open_repo

if TYPE_CHECKING:
    from typing import Literal

    Role = Literal["author", "committer"]

IDENTITY_HINT = (
    'tell git who you are: `git config --global user.name "Your Name"` and '
    '`git config --global user.email "you@example.com"` '
    "(or set GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL)"
)
_IDENT = re.compile(r"^(?P<name>.*) <(?P<email>[^<>]*)> \d+ [+-]\d{4}$")
# configuration that reaches git from outside the config files
_INJECTED_CONFIG = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")
# what git trims from both ends of a name or address ("crud"): such a value is left to git
_CRUD = "".join(chr(c) for c in range(33)) + ".,:;<>\"\\'"
_TRUE = ("1", "true", "yes", "on")


def identity(root: Path) -> tuple[str, str]:
    """The ``(name, email)`` git would record as the author of a commit made in ``root``.

    The committer is checked too; a commit needs both. Raises :class:`GitError`
    (git's own ``fatal:`` lines as details) when git does not know who the user
    is: a checkpoint recorded as ``root@container`` is worse than a clear error.
    """
    folder = Path(root)
    if not folder.is_dir():
        raise GitError("cannot ask git who you are: no such folder", where=Where(folder))
    top = find_repo_root(folder)
    known = _from_config(top)
    if known is not None:
        return known
    author = _asked_of_git(top or folder, "author")
    _asked_of_git(top or folder, "committer")
    return author


def _from_config(top: Path | None) -> tuple[str, str] | None:
    """The author, when the config files and environment settle both roles plainly; else None."""
    if any(os.environ.get(name) for name in _INJECTED_CONFIG):
        return None
    values = _config_values(top)
    if values is None:
        return None
    author, committer = _resolve("author", values), _resolve("committer", values)
    return author if committer is not None else None


def _resolve(role: Role, values: dict[str, str]) -> tuple[str, str] | None:
    upper = role.upper()
    name = os.environ.get(f"GIT_{upper}_NAME")
    if name is None:
        name = values.get(f"{role}.name") or values.get("user.name")
    email = os.environ.get(f"GIT_{upper}_EMAIL")
    if email is None:
        email = values.get(f"{role}.email") or values.get("user.email")
    if not name or email is None:
        return None  # git says why (and whether EMAIL or a guess would count)
    if name.strip(_CRUD) != name or email.strip(_CRUD) != email or "\n" in name + email:
        return None  # git trims such values in its own way: let it answer
    return name, email


def _config_values(top: Path | None) -> dict[str, str] | None:
    """The identity keys of the files git reads, later files winning; None if unsure."""
    # GitPython's config reader: the files git would read for identity
    from git.config import GitConfigParser, get_config_path

    repo = open_repo(top) if top is not None else None
    files: list[str] = []
    if os.environ.get("GIT_CONFIG_NOSYSTEM", "").lower() not in _TRUE:
        files.append(os.environ.get("GIT_CONFIG_SYSTEM") or get_config_path("system"))
    if "GIT_CONFIG_GLOBAL" in os.environ:
        files.append(os.environ["GIT_CONFIG_GLOBAL"])
    else:
        files += [get_config_path("user"), get_config_path("global")]
    if repo is not None:
        files.append(os.path.join(repo.common_dir, "config"))
    files = [f for f in files if f and os.path.isfile(f)]
    try:
        reader = GitConfigParser(files, read_only=True, repo=repo)
        worktree = reader.get_value("extensions", "worktreeConfig", default=False)
        if repo is not None and str(worktree).lower() in _TRUE:  # per-worktree config too
            worktree_file = os.path.join(repo.git_dir, "config.worktree")
            if os.path.isfile(worktree_file):
                reader = GitConfigParser([*files, worktree_file], read_only=True, repo=repo)
        values: dict[str, str] = {}
        for section in ("user", "author", "committer"):
            for key in ("name", "email"):
                if reader.has_option(section, key):
                    # the raw text (get_value would read "1e3" as a number); the last wins
                    values[f"{section}.{key}"] = reader.get(section, key)
    except Exception:  # any file GitPython cannot parse: git decides
        return None
    return values


def _asked_of_git(top: Path, role: Role) -> tuple[str, str]:
    """``(name, email)`` for ``role`` as ``git var`` resolves it, without guessing."""
    ran = run_git(
        top, ["var", f"GIT_{role.upper()}_IDENT"], ok=None, config={"user.useConfigOnly": "true"}
    )
    match = _IDENT.match(ran.out.strip()) if ran.status == 0 else None
    if match is None:
        raise GitError(
            f"git does not know who you are, so it cannot record a commit {role}",
            where=Where(top),
            details=tuple(line for line in ran.detail_lines() if line.startswith("fatal:")),
            hint=IDENTITY_HINT,
        )
    return match["name"], match["email"]
