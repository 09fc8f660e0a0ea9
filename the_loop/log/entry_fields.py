"""Free text in a log entry is data: written so it cannot change the log's structure.

``--did``, ``--tests``, ``--next`` and ``--blockers`` (and the summary in the
heading) come from agents and people, and may hold anything: an unbalanced
code fence, a heading, a ``---`` line, a ``\\r``, a NUL. Written raw, an open
fence swallows the rest of the entry and every later one. So each value is
encoded on the way in and decoded by the reader, and the round trip is exact:

- the escape is ``\\u{HEX}``, a code point in hexadecimal; a literal ``\\u{``
  in the text is itself escaped (``\\u{5C}u{``), so decoding is unambiguous;
- control characters (except tab and newline), line and paragraph separators
  and lone surrogates are escaped: no renderer may break a line where the
  reader does not;
- whitespace the reader trims is escaped where it would be trimmed: at the
  start and end of the value, and at the end of its first line;
- code fences inside a value are kept when they balance (pasted code renders
  as code), and are all escaped when they do not; outside fences, a line that
  would render as a heading or a ``---``/``===``/``...`` rule is escaped.

``FenceTracker`` is the log reader's notion of a fence, shared so the encoder
checks exactly what the reader will see.
"""

from __future__ import annotations

import re
import unicodedata

from the_loop.io.fences import closes_fence

FENCE_LINE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ESCAPED = re.compile(r"\\u\{([0-9A-F]{1,6})\}")
_LITERAL_ESCAPE = re.compile(r"\\(?=u\{)")
_HEADING_LIKE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_RULE_LIKE = re.compile(r"^ {0,3}(?:-+|=+|\.{3})[ \t]*$")
_INDENT = "  "  # the log template indents continuation lines by two spaces


class FenceTracker:
    """Track fenced code blocks line by line (``` and ~~~, any length ≥ 3).

    ``inside=True`` at the start means "the text begins inside a fence of an
    unknown kind" (a tail read can start there); such a fence closes at the
    first fence line.
    """

    def __init__(self, *, inside: bool = False) -> None:
        self.marker: str | None = "" if inside else None

    @property
    def open(self) -> bool:
        return self.marker is not None

    def feed(self, line: str) -> bool:
        """True when ``line`` is a fence line or fenced content."""
        match = FENCE_LINE.match(line)
        if self.marker is None:
            if match:
                self.marker = match.group(1)
                return True
            return False
        # A fence of unknown kind (a tail read began inside it) closes at any fence line.
        if match and (self.marker == "" or closes_fence(self.marker[0], len(self.marker), line)):
            self.marker = None
        return True


def encode(value: str) -> str:
    """``value`` as it is written after ``- **Key:**`` (continuation lines not yet indented)."""
    text = _escape_characters(value)
    text = _escape_at(text, 0) if text[:1].isspace() else text
    text = _escape_at(text, len(text) - 1) if text[-1:].isspace() else text
    first_end = text.find("\n")
    if first_end > 0 and text[first_end - 1].isspace():
        text = _escape_at(text, first_end - 1)
    lines = text.split("\n")
    if len(lines) > 1:
        lines = _neutral_lines(lines)
    return "\n".join(lines)


def encode_line(value: str) -> str:
    """``value`` for a one-line place (the entry heading): newlines escaped too."""
    return encode(value).replace("\n", "\\u{A}")


def decode(text: str) -> str:
    """The original value of an encoded field (text without escapes comes back as is)."""
    if "\\u{" not in text:
        return text
    return _ESCAPED.sub(_code_point, text)


def one_line(text: str) -> str:
    """``text`` on one line, control characters dropped (for commit subjects and bodies)."""
    return " ".join("".join(" " if _unsafe(ch) else ch for ch in text).split())


def _code_point(match: re.Match[str]) -> str:
    value = int(match.group(1), 16)
    return chr(value) if value <= 0x10FFFF else match.group(0)


def _unsafe(ch: str) -> bool:
    if ch in "\n\t":
        return False
    return unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")


def _escape_characters(value: str) -> str:
    text = _LITERAL_ESCAPE.sub(r"\\u{5C}", value)
    if text.isprintable() or not any(_unsafe(ch) for ch in text):
        return text
    return "".join(f"\\u{{{ord(ch):X}}}" if _unsafe(ch) else ch for ch in text)


def _escape_at(text: str, index: int) -> str:
    return f"{text[:index]}\\u{{{ord(text[index]):X}}}{text[index + 1 :]}"


def _neutral_lines(lines: list[str]) -> list[str]:
    """Escape what would open a fence, a heading or a rule in continuation lines."""
    rendered = [lines[0], *(_INDENT + line if line else line for line in lines[1:])]
    fences = FenceTracker()
    for line in rendered[1:]:
        fences.feed(line)
    escape_fences = fences.open  # unbalanced: no fence in this value is kept
    fences = FenceTracker()
    out = [lines[0]]
    for line, shown in zip(lines[1:], rendered[1:], strict=True):
        if escape_fences and FENCE_LINE.match(shown):
            out.append(_escape_first(line, "`~"))
            continue
        if not escape_fences and fences.feed(shown):
            out.append(line)
            continue
        if _HEADING_LIKE.match(line):
            out.append(_escape_first(line, "#"))
        elif _RULE_LIKE.match(line):
            out.append(_escape_first(line, "-=."))
        else:
            out.append(line)
    return out


def _escape_first(line: str, chars: str) -> str:
    index = next(i for i, ch in enumerate(line) if ch in chars)
    return _escape_at(line, index)
