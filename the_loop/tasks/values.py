"""The grammar of field values: task ids, depends-on lists, requirement ids, test commands.

Pure string work: each function takes the text of one value and says what it
names, or ``None`` when it cannot be read with certainty; nothing here records
a field or reports a finding (``the_loop.tasks.assembly`` does both with the
answers). The grammar itself is described in ``the_loop.tasks``.

It is a module of its own because it is the part of the reader that grows as
templates and agents find new ways to write a list of ids, and because the
writer needs the task-id rules without the rest of the reader.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from the_loop.tasks.model import Task

if TYPE_CHECKING:
    from typing import Literal

# ---------------------------------------------------------------------------
# Task ids

# An id as a task line writes it (`3.`, `3)`, `3:`, `3 —`, `T3`, `Task 3`, `3.2`,
# `T12b`, `**T3`), the separator included; the task-line reader and the writer share
# it. A letter suffix (`T12b`) names a task inserted after 12 without renumbering.
ID_RE = re.compile(
    r"(?P<t>[Tt]ask[ \t]+|[Tt]-?)?(?P<num>[0-9]{1,9}(?:\.[0-9]{1,9})*[a-z]?)"
    r"(?P<sep>\.|\)|:|[ \t]*[—–]|[ \t]+-(?=[ \t]|$)|(?=\*\*)|(?=[ \t]|$))"
)


def canonical_id(number: str) -> str:
    """The canonical form of a task number: ``"03"`` → ``"3"``, ``"3.02"`` → ``"3.2"``.

    A letter suffix stays: ``"012b"`` → ``"12b"``.
    """
    # T03 and 3 are one task; lstrip (not int()) keeps any digit string safe.
    if number[0] != "0" and "." not in number:
        return number
    return ".".join(_strip_zeros(part) for part in number.split("."))


def _strip_zeros(part: str) -> str:
    stripped = part.lstrip("0")
    return stripped if stripped[:1].isdigit() else "0" + stripped


# ---------------------------------------------------------------------------
# Depends-on values

ALL: Literal["all"] = "all"
_MAX_RANGE = 100_000
_PAREN_RE = re.compile(r"\([^()]*\)")
# `—` (and `—.`, a sentence's end) means none as much as the word does.
_NONE_RE = re.compile(r"(?:none|nothing|n/a)(?![\w/])|[—–-]+\.?$", re.IGNORECASE)
_ALL_RE = re.compile(r"all(?:[ \t]+(?:other[ \t]+)?tasks)?(?:[ \t]+above)?\.?$", re.IGNORECASE)
_SIMPLE_DEPS_RE = re.compile(r"[0-9]{1,9}(?:, [0-9]{1,9})+$")
_DEP_SPLIT_RE = re.compile(r"[,;&+]|[ \t]and[ \t]", re.IGNORECASE)
_TASK_NUMBER = r"[0-9]{1,9}(?:\.[0-9]{1,9})*[a-z]?"
_DEP_ITEM_RE = re.compile(
    rf"(?:tasks?[ \t]+)?(?:[Tt]-?)?({_TASK_NUMBER})"
    rf"(?:[ \t]*(?:[–—-]|\.\.|to)[ \t]*(?:[Tt]-?)?({_TASK_NUMBER}))?"
)


def parse_depends(value: str) -> tuple[str, ...] | Literal["all"] | None:
    """Task ids named by a depends-on value, ``"all"``, or None when unreadable."""
    text = value.strip()
    if text.isdigit() and text.isascii():
        return (canonical_id(text),)
    if _SIMPLE_DEPS_RE.match(text):  # `1, 4, 7`
        if text[0] != "0" and ", 0" not in text:  # no leading zero: each is canonical
            return tuple(dict.fromkeys(text.split(", ")))
        return tuple(dict.fromkeys(canonical_id(n) for n in text.split(", ")))
    if _NONE_RE.match(text):
        return ()
    text = _PAREN_RE.sub(" ", text).strip().rstrip(".").strip()
    if _ALL_RE.match(text):
        return ALL
    if not text:
        return None
    ids: dict[str, None] = {}
    for token in _DEP_SPLIT_RE.split(text):
        token = token.strip()
        if not token:
            continue
        m = _DEP_ITEM_RE.fullmatch(token.lower() if token[:4].lower() == "task" else token)
        if m is None:
            return None
        if m.group(2) is None:
            ids[canonical_id(m.group(1))] = None
            continue
        expanded = _expand(m.group(1), m.group(2))
        if expanded is None:
            return None
        ids.update(dict.fromkeys(expanded))
    return tuple(ids) if ids else None


def _expand(first: str, last: str) -> list[str] | None:
    """The ids from ``first`` to ``last`` (same depth, last part counting up).

    Only numbers expand: a range with a letter-suffixed end (``12b–12d``) is not
    read, since it is unclear whether ``12``, ``13`` or ``12c`` lie inside it.
    """
    a = [_strip_zeros(p) for p in first.split(".")]
    b = [_strip_zeros(p) for p in last.split(".")]
    if not (a[-1].isdigit() and b[-1].isdigit()):
        return None
    if len(b) < len(a):
        b = a[: len(a) - len(b)] + b  # `R1.1–7` means R1.1–R1.7
    if len(a) != len(b) or a[:-1] != b[:-1]:
        return None
    low, high = int(a[-1]), int(b[-1])
    if low > high or high - low >= _MAX_RANGE:
        return None
    head = ".".join(a[:-1])
    return [f"{head}.{n}" if head else str(n) for n in range(low, high + 1)]


# ---------------------------------------------------------------------------
# Requirement citations
#
# A citation token is an id of some family: `R1`, `R1.2`, `R1a.1`, `AC7`, `AC2.1`,
# `FR3`, `NFR1`, `US4` or `REQ-2`; a bare criterion number `1.2`; `NFR` alone (the
# non-functional section); `req 2`. Ranges join two ids (`R1.1–R1.4`, `AC2.1–2.3`,
# `AC 1–3`). Which family means what is for the traceability check to decide; here
# each token is only read, canonically: upper-case family, no space or dash.

# The families a reader meets in requirement files; other upper-case families
# (`D2` design decisions, `A5` abuse cases) are still read, but only outside
# parentheses, where they are listed on purpose.
REQUIREMENT_FAMILIES = ("R", "AC", "FR", "NFR", "REQ")
_REQ_NUMBER = r"[0-9]{1,9}[a-z]?(?:\.[0-9]{1,9}[a-z]?)*"
_FAMILY = r"(?:(?i:nfr|fr|ac|req|r)|[A-Z]{1,5})"
_CITE_RE = re.compile(
    r"(?<![\w-])(?P<nfr>NFR)(?![\w-])(?:[ \t]+(?![A-Z]{1,5}[ \t]?[0-9])[A-Za-z][\w-]*)?|"
    rf"(?<![\w.#/§@-])(?:(?P<p>{_FAMILY})(?:[ \t]?-?[ \t]?))?(?P<a>{_REQ_NUMBER})"
    rf"(?:[ \t]*(?:[–—-]|\.\.)[ \t]*(?:(?P<q>{_FAMILY})[ \t]?-?)?(?P<b>{_REQ_NUMBER}))?"
    r"(?![\w])"
)
_REQ_WORD_RE = re.compile(r"(?<![\w-])req(?:uirement)?[ \t]+(?=[0-9])", re.IGNORECASE)
_AC_BEFORE_R_RE = re.compile(r"(?<![\w-])AC[ \t]+(?=R[0-9])")
# Phrases with numbers that cite something other than a requirement: dropped unread.
_NOT_CITATIONS_RE = re.compile(
    r"`[^`]*`"  # code
    r"|\]\([^)]*\)"  # a link's target (its text, `[R1.1]`, is read)
    r"|https?://\S+"
    # a section of some document by its number: `abuse cases 1 & 3`, `steps 2 and 4`
    r"|(?i:(?:security[ \t]+)?abuse[ \t]+cases?|sections?|steps?|scenarios?|cases?)"
    r"[ \t]*[0-9][0-9 \t,&–—-]*(?:(?i:and)[ \t]+[0-9]+)?"
    r"|(?i:(?:security|design)[ \t]+)?§[ \t]*[0-9][0-9.]*(?:[ \t]*[–—-][ \t]*§?[ \t]*[0-9][0-9.]*)?"
)
_SIMPLE_REQS_RE = re.compile(r"(?:(?:NFR|FR|AC|R)[1-9][0-9]{0,8}(?:\.[1-9][0-9]{0,8})?(?:, |$))+$")
_ID_LIKE_RE = re.compile(r"(?<![\w.#])[A-Za-z]*[-_]?[0-9][\w.-]*")
# A letter, or a digit that is not a decimal (`²`): without one, quiet text names nothing.
_LETTER_RE = re.compile(r"[^\W\d_]")
_ALL_REQ_RE = re.compile(r"[ \t]*all\b", re.IGNORECASE)


class Requirements:
    """The ids a requirements value names, in order, and id-like tokens that are not ids.

    A plain class with slots, read only (one reading may be shared): a
    ``typing.NamedTuple`` would import typing into every cold start.
    """

    __slots__ = ("ids", "malformed")

    def __init__(self, ids: tuple[str, ...], malformed: tuple[str, ...]) -> None:
        self.ids = ids
        self.malformed = malformed


# Simple values read so far (`R3` → its reading); the readings are immutable, so
# each is shared. Bounded: a file spells its citations in few ways.
_READ: dict[str, Requirements] = {}


def parse_requirements(value: str, *, quiet: bool = False) -> Requirements:
    """Citation tokens in ``value``; id-like tokens outside parentheses that are not ids.

    ``quiet`` reads ``value`` as prose in parentheses: only ids of the requirement
    families are taken and nothing is reported.
    """
    if not quiet:
        seen = _READ.get(value)
        if seen is not None:
            return seen
    if _SIMPLE_REQS_RE.match(value):  # `R1, R2.3, AC7`: ids as written, the common case
        found = Requirements(tuple(dict.fromkeys(value.split(", "))), ())
        if not quiet and len(_READ) < 1024:  # a file cites a few values many times
            _READ[value] = found
        return found
    if quiet and not _LETTER_RE.search(value):
        # Quietly only a family's id (`R1`, `NFR`) or `all` is taken, and each has a
        # letter: a title's `(2)` or `(1/3)` names nothing, without the passes below.
        return Requirements((), ())
    ids: dict[str, None] = {}
    malformed: list[str] = []
    if _ALL_REQ_RE.match(value):
        ids[ALL] = None
    text = _NOT_CITATIONS_RE.sub(" ", value)
    text = _AC_BEFORE_R_RE.sub("", text)  # `AC R1.2`: the AC prefix applied to an R id
    text = _REQ_WORD_RE.sub("REQ", text)
    if not quiet:
        text = _PAREN_RE.sub(lambda m: _collect_quietly(m.group(), ids), text)
    for m in _CITE_RE.finditer(text):
        expanded = _citation_ids(m, quiet=quiet)
        if expanded is None:
            if not quiet:
                malformed.append(m.group())
        else:
            ids.update(dict.fromkeys(expanded))
    if not quiet:
        leftover = _CITE_RE.sub(" ", text)
        malformed.extend(t.rstrip(".-") for t in _ID_LIKE_RE.findall(leftover))
    return Requirements(tuple(ids), tuple(malformed))


def _collect_quietly(group: str, ids: dict[str, None]) -> str:
    # Parentheses hold prose ("(design D2)", "(receiver)"): take ids, report nothing.
    ids.update(dict.fromkeys(parse_requirements(group[1:-1], quiet=True).ids))
    return " , "


def quiet_ids(value: str) -> tuple[str, ...]:
    """The ids ``parse_requirements(value, quiet=True)`` finds (prose in parentheses)."""
    if not _LETTER_RE.search(value):
        return ()  # a title's `(2)`: the quiet reading takes nothing without a letter
    return parse_requirements(value, quiet=True).ids


def _citation_ids(m: re.Match[str], *, quiet: bool) -> list[str] | None:
    """The canonical tokens one match names; None when it does not read as a citation."""
    if m.group("nfr"):
        return ["NFR"]  # the non-functional requirements as a whole (`NFR back-compat`)
    prefix = (m.group("p") or "").upper()
    if quiet and prefix not in REQUIREMENT_FAMILIES:
        return [] if prefix else None  # `(design D2)`, `(tests 1–8)`: prose
    a = m.group("a")
    if not prefix and "." not in a:
        return None  # a lone number cites nothing: `7`, `cases 1–3`
    if m.group("b") is None:
        return [prefix + ".".join(_strip_zeros(p) for p in a.split("."))]  # FR-001 is FR1
    other = (m.group("q") or "").upper()
    if other and other != prefix:
        return None
    numbers = _expand(a, m.group("b"))
    return None if numbers is None else [prefix + n for n in numbers]


# ---------------------------------------------------------------------------
# Test commands


def test_command(task: Task) -> list[str] | None:
    """The command in the first code span of the task's ``_Test:_``, split like a shell.

    A leading test-plan row label (``T2 — pytest …``) is dropped. None when the
    test has no code span or the span cannot be split (unbalanced quotes).
    """
    if task.test is None:
        return None
    span = _first_code_span(task.test)
    if span is None:
        return None
    return _split_command(span)


def test_text(task: Task) -> str | None:
    """The command text of the task's ``_Test:_``: its first code span, row label dropped."""
    if task.test is None:
        return None
    span = _first_code_span(task.test)
    return _command_text(span) if span is not None else None


def unsplittable_span(value: str) -> str | None:
    """The code span of a ``_Test:_`` value that ``test_command`` could not split, if any."""
    if '"' not in value and "'" not in value and "\\" not in value:
        return None  # shlex can only fail on quotes or backslashes
    span = _first_code_span(value)
    if span is None:
        return None
    try:
        shlex.split(_command_text(span))
    except ValueError:
        return span
    return None


_CODE_RUN_RE = re.compile(r"`+")
# `T2 — pytest …`, `T1/T8 — pytest …`: the test-plan rows the command stands for.
_ROW_LABEL_RE = re.compile(r"T[0-9]+[a-z]?(?:[ \t]*[/,&+][ \t]*T?[0-9]+[a-z]?)*[ \t]+[—–-][ \t]+")


def _first_code_span(text: str) -> str | None:
    """The content of the first code span, as CommonMark pairs backtick runs.

    A run opens a span only if a later run has the same length; the span that
    opens first wins. Runs are grouped by length, so this is one pass.
    """
    first_run: dict[int, re.Match[str] | None] = {}
    best: tuple[re.Match[str], re.Match[str]] | None = None
    for run in _CODE_RUN_RE.finditer(text):
        length = len(run.group())
        if length not in first_run:
            first_run[length] = run
            continue
        opener = first_run[length]
        if opener is not None and (best is None or opener.start() < best[0].start()):
            best = (opener, run)
        first_run[length] = None  # later runs of this length come after a closed span
    return text[best[0].end() : best[1].start()].strip() if best else None


def _split_command(span: str) -> list[str] | None:
    try:
        argv = shlex.split(_command_text(span))
    except ValueError:
        return None
    return argv or None


def _command_text(span: str) -> str:
    # The HEAD template names a test-plan row inside the span: `T2 — pytest …`.
    row = _ROW_LABEL_RE.match(span)
    return span[row.end() :] if row else span
