"""Template placeholders left in an artifact: ``<role>``, ``<task summary>``, ``<command>``.

loop's templates mark every slot a writer fills in with ``<words in angle
brackets>``. One left behind is an unfinished artifact, and in rendered
markdown it is worse than visible: ``<role>`` reads as an unknown HTML tag and
disappears. ``loop check`` reports each one and ``loop approve`` refuses an
artifact that still has any, by the same rule (this module).

What counts: ``<…>`` in prose, outside code. Code spans (across line breaks,
as CommonMark pairs backtick runs), fenced blocks and HTML comments are left
alone — ``docs/specs/<id>/`` in backticks is a path pattern, not a slot —
except a code span that holds nothing but a placeholder (the tasks template's
``_Test:_ `<command>```), which is a slot too. HTML tags (``<br>``,
``<details>``) are not placeholders.

The confidence rule (docs/formats.md) decides the level: a slot that is one of
loop's own templates' placeholders (``<role>``, ``<command>``, …) is certainly
unfinished: an error, and ``loop approve`` refuses it — a warning while the artifact is
still a ``draft`` (the work left to do, not a mistake). Any other ``<word>`` is the
author's own notation (``<ref>``, ``<date>``), perhaps a placeholder and perhaps a
metavariable: in prose it is a warning, since markdown shows it as nothing; alone
in a code span it shows as written and is not reported.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import cache

from the_loop.errors import Where
from the_loop.findings import Finding, Level
from the_loop.io.fences import unfenced_lines
from the_loop.io.resources import resource_dir
from the_loop.spec.front_matter import body_offset
from the_loop.spec.items import CHAIN, Artifact, WorkItem

_SLOT = re.compile(r"<(?P<words>[A-Za-z][A-Za-z0-9_]*(?:[ ,;/.'-]+[A-Za-z0-9_]+)*)\s*>")
_BACKTICKS = re.compile(r"`+")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_HTML_TAGS = frozenset(
    "a abbr b bdi bdo blockquote br caption cite code col colgroup dd del details dfn div dl "
    "dt em figcaption figure h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol p picture pre q "
    "rp rt ruby s samp section small source span strike strong sub summary sup table tbody "
    "td tfoot th thead time tr tt u ul var video wbr".split()
)


def placeholders(text: str, body_offset: int = 0) -> Iterator[tuple[int, int, str]]:
    """``(line, column, placeholder)`` for every slot left in ``text``'s body.

    ``body_offset`` is where the markdown body starts (after the front matter);
    lines and columns are 1-based and count from the top of the file.
    """
    for line, col, slot, _in_code in slots(text, body_offset):
        yield line, col, slot


def slots(text: str, body_offset: int = 0) -> Iterator[tuple[int, int, str, bool]]:
    """``placeholders``, each with whether it stood alone in a code span."""
    if text.find("<", body_offset) < 0:
        return  # every slot has one: most artifacts need no paragraph walk at all
    first_line = text.count("\n", 0, body_offset) + 1
    paragraph: list[tuple[int, str]] = []
    for number, line, after_fence in unfenced_lines(text[body_offset:].split("\n"), first_line):
        if after_fence or not line.strip():  # a fence, like a blank line, ends a paragraph
            yield from _in_paragraph(paragraph)
            paragraph = []
            if not line.strip():
                continue
        paragraph.append((number, line))
    yield from _in_paragraph(paragraph)


def _in_paragraph(lines: list[tuple[int, str]]) -> Iterator[tuple[int, int, str, bool]]:
    if not lines:
        return
    text = "\n".join(line for _, line in lines)
    if "<" not in text:
        return  # the common case, and a task list can be one paragraph of 100k lines
    starts = []
    at = 0
    for _, line in lines:
        starts.append(at)
        at += len(line) + 1

    def place(offset: int) -> tuple[int, int]:
        index = bisect_right(starts, offset) - 1
        return lines[index][0], offset - starts[index] + 1

    prose = _COMMENT.sub(lambda m: _blank(m.group()), text)
    pieces = []
    done = 0
    for start, end, content in _code_spans(prose):
        inner = prose[content:end].rstrip("`")
        slot = _SLOT.fullmatch(inner.strip())
        if slot is not None and not _is_tag(slot["words"]):
            yield (*place(content + inner.index("<")), inner.strip(), True)
        pieces += [prose[done:start], _blank(prose[start:end])]
        done = end
    prose = "".join([*pieces, prose[done:]])  # code blanked out, offsets unchanged
    for match in _SLOT.finditer(prose):
        if not _is_tag(match["words"]):
            yield (*place(match.start()), match.group(), False)


def _code_spans(text: str) -> list[tuple[int, int, int]]:
    """``(start, end, content start)`` of each code span; start and end include the backticks.

    Runs pair as CommonMark pairs them: a run opens a span closed by the next
    run of the same length; a run without a partner is literal backticks.
    """
    runs = list(_BACKTICKS.finditer(text))
    # For each run, the next run of the same length (one backward pass).
    following: list[int | None] = [None] * len(runs)
    seen: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        width = len(runs[index].group())
        following[index] = seen.get(width)
        seen[width] = index
    spans = []
    index = 0
    while index < len(runs):
        closer = following[index]
        if closer is None:
            index += 1  # a lone run is literal backticks
            continue
        spans.append((runs[index].start(), runs[closer].end(), runs[index].end()))
        index = closer + 1
    return spans


def _blank(text: str) -> str:
    """Spaces in place of ``text``, keeping its line breaks (so offsets still map)."""
    return re.sub(r"[^\n]", " ", text)


def _is_tag(words: str) -> bool:
    return words.lower() in _HTML_TAGS


@cache
def template_slots() -> frozenset[str]:
    """Every placeholder loop's own artifact templates hold (read once per process)."""
    found: set[str] = set()
    for path in resource_dir("templates").glob("*.md.j2"):
        text = path.read_text(encoding="utf-8")
        # Only the body counts; the templates' front matter is Jinja, which the flat
        # reader leaves to ruamel (a third of a cold `check`), so it is skipped unread.
        found.update(slot for _l, _c, slot in placeholders(text, body_offset(text)))
    return frozenset(found)


def _artifact_slots(art: Artifact) -> list[tuple[int, int, str, bool]]:
    if not art.exists or art.text is None:
        return []
    front = art.front
    offset = front.body_offset if front is not None and front.present and not front.findings else 0
    return list(slots(art.text, offset))


def artifact_placeholders(art: Artifact) -> list[tuple[int, int, str]]:
    """The placeholders of loop's templates left in one artifact: an unfinished artifact."""
    ours = template_slots()
    return [(line, col, slot) for line, col, slot, _ in _artifact_slots(art) if slot in ours]


def placeholder_findings(item: WorkItem) -> list[Finding]:
    """Slots left in every artifact of the chain (the log is a record); levels as above."""
    found = []
    ours = template_slots()
    for kind in CHAIN:
        art = item.artifact(kind)
        # A draft is still being written: its template slots are the work left, not a
        # mistake, so `check --all` stays green the moment someone runs `loop new`. Once
        # it is submitted for review (or approved), a slot left is an error.
        drafting = art.status == "draft"
        for line, col, slot, in_code in _artifact_slots(art):
            if slot in ours:
                found.append(
                    Finding(
                        Level.WARNING if drafting else Level.ERROR,
                        "artifact.placeholder",
                        f"{art.path.name} still has the template's placeholder {slot}",
                        Where(art.path, line, col),
                        hint="write the real text in its place (markdown shows an unfilled "
                        "`<…>` as nothing at all); `loop approve` refuses it until then"
                        + ("; a warning while the file is a draft" if drafting else ""),
                    )
                )
            elif not in_code:
                found.append(
                    Finding(
                        Level.WARNING,
                        "artifact.angle-brackets",
                        f"{slot} in {art.path.name} shows as nothing in rendered markdown; "
                        "it may be a placeholder left unfilled",
                        Where(art.path, line, col),
                        hint=f"fill it in, or quote it as code (`{slot}`) if it stands for a value",
                    )
                )
    return found
