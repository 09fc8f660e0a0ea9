"""``loop adopt``: record a Kiro or Spec Kit item's outside approvals as loop locks.

Kiro and Spec Kit approve in the IDE or the chat, and their files carry no front
matter, so loop reads their artifacts as approved "externally" (``lock.external``)
and never sends an agent back to write them. A user who wants loop's locks (a hash
per artifact, staleness when one changes) adopts the item: each artifact that has
no front matter gets a block naming its type and item, and is then approved
through ``loop approve``'s own path, upstream first, so the hashes and the
upstream record are exactly those ``approve`` writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from the_loop.errors import RefusedError, Where
from the_loop.io import atomic
from the_loop.spec.items import CHAIN, load_item, read_text
from the_loop.spec.project import ItemContext
from the_loop.workflow.item_lifecycle import Approved, approve


@dataclass(frozen=True)
class Adopted:
    """What ``loop adopt`` did: each artifact it locked, in chain order."""

    item: str
    approved: tuple[Approved, ...]


def adopt(ctx: ItemContext, by: str) -> Adopted:
    """Give every front-matter-less artifact of the item front matter, then approve it."""
    item = ctx.item
    if not item.external_approvals:
        raise RefusedError(
            f"{item.id} is a the-loop item: its approvals are already loop's",
            where=Where(item.path),
            hint=f"`loop approve {item.id} <artifact> --by {by}` locks one artifact",
        )
    done: list[Approved] = []
    for kind in CHAIN:
        art = load_item(item.path, item.spec_root).artifact(kind)
        if not art.exists:
            continue
        if art.front is None or not art.front.present:
            _add_front_matter(art.path, kind, item.id)
        done.append(approve(ctx, kind, by))
    return Adopted(item.id, tuple(done))


def _add_front_matter(path: Path, kind: str, item_id: str) -> None:
    """Put a draft front-matter block above the file's text, every byte of which stays."""
    text = read_text(path)
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    newline = "\r\n" if "\r\n" in text else "\n"
    head = newline.join(
        ["---", f"type: {kind}", f"workItem: {item_id}", "status: draft", "approvedBy: []", "---"]
    )
    atomic.write_text(path, bom + head + newline + text[len(bom) :])
