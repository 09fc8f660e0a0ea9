"""Creating, promoting and approving work items: ``loop new``, ``promote``, ``approve``."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from the_loop.checkpoint import transaction as checkpoint
from the_loop.checkpoint.resets import rename_item
from the_loop.dag.analysis import analyze
from the_loop.errors import RefusedError, UsageError, Where
from the_loop.findings import Level
from the_loop.io import atomic, clock, yamlio
from the_loop.io.templating import render
from the_loop.log.execution_log import record_transition
from the_loop.spec.approval import body_hash, locks, upstream_kinds
from the_loop.spec.front_matter import parse_front_matter, update_front_matter
from the_loop.spec.items import (
    ARTIFACT_FILES,
    Artifact,
    list_items,
    load_item,
    read_text,
    resolve_item,
)
from the_loop.spec.placeholders import artifact_placeholders
from the_loop.spec.project import ItemContext, Project
from the_loop.tasks import read_tasks

_SLUG_MAX = 48
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*$")


def slugify(title: str) -> str:
    """``"Add retries to the poller!"`` → ``add-retries-to-the-poller``.

    Accents are folded (``café`` → ``cafe``); a first word longer than the limit is cut.
    """
    folded = unicodedata.normalize("NFKD", title)
    ascii_text = "".join(ch for ch in folded if not unicodedata.combining(ch))
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > _SLUG_MAX:
            break
        slug = candidate
    if not slug and words:
        slug = words[0][:_SLUG_MAX]
    return slug or "item"


def check_item_id(item_id: str) -> str:
    """Accept ``issue-42``, ``PROJ-42``, ``draft-x``; a bare number becomes ``issue-N``."""
    if item_id.isdigit():
        return f"issue-{item_id}"
    if not _ID.match(item_id) or ".." in item_id:
        raise UsageError(
            f"{item_id!r} is not a usable work item id",
            hint="use letters, digits, '-', '_' or '.', e.g. issue-42 or PROJ-42",
        )
    return item_id


@dataclass(frozen=True)
class Created:
    """What ``loop new`` made."""

    item: str
    path: Path
    files: tuple[Path, ...]


def new_item(
    project: Project, title: str, *, item_id: str | None = None, bug: bool = False
) -> Created:
    """Create a work item folder with its first artifact and its execution log."""

    title = " ".join(title.split())
    if not title:
        raise UsageError("a work item needs a title", hint='loop new "Add retries to the poller"')
    name = check_item_id(item_id) if item_id else f"draft-{slugify(title)}"
    folder = project.spec_root / name
    first = "bugfix" if bug else "requirements"
    with checkpoint.locked(project.root):
        if folder.exists():
            raise RefusedError(
                f"{folder} already exists",
                hint="pick another --id or title, or `loop work-on` the existing item",
            )
        atomic.make_dirs(project.spec_root)
        # Build the folder aside and rename it into place: the item appears whole or not at all.
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=project.spec_root))
        except OSError as exc:
            raise atomic.write_error(folder, exc, "nothing was created") from exc
        try:
            names = []
            for kind in (first, "execution-log"):
                text = render(
                    f"{ARTIFACT_FILES[kind]}.j2",
                    item=name,
                    title=title,
                    phase="requirements-definition",
                )
                if kind == "execution-log":
                    text = record_transition(
                        text,
                        "requirements-definition",
                        clock.day(clock.utc_now()),
                        "",
                        "work item created",
                    )
                atomic.write_text(staging / ARTIFACT_FILES[kind], text)
                names.append(ARTIFACT_FILES[kind])
            os.chmod(staging, 0o755)
            os.rename(staging, folder)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise atomic.write_error(folder, exc, "nothing was created") from exc
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        files = [folder / n for n in names]
    return Created(name, folder, tuple(files))


def promote(project: Project, draft_ref: str, new_id: str, *, cwd: Path) -> Created:
    """Rename ``draft-<slug>/`` to its ticket id and rewrite ``workItem:`` in every file."""

    new_name = check_item_id(new_id)
    with checkpoint.locked(project.root):
        folder = resolve_item(project.spec_root, draft_ref, cwd=cwd)
        target = project.spec_root / new_name
        if target.exists():
            raise RefusedError(f"{target} already exists", hint="choose another id")
        changed = []
        for path in sorted(folder.glob("*.md")):
            text = read_text(path)
            front = parse_front_matter(text, path)
            new_text = text
            if front.present and not front.findings and front.get("workItem") != new_name:
                new_text = update_front_matter(text, path, {"workItem": new_name})
            # loop's own log template names the item in a command; keep it runnable
            new_text = new_text.replace(f"loop resume {folder.name}`", f"loop resume {new_name}`")
            if new_text != text:
                atomic.write_text(path, new_text)
                changed.append(path)
        atomic.landing_place(target)
        try:
            os.rename(folder, target)  # atomic on one filesystem: the item moves in one step
        except OSError as exc:
            raise atomic.write_error(target, exc, f"{folder.name} keeps its name") from exc

        rename_item(project.root, folder.name, new_name)
    return Created(new_name, target, tuple(target / p.name for p in changed))


@dataclass(frozen=True)
class Approved:
    """What ``loop approve`` recorded."""

    item: str
    artifact: str
    path: Path
    by: str
    hash: str
    changed: bool


# What `loop approve` accepts for each slot of the chain (bugfix fills requirements').
ARTIFACT_NAMES = {
    "brainstorm": "brainstorm",
    "brainstorm.md": "brainstorm",
    "requirements": "requirements",
    "requirements.md": "requirements",
    "bugfix": "requirements",
    "bugfix.md": "requirements",
    "design": "design",
    "design.md": "design",
    "testing-plan": "testing-plan",
    "testing-plan.md": "testing-plan",
    "tasks": "tasks",
    "tasks.md": "tasks",
}


def artifact_kind(name: str) -> str:
    """``requirements``/``bugfix``/``requirements.md`` … → the chain slot."""
    kind = ARTIFACT_NAMES.get(name.strip().lower())
    if kind is None:
        raise UsageError(
            f"{name!r} is not an artifact that can be approved",
            hint="one of: brainstorm, requirements (or bugfix), design, testing-plan, tasks",
        )
    return kind


def approve(ctx: ItemContext, artifact: str, by: str) -> Approved:
    """Lock an artifact: status approved, approver appended, content hash recorded."""
    kind = artifact_kind(artifact)
    by = by.strip()
    if not by:
        raise UsageError("--by needs a handle or name", hint="e.g. --by @alice")
    with checkpoint.locked(ctx.project.root):
        item = load_item(ctx.item.path, ctx.item.spec_root)
        current = locks(item)
        lock = current[kind]
        art = item.artifact(kind)
        if not lock.exists:
            raise RefusedError(
                f"{art.path.name} does not exist yet",
                where=Where(art.path),
                hint=f"`loop work-on {item.id}` says what to write first",
            )
        for up in upstream_kinds(item, kind):
            if not current[up].locked:
                state = "stale" if current[up].stale else (current[up].status or "missing")
                raise RefusedError(
                    f"cannot approve {art.path.name} while {current[up].path.name} is {state}",
                    where=Where(current[up].path),
                    hint="approve upstream first: "
                    f"`loop approve {item.id} {item.word(up)} --by {by}`",
                )
        _refuse_placeholders(item.id, art)
        if kind == "tasks":
            _refuse_broken_tasks(ctx, art.path)
        if lock.locked and lock.hash_recorded == lock.hash_now:
            return Approved(item.id, kind, art.path, by, lock.hash_now or "", False)
        text = read_text(art.path)
        front = parse_front_matter(text, art.path)
        approvers = list(front.get("approvedBy") or [])
        now = clock.utc_now()
        approvers.append(f"{by} ({clock.day(now)})")
        upstream = {
            current[up].path.name: current[up].hash_now for up in upstream_kinds(item, kind)
        }
        digest = body_hash(text, art.path)
        approval = {"hash": digest, "at": clock.minute_stamp(now)}
        if upstream:
            approval["upstream"] = upstream  # type: ignore[assignment]
        new_text = update_front_matter(
            text,
            art.path,
            {
                "status": "approved",
                "approvedBy": yamlio.flow_list(approvers),
                "approval": approval,
            },
        )
        atomic.write_text(art.path, new_text)
    return Approved(item.id, kind, art.path, by, digest, True)


def _refuse_placeholders(item_id: str, art: Artifact) -> None:
    """An artifact with a template slot left unfilled is not finished (check says so too)."""
    slots = artifact_placeholders(art)
    if slots:
        line, col, slot = slots[0]
        more = f" and {len(slots) - 1} more" if len(slots) > 1 else ""
        raise RefusedError(
            f"{art.path.name} still has the template's placeholder {slot}{more}; an "
            "unfinished artifact cannot be locked",
            where=Where(art.path, line, col),
            hint=f"write the real text in each `<…>`; `loop check {item_id}` lists them all",
        )


def _refuse_broken_tasks(ctx: ItemContext, path: Path) -> None:

    task_list = read_tasks(path)
    errors = [
        f for f in (*task_list.findings, *analyze(task_list).findings) if f.level is Level.ERROR
    ]
    if errors:
        first = errors[0]
        raise RefusedError(
            f"tasks.md has {len(errors)} error(s); a broken task graph cannot be locked "
            f"(first: {first.message})",
            where=first.where,
            hint=f"`loop check {ctx.item.id}` lists them all",
        )
    if not task_list.tasks:
        raise RefusedError(
            "tasks.md lists no tasks",
            where=Where(path),
            hint="add `- [ ] 1. <task>` items under ## Task list",
        )


def drafts(project: Project) -> list[Path]:
    """Draft work items (not yet promoted to a ticket id)."""
    return [p for p in list_items(project.spec_root) if p.name.startswith("draft-")]
