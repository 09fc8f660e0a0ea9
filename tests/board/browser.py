"""Debian's Chromium, headless, for looking at ``loop board`` the way a person would.

Every run gets its own profile folder and a host-resolver rule that resolves no name but
127.0.0.1, with background networking, component updates and sync off: a page that
needed anything beyond the loopback address would show it as missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium")
INSTALL_HINT = "Debian's chromium is not installed: run tools/install-browser"

_FLAGS = (
    "--headless",
    "--no-sandbox",  # as root in a container
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)


def _run(profile: Path, *args: str) -> str:
    assert CHROMIUM is not None, INSTALL_HINT
    profile.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dump_dom(url: str, profile: Path, *, budget_ms: int = 2500) -> str:
    """The page's DOM after its scripts ran for ``budget_ms`` of virtual time."""
    return _run(profile, f"--virtual-time-budget={budget_ms}", "--dump-dom", url)


def screenshot(url: str, path: Path, profile: Path, *, size: str = "1400,1200") -> Path:
    """A PNG of the page as it looks after its first updates."""
    _run(
        profile, "--virtual-time-budget=2500", f"--window-size={size}", f"--screenshot={path}", url
    )
    assert path.is_file() and path.stat().st_size > 0
    return path


ROW = re.compile(r'<tr data-task="([^"]+)" data-state="([^"]+)"(?: data-lane="(\d+)")?>')


def task_states(dom: str) -> dict[str, str]:
    """Task id -> state, from the rows of the page's task table."""
    return {task: state for task, state, _lane in ROW.findall(dom)}


def task_lanes(dom: str) -> dict[str, int]:
    """Task id -> the lane the page shows it in (tasks a lane holds only)."""
    return {task: int(lane) for task, _state, lane in ROW.findall(dom) if lane}


def data_value(dom: str, element: str, name: str) -> str:
    """The ``data-<name>`` attribute of the element whose id is ``element``."""
    found = re.search(rf'id="{element}"[^>]*data-{name}="([^"]*)"', dom)
    assert found is not None, f"no #{element} with data-{name} in the page"
    return found.group(1)
