"""Snapshot the git index before a checkpoint stages anything, and put it back.

A checkpoint commit that git refuses (a hook, signing) must leave the user's
staging area exactly as it was. This module keeps the index file's bytes and
writes them back under ``index.lock``, as git itself would. It is plain file
work, apart from ``the_loop.git.repo`` (which decides when to take and restore
a snapshot) so that the locking and the recovery hint can be read on their own;
it never runs git.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from the_loop.io.atomic import flush_to_disk

_LOCK_TIMEOUT = 2.0  # seconds to wait for another git process to release index.lock


@dataclass(frozen=True)
class IndexSnapshot:
    """The index file's bytes before loop staged anything (``None``: there was none).

    Restoring the bytes, rather than reading a tree back, keeps all the index
    holds: intent-to-add entries, skip-worktree bits, stat data.
    """

    path: Path
    data: bytes | None

    @classmethod
    def take(cls, path: Path) -> IndexSnapshot:
        """Read the index; git replaces it by rename, so the read is never torn."""
        try:
            return cls(path, path.read_bytes())
        except FileNotFoundError:
            return cls(path, None)

    def restore(self) -> None:
        """Write the bytes back under ``index.lock``, the way git itself does."""
        if self == IndexSnapshot.take(self.path):
            return  # untouched (git add may have failed on someone else's index.lock)
        lock = self.path.with_name(self.path.name + ".lock")
        deadline = time.monotonic() + _LOCK_TIMEOUT
        while True:
            try:
                fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(self.data or b"")
                handle.flush()
                flush_to_disk(handle.fileno())
            if self.data is None:
                self.path.unlink(missing_ok=True)  # no index file is git's empty index
                lock.unlink()
            else:
                os.replace(lock, self.path)
        except BaseException:
            lock.unlink(missing_ok=True)
            raise

    def recovery_hint(self) -> str:
        """How to get the old staging area back by hand, saving a copy where possible."""
        if self.data is None:
            return f"once no git command is running, delete {self.path} to unstage everything"
        backup = self.path.with_name(self.path.name + ".loop-backup")
        try:
            backup.write_bytes(self.data)
        except OSError:
            return "check `git status` and stage again what you had staged"
        return f"once no git command is running, copy {backup} over {self.path}"
