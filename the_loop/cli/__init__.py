"""The command-line interface: the only layer that imports click.

This module is what the ``loop`` script and ``python -m the_loop`` import first,
so it stays light: ``loop --version`` is answered before click (a third of the
start-up) is imported, and so are the plain forms of the read-only reports
(``the_loop.cli.quick``); everything else goes to the click application in
``the_loop.cli.app``, which loads each command's module only when it runs.
"""

from __future__ import annotations

import sys

# Names tests and tools import from here; they live in the click application.
# (No `typing` import here either: it alone costs a tenth of the start-up.)
_APP_NAMES = frozenset({"cli", "COMMANDS", "SECTIONS", "Env", "LoopGroup"})


def main() -> None:
    """Console-script entry point."""
    argv = sys.argv[1:]
    if argv in (["--version"], ["-V"]):
        from the_loop import __version__

        # The same line click's version option prints.
        sys.stdout.write(f"loop, version {__version__}\n")
        return
    from the_loop.cli.quick import run

    code = run(argv)  # the reports agents call on every step, without click
    if code is not None:
        sys.exit(code)
    from the_loop.cli.app import run_as_process

    run_as_process()


def __getattr__(name: str) -> object:
    """``from the_loop.cli import cli`` (and the other app names) without importing click early."""
    if name in _APP_NAMES:
        from the_loop.cli import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
