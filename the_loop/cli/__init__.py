"""The command-line interface: the only layer that imports click.

``loop --version`` is answered here before click is imported (a version check
should not pay for the command table); every other command line goes to the
click application in ``the_loop.cli.app``, which loads each command's module only
when that command runs.
"""

from __future__ import annotations

import sys

# Names tests and tools import from here; they live in the click application.
_APP_NAMES = frozenset({"cli", "COMMANDS", "SECTIONS", "Env", "LoopGroup"})


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] in (["--version"], ["-V"]):
        from the_loop import __version__

        sys.stdout.write(f"loop, version {__version__}\n")  # the line click's version option prints
        return
    from the_loop.cli.app import run_as_process

    run_as_process()


def __getattr__(name: str) -> object:
    """``from the_loop.cli import cli`` (and the other app names) without importing click early."""
    if name in _APP_NAMES:
        from the_loop.cli import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
