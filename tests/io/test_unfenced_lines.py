"""``unfenced_lines``: the one walk past code fences that the markdown readers share."""

from __future__ import annotations

from the_loop.io.fences import unfenced_lines


def test_lines_outside_fences_come_with_their_numbers() -> None:
    # a longer run closes a fence; a shorter one is content
    text = "a\n```py\nx\n````\nb\r\n~~~~\n~~~\n~~~~\nc\n"
    walk = unfenced_lines(text.split("\n"), 10)
    assert list(walk) == [(10, "a", False), (14, "b", True), (18, "c", True), (19, "", False)]
    assert walk.unclosed is None


def test_a_fence_never_closed_hides_the_rest_and_is_named() -> None:
    walk = unfenced_lines(["a", "  ```", "b"])
    assert list(walk) == [(1, "a", False)]
    assert walk.unclosed == (2, "`", 3)
