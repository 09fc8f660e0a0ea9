"""Allow `python -m the_loop`; also the console script's entry point.

The CLI is imported inside ``main`` so that a Ctrl-C during start-up (while
click and loop's modules load) still exits 130 with one line, not a
traceback and death by the signal; and once the command is over, a late
Ctrl-C no longer changes its exit status.
"""

from __future__ import annotations

# signal's C core: the signal module only adds enum wrappers, whose import costs
# more start-up (about 5 ms) than a kept answer takes to print. (No stubs: CPython's own.)
import _signal  # type: ignore[import-not-found]
import os
import sys


def main() -> None:
    """Run ``loop`` with the command line of this process."""
    code: str | int | None = 0
    sys.unraisablehook = _deliver_interrupts
    try:
        from the_loop.cli import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        code = 130
    except SystemExit as exc:
        code = exc.code
    except Exception as exc:
        # A Ctrl-C while a class is built (modules loading) arrives wrapped in a RuntimeError.
        if not isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            raise
        sys.stderr.write("interrupted\n")
        code = 130
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    if code == 130:
        # CPython (3.11) marks an interrupt that lands inside exec() — dataclasses
        # build their methods that way while modules load — as unhandled even
        # though it was caught, and then kills the process with SIGINT at exit.
        # The interrupt was handled: flush and leave with the documented status.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(130)
    sys.exit(code)


def _deliver_interrupts(unraisable: sys.UnraisableHookArgs) -> None:
    """A Ctrl-C that lands in a callback (a weakref's, while modules load) is printed as
    "Exception ignored" and lost; deliver it again once this hook has returned.

    Not from inside the hook: Python runs a signal's handler as soon as the call that
    raised the signal returns, so ``raise_signal`` (or ``interrupt_main``) here would
    raise the KeyboardInterrupt inside the hook, where it is lost the same way. A
    one-shot timer a millisecond away raises it in the code the callback interrupted.
    """
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        _signal.signal(_signal.SIGALRM, _interrupt)
        _signal.setitimer(_signal.ITIMER_REAL, 0.001)
        return
    sys.__unraisablehook__(unraisable)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()
