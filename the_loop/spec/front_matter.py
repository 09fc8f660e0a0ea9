"""YAML front matter of spec artifacts: tolerant reading, round-trip editing.

Reading never raises on content: a missing, unterminated, non-mapping or
invalid block is a finding with ``file:line`` and the artifact is read as if it
had no front matter. A block is read by ruamel through
``the_loop.io.yamlio.read_plain``, once per content (loop's cache keeps the
result); an invalid block, and every block that is edited, is loaded
round-trip. Editing changes only the given keys and splices the block back, so
comments, key order and the body survive.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.errors import SpecError, Where
from the_loop.findings import Finding, Level
from the_loop.io import yamlio

if TYPE_CHECKING:
    from typing import Any

FENCE = "---"
# `key: value  # comment` on one line: the key, everything up to the gap, the gap.
_INLINE_COMMENT = re.compile(
    r"^(?P<head>(?P<key>[ \t]*[^#\s][^:#\n]*):[^#\n]*?\S)(?P<gap>[ \t]+)(?P<comment>#.*)$"
)
FRONT_MATTER_LIMIT = 64 * 1024


@dataclass(frozen=True)
class FrontMatter:
    """What the front matter of one file says, and where it sits.

    ``node`` is the round-trip mapping (None when absent or unusable) or, when
    the flat reader read the block, the plain mapping itself, whose top-level
    key lines are in ``key_lines``; ``data`` is the plain copy; ``first_line``
    the file line of the first YAML line; ``body_offset`` the character offset
    where the markdown body starts.
    """

    path: Path
    node: Any
    data: Mapping[str, Any]
    present: bool
    first_line: int
    end_line: int
    body_offset: int
    findings: tuple[Finding, ...]
    key_lines: Mapping[str, int] | None = None

    @property
    def positioned(self) -> bool:
        """Whether ``node`` knows where each of its values sits (a round-trip load)."""
        return self.key_lines is None

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def line_of(self, key: str) -> int | None:
        """The file line of ``key`` in the block, if present."""
        if self.key_lines is not None:
            return self.key_lines.get(key)
        if not isinstance(self.node, dict) or key not in self.node:
            return None
        lc: Any = getattr(self.node, "lc", None)
        return int(lc.key(key)[0]) + self.first_line if lc is not None else None


def _block_bounds(text: str) -> tuple[int, int, int] | None:
    """``(yaml start offset, closing fence line index, body offset)`` or None."""
    start = 1 if text.startswith("\ufeff") else 0
    first_end = text.find("\n", start)
    first = text[start : first_end if first_end >= 0 else len(text)].rstrip("\r")
    if first.rstrip() != FENCE or first_end < 0:
        return None
    offset = first_end + 1
    index = 1
    while offset <= len(text):
        end = text.find("\n", offset)
        line = text[offset : end if end >= 0 else len(text)].rstrip("\r")
        if line.rstrip() in (FENCE, "..."):
            body = end + 1 if end >= 0 else len(text)
            return first_end + 1, index, body
        if end < 0:
            break
        offset = end + 1
        index += 1
    return -1, index, -1


def body_offset(text: str) -> int:
    """Where the markdown body of ``text`` starts: ``parse_front_matter(...).body_offset``.

    Found from the ``---`` fences alone, without reading the block (which may need
    ruamel), for a caller that only skips the front matter.
    """
    bounds = _block_bounds(text)
    return 0 if bounds is None or bounds[2] < 0 else bounds[2]


def parse_front_matter(text: str, path: Path, *, round_trip: bool = False) -> FrontMatter:
    """Read the front matter of ``text`` (the contents of ``path``) tolerantly.

    ``round_trip`` loads the block with ruamel even when it is simple, for a
    caller that needs every value's position or edits the block.
    """
    bounds = _block_bounds(text)
    if bounds is None:
        return FrontMatter(path, None, {}, False, 0, 0, 0, ())
    yaml_start, close_index, body = bounds
    if body < 0:
        finding = Finding(
            Level.ERROR,
            "frontmatter.unterminated",
            "front matter opened with `---` is never closed",
            Where(path, 1),
            hint="add a line `---` after the last front-matter key",
        )
        return FrontMatter(path, None, {}, True, 2, 1, 0, (finding,))
    block = text[yaml_start : _line_start(text, yaml_start, close_index - 1)]
    if len(block) > FRONT_MATTER_LIMIT:
        finding = Finding(
            Level.ERROR,
            "frontmatter.too-large",
            f"front matter is {len(block) // 1024} KiB; loop reads front matter up to "
            f"{FRONT_MATTER_LIMIT // 1024} KiB",
            Where(path, 2),
            hint="front matter holds a few keys (type, status, approvedBy, overrides); "
            "move the rest into the body",
        )
        return FrontMatter(path, None, {}, True, 2, close_index + 1, body, (finding,))
    flat = None if round_trip else yamlio.read_plain(block)
    if flat is not None:
        data, lines = flat
        key_lines = {key: line + 2 for key, line in lines.items()}
        return FrontMatter(path, data, data, True, 2, close_index + 1, body, (), key_lines)
    node, problem = yamlio.parse(block, first_line=2)
    if problem is not None:
        where = Where(path, problem.line, problem.col)
        finding = Finding(
            Level.ERROR,
            "frontmatter.yaml",
            f"front matter is not valid YAML: {problem.message}",
            where,
            problem.hint,
        )
        return FrontMatter(path, None, {}, True, 2, close_index + 1, body, (finding,))
    if node is None:
        node = {}
    if not isinstance(node, dict):
        finding = Finding(
            Level.ERROR,
            "frontmatter.root",
            "front matter must be a mapping of keys (type, status, …)",
            Where(path, 2),
            hint="write it as `key: value` lines",
        )
        return FrontMatter(path, None, {}, True, 2, close_index + 1, body, (finding,))
    return FrontMatter(path, node, yamlio.to_plain(node), True, 2, close_index + 1, body, ())


def _line_start(text: str, yaml_start: int, lines_after: int) -> int:
    """Offset of the line ``lines_after`` lines past ``yaml_start`` (the closing fence)."""
    offset = yaml_start
    for _ in range(lines_after):
        offset = text.index("\n", offset) + 1
    return offset


def update_front_matter(text: str, path: Path, changes: Mapping[str, Any]) -> str:
    """Return ``text`` with ``changes`` applied to its front matter, all else kept.

    Keys set to ``None`` in ``changes`` are removed. Raises ``SpecError`` when
    the file has no usable front matter to edit.
    """
    fm = parse_front_matter(text, path, round_trip=True)
    if fm.findings or not fm.present or fm.node is None:
        reason = fm.findings[0].message if fm.findings else "it has no front matter"
        raise SpecError(
            f"cannot edit the front matter: {reason}",
            where=Where(path, 1),
            hint="repair the `---` block at the top of the file, then run the command again",
        )
    node = fm.node
    for key, value in changes.items():
        if value is None:
            node.pop(key, None)
        else:
            node[key] = value
    newline = "\r\n" if "\r\n" in text[: fm.body_offset] else "\n"
    dumped = _keep_comment_gaps(text[: fm.body_offset].replace("\r\n", "\n"), yamlio.dump(node))
    if newline != "\n":
        dumped = dumped.replace("\n", newline)
    head_start = 1 if text.startswith("\ufeff") else 0
    return text[:head_start] + FENCE + newline + dumped + FENCE + newline + text[fm.body_offset :]


def _keep_comment_gaps(before: str, dumped: str) -> str:
    """Put back the space each inline comment had before ``dumped`` re-spaced it.

    ruamel.yaml writes a comment one space after a value it replaced, so
    ``status: draft  # draft | in-review | approved`` would come back as
    ``status: approved # …``; a round-trip edit changes the value and nothing else.
    """
    gaps = {}
    for line in before.split("\n"):
        match = _INLINE_COMMENT.match(line)
        if match:
            gaps[(match["key"], match["comment"])] = match["gap"]
    kept = []
    for line in dumped.split("\n"):
        match = _INLINE_COMMENT.match(line)
        gap = gaps.get((match["key"], match["comment"])) if match else None
        kept.append(match["head"] + gap + match["comment"] if match and gap else line)
    return "\n".join(kept)
