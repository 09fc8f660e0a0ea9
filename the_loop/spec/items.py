"""Work items: resolving ids to folders and reading their artifacts.

A work item is a folder ``<specDir>/<id>/`` holding ``requirements.md`` or
``bugfix.md``, ``design.md``, ``tasks.md``, ``execution-log.md`` and
optionally ``brainstorm.md`` and ``testing-plan.md`` (the upstream format's
test-planning phase). Ids resolve leniently (``42``, ``issue-42``,
``PROJ-42``, ``draft-<slug>``, ``github:owner/repo#42`` or a path) but never to
anything outside the spec folder.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from the_loop.config.loader import OverrideSource
from the_loop.errors import UnusableInputError, UsageError, Where
from the_loop.findings import Finding, Level
from the_loop.io.textfile import SPEC_LIMIT, decode_utf8, read_limited
from the_loop.spec.front_matter import FrontMatter, parse_front_matter
from the_loop.tasks.order import detect_format

ARTIFACT_FILES = {
    "brainstorm": "brainstorm.md",
    "requirements": "requirements.md",
    "bugfix": "bugfix.md",
    "design": "design.md",
    "testing-plan": "testing-plan.md",
    "tasks": "tasks.md",
    "execution-log": "execution-log.md",
}
# The chain of locks, upstream first; requirements and bugfix fill one slot.
CHAIN = ("brainstorm", "requirements", "design", "testing-plan", "tasks")
# Links of the chain that count only when their file exists, with the phase that
# writes each. When that phase is in `workflow.phases`, the artifact is also the
# next one to write once its upstream is locked (as long as nothing after it
# exists yet: an item planned before the phase was listed is not held back).
OPTIONAL_ARTIFACTS = {"brainstorm": "brainstorming", "testing-plan": "test-planning"}
# Spec Kit's names for two links of the chain (``specs/NNN-feature/``): read in their
# place when the item has no file of loop's name.
SPEC_KIT_FILES = {"requirements": "spec.md", "design": "plan.md"}
# The formats an item may be written in (``item_format``); ``loop status`` shows it.
THE_LOOP, KIRO, SPEC_KIT = "the-loop", "kiro", "spec-kit"
STATUSES = ("draft", "in-review", "approved")
HEAD_LIMIT = 64 * 1024  # front matter is read from the head of large logs only


@dataclass(frozen=True)
class Artifact:
    """One artifact file of a work item (it may not exist yet)."""

    kind: str
    path: Path
    exists: bool
    front: FrontMatter | None
    # The text read for the front matter, kept so nothing reads the file again:
    # the whole file, except for an execution log over 64 KB (its head only);
    # None when the file is missing or unreadable.
    text: str | None = None

    @property
    def status(self) -> str | None:
        value = self.front.get("status") if self.front else None
        return str(value) if value is not None else None

    @property
    def approved(self) -> bool:
        return self.status == "approved"


@dataclass(frozen=True)
class WorkItem:
    """A work item folder and what its artifacts' front matter says."""

    id: str
    path: Path
    spec_root: Path
    artifacts: dict[str, Artifact]
    findings: tuple[Finding, ...]
    # "the-loop", "kiro" or "spec-kit" (``item_format``): Kiro and Spec Kit write no
    # front matter, so their approvals happen where loop cannot see them.
    format: str = THE_LOOP

    @property
    def external_approvals(self) -> bool:
        """Whether approvals of this item happen outside its files (Kiro, Spec Kit)."""
        return self.format != THE_LOOP

    def artifact(self, kind: str) -> Artifact:
        """The artifact for ``kind``; ``requirements`` means whichever of requirements/bugfix."""
        if kind == "requirements":
            return self.requirements
        return self.artifacts[kind]

    @property
    def requirements(self) -> Artifact:
        """``bugfix.md`` when present (and requirements.md is not), else ``requirements.md``."""
        req, bug = self.artifacts["requirements"], self.artifacts["bugfix"]
        return bug if bug.exists and not req.exists else req

    @property
    def is_bug(self) -> bool:
        return self.requirements.kind == "bugfix"

    def word(self, kind: str) -> str:
        """The name a person uses for a chain slot: ``bugfix`` for a bug's requirements."""
        return "bugfix" if kind == "requirements" and self.is_bug else kind

    def in_chain(self, kind: str, phases: tuple[str, ...]) -> bool:
        """Whether ``kind`` is a link of this item's chain under the configured ``phases``.

        The required links always are; an optional one (``OPTIONAL_ARTIFACTS``) when
        its file exists, or (``testing-plan``) when its phase is listed and the
        artifact after it, ``tasks.md``, is not written yet.
        """
        phase = OPTIONAL_ARTIFACTS.get(kind)
        if phase is None or self.artifacts[kind].exists:
            return True
        return kind != "brainstorm" and phase in phases and not self.artifacts["tasks"].exists

    def override_sources(self) -> list[OverrideSource]:
        """Front-matter ``overrides`` in precedence order (a later artifact wins)."""
        sources = []
        for kind in CHAIN:
            art = self.artifact(kind)
            front = art.front
            if front is None or not isinstance(front.node, dict):
                continue
            node = front.node.get("overrides")
            if node and not front.positioned and art.text is not None:
                # Config errors point at file:line: load the block with positions.
                front = parse_front_matter(art.text, art.path, round_trip=True)
                node = front.node.get("overrides") if isinstance(front.node, dict) else None
            if node is not None:
                sources.append(OverrideSource(art.path, node, front.first_line))
        return sources


_NUMBER = re.compile(r"^#?(\d+)$")
_REF_NUMBER = re.compile(r"^[\w.-]+:[\w.-]+/[\w.-]+#(\d+)$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def natural_key(name: str) -> tuple[object, ...]:
    """Sort ``issue-2`` before ``issue-10``."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def list_items(spec_root: Path) -> list[Path]:
    """Every work-item folder under the spec folder, in natural order."""
    if not spec_root.is_dir():
        return []
    names = {*ARTIFACT_FILES.values(), *SPEC_KIT_FILES.values()}
    with os.scandir(spec_root) as entries:
        folders = [
            spec_root / entry.name
            for entry in entries
            if entry.is_dir() and not names.isdisjoint(_files_in(entry.path))
        ]
    return sorted(folders, key=lambda p: natural_key(p.name))


def _files_in(folder: str | Path) -> set[str]:
    """The names of the regular files (or links to them) in ``folder``: one directory read."""
    try:
        with os.scandir(folder) as entries:
            return {entry.name for entry in entries if entry.is_file()}
    except OSError:  # gone, or not a folder: it holds nothing
        return set()


def resolve_item(spec_root: Path, ref: str, *, cwd: Path) -> Path:
    """The folder of the work item ``ref`` names; ``UsageError`` when none or several."""
    ref = ref.strip()
    if not ref:
        raise UsageError("no work item given", hint="name one, e.g. `42` or `issue-42`")
    if "/" in ref and not _REF_NUMBER.match(ref) or ref in (".", ".."):
        return _resolve_path(spec_root, Path(ref), cwd)
    number = _NUMBER.match(ref) or _REF_NUMBER.match(ref)
    if not _SAFE_NAME.match(ref) and not number:
        raise UsageError(
            f"{ref!r} is not a work item id", hint="ids look like 42, issue-42 or PROJ-42"
        )
    items = list_items(spec_root)
    exact = [p for p in items if p.name == ref] or [
        p for p in items if p.name.lower() == ref.lower()
    ]
    if exact:
        return exact[0]
    if number:
        n = number.group(1).lstrip("0") or "0"
        # `42` is issue-42 or PROJ-42; `3` is also Spec Kit's `003-export`.
        matches = [p for p in items if re.fullmatch(rf"[A-Za-z][\w]*-0*{n}|0*{n}-[\w.-]+", p.name)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            names = ", ".join(p.name for p in matches)
            raise UsageError(
                f"{ref!r} matches several work items: {names}", hint="name one of them in full"
            )
    raise _not_found(spec_root, ref, items)


def _resolve_path(spec_root: Path, ref: Path, cwd: Path) -> Path:
    target = (ref if ref.is_absolute() else cwd / ref).resolve()
    root = spec_root.resolve()
    if target.is_file():
        target = target.parent
    if not target.is_relative_to(root) or target == root:
        raise UsageError(
            f"{ref} is not a work item inside the spec folder {spec_root}",
            hint="work items are folders directly under the spec folder (workflow.specDir)",
        )
    item = root / target.relative_to(root).parts[0]
    if not item.is_dir():
        raise _not_found(spec_root, str(ref), list_items(spec_root))
    return item


def _not_found(spec_root: Path, ref: str, items: list[Path]) -> UsageError:

    names = [p.name for p in items]
    close = difflib.get_close_matches(ref, names, n=3)
    if close:
        hint = "did you mean " + " or ".join(close) + "?"
    elif names:
        hint = f"{len(names)} work items exist; `loop status --all` lists them"
    else:
        hint = 'there are no work items yet; `loop new "<title>"` creates one'
    return UsageError(f"no work item {ref!r} in {spec_root}", hint=hint)


def load_item(folder: Path, spec_root: Path) -> WorkItem:
    """Read the front matter of every artifact in ``folder`` (tolerantly)."""
    artifacts = {}
    findings: list[Finding] = []
    present = _files_in(folder)
    for kind, name in ARTIFACT_FILES.items():
        spec_kit_name = SPEC_KIT_FILES.get(kind)
        if spec_kit_name in present and name not in present:
            name = spec_kit_name  # Spec Kit's spec.md / plan.md stand in their place
        path = folder / name
        front, text = (
            _read_front(path, large=kind == "execution-log") if name in present else (None, None)
        )
        artifacts[kind] = Artifact(kind, path, front is not None, front, text)
        if front is not None:
            findings.extend(front.findings)
            findings.extend(_front_checks(kind, front))
    req, bug = artifacts["requirements"], artifacts["bugfix"]
    if req.exists and bug.exists:
        findings.append(
            Finding(
                Level.ERROR,
                "item.requirements-and-bugfix",
                "the work item has both requirements.md and bugfix.md",
                Where(bug.path, 1),
                hint="keep exactly one: requirements.md for features, bugfix.md for bugs",
            )
        )
    fmt = item_format(folder, present, artifacts)
    if fmt != THE_LOOP:
        # No front matter is the format, not a defect: approvals happen elsewhere.
        findings = [f for f in findings if f.code != "item.no-front-matter"]
    return WorkItem(folder.name, folder, spec_root, artifacts, tuple(findings), fmt)


def item_format(folder: Path, present: set[str], artifacts: dict[str, Artifact]) -> str:
    """The format an item is written in: where it lives, then what its files hold.

    ``.kiro/specs/<feature>/`` is Kiro's; a folder with ``spec.md`` (and no
    ``requirements.md``) is Spec Kit's. Elsewhere an item whose artifacts carry no
    front matter at all, that has no execution log and that is written in Kiro's
    forms (``### Requirement N`` with a ``**User Story:**``, or a Kiro task list)
    is Kiro's; anything else is the-loop's (and a missing front matter a finding).
    """
    if ".kiro" in folder.parts:
        return KIRO
    if "spec.md" in present and "requirements.md" not in present:
        return SPEC_KIT
    chain = [a for k, a in artifacts.items() if k != "execution-log" and a.exists]
    if not chain or artifacts["execution-log"].exists:
        return THE_LOOP
    if any(a.front is not None and a.front.present for a in chain):
        return THE_LOOP
    requirements, tasks = artifacts["requirements"], artifacts["tasks"]
    if requirements.text is not None and _KIRO_REQUIREMENTS.search(requirements.text):
        return KIRO
    if tasks.text is not None:
        if detect_format(tasks.path, tasks.text) == KIRO:
            return KIRO
    return THE_LOOP


# Kiro's requirements: `### Requirement 1` headings with a `**User Story:**` line.
_KIRO_REQUIREMENTS = re.compile(r"^\*\*User Story:?\*\*|^#{2,4}[ \t]+Acceptance Criteria", re.M)


def read_text(path: Path) -> str:
    """A spec file's text; ``UnusableInputError`` with a line when it is not UTF-8."""
    try:
        raw = read_limited(path, SPEC_LIMIT, what="spec file")
    except OSError as exc:
        raise UnusableInputError(f"cannot read: {exc.strerror}", where=Where(path)) from exc
    return decode_utf8(raw, path)


def _read_front(path: Path, *, large: bool) -> tuple[FrontMatter, str | None]:
    """The front matter of ``path`` and the text it was read from."""
    if large and path.stat().st_size > HEAD_LIMIT:
        with path.open("rb") as handle:
            head = handle.read(HEAD_LIMIT).decode("utf-8", errors="replace")
        return parse_front_matter(head, path), head
    try:
        text = read_text(path)
    except UnusableInputError as exc:
        finding = Finding(Level.ERROR, "item.unreadable", exc.message, exc.where, exc.hint)
        return FrontMatter(path, None, {}, False, 0, 0, 0, (finding,)), None
    return parse_front_matter(text, path), text


def _front_checks(kind: str, front: FrontMatter) -> Iterator[Finding]:
    """Front-matter values every artifact should have, as warnings."""
    path = front.path
    if not front.present:
        yield Finding(
            Level.WARNING,
            "item.no-front-matter",
            "no front matter: status and approvals cannot be read",
            Where(path, 1),
            hint="start the file with a `---` block holding type, workItem and status",
        )
        return
    if front.node is None:
        return
    declared = front.get("type")
    if declared is not None and str(declared) != kind:
        # The upstream format treats requirements and bugfix as one artifact slot
        # (its decision-045): a bugfix written as requirements.md is no mistake.
        same_slot = {str(declared), kind} == {"requirements", "bugfix"}
        yield Finding(
            Level.INFO if same_slot else Level.WARNING,
            "item.type-mismatch",
            f"front matter says type: {declared}, but the file is the {kind} artifact"
            + (" (the two fill the same slot)" if same_slot else ""),
            Where(path, front.line_of("type")),
            hint=f"set `type: {kind}`",
        )
    if kind == "execution-log":
        return
    status = front.get("status")
    if status is None:
        yield Finding(
            Level.WARNING,
            "item.no-status",
            "front matter has no status",
            Where(path, 2),
            hint="add `status: draft` (draft | in-review | approved)",
        )
    elif str(status) not in STATUSES:
        yield Finding(
            Level.ERROR,
            "item.bad-status",
            f"status {status!r} is not one of: " + ", ".join(STATUSES),
            Where(path, front.line_of("status")),
            hint="approved means locked; `loop approve` sets it",
        )
