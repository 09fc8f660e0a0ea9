"""Allow ``python -m the_loop``; also the console script's entry point.

The whole Ctrl-C story is here: a KeyboardInterrupt that reaches this far
(while loop's modules load, or while click parses the command line) prints
``interrupted`` and exits 130, the documented code (docs/exit-codes.md). A
Ctrl-C inside a command is turned into the same line and code by the one error
handler (``the_loop.cli.handler``).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run ``loop`` with the command line of this process."""
    _keep_interrupts()
    try:
        from the_loop.cli import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        _interrupted()
    except SystemExit:
        if _swallowed:
            _interrupted()
        raise
    except Exception as exc:
        # Python 3.11 wraps an exception raised in ``__set_name__`` (a Ctrl-C while a
        # class is built, as modules load) in a RuntimeError.
        if not isinstance(exc.__cause__, KeyboardInterrupt):
            raise
        _interrupted()
    if _swallowed:
        _interrupted()
    # Always leave through SystemExit: Python 3.11 kills a process that returns normally
    # after a Ctrl-C was caught around exec() (dataclasses build methods with it).
    sys.exit(0)


# A Ctrl-C that lands in a callback Python cannot raise from (the import system's
# module-lock weakref callback, while modules load) is "unraisable": CPython would
# print it as a traceback and carry on. It is kept here instead, and the command
# still ends as an interrupted one, once it is done.
_swallowed: list[KeyboardInterrupt] = []


def _keep_interrupts() -> None:
    """Put a hook before Python's unraisable-exception hook that keeps a Ctrl-C."""
    default = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _swallowed.append(unraisable.exc_value)
            return
        default(unraisable)

    sys.unraisablehook = hook


def _interrupted() -> None:
    sys.stderr.write("interrupted\n")
    sys.exit(130)


if __name__ == "__main__":
    main()
