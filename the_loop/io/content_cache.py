"""A cache of values computed from a file's content: parse once, reuse until it changes.

Reading a large ``tasks.md`` and analysing its graph costs far more than
loading the result, so read-only commands keep what they computed from a file
in the project's state folder (``.the-loop/state/cache/``, one file per source
file and purpose) and reuse it while the file is unchanged.

**Keyed by content.** An entry records the SHA-256 of the text it was computed
from; that hash is the truth. As a fast path, an entry also records the file's
size, ``mtime_ns``, ``ctime_ns`` and inode: when all four still match and the
entry was written well after the file last changed (so that no later edit can
share its timestamps, as git's "racy" rule reasons), the hash is not computed.
Any edit changes the ctime, even one whose mtime is set back with ``os.utime``.

**Safe.** An entry is written to a temporary file and renamed into place, so a
reader sees a whole entry or none, whatever other processes do. A damaged,
truncated or foreign entry, or one written by another loop version or another
build of loop's code, is ignored and replaced. Only loop's own value classes
(dataclasses and enums), paths and read-only mappings are ever unpickled, so a
file placed in the cache cannot make loop run code. The folder is bounded: past
:data:`MAX_ENTRIES` entries or :data:`MAX_BYTES` bytes, the oldest go.

**Never for writes.** Commands that change a file read it themselves; the cache
only serves the values reports are made of. ``LOOP_NO_CACHE=1`` (or
``loop --no-cache``) turns it off; a folder without ``.the-loop/`` gets none.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import struct
import sys
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

from the_loop.io import collector
from the_loop.io.cache_switch import caches_allowed

TYPE_CHECKING = False  # typing is not imported at run time: it costs every cold start ~2 ms
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

FORMAT = 1  # bump when the entry layout changes
MAX_ENTRIES = 1024
MAX_BYTES = 256 * 1024 * 1024
# An entry written this long after its file last changed may trust the file's stat.
RACY_NS = 2_000_000_000
SUFFIX = ".entry"
_MAGIC = b"LOOPCCH2"
_HEAD = struct.Struct("<8sI")  # magic, header length
_PACKAGE = Path(__file__).resolve().parent.parent  # the_loop/

_switched_off = False


def switch_off(off: bool = True) -> None:
    """Stop (or, with ``off=False``, resume) using the cache in this process (``--no-cache``)."""
    global _switched_off
    _switched_off = off


def active() -> bool:
    """Whether the cache may be used: not switched off, no ``LOOP_NO_CACHE`` set."""
    return not _switched_off and caches_allowed()


class ContentCache:
    """Values computed from files, kept in ``folder`` (None: a cache that keeps nothing)."""

    def __init__(
        self,
        folder: Path | None,
        prepare: Callable[[], object] | None = None,
        *,
        switchable: bool = True,
    ) -> None:
        """``prepare`` makes ``folder``'s parents as they should be, before the first store.

        A cache that is not ``switchable`` ignores ``LOOP_NO_CACHE`` and ``--no-cache``
        (the config's, which the benchmark keeps warm in both modes).
        """
        self.folder = folder
        self._prepare = prepare
        self._switchable = switchable
        self._digests: dict[Path, tuple[str, str]] = {}  # path -> (text, digest) memo

    def cached(
        self,
        purpose: str,
        path: Path,
        text: str,
        compute: Callable[[], T],
        *,
        trust_stat: bool = True,
    ) -> T:
        """``compute()``, or the value it gave for this very ``text`` of ``path`` before.

        ``trust_stat=False`` when ``text`` is not ``path``'s content but a key made
        from several files (``path`` a folder): only the hash of ``text`` decides.
        """
        found = self.load(purpose, path, text, trust_stat=trust_stat)
        if found is not None:
            return found
        value = compute()
        self.store(purpose, path, text, value)
        return value

    def load(self, purpose: str, path: Path, text: str, *, trust_stat: bool = True) -> Any:
        """The value stored for ``text`` of ``path``, or None."""
        entry = self._entry(purpose, path)
        if entry is None:
            return None
        try:
            with open(entry, "rb") as handle:
                header = _read_header(handle)
                if header is None or header[:4] != (FORMAT, _code_stamp(), purpose, str(path)):
                    return None
                fast = trust_stat and self._stat_holds(path, header)
                if not (fast or self.digest(path, text) == header[4]):
                    return None
                return _loads(handle.read())
        except Exception:  # missing, damaged, truncated, foreign: a miss, never an error
            return None

    def store(self, purpose: str, path: Path, text: str, value: Any) -> None:
        """Keep ``value`` as computed from ``text`` of ``path`` (best effort)."""
        entry = self._entry(purpose, path)
        if entry is None:
            return
        try:
            stat = os.stat(path)
            key = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
            header = (FORMAT, _code_stamp(), purpose, str(path), self.digest(path, text), key)
            data = _dumps(header, value)
            if self._prepare is not None:
                self._prepare()
                self._prepare = None
            entry.parent.mkdir(parents=True, exist_ok=True)
            _replace(entry, data)
            _prune(entry.parent, keep=entry)
        except Exception:  # a cache never fails a command
            # A read-only or full disk, or a value that cannot be stored, only
            # costs the next run the parse.
            pass

    @property
    def enabled(self) -> bool:
        """Whether this cache keeps anything (a folder, and not switched off)."""
        return self.folder is not None and (not self._switchable or active())

    def _entry(self, purpose: str, path: Path) -> Path | None:
        if self.folder is None or (self._switchable and not active()):
            return None
        return self.folder / _entry_name(purpose, str(path))

    def digest(self, path: Path, text: str) -> str:
        """The SHA-256 of ``text`` (``path``'s content), computed once per text object."""
        memo = self._digests.get(path)
        if memo is not None and memo[0] is text:
            return memo[1]
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        self._digests[path] = (text, digest)
        return digest

    @staticmethod
    def _stat_holds(path: Path, header: tuple[Any, ...]) -> bool:
        """The fast path: the file's stat is the one recorded, and not racy."""
        size, mtime, ctime, inode, written = header[5]
        stat = os.stat(path)
        same = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino) == (
            size,
            mtime,
            ctime,
            inode,
        )
        return same and written - max(mtime, ctime) > RACY_NS


@lru_cache(maxsize=4096)
def _entry_name(purpose: str, path: str) -> str:
    """One entry per source file and purpose: a newer content replaces the older."""
    digest = hashlib.sha256(f"{purpose}\0{path}".encode()).hexdigest()[:32]
    return f"{purpose}-{digest}{SUFFIX}"


def _read_header(handle: io.BufferedReader) -> tuple[Any, ...] | None:
    head = handle.read(_HEAD.size)
    if len(head) != _HEAD.size:
        return None
    magic, length = _HEAD.unpack(head)
    if magic != _MAGIC or length > 64 * 1024:
        return None
    header = json.loads(handle.read(length))  # JSON: a header can hold nothing but data
    if not isinstance(header, list) or len(header) != 6 or not isinstance(header[5], list):
        return None
    return (*header[:5], tuple(header[5]))


def _dumps(header: tuple[Any, ...], value: Any) -> bytes:
    fmt, stamp, purpose, path, digest, key = header
    recorded = [fmt, stamp, purpose, path, digest, [*key, time.time_ns()]]
    head = json.dumps(recorded).encode()
    buffer = io.BytesIO()
    buffer.write(_HEAD.pack(_MAGIC, len(head)))
    buffer.write(head)
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.dispatch_table = dict.fromkeys(_READ_ONLY_MAPPINGS, _reduce_proxy)
    with collector.paused():
        pickler.dump(value)
    return buffer.getvalue()


def _loads(data: bytes) -> Any:
    # About one object per 12 bytes of pickle, for the collector's sake.
    with collector.paused(expected_objects=len(data) // 12):
        return _Unpickler(io.BytesIO(data)).load()


# Mapping types stored as the read-only mapping they stand for (register with the function below).
_READ_ONLY_MAPPINGS: set[type] = {MappingProxyType}


def pickle_as_read_only_mapping(cls: type) -> None:
    """Store instances of ``cls`` (a lazily computed ``Mapping``) as a read-only dict.

    The value read back is a ``MappingProxyType`` with the same items.
    """
    _READ_ONLY_MAPPINGS.add(cls)


def _reduce_proxy(proxy: Mapping[Any, Any]) -> tuple[Any, ...]:
    return (_proxy, (dict(proxy),))


def _proxy(data: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    """Rebuild a read-only mapping (pickle cannot store one directly)."""
    return MappingProxyType(data)


class _Unpickler(pickle.Unpickler):
    """Builds loop's value classes, paths and read-only mappings, and nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        if module == __name__ and name == "_proxy":
            return _proxy
        if module == "pathlib" and name in ("Path", "PosixPath", "WindowsPath"):
            return super().find_class(module, name)
        if module.startswith("the_loop.") and "." not in name:
            found = super().find_class(module, name)
            if isinstance(found, type) and _is_value_class(found):
                return found
        raise pickle.UnpicklingError(f"not a loop value: {module}.{name}")


def _is_value_class(cls: type) -> bool:
    """A frozen dataclass or an enum: building one runs none of loop's logic."""
    import dataclasses
    from enum import Enum

    if issubclass(cls, Enum):
        return True
    params = getattr(cls, "__dataclass_params__", None)
    return dataclasses.is_dataclass(cls) and bool(params and params.frozen)


_stamp: str | None = None


def _code_stamp() -> str:
    """loop's version and the state of its source: entries from other code are not reused.

    An editable install keeps its version while its parser changes; the size and
    mtime of every module catch that for the price of a folder walk.
    """
    global _stamp
    if _stamp is None:
        from the_loop import __version__

        parts = [f"{FORMAT}:{__version__}:{sys.version_info[:2]}"]
        for folder, _dirs, files in sorted(os.walk(_PACKAGE)):
            for name in sorted(files):
                if name.endswith(".py"):
                    stat = os.stat(os.path.join(folder, name))
                    parts.append(f"{folder}/{name}:{stat.st_size}:{stat.st_mtime_ns}")
        _stamp = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]
    return _stamp


def _replace(target: Path, data: bytes) -> None:
    """Write ``data`` to a fresh file beside ``target`` and rename it over ``target``.

    No fsync: after a crash an entry may be lost or cut short, and a short entry
    fails to load, which is a miss.
    """
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _prune(folder: Path, *, keep: Path) -> None:
    """Drop the oldest entries while the folder holds too many or too much.

    It runs after a store, that is after a parse, which costs more than this walk.
    """
    entries = []
    with os.scandir(folder) as found:
        for item in found:
            if item.name.endswith(SUFFIX):
                try:
                    stat = item.stat()
                except OSError:
                    continue
                entries.append((stat.st_mtime_ns, stat.st_size, Path(item.path)))
    count, size = len(entries), sum(e[1] for e in entries)
    if count <= MAX_ENTRIES and size <= MAX_BYTES:
        return
    for _mtime, bytes_, path in sorted(entries):
        if count <= MAX_ENTRIES and size <= MAX_BYTES:
            break
        if path != keep:
            path.unlink(missing_ok=True)
            count -= 1
            size -= bytes_
