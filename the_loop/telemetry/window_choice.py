"""Pick the window size from the candidates a harness offers, in order of authority."""

from __future__ import annotations

from collections.abc import Sequence

from the_loop.telemetry.reading import WindowSource
from the_loop.telemetry.windows import window_for_model


def choose_window(
    candidates: Sequence[tuple[WindowSource, int | None]], *, model: str | None
) -> tuple[int | None, WindowSource | None, tuple[str, ...]]:
    """The first usable candidate (the model id is tried in ``MODEL``'s place).

    Returns the window, its source, and — only when no candidate gives a
    window — notes saying why (the percent arm then cannot apply).
    """
    notes: list[str] = []
    for source, size in candidates:
        if source is WindowSource.MODEL:
            size = window_for_model(model)
            if size is None and model:
                notes.append(f"model {model!r} is not in loop's window table")
        if size is not None and size > 0:
            return size, source, ()
    notes.append("window size unknown: the percent of the window cannot be computed")
    return None, None, tuple(notes)
