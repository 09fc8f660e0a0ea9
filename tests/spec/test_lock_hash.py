"""The lock hash's checkbox normalization: the fast scan gives what the defining regex gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from the_loop.spec.approval import _CHECKED, unticked


def by_regex(text: str) -> str:
    return _CHECKED.sub(r"\1[ ]", text)


# The characters the pattern cares about, and a few that look like them.
_ALPHABET = st.sampled_from(
    [
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\r",
        "\u00a0",
        "\u2028",
        "-",
        "*",
        "+",
        ".",
        ")",
        "1",
        "42",
        "\u0663",
        "a",
        "[",
        "]",
        "x",
        "X",
        "[x]",
        "[X]",
        "[-]",
        "[ ]",
        "- [x]",
        "1. [x]",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_ALPHABET, max_size=30).map("".join))
def test_the_scan_agrees_with_the_regex(text: str) -> None:
    assert unticked(text) == by_regex(text)


def test_examples() -> None:
    text = (
        "- [x] 1. done\n  - [X] sub\n* [-] started\n3) [x] numbered\n"
        "text [x] inline\n-[x] tight\n\n\n   + [x] after blank lines\n"
    )
    assert unticked(text) == by_regex(text)
    assert unticked(text).count("[ ]") == 5
    assert unticked("no boxes here") == "no boxes here"
