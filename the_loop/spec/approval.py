"""Locks: approvals, content hashes and staleness.

``loop approve`` sets ``status: approved``, appends to ``approvedBy`` and
records, in the artifact's front matter, a hash of its body and the hashes of
its upstream artifacts at that moment::

    approval:
      hash: sha256:3fa94c0e51d2b7a8
      upstream: {requirements.md: sha256:9ab0c4d2e1f37a55}
      at: 2026-11-30T12:00Z

An approved artifact is *stale* when its body changed since, when an upstream
artifact changed since (even if that one was re-approved), or when an upstream
artifact is itself unlocked or stale. The hash ignores checkbox state, so
ticking tasks never makes ``tasks.md`` stale; editing a task's text does.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import Where
from the_loop.findings import Finding, Level
from the_loop.spec.front_matter import FrontMatter, parse_front_matter
from the_loop.spec.items import CHAIN, OPTIONAL_ARTIFACTS, Artifact, WorkItem

# A ticked or started checkbox; an open one ([ ]) is already in normal form. This is
# the definition; ``unticked`` applies it without trying a match at every character.
_CHECKED = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)\[[xX\-]\]", re.MULTILINE)
_PREFIX = "sha256:"


def body_hash(text: str, path: Path, front: FrontMatter | None = None) -> str:
    """The lock hash of an artifact: its body, line endings and checkboxes normalized.

    ``front`` is the front matter already read from ``text``, if the caller has it.
    """
    if front is None:
        front = parse_front_matter(text, path)
    body = text[front.body_offset :] if front.present and not front.findings else text
    body = unticked(body.replace("\r\n", "\n"))
    return _PREFIX + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


_MARK = re.compile(r"\[[xX\-]\]")


def unticked(text: str) -> str:
    """``text`` with every list checkbox set to ``[ ]``: what ``_CHECKED.sub(r"\1[ ]", …)`` gives.

    The regex tries a match at every character; on a 100k-task file that is most
    of the hash. This looks only at the marks ``[x]``, ``[X]`` and ``[-]`` and
    checks, backwards, that a list marker at the start of a line leads to each.
    tests/spec/test_lock_hash.py holds the two to the same answers.
    """
    pieces: list[str] = []
    last = 0
    for mark in _MARK.finditer(text):
        at = mark.start()
        if _after_list_marker(text, at):
            pieces.append(text[last:at])
            pieces.append("[ ]")
            last = at + 3
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _after_list_marker(text: str, at: int) -> bool:
    """Whether ``text[:at]`` ends as ``_CHECKED``'s group 1: ``^\\s*(?:[-*+]|\\d+[.)])\\s+``."""
    gap = at
    while gap > 0 and text[gap - 1].isspace():
        gap -= 1
    if gap == at or gap == 0:
        return False  # no space between marker and box, or no marker
    start = gap - 1
    if text[start] in ".)":
        while start > 0 and text[start - 1].isdecimal():
            start -= 1
        if start == gap - 1:
            return False  # "." or ")" without a number
    elif text[start] not in "-*+":
        return False
    indent = start
    while indent > 0 and text[indent - 1].isspace():
        indent -= 1
    # A line starts where the indent begins (at the text's start) or inside it.
    return indent == 0 or "\n" in text[indent:start]


def upstream_kinds(item: WorkItem, kind: str) -> list[str]:
    """The artifacts ``kind`` is derived from (an optional one counts only when it exists)."""
    index = CHAIN.index(kind)
    return [k for k in CHAIN[:index] if k not in OPTIONAL_ARTIFACTS or item.artifacts[k].exists]


@dataclass(frozen=True)
class Lock:
    """The lock state of one artifact."""

    kind: str
    path: Path
    exists: bool
    status: str | None
    approved: bool
    hash_now: str | None
    hash_recorded: str | None
    stale_reasons: tuple[str, ...]

    @property
    def locked(self) -> bool:
        """Approved and not stale: downstream work may rely on it."""
        return self.approved and not self.stale_reasons

    @property
    def stale(self) -> bool:
        return self.approved and bool(self.stale_reasons)

    @property
    def label(self) -> str:
        if not self.exists:
            return "missing"
        if self.stale:
            return "stale"
        return self.status or "no status"

    def to_json(self) -> dict[str, object]:
        return {
            "artifact": self.path.name,
            "exists": self.exists,
            "status": self.status,
            "locked": self.locked,
            "stale": self.stale,
            "staleBecause": list(self.stale_reasons),
            "hash": self.hash_now,
            "approvedHash": self.hash_recorded,
        }


def locks(
    item: WorkItem, hash_of: Callable[[Artifact], str | None] | None = None
) -> dict[str, Lock]:
    """The lock state of every artifact in the chain, upstream first.

    ``hash_of`` gives an artifact's current lock hash (default: ``current_hash``;
    a report passes one that remembers the hashes of large files).
    """
    hash_of = hash_of or current_hash
    result: dict[str, Lock] = {}
    hashes: dict[str, str | None] = {}
    for kind in CHAIN:
        art = item.artifact(kind)
        hashes[kind] = hash_of(art)
        result[kind] = _lock(item, art, kind, hashes, result)
    return result


def current_hash(art: Artifact) -> str | None:
    """The lock hash of ``art`` as it is now (None when it is missing or unreadable)."""
    # An unreadable file has no text (the item reader reports it) and no hash.
    return body_hash(art.text, art.path, art.front) if art.text is not None else None


def _recorded(art: Artifact) -> tuple[str | None, dict[str, str]]:
    approval = art.front.get("approval") if art.front else None
    if not isinstance(approval, dict):
        return None, {}
    upstream = approval.get("upstream")
    recorded = approval.get("hash")
    return (
        str(recorded) if recorded else None,
        {str(k): str(v) for k, v in upstream.items()} if isinstance(upstream, dict) else {},
    )


def _lock(
    item: WorkItem, art: Artifact, kind: str, hashes: dict[str, str | None], done: dict[str, Lock]
) -> Lock:
    recorded, upstream = _recorded(art)
    reasons: list[str] = []
    if art.approved:
        now = hashes[kind]
        if recorded and now and recorded != now:
            reasons.append(f"{art.path.name} changed since it was approved")
        for up in upstream_kinds(item, kind):
            up_lock = done[up]
            up_name = up_lock.path.name
            if not up_lock.locked:
                state = "stale" if up_lock.stale else (up_lock.status or "missing")
                reasons.append(f"upstream {up_name} is {state}")
            elif up_name in upstream and upstream[up_name] != hashes[up]:
                reasons.append(f"{up_name} changed since {art.path.name} was approved")
    if item.external_approvals and art.exists and not (art.front and art.front.present):
        # Kiro and Spec Kit approve in the IDE or the chat and leave no trace in the file:
        # an approval loop cannot see is "external", never a reason to write it again.
        return Lock(kind, art.path, True, EXTERNAL, True, hashes[kind], None, ())
    return Lock(
        kind, art.path, art.exists, art.status, art.approved, hashes[kind], recorded, tuple(reasons)
    )


EXTERNAL = "external"  # the status of an artifact whose approval happens outside loop


def lock_findings(item: WorkItem, lock_map: dict[str, Lock]) -> list[Finding]:
    """Stale locks (errors) and approvals without a recorded hash (info)."""
    findings = []
    for kind in CHAIN:
        word = item.word(kind)
        lock = lock_map[kind]
        art = item.artifact(kind)
        line = art.front.line_of("status") if art.front else None
        if lock.stale:
            findings.append(
                Finding(
                    Level.ERROR,
                    "lock.stale",
                    f"{lock.path.name} is approved but stale: " + "; ".join(lock.stale_reasons),
                    Where(lock.path, line),
                    hint=_relock_hint(item, lock_map, kind, word),
                )
            )
        elif lock.status == EXTERNAL:
            findings.append(
                Finding(
                    Level.INFO,
                    "lock.external",
                    f"{lock.path.name} has no front matter: its approval ({item.format}) happens "
                    "outside loop, so loop takes it as approved",
                    Where(lock.path, 1),
                    hint=f"`loop adopt {item.id}` records the approvals as loop locks",
                )
            )
        elif lock.approved and lock.hash_recorded is None:
            findings.append(
                Finding(
                    Level.INFO,
                    "lock.no-hash",
                    f"{lock.path.name} is approved without a recorded hash, so later edits "
                    "cannot be detected",
                    Where(lock.path, line),
                    hint=f"`loop approve {item.id} {word} --by @you` records one",
                )
            )
    return findings


def _relock_hint(item: WorkItem, lock_map: dict[str, Lock], kind: str, word: str) -> str:
    """Re-approving is refused while an upstream artifact is unlocked: name that one first."""
    unlocked = [up for up in upstream_kinds(item, kind) if not lock_map[up].locked]
    if unlocked:
        first = unlocked[0]
        return (
            f"first `loop approve {item.id} {item.word(first)} --by @you` "
            f"({lock_map[first].path.name} is {lock_map[first].label}), then review "
            f"{lock_map[kind].path.name} and `loop approve {item.id} {word} --by @you`"
        )
    return f"review it, then `loop approve {item.id} {word} --by @you` re-locks it"


def written_ahead(item: WorkItem, lock_map: dict[str, Lock]) -> list[Finding]:
    """Artifacts written while an upstream one was not approved yet (warnings).

    Nothing downstream is to be written against an unlocked artifact; a stale
    upstream is reported by ``lock_findings`` already, so only draft, in-review
    and missing upstreams count here.
    """
    findings = []
    for kind in CHAIN[2:]:  # design, testing-plan, tasks
        lock = lock_map[kind]
        if not lock.exists:
            continue
        for up in upstream_kinds(item, kind):
            upstream = lock_map[up]
            if upstream.approved:
                continue
            state = upstream.status if upstream.exists else "missing"
            findings.append(
                Finding(
                    Level.WARNING,
                    "lock.written-ahead",
                    f"{lock.path.name} was written while {upstream.path.name} is "
                    f"{state or 'draft'}: work ran ahead of the lock",
                    Where(lock.path, 1),
                    hint=f"review {upstream.path.name}, then `loop approve {item.id} "
                    f"{item.word(up)} --by @you`; re-check {lock.path.name} against it",
                )
            )
            break
    return findings
