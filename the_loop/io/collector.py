"""The cyclic garbage collector around bulk work: paused while it runs, then told to skip it.

Reading a large plan builds a million small objects and frees none of them; the
collector's generational passes find nothing to free while re-walking every live
object (a quarter of a 100k-task parse, three quarters of loading it back from
the cache). Reference counting still frees everything as usual while it is paused.
"""

from __future__ import annotations

import gc

# Past this many objects built at once, what was built is moved out of the collector's sight.
LARGE = 200_000


class Paused:
    """Pause the collector (if it was on) for a ``with`` block; ``expected_objects`` sizes it.

    After a block that built at least :data:`LARGE` objects, everything alive is
    frozen (``gc.freeze``): the values a command has read live until it exits,
    and walking them again would only repeat the pass the pause avoided. Cyclic
    garbage made before the freeze is kept rather than collected; a command's
    process is short.
    """

    def __init__(self, expected_objects: int = 0) -> None:
        self.expected_objects = expected_objects
        self.was_enabled = False

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *_exc: object) -> None:
        if self.was_enabled:
            if self.expected_objects >= LARGE:
                gc.freeze()
            gc.enable()


def paused(expected_objects: int = 0) -> Paused:
    """The collector paused for a block that builds about ``expected_objects`` objects."""
    return Paused(expected_objects)
