"""``loop init``: set a project up, idempotently, without overwriting a user's file.

Each step reports what it did: created, updated (a file loop owns, such as the
schema copy editors read), skipped (already fine), or needs attention (a
user's file loop will not touch but which has a problem).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from the_loop.config import schema
from the_loop.config.loader import UPSTREAM_CONFIG_FILE, check_file, load_config
from the_loop.config.project_root import CONFIG_DIR, CONFIG_FILE
from the_loop.errors import LoopError
from the_loop.findings import Level, failing
from the_loop.git.repo import find_repo_root
from the_loop.io import atomic
from the_loop.io.templating import render

SCHEMA_COPY = "config.schema.json"
GITIGNORE = ".gitignore"
STATE_DIR = "state"
CONFIG_VERSION = "0.1.0"


@dataclass(frozen=True)
class Step:
    """One thing ``init`` did or would do."""

    path: str
    action: str  # created | updated | skipped | needs-attention
    detail: str


def render_config(*, spec_dir: str, commit: bool) -> str:
    """The text of a fresh ``config.yaml``, with the schema defaults filled in."""

    d = schema.defaults()
    return render(
        "config.yaml.j2",
        d=d,
        version=CONFIG_VERSION,
        spec_dir=spec_dir,
        commit=commit,
        message_template=json.dumps(d["checkpoint"]["messageTemplate"]),
    )


def init_project(
    root: Path, *, spec_dir: str | None = None, commit: bool = True, dry_run: bool = False
) -> list[Step]:
    """Create what a project needs; report every step. ``dry_run`` writes nothing."""
    folder = root / CONFIG_DIR
    steps = [_ensure_dir(root, folder, dry_run)]
    config_step, effective_spec_dir = _config_file(root, folder, spec_dir, commit, dry_run)
    steps.append(config_step)
    steps.append(_schema_copy(root, folder, dry_run))
    steps.append(_gitignore(root, folder, dry_run))
    steps.append(_ensure_dir(root, root / effective_spec_dir, dry_run))
    steps.append(_git_check(root))
    return steps


def _rel(root: Path, path: Path, *, folder: bool = False) -> str:
    text = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    return text + ("/" if folder else "")


def _ensure_dir(root: Path, path: Path, dry_run: bool) -> Step:
    if path.is_dir():
        return Step(_rel(root, path, folder=True), "skipped", "exists")
    if not dry_run:
        atomic.make_dirs(path)
    return Step(_rel(root, path, folder=True), "created", "folder")


def _config_file(
    root: Path, folder: Path, spec_dir: str | None, commit: bool, dry_run: bool
) -> tuple[Step, str]:
    path = folder / CONFIG_FILE
    if not path.exists() and (folder / UPSTREAM_CONFIG_FILE).is_file():
        path = folder / UPSTREAM_CONFIG_FILE  # the upstream name: it is the config, keep it
    rel = _rel(root, path)
    if path.exists():
        try:
            findings = check_file(path)
        except LoopError as exc:
            return Step(rel, "needs-attention", exc.message), spec_dir or "docs/specs"
        if failing(findings):
            errors = sum(1 for f in findings if f.level is Level.ERROR)
            return (
                Step(
                    rel,
                    "needs-attention",
                    f"exists but has {errors} error(s): run `loop config validate`",
                ),
                spec_dir or "docs/specs",
            )

        existing = load_config(root).workflow.spec_dir
        return Step(rel, "skipped", "exists and is valid (not overwritten)"), existing
    chosen = spec_dir or found_spec_dir(root) or schema.defaults()["workflow"]["specDir"]
    text = render_config(spec_dir=chosen, commit=commit)
    if not dry_run:
        atomic.make_dirs(folder)
        if not atomic.create_exclusive(path, text):
            return Step(rel, "skipped", "appeared meanwhile (not overwritten)"), chosen
    return Step(rel, "created", "from the template, with the schema defaults"), chosen


# Where the other formats keep their work items: Kiro's (and cc-sdd's) feature folders,
# and Spec Kit's numbered ones (``specs/001-feature/``).
KIRO_SPECS = ".kiro/specs"
SPEC_KIT_SPECS = "specs"
_SPEC_KIT_ITEM = re.compile(r"[0-9]{3,}-")


def found_spec_dir(root: Path) -> str | None:
    """The spec folder a project already writes in another format, if there is one.

    ``docs/specs`` (loop's own) wins when it exists; then ``.kiro/specs`` when it
    holds a feature folder; then ``specs`` when it holds a ``NNN-feature`` folder.
    """
    if (root / "docs" / "specs").is_dir():
        return None
    kiro = root / KIRO_SPECS
    if kiro.is_dir() and any(p.is_dir() for p in kiro.iterdir()):
        return KIRO_SPECS
    spec_kit = root / SPEC_KIT_SPECS
    if spec_kit.is_dir() and any(
        p.is_dir() and _SPEC_KIT_ITEM.match(p.name) for p in spec_kit.iterdir()
    ):
        return SPEC_KIT_SPECS
    return None


def _schema_copy(root: Path, folder: Path, dry_run: bool) -> Step:
    # A local copy lets editors (yaml-language-server) validate offline; loop owns it.
    path = folder / SCHEMA_COPY
    data = schema.schema_bytes()
    if path.is_file() and path.read_bytes() == data:
        return Step(_rel(root, path), "skipped", "up to date")
    action = "updated" if path.exists() else "created"
    if not dry_run:
        atomic.make_dirs(folder)
        atomic.write_bytes(path, data)
    return Step(_rel(root, path), action, "schema copy for editors")


def _gitignore(root: Path, folder: Path, dry_run: bool) -> Step:
    path = folder / GITIGNORE
    rel = _rel(root, path)
    wanted = f"{STATE_DIR}/"
    if path.is_file():
        lines = [line.strip() for line in path.read_text().splitlines()]
        if wanted in lines or STATE_DIR in lines or f"/{wanted}" in lines:
            return Step(rel, "skipped", "already ignores state/")
        return Step(
            rel, "needs-attention", f"add the line `{wanted}`: loop's runtime state is not for git"
        )
    if not dry_run:
        atomic.make_dirs(folder)
        atomic.create_exclusive(
            path, f"# loop's runtime state (locks, journal, resets)\n{wanted}\n"
        )
    return Step(rel, "created", "ignores loop's runtime state")


def _git_check(root: Path) -> Step:

    if find_repo_root(root) is None:
        return Step(
            ".git",
            "needs-attention",
            "not a git repository: checkpoints will be noted in the log, not committed "
            "(run `git init` to enable commits)",
        )
    return Step(".git", "skipped", "git repository found")
