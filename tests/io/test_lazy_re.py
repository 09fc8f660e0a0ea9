"""Patterns compiled on first use answer as the compiled pattern does."""

from __future__ import annotations

import re

from the_loop.io.lazy_re import compile_on_use


def test_it_is_compiled_only_when_first_used() -> None:
    pattern = compile_on_use(r"(?P<n>[0-9]+)")

    assert "search" not in vars(pattern)
    assert pattern.search("a 12 b") is not None
    assert "search" in vars(pattern)  # later calls go straight to the compiled pattern


def test_every_method_answers_as_re_compile() -> None:
    source, flags, text = r"(de)pends|R(?P<n>[0-9]+)", re.IGNORECASE, "DEpends on R1, r22 and x"
    lazy, eager = compile_on_use(source, flags), re.compile(source, flags)

    assert lazy.match(text).span() == eager.match(text).span()  # type: ignore[union-attr]
    assert lazy.fullmatch("R7")["n"] == "7"  # type: ignore[index]
    assert lazy.search(text, 3).span() == eager.search(text, 3).span()  # type: ignore[union-attr]
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.findall(text) == eager.findall(text)
    assert lazy.sub("-", text) == eager.sub("-", text)
    assert lazy.subn("-", text, count=1) == eager.subn("-", text, count=1)
    assert lazy.split(text) == eager.split(text)
    assert (lazy.pattern, lazy.flags, lazy.groupindex) == (
        eager.pattern,
        eager.flags,
        eager.groupindex,
    )
