"""loop's one cache: values computed from content, kept as plain data until the content changes.

Every cache in loop is this one: the parse results of a project's spec files
(in ``.the-loop/state/cache/``), and, in the user's cache folder
(``$XDG_CACHE_HOME/loop``), the effective config built from a ``config.yaml``,
front matter read by ruamel and Jinja's compiled templates. One entry format,
one key rule, one racy rule and one switch.

**Keyed by content.** An entry records the SHA-256 of the text it was computed
from, and a stamp of loop's own code, templates and schema (:func:`code_stamp`),
so another loop, or a changed template, never reuses it. An entry that belongs
to a file (``purpose`` and path) may skip the hash: it also records the file's
size, ``mtime_ns``, ``ctime_ns`` and inode, and when all four still match and the
entry was written :data:`RACY_NS` after the file last changed (so that no later
edit can share its timestamps, git's "racy" rule), the file is taken as
unchanged. That is the one racy rule; an entry keyed by content alone
(:meth:`ContentCache.by_content`) needs none.

**Plain data.** A value is stored as JSON (or, for Jinja's bytecode, the bytes
Jinja gives), so a file planted in the cache can make loop compute something
afresh and nothing else. Entries are opened without following links, must be
regular files under :data:`MAX_ENTRY_BYTES`, and anything damaged, truncated or
foreign is a miss. A write goes to a temporary file renamed into place, so a
reader sees a whole entry or none. The folder is bounded: past
:data:`MAX_ENTRIES` entries or :data:`MAX_BYTES` bytes, the oldest go.

**One switch.** ``LOOP_NO_CACHE=1`` (or ``loop --no-cache``) turns every cache
off: nothing is read from or written to any cache folder. A project without
``.the-loop/`` gets no project cache, and a cache never writes outside the
folder it was given.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop import __version__
from the_loop.errors import Where
from the_loop.findings import Finding, Level
from the_loop.io import collector, resources

if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

FORMAT = 3  # bump when the entry layout changes
MAX_ENTRIES = 4096
MAX_BYTES = 256 * 1024 * 1024
MAX_ENTRY_BYTES = 64 * 1024 * 1024
# An entry written this long after its file last changed may trust the file's stat.
RACY_NS = 2_000_000_000
SUFFIX = ".entry"
_MAGIC = b"LOOPCACHE3\n"
_PACKAGE = Path(__file__).resolve().parent.parent  # the_loop/


class _Missing:
    """The answer of :meth:`ContentCache.load` when nothing usable is stored."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

_switched_off = False


def switch_off(off: bool = True) -> None:
    """Stop (or, with ``off=False``, resume) using every cache in this process (``--no-cache``)."""
    global _switched_off
    _switched_off = off


def caches_allowed() -> bool:
    """``LOOP_NO_CACHE`` is unset, empty or ``0``."""
    return os.environ.get("LOOP_NO_CACHE", "") in ("", "0")


def active() -> bool:
    """Whether caches may be used: not switched off, no ``LOOP_NO_CACHE`` set."""
    return not _switched_off and caches_allowed()


def user_cache_dir() -> Path:
    """loop's folder in the user's cache: ``$XDG_CACHE_HOME/loop`` (``~/.cache/loop``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "loop"


def user_cache() -> ContentCache:
    """The cache for values made of content alone (config, front matter, templates)."""
    return ContentCache(user_cache_dir(), private=True)


def private_folder(folder: Path) -> bool:
    """Whether ``folder`` is a real folder of this user that no one else may write."""
    try:
        found = os.lstat(folder)
    except OSError:
        return False
    own = not hasattr(os, "getuid") or found.st_uid == os.getuid()
    return stat.S_ISDIR(found.st_mode) and own and not found.st_mode & 0o022


class ContentCache:
    """Values computed from content, kept in ``folder`` (None: a cache that keeps nothing)."""

    def __init__(
        self,
        folder: Path | None,
        prepare: Callable[[], object] | None = None,
        *,
        private: bool = False,
    ) -> None:
        """``prepare`` makes ``folder``'s parents as they should be, before the first store.

        ``private``: the folder is the user's own (created ``0700``).
        """
        self.folder = folder
        self._prepare = prepare
        self._private = private
        self._digests: dict[Path, tuple[str, str]] = {}  # path -> (text, digest) memo

    @property
    def enabled(self) -> bool:
        """Whether this cache keeps anything (a folder, and caches not switched off)."""
        return self.folder is not None and active()

    def cached(
        self,
        purpose: str,
        path: Path,
        text: str,
        compute: Callable[[], T],
        *,
        trust_stat: bool = True,
        encode: Callable[[T], Any] | None = None,
        decode: Callable[[Any], T] | None = None,
    ) -> T:
        """``compute()``, or the value it gave for this very ``text`` of ``path`` before.

        ``encode`` turns the value into plain data (JSON types) and ``decode`` back;
        without them the value must be plain data itself. ``trust_stat=False`` when
        ``text`` is not ``path``'s content but a key made from several files (``path``
        a folder): only the hash of ``text`` decides.
        """
        found = self.load(purpose, path, text, trust_stat=trust_stat)
        if found is not MISSING:
            try:
                return decode(found) if decode is not None else found
            except Exception:  # a stored value of another shape: compute it afresh
                pass
        value = compute()
        self.store(purpose, path, text, encode(value) if encode is not None else value)
        return value

    def by_content(
        self,
        purpose: str,
        text: str,
        compute: Callable[[], T],
        *,
        encode: Callable[[T], Any] | None = None,
        decode: Callable[[Any], T] | None = None,
    ) -> T:
        """``compute()`` for a value made of ``text`` alone, kept under its hash."""
        if not self.enabled:
            return compute()
        digest = _sha256(text)
        return self.cached(
            purpose, Path(digest), text, compute, trust_stat=False, encode=encode, decode=decode
        )

    def load(self, purpose: str, path: Path, text: str, *, trust_stat: bool = True) -> Any:
        """The plain value stored for ``text`` of ``path``, or :data:`MISSING`."""
        data = self.load_bytes(purpose, path, text, trust_stat=trust_stat)
        if data is None:
            return MISSING
        try:
            # About one object per 12 bytes of JSON, for the collector's sake.
            with collector.paused(expected_objects=len(data) // 12):
                return json.loads(data)
        except (ValueError, RecursionError):
            return MISSING

    def store(self, purpose: str, path: Path, text: str, value: Any) -> None:
        """Keep the plain ``value`` as computed from ``text`` of ``path`` (best effort)."""
        if not self.enabled:
            return
        try:
            data = json.dumps(value, separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, ValueError, RecursionError):
            return  # not plain data: it is computed again next time
        self.store_bytes(purpose, path, text, data)

    def load_bytes(
        self, purpose: str, path: Path, text: str, *, trust_stat: bool = True
    ) -> bytes | None:
        """The bytes stored for ``text`` of ``path``, or None."""
        entry = self._entry(purpose, path)
        if entry is None:
            return None
        raw = read_regular_file(entry, MAX_ENTRY_BYTES)
        if raw is None or not raw.startswith(_MAGIC):
            return None
        head_end = raw.find(b"\n", len(_MAGIC))
        try:
            header = json.loads(raw[len(_MAGIC) : head_end])
            stamp, kept_purpose, kept_path, digest, key = header
            if (stamp, kept_purpose, kept_path) != (code_stamp(), purpose, str(path)):
                return None
            fast = trust_stat and _stat_holds(path, key)
            if not (fast or self.digest(path, text) == digest):
                return None
        except (ValueError, TypeError, OSError):  # damaged or foreign: a miss
            return None
        return raw[head_end + 1 :] if head_end > 0 else None

    def store_bytes(self, purpose: str, path: Path, text: str, data: bytes) -> None:
        """Keep ``data`` as computed from ``text`` of ``path`` (best effort)."""
        entry = self._entry(purpose, path)
        if entry is None or len(data) > MAX_ENTRY_BYTES:
            return
        try:
            key: list[int] = []
            if path.is_absolute() and path.exists():
                found = os.stat(path)
                key = [found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino]
            header = [code_stamp(), purpose, str(path), self.digest(path, text), key]
            key.append(time.time_ns())
            head = json.dumps(header, separators=(",", ":")).encode()
            if self._prepare is not None:
                self._prepare()
                self._prepare = None
            if self._private:
                os.makedirs(entry.parent, mode=0o700, exist_ok=True)
            else:
                entry.parent.mkdir(parents=True, exist_ok=True)
            blob = _MAGIC + head + b"\n" + data
            _replace(entry, blob)
            _prune(entry.parent, keep=entry, added=len(blob))
        except Exception:  # a cache never fails a command
            # A read-only or full disk, or a folder loop may not write, only
            # costs the next run the parse.
            pass

    def _entry(self, purpose: str, path: Path) -> Path | None:
        if self.folder is None or not active():
            return None
        return self.folder / _entry_name(purpose, str(path))

    def digest(self, path: Path, text: str) -> str:
        """The SHA-256 of ``text`` (``path``'s content), computed once per text object."""
        memo = self._digests.get(path)
        if memo is not None and memo[0] is text:
            return memo[1]
        digest = _sha256(text)
        self._digests[path] = (text, digest)
        return digest


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _stat_holds(path: Path, key: list[int]) -> bool:
    """The racy rule: the file's stat is the one recorded, and was old when it was recorded."""
    if len(key) != 5:
        return False
    size, mtime, ctime, inode, written = key
    found = os.stat(path)
    same = (found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino) == (
        size,
        mtime,
        ctime,
        inode,
    )
    return same and written - max(mtime, ctime) > RACY_NS


@lru_cache(maxsize=4096)
def _entry_name(purpose: str, path: str) -> str:
    """One entry per source and purpose: a newer content replaces the older."""
    digest = hashlib.sha256(f"{purpose}\0{path}".encode()).hexdigest()[:32]
    return f"{purpose}-{digest}{SUFFIX}"


def read_regular_file(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes, else None.

    Opened without following a link and without blocking, so a symlink to
    ``/dev/zero``, a FIFO or a huge file planted in a cache folder is a miss.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_size > limit:
            return None
        chunks = []
        left = found.st_size + 1  # one byte more: a file that grew is still read whole
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def findings_to_plain(findings: tuple[Finding, ...] | list[Finding]) -> list[list[Any]]:
    """Findings as plain data (see :func:`findings_from_plain`)."""
    rows = []
    for f in findings:
        where = f.where
        place: list[Any] | None = None
        if where is not None:
            place = [str(where.path), isinstance(where.path, Path), where.line, where.col]
        rows.append([f.level.value, f.code, f.message, place, f.hint])
    return rows


def findings_from_plain(rows: list[list[Any]]) -> list[Finding]:
    """The findings :func:`findings_to_plain` stored."""
    found = []
    for level, code, message, place, hint in rows:
        where = None
        if place is not None:
            path, is_path, line, col = place
            where = Where(Path(path) if is_path else path, line, col)
        found.append(Finding(Level(level), code, message, where, hint))
    return found


_stamp: str | None = None


def code_stamp() -> str:
    """loop's version and the state of its code, templates and schema.

    Entries from another loop are not reused, and an editable install keeps its
    version while its parser or a template changes: the size and mtime of every
    module and shipped data file catch that for the price of a folder walk.
    """
    global _stamp
    if _stamp is None:
        parts = [f"{FORMAT}:{__version__}:{sys.version_info[:2]}"]
        folders = [_PACKAGE]
        for kind in ("templates", "schema"):
            try:
                folders.append(resources.resource_dir(kind))
            except Exception:  # a broken install: its error comes from the reader
                pass
        for top in folders:
            for folder, dirs, files in sorted(os.walk(top)):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                for name in sorted(files):
                    if name.endswith((".py", ".j2", ".json", ".md", ".yaml")):
                        found = os.stat(os.path.join(folder, name))
                        parts.append(f"{folder}/{name}:{found.st_size}:{found.st_mtime_ns}")
        _stamp = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]
    return _stamp


def _replace(target: Path, data: bytes) -> None:
    """Write ``data`` to a fresh file beside ``target`` and rename it over ``target``.

    No fsync: after a crash an entry may be lost or cut short, and a short entry
    fails to load, which is a miss.
    """
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# What this process knows of each folder it stored into: [entries, bytes], an upper bound.
_totals: dict[Path, list[int]] = {}


def _prune(folder: Path, *, keep: Path, added: int) -> None:
    """Drop the oldest entries while the folder holds too many or too much.

    The folder is listed on the first store of a process and again only when the
    running totals (which count a replaced entry twice) pass a bound, so a
    command that stores many small entries does not list the folder each time.
    """
    totals = _totals.get(folder)
    if totals is not None:
        totals[0] += 1
        totals[1] += added
        if totals[0] <= MAX_ENTRIES and totals[1] <= MAX_BYTES:
            return
    entries = []
    with os.scandir(folder) as found:
        for item in found:
            if item.name.endswith(SUFFIX):
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                entries.append((info.st_mtime_ns, info.st_size, Path(item.path)))
    count, size = len(entries), sum(e[1] for e in entries)
    for _mtime, bytes_, path in sorted(entries):
        if count <= MAX_ENTRIES and size <= MAX_BYTES:
            break
        if path != keep:
            path.unlink(missing_ok=True)
            count -= 1
            size -= bytes_
    _totals[folder] = [count, size]
