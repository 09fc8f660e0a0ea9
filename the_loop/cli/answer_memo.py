"""Kept answers: a read-only report printed again while nothing it looked at has changed.

An agent asks ``loop next --json`` or ``loop status`` many times while the
files stay the same, and on a small plan starting Python and importing loop's
modules costs several times the report itself. So the quick path
(``the_loop.cli.quick``) keeps each answer it computes, with the exact bytes it
printed to stdout and stderr and its exit code, in
``.the-loop/state/cache/answers/``, together with everything the computation
looked at:

- every file it opened, folder it listed and path it tested (by ``os.stat``),
  whether it was there or not, as a signature: inode, size, ``mtime_ns``,
  ``ctime_ns`` and type for files and listed folders, the type alone for a
  folder only tested for existence;
- loop's own modules and every other module loaded (not the standard library's:
  the interpreter's version is part of the key);
- the command line, the current folder, the project root, the interpreter, the
  whole environment (except the shell's bookkeeping: ``_``, ``OLDPWD``,
  ``SHLVL``, ``PWD``) and whether stderr is a terminal.

The same command in the same setting stats those paths and, when every
signature still holds, prints the kept answer without loading the rest of loop.

**What it sees.** Reads and writes are observed with an audit hook
(``sys.addaudithook``: ``open``, folder listings, file-system changes, new
processes) and by wrapping ``os.stat`` while the answer is computed, so no
reader in loop has to remember to report what it read. Reads of loop's own
caches are not inputs: they only hold values computed from files that are.

**When an answer is not kept.** The computation wrote anything outside loop's
caches (a read-only report then had an effect a kept answer would skip); it
started a process other than ``git log`` over HEAD (whose output is fixed by
the HEAD and ref files, which are then among the inputs); it read the clock;
it raised; or one of its inputs changed less than two seconds before it
started (git's "racy" rule: a later edit within the file system's timestamp
granularity could keep the same signature). ``LOOP_NO_CACHE=1`` and
``--no-cache`` turn kept answers off with the parse cache, and a project
without a writable ``.the-loop/`` gets none.

**Cost.** The hit path imports ``marshal`` and ``zlib`` (both compiled into
or next to the interpreter) and nothing of loop beyond this module and the
project-root walk; a damaged or foreign file is a miss, and is replaced.
``marshal`` only ever decodes data here: a file placed in the cache cannot
make loop run code.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
import time
import zlib

from the_loop.config.project_root import CONFIG_DIR, search
from the_loop.io.content_cache import caches_allowed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

FORMAT = 1  # bump when the kept file's layout or the key changes
SUFFIX = ".answer"
MAX_KEPT = 256
MAX_BYTES = 64 * 1024 * 1024  # all kept answers together (a 100k-task graph is megabytes)
RACY_NS = 2_000_000_000
_VOLATILE_ENV = frozenset({"_", "OLDPWD", "SHLVL", "PWD"})
_STDLIB = os.path.dirname(os.__file__) + os.sep
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # the_loop/
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
# Audit events that change the file system; their path arguments are checked.
_CHANGES = frozenset(
    {
        "os.mkdir",
        "os.rename",
        "os.remove",
        "os.rmdir",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "os.utime",
        "os.link",
        "os.symlink",
        "os.mkfifo",
        "os.mknod",
        "os.putenv",
        "os.unsetenv",
        "shutil.copyfile",
        "shutil.copymode",
        "shutil.copystat",
        "shutil.copytree",
        "shutil.move",
        "shutil.rmtree",
    }
)
_PROCESSES = frozenset(
    {"os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "pty.spawn"}
)

Kept = tuple[str, str, str, int]  # stdout, stderr before, stderr after, exit code


class Memo:
    """The kept answer of one command line in one project (its key and its file)."""

    def __init__(self, argv: list[str], root: str) -> None:
        self.root = root
        env = sorted(f"{k}={v}" for k, v in os.environ.items() if k not in _VOLATILE_ENV)
        parts = [
            str(FORMAT),
            sys.version,
            sys.executable,
            os.getcwd(),
            root,
            str(sys.stderr.isatty()),
            str(len(argv)),
            *argv,
            *env,
        ]
        # Neither argv, nor the environment, nor a path can hold a NUL.
        self.key = "\0".join(parts)
        data = self.key.encode("utf-8", "surrogatepass")
        self.folder = os.path.join(root, CONFIG_DIR, "state", "cache", "answers")
        name = f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{SUFFIX}"
        self.path = os.path.join(self.folder, name)

    @classmethod
    def find(cls, argv: list[str], repo: str | None) -> Memo | None:
        """The memo for ``argv`` run here, or None when answers are not kept for it."""
        if not caches_allowed():
            return None
        if repo is not None:
            repo = os.path.expanduser(repo)
            if not os.path.isdir(repo):
                return None  # the command reports the bad --repo itself
            root = os.path.realpath(repo)
        else:
            root = search(os.path.realpath(os.getcwd()))
        if not os.path.isdir(os.path.join(root, CONFIG_DIR)):
            return None  # loop never creates .the-loop/ for a cache
        return cls(argv, root)

    def load(self) -> Kept | None:
        """The kept answer, when every input it was computed from is as it was."""
        try:
            with open(self.path, "rb") as handle:
                data = marshal.loads(handle.read())
        except (OSError, EOFError, ValueError, TypeError):
            return None
        if not (isinstance(data, tuple) and len(data) == 7 and data[0] == FORMAT):
            return None
        _, key, inputs, out, before, after, code = data
        if key != self.key or not isinstance(inputs, tuple):
            return None
        try:
            for path, kept in inputs:
                if _signature(path, len(kept) if kept else 0) != kept:
                    return None
        except (OSError, TypeError, ValueError):
            return None
        if not all(isinstance(s, str) for s in (out, before, after)) or type(code) is not int:
            return None
        return out, before, after, code

    def compute(self, answer: Callable[[], Kept]) -> Kept:
        """``answer()``, watched; kept for the next call when it may be."""
        recording = _Recording(self.root)
        global _active
        _install()
        started = time.time_ns()
        real_stat = os.stat
        os.stat = recording.stat
        _active = recording
        try:
            result = answer()
        finally:
            _active = None
            os.stat = real_stat
        if recording.refused is None:
            self._keep(recording, started, result)
        return result

    def _keep(self, recording: _Recording, started: int, result: Kept) -> None:
        """Write the answer beside its inputs' signatures; give up quietly on any doubt."""
        from pathlib import Path

        from the_loop.config.state_folder import project_cache, state_dir
        from the_loop.errors import LoopError

        if recording.git_log and not recording.read_head:
            return  # git's answer hangs on a HEAD this process did not read from a file
        root = Path(self.root)
        if project_cache(root).folder is None:
            return  # a read-only or missing .the-loop/: no cache there, nor kept answers
        paths = dict(recording.seen)
        for module in list(sys.modules.values()):
            where = getattr(module, "__file__", None)
            if isinstance(where, str) and not where.startswith(_STDLIB):
                paths.setdefault(os.path.abspath(where), "read")
        inputs = []
        try:
            for path, how in paths.items():
                kept = _signature(path, 5)
                if kept is not None and how == "tested" and stat.S_ISDIR(kept[4]):
                    kept = kept[4:]  # a folder only tested for: whether it is one
                elif kept is not None and kept[3] >= started - RACY_NS:
                    return  # changed moments ago: a later edit could keep its signature
                inputs.append((path, kept))
            state_dir(root, create=True)  # with its .gitignore, as every state write
            os.makedirs(self.folder, exist_ok=True)
            name = os.path.basename(self.path)
            # the caches' temporary name: a sweep removes it once this process is gone
            tmp = os.path.join(self.folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
            with open(tmp, "wb") as handle:
                handle.write(marshal.dumps((FORMAT, self.key, tuple(inputs), *result)))
            os.replace(tmp, self.path)
            _prune(self.folder)
        except (OSError, LoopError):
            return


def _signature(path: str, size: int) -> tuple[int, ...] | None:
    """``path``'s signature: None when absent; its type (``size`` 1) or five numbers."""
    try:
        found = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if size == 1:
        return (stat.S_IFMT(found.st_mode),)
    return (
        found.st_ino,
        found.st_size,
        found.st_mtime_ns,
        found.st_ctime_ns,
        stat.S_IFMT(found.st_mode),
    )


class _Recording:
    """What one computation looked at, and why (if at all) its answer cannot be kept."""

    def __init__(self, root: str) -> None:
        from the_loop.io import clock
        from the_loop.io.content_cache import user_cache_dir as cache_home

        state = os.path.join(root, CONFIG_DIR, "state")
        self.state = state
        # loop's caches: values computed from recorded inputs; not inputs themselves
        self.caches = (os.path.join(state, "cache"), str(cache_home()))
        self.seen: dict[str, str] = {}  # path -> "read", "listed" or "tested"
        self.refused: str | None = None
        self.git_log = False
        self.read_head = False
        self._real_stat = os.stat
        if _clock_read not in clock.readers:
            clock.readers.append(_clock_read)

    def refuse(self, why: str) -> None:
        if self.refused is None:
            self.refused = why

    def stat(self, path: object, *args: object, **kwargs: object) -> os.stat_result:
        """``os.stat``, noting the path it was asked about."""
        if kwargs.get("dir_fd") is None and isinstance(path, (str, bytes, os.PathLike)):
            self._note(path, "tested")
        return self._real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    def _note(self, path: object, how: str) -> None:
        name = _absolute(path)
        if name is None or name.startswith(_STDLIB) or self._in_cache(name):
            return
        if name.startswith(_PACKAGE) and (how != "read" or name.endswith((".py", ".pyc"))):
            return  # loop's code: its modules' files are added from sys.modules
        if how != "tested" or name not in self.seen:
            self.seen[name] = how
        if os.path.basename(name) == "HEAD":
            self.read_head = True

    def _in_cache(self, name: str) -> bool:
        return any(name == c or name.startswith(c + os.sep) for c in self.caches)

    def _may_write(self, name: str) -> bool:
        """Writes a kept answer may skip: loop's caches and the state folder they live in."""
        if self._in_cache(name) or name == self.state:
            return True
        return os.path.dirname(name) == self.state and os.path.basename(name).startswith(
            (".gitignore", "..gitignore.")
        )

    def event(self, event: str, args: tuple[object, ...]) -> None:
        """One audit event raised while the answer is computed."""
        if event == "open":
            self._opened(*args[:3])
        elif event in ("os.listdir", "os.scandir"):
            path = args[0] if args else None
            if isinstance(path, int):
                self.refuse("listed a folder by descriptor")
            else:
                self._note("." if path is None else path, "listed")
        elif event in _CHANGES:
            for path in args[:2]:
                if isinstance(path, (str, bytes, os.PathLike)):
                    self._wrote(path, event)
            if event in ("os.putenv", "os.unsetenv"):
                self.refuse(event)
        elif event == "subprocess.Popen":
            if _is_git_log(args[1]):
                self.git_log = True
            else:
                self.refuse(f"ran {args[1]!r}")
        elif event in _PROCESSES:
            self.refuse(event)

    def _opened(self, path: object, mode: object, flags: object) -> None:
        if isinstance(path, int) or path == os.devnull:
            return  # a descriptor (its path was seen when opened), or nothing at all
        writes = (isinstance(flags, int) and flags & _WRITE_FLAGS) or (
            isinstance(mode, str) and any(c in mode for c in "wax+")
        )
        if writes:
            self._wrote(path, "open")
        else:
            self._note(path, "read")

    def _wrote(self, path: object, event: str) -> None:
        name = _absolute(path)
        if name is None or not self._may_write(name):
            self.refuse(f"{event} {name}")


def _is_git_log(command: object) -> bool:
    """``git log … HEAD …``: its output follows from HEAD, read from the git dir's files."""
    if not isinstance(command, (list, tuple)) or len(command) < 2:
        return False
    words = [str(w) for w in command]
    return os.path.basename(words[0]) == "git" and words[1] == "log" and "HEAD" in words


def _clock_read() -> None:
    """The clock was read: the answer being computed (if any) depends on the time."""
    if _active is not None:
        _active.refuse("read the clock")


def _absolute(path: object) -> str | None:
    if not isinstance(path, (str, bytes, os.PathLike)):
        return None
    try:
        return os.path.abspath(os.fsdecode(os.fspath(path)))
    except (TypeError, ValueError):
        return None


_active: _Recording | None = None
_installed = False


def _install() -> None:
    """Add the audit hook once per process; it listens only while a computation is watched."""
    global _installed
    if not _installed:
        sys.addaudithook(_audit)
        _installed = True


def _audit(event: str, args: tuple[object, ...]) -> None:
    recording = _active
    # Imports read and list loop's folders and the import path; what they load
    # is in sys.modules, whose files are kept as inputs (see Memo._keep).
    if recording is None or event not in _WATCHED:
        return
    if sys._getframe(1).f_globals.get("__name__") not in _IMPORTING:
        recording.event(event, args)


_WATCHED = _CHANGES | _PROCESSES | {"open", "os.listdir", "os.scandir", "subprocess.Popen"}
_IMPORTING = frozenset({"importlib._bootstrap", "importlib._bootstrap_external", "zipimport"})


def _prune(folder: str) -> None:
    """Keep the newest answers, at most :data:`MAX_KEPT` of them and :data:`MAX_BYTES`."""
    with os.scandir(folder) as found:
        entries = [(e.stat(), e.path) for e in found if e.name.endswith(SUFFIX)]
    entries.sort(key=lambda entry: entry[0].st_mtime_ns, reverse=True)
    total = 0
    for count, (found_stat, path) in enumerate(entries, 1):
        total += found_stat.st_size
        if count > MAX_KEPT or (total > MAX_BYTES and count > 1):
            try:
                os.unlink(path)
            except OSError:
                pass
