"""Crash-safe file writes.

Whole-file writes go to a temporary file in the same folder, are flushed to
disk and then renamed over the target, so a reader (or a crash) sees either the
old file or the new one, never a mix. Appends are a single ``write`` on an
``O_APPEND`` descriptor; a torn append (power loss) is detected and repaired by
the checkpoint journal, which records the size before the append.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits."""
    path = Path(path)
    mode = _mode_of(path)
    fd, tmp = _temporary_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, newlines kept as given) atomically."""
    write_bytes(path, text.encode("utf-8"))


def create_exclusive(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` unless it exists; return whether it was created.

    The content is written to a temporary file first and hard-linked into place,
    so the file appears complete or not at all, and an existing file (a user's)
    is never overwritten.
    """
    path = Path(path)
    fd, tmp = _temporary_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    _fsync_dir(path.parent)
    return True


def append_bytes(path: Path, data: bytes) -> int:
    """Append ``data`` with one write call; return the file size before the append."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        before = os.fstat(fd).st_size
        written = os.write(fd, data)
        if written != len(data):  # pragma: no cover - regular files do not short-write
            raise OSError(f"short write to {path}: {written} of {len(data)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)
    return before


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the directory entry is flushed.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _temporary_beside(path: Path) -> tuple[int, str]:
    """A new temporary file in ``path``'s folder: ``(descriptor, name)``."""
    # tempfile (and the random module it loads) costs start-up time; only writers need it.
    import tempfile

    return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
