"""Crash-safe file writes, confined to the project.

Whole-file writes go to a temporary file in the same folder, are flushed to
disk and then renamed over the target, so a reader (or a crash) sees either the
old file or the new one, never a mix. Appends are a single ``write`` on an
``O_APPEND`` descriptor; an append that fails part-way (a full disk) is cut
back to the old size before the error is raised, and a torn append (power
loss) is detected and repaired by the checkpoint journal.

Every write here also obeys three rules, so no caller can forget them:

- a symlink is written *through*: its target changes and the link stays;
- a file without any write permission bit is refused, not replaced (a rename
  would otherwise succeed on a read-only file in a writable folder);
- while a command runs (``confine_writes``), a path that resolves outside the
  project, symlinks followed, is refused with the path.

File-system failures (no space, read-only file system, permission, file-size
limit) become ``WriteError`` naming the file and saying it was left unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from the_loop.errors import RefusedError, Where, WriteError

# The project root every write must stay inside, while a command runs.
_ROOT: ContextVar[Path | None] = ContextVar("loop_write_root", default=None)

# The names ``mkstemp`` gives this module's temporary files: ``.<name>.<8 chars>.tmp``.
TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.tmp$")

_REASONS = {
    errno.ENOSPC: ("no space left on the device", "free some disk space"),
    errno.EDQUOT: ("the disk quota is exhausted", "free some space within the quota"),
    errno.EROFS: ("the file system is read-only", "remount it read-write"),
    errno.EACCES: ("permission denied", "check the permissions of the file and its folder"),
    errno.EPERM: ("operation not permitted", "check the permissions of the file and its folder"),
    errno.EFBIG: ("the file would exceed the file-size limit", "raise the limit (ulimit -f)"),
}


@contextlib.contextmanager
def write_scope() -> Iterator[None]:
    """A scope for ``confine_writes``: the confinement it sets ends with the scope."""
    token = _ROOT.set(_ROOT.get())
    try:
        yield
    finally:
        _ROOT.reset(token)


def confine_writes(root: Path) -> None:
    """From now on (in this scope), refuse any write that lands outside ``root``."""
    _ROOT.set(Path(os.path.realpath(root)))


def landing_place(path: Path, *, anywhere: bool = False) -> Path:
    """Where a write to ``path`` lands (symlinks followed), refused outside the project.

    ``anywhere``: the write is loop's own (a cache in the home folder), not the project's.
    """
    target = Path(os.path.realpath(path))
    root = _ROOT.get()
    if root is not None and not anywhere and not target.is_relative_to(root):
        raise RefusedError(
            f"refusing to write outside the project: this path resolves to {target}, "
            f"which is outside {root}",
            where=Where(path),
            hint="loop writes only inside the project; replace the symlink with a real "
            "file or folder inside it",
        )
    return target


def make_dirs(path: Path) -> None:
    """Create the folder ``path`` (and its parents) inside the project."""
    landing_place(path)
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(path, exc, "it was not created") from exc


def write_bytes(path: Path, data: bytes, *, anywhere: bool = False) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits."""
    path = Path(path)
    target = landing_place(path, anywhere=anywhere)
    mode = _writable_mode(path, target)
    tmp: str | None = None
    try:
        fd, tmp = _temporary_beside(target)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            flush_to_disk(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise write_error(path, exc, "it was not changed") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _fsync_dir(target.parent)


def write_text(path: Path, text: str, *, anywhere: bool = False) -> None:
    """Replace ``path`` with ``text`` (UTF-8, newlines kept as given) atomically."""
    write_bytes(path, text.encode("utf-8"), anywhere=anywhere)


def create_exclusive(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` unless it exists; return whether it was created.

    The content is written to a temporary file first and hard-linked into place,
    so the file appears complete or not at all, and an existing file (a user's)
    is never overwritten.
    """
    path = Path(path)
    target = landing_place(path)
    tmp: str | None = None
    try:
        fd, tmp = _temporary_beside(target)
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            flush_to_disk(handle.fileno())
        os.chmod(tmp, 0o644)
        try:
            os.link(tmp, target)
        except FileExistsError:
            return False
    except OSError as exc:
        raise write_error(path, exc, "it was not created") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _fsync_dir(target.parent)
    return True


def append_bytes(path: Path, data: bytes) -> int:
    """Append ``data`` with one write call; return the file size before the append.

    On failure the file is cut back to that size, so it is unchanged.
    """
    path = Path(path)
    target = landing_place(path)
    _writable_mode(path, target)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    except OSError as exc:
        raise write_error(path, exc, "it was not changed") from exc
    try:
        before = os.fstat(fd).st_size
        try:
            written = os.write(fd, data)
            if written != len(data):  # a full disk can take part of a write
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            flush_to_disk(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, before)
            raise write_error(path, exc, "it was not changed") from exc
    finally:
        os.close(fd)
    return before


def is_temp_file(path: Path) -> bool:
    """Whether ``path`` is named like a temporary file of this module."""
    return TEMP_NAME.match(path.name) is not None


def _writable_mode(path: Path, target: Path) -> int:
    """The mode to give the new file; ``WriteError`` when the old one is read-only."""
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
    except OSError as exc:
        raise write_error(path, exc, "it was not changed") from exc
    if not mode & 0o222 or not os.access(target, os.W_OK):
        raise WriteError(
            f"{path.name} is read-only; loop does not replace a file you made read-only",
            where=Where(path),
            hint=f"make it writable (chmod u+w {path}) and run the command again",
        )
    return mode


def write_error(path: Path, exc: OSError, outcome: str) -> WriteError:
    """``exc`` (from writing ``path``) as the user sees it: the file, the reason, the fix."""
    reason, fix = _REASONS.get(exc.errno or 0, (exc.strerror or str(exc), None))
    return WriteError(
        f"cannot write {Path(path).name}: {reason}; {outcome}",
        where=Where(path),
        hint=f"{fix}, then run the command again" if fix else "run the command again",
    )


def flush_to_disk(fd: int) -> None:
    """``os.fsync(fd)``, unless ``LOOP_TEST_FSYNC=0`` (test suites only).

    Like git's ``GIT_TEST_FSYNC=0``: a test suite writes thousands of files on a
    disk it throws away, and a flush guards only against power loss, which no test
    can cause. A process killed outright loses nothing the kernel already holds.
    """
    if os.environ.get("LOOP_TEST_FSYNC") != "0":
        os.fsync(fd)


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the directory entry is flushed.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. platforms without directory fds
        return
    try:
        flush_to_disk(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _temporary_beside(path: Path) -> tuple[int, str]:
    """A new temporary file in ``path``'s folder: ``(descriptor, name)``.

    Named as ``tempfile.mkstemp`` names them (``.<name>.<8 characters>.tmp``, which
    :data:`TEMP_NAME` and the debris sweep recognise), created the same way (exclusive,
    mode 0600), without importing tempfile: it and the modules it loads cost every
    writing command a few milliseconds of start-up.
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    for _attempt in range(100):
        letters = "".join(_TEMP_LETTERS[b % len(_TEMP_LETTERS)] for b in os.urandom(8))
        name = os.path.join(path.parent, f".{path.name}.{letters}.tmp")
        try:
            return os.open(name, flags, 0o600), os.path.abspath(name)
        except FileExistsError:
            continue  # another file took that name: draw again, as mkstemp does
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))


_TEMP_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"
