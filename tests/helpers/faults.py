"""File-system faults injected into a real ``loop`` process, from the test side only.

``run_faulty`` runs ``python -m the_loop`` with a generated ``sitecustomize``
on its ``PYTHONPATH``; it wraps a few ``os`` functions so that an operation on
a chosen path fails the way a full disk (ENOSPC), a permission problem
(EACCES) or a read-only file system (EROFS) makes it fail, or so that the
process SIGKILLs itself at that point (``kill``). loop's code carries no switch
for any of this. A marker file records whether the fault fired, so a campaign
knows when it has walked past the last matching operation.

The fault (all in environment variables of the child):

- ``LOOP_TEST_FAULT_MATCH``: a regular expression searched in the absolute path;
  a temporary file of a matching file (``.tasks.md.x1y2z3a4.tmp``) matches too;
- ``LOOP_TEST_FAULT_OPS``: comma-separated ``open``, ``write``, ``replace``,
  ``link``, ``mkdir``, ``fsync`` (default: all);
- ``LOOP_TEST_FAULT``: an errno name, ``short`` (a write that takes half the
  bytes, then ENOSPC) or ``kill``;
- ``LOOP_TEST_FAULT_SKIP``: how many matching operations succeed first (default 0).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SITECUSTOMIZE = textwrap.dedent(
    '''
    """Test-only fault injection for loop (see tests/helpers/faults.py)."""
    import builtins, errno, io, os, re, signal

    _match = os.environ.get("LOOP_TEST_FAULT_MATCH")
    _kind = os.environ.get("LOOP_TEST_FAULT", "ENOSPC")
    _ops = set((os.environ.get("LOOP_TEST_FAULT_OPS") or
                "open,write,replace,link,mkdir,fsync").split(","))
    _skip = [int(os.environ.get("LOOP_TEST_FAULT_SKIP", "0"))]
    _fired = os.environ.get("LOOP_TEST_FAULT_FIRED")
    _fds = set()

    def _matches(path):
        text = os.path.abspath(os.fsdecode(path))
        name = os.path.basename(text)
        temp = re.match(r"^\\.(.+)\\.[A-Za-z0-9_]{8}\\.tmp$", name)
        if temp:
            text = os.path.join(os.path.dirname(text), temp.group(1))
        return re.search(_match, text) is not None

    def _fire(op, path):
        if _skip[0] > 0:
            _skip[0] -= 1
            return False
        if _fired:
            with builtins.open(_fired, "a") as handle:
                handle.write(f"{op} {os.fsdecode(path)}\\n")
        if _kind == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        return True

    def _error(path):
        code = errno.ENOSPC if _kind == "short" else getattr(errno, _kind)
        return OSError(code, os.strerror(code), os.fsdecode(path))

    if _match:
        _open, _write, _replace, _link, _mkdir, _fsync = (
            os.open, os.write, os.replace, os.link, os.mkdir, os.fsync)
        _fdpaths = {}

        def open_(path, flags, mode=0o777, *, dir_fd=None):
            writing = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND)
            if "open" in _ops and writing and _matches(path) and _fire("open", path):
                raise _error(path)
            fd = _open(path, flags, mode, dir_fd=dir_fd)
            if writing and _matches(path):
                info = os.fstat(fd)
                _fdpaths[fd] = (path, info.st_dev, info.st_ino)
            else:
                _fdpaths.pop(fd, None)
            return fd

        def _path_of(fd):
            # Descriptor numbers are reused once closed: trust one only while it
            # still refers to the same file.
            known = _fdpaths.get(fd)
            if known is None:
                return None
            try:
                info = os.fstat(fd)
            except OSError:
                return None
            if (info.st_dev, info.st_ino) != known[1:]:
                _fdpaths.pop(fd, None)
                return None
            return known[0]

        def write_(fd, data):
            path = _path_of(fd)
            if path is not None and "write" in _ops and _fire("write", path):
                if _kind == "short" and len(data) > 1:
                    return _write(fd, bytes(data)[: len(data) // 2])
                raise _error(path)
            return _write(fd, data)

        def _forget(path):
            # A file renamed or deleted is done with: its descriptor number will be reused.
            for fd in [fd for fd, known in _fdpaths.items() if known[0] == path]:
                del _fdpaths[fd]

        def replace_(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
            if "replace" in _ops and _matches(dst) and _fire("replace", dst):
                raise _error(dst)
            _replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
            _forget(src)

        _unlink = os.unlink

        def unlink_(path, *, dir_fd=None):
            _unlink(path, dir_fd=dir_fd)
            _forget(path)

        def link_(src, dst, *args, **kwargs):
            if "link" in _ops and _matches(dst) and _fire("link", dst):
                raise _error(dst)
            _link(src, dst, *args, **kwargs)

        def mkdir_(path, mode=0o777, *, dir_fd=None):
            if "mkdir" in _ops and _matches(path) and _fire("mkdir", path):
                raise _error(path)
            return _mkdir(path, mode, dir_fd=dir_fd)

        def fsync_(fd):
            path = _path_of(fd if isinstance(fd, int) else fd.fileno())
            if path is not None and "fsync" in _ops and _fire("fsync", path):
                raise _error(path)
            return _fsync(fd)

        os.open, os.write, os.replace, os.link, os.mkdir, os.fsync, os.unlink = (
            open_, write_, replace_, link_, mkdir_, fsync_, unlink_)

        # Files opened with open() write through io's C code, not os.write:
        # wrap the open of a matching path for writing instead.
        _io_open = io.open

        def io_open(file, mode="r", *args, **kwargs):
            if ("open" in _ops and isinstance(file, (str, bytes, os.PathLike))
                    and any(c in mode for c in "wax+") and _matches(file)
                    and _fire("open", file)):
                raise _error(file)
            return _io_open(file, mode, *args, **kwargs)

        builtins.open = io.open = io_open
    '''
)


@dataclass(frozen=True)
class Ran:
    """What the faulty process did."""

    returncode: int
    stdout: str
    stderr: str
    fired: tuple[str, ...]  # "op path" for each fault that fired

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def fault_site(folder: Path) -> Path:
    """Write the ``sitecustomize`` into ``folder`` (once) and return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sitecustomize.py"
    if not path.exists():
        path.write_text(SITECUSTOMIZE)
    return folder


def run_faulty(
    root: Path,
    *args: str,
    site: Path,
    match: str,
    fault: str = "ENOSPC",
    ops: str = "",
    skip: int = 0,
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> Ran:
    """``loop -C root args…`` in a child process with one fault armed."""
    fired = site / f"fired-{os.getpid()}-{id(args)}-{skip}.txt"
    fired.unlink(missing_ok=True)
    child_env = {
        **os.environ,
        **(env or {}),
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "LOOP_TEST_FAULT_MATCH": match,
        "LOOP_TEST_FAULT": fault,
        "LOOP_TEST_FAULT_OPS": ops,
        "LOOP_TEST_FAULT_SKIP": str(skip),
        "LOOP_TEST_FAULT_FIRED": str(fired),
    }
    done = subprocess.run(
        [sys.executable, "-m", "the_loop", "-C", str(root), *args],
        cwd=root,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    lines = tuple(fired.read_text().splitlines()) if fired.exists() else ()
    fired.unlink(missing_ok=True)
    return Ran(done.returncode, done.stdout, done.stderr, lines)
