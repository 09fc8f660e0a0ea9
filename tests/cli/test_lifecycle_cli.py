"""``loop new``, ``loop promote`` and ``loop approve`` end to end on a real repository.

Exit code first, then the message. Every refusal must leave the files as they
were; every edit of front matter must keep the rest of the file byte for byte.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import Result, front_matter

from the_loop.errors import TemplateError
from the_loop.log.execution_log import read_log
from the_loop.spec.front_matter import parse_front_matter

Loop = Callable[..., Result]
NOW = "2026-11-30T12:00Z"
TODAY = "2026-11-30"
SPECS = Path("docs/specs")


@pytest.fixture
def repo(git_repo: Path, loop: Loop, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository after `loop init --defaults`, with the clock pinned."""
    monkeypatch.setenv("LOOP_NOW", NOW)
    assert loop("init", "--defaults", cwd=git_repo).exit_code == 0
    return git_repo


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def hidden_leftovers(repo: Path) -> list[str]:
    """Staging folders `loop new` builds beside the item before renaming it."""
    return sorted(p.name for p in (repo / SPECS).iterdir() if p.name.startswith("."))


# --- loop new -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "folder"),
    [
        ("Add retries, to the poller! (v2)", "draft-add-retries-to-the-poller-v2"),
        ("  Fix   the\tlogin  bug ", "draft-fix-the-login-bug"),
        ("C++ & Rust: FFI (part 2/3)", "draft-c-rust-ffi-part-2-3"),
        ("MixedCase API_v2 endpoint", "draft-mixedcase-api-v2-endpoint"),
        ("!!! ???", "draft-item"),
        # Cut at whole words, the slug at most 48 characters.
        ("word " * 40, "draft-" + "-".join(["word"] * 9)),
        (
            "Split the configuration into a CLI config and a plugin config, and migrate it",
            "draft-split-the-configuration-into-a-cli-config-and-a",
        ),
    ],
)
def test_new_names_a_draft_after_its_title(loop: Loop, repo: Path, title: str, folder: str) -> None:
    result = loop("new", title, cwd=repo)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == f"created {folder}  {SPECS / folder}"
    assert (repo / SPECS / folder / "requirements.md").is_file()
    assert len(folder) <= len("draft-") + 48
    assert front_matter(repo / SPECS / folder / "requirements.md")["workItem"] == folder


def test_new_folds_accented_titles_to_ascii(loop: Loop, repo: Path) -> None:
    result = loop("new", "Ünïcödé façade — naïve café", cwd=repo)
    assert result.exit_code == 0, result.output
    assert (repo / SPECS / "draft-unicode-facade-naive-cafe").is_dir()


def test_new_keeps_a_unicode_title_in_the_files(loop: Loop, repo: Path) -> None:
    result = loop("new", "Réessayer — naïve café", "--id", "7", cwd=repo)
    assert result.exit_code == 0, result.output
    text = (repo / SPECS / "issue-7/requirements.md").read_text(encoding="utf-8")
    assert "# Requirements: Réessayer — naïve café\n" in text
    status = json.loads(loop("status", "7", "--json", cwd=repo).stdout)
    assert status["title"] == "Réessayer — naïve café"


def test_new_writes_requirements_and_a_log_that_parse(loop: Loop, repo: Path) -> None:
    result = loop("new", "Retry budget for the poller", "--id", "42", cwd=repo)
    assert result.exit_code == 0, result.output
    item = repo / SPECS / "issue-42"
    assert result.stdout.splitlines() == [
        "created issue-42  docs/specs/issue-42",
        "  docs/specs/issue-42/requirements.md",
        "  docs/specs/issue-42/execution-log.md",
        "next: write requirements.md, then `loop work-on issue-42`",
    ]
    assert sorted(p.name for p in item.iterdir()) == ["execution-log.md", "requirements.md"]
    req = front_matter(item / "requirements.md")
    assert req["type"] == "requirements"
    assert req["workItem"] == "issue-42"
    assert req["status"] == "draft"
    assert req["approvedBy"] == []
    log_path = item / "execution-log.md"
    log = front_matter(log_path)
    assert (log["type"], log["workItem"], log["phase"]) == (
        "execution-log",
        "issue-42",
        "requirements-definition",
    )
    for path in (item / "requirements.md", log_path):
        assert parse_front_matter(path.read_text(), path).findings == ()
    text = log_path.read_text()
    assert "| requirements-definition | 2026-11-30 |  | work item created |\n" in text
    assert read_log(log_path).findings == ()
    status = json.loads(loop("status", "42", "--json", cwd=repo).stdout)
    assert status["phase"]["relation"] == "same"
    assert status["phase"]["implied"] == "requirements-definition"
    # The only findings are the template's <slots>, still to be written.
    check = json.loads(loop("check", "42", "--json", cwd=repo).stdout)
    assert {f["code"] for f in check["findings"]} == {"artifact.placeholder"}


@pytest.mark.parametrize(
    ("given", "folder"), [("42", "issue-42"), ("issue-42", "issue-42"), ("PROJ-7", "PROJ-7")]
)
def test_new_with_an_id(loop: Loop, repo: Path, given: str, folder: str) -> None:
    result = loop("new", "Retries", "--id", given, "--json", cwd=repo)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    item = repo / SPECS / folder
    assert data == {
        "item": folder,
        "path": str(item),
        "files": [str(item / "requirements.md"), str(item / "execution-log.md")],
    }


@pytest.mark.parametrize("given", ["../x", "a/b", "-42", "issue 42", "issue..42"])
def test_new_refuses_an_unusable_id(loop: Loop, repo: Path, given: str) -> None:
    result = loop("new", "Retries", "--id", given, cwd=repo)
    assert result.exit_code == 2
    assert f"error: {given!r} is not a usable work item id" in result.stderr
    assert list((repo / SPECS).iterdir()) == []


@pytest.mark.parametrize("title", ["", "   ", "\t\n"])
def test_new_needs_a_title(loop: Loop, repo: Path, title: str) -> None:
    result = loop("new", title, cwd=repo)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: a work item needs a title",
        'hint: loop new "Add retries to the poller"',
    ]


def test_new_bug_writes_bugfix_md(loop: Loop, repo: Path) -> None:
    result = loop("new", "Dead tmux sessions are never respawned", "--id", "80", "--bug", cwd=repo)
    assert result.exit_code == 0, result.output
    item = repo / SPECS / "issue-80"
    assert sorted(p.name for p in item.iterdir()) == ["bugfix.md", "execution-log.md"]
    bug = front_matter(item / "bugfix.md")
    assert (bug["type"], bug["workItem"], bug["status"]) == ("bugfix", "issue-80", "draft")
    assert front_matter(item / "execution-log.md")["phase"] == "requirements-definition"
    assert result.stdout.splitlines()[-1] == "next: write bugfix.md, then `loop work-on issue-80`"
    status = json.loads(loop("status", "80", "--json", cwd=repo).stdout)
    assert status["artifacts"]["bugfix.md"]["status"] == "draft"
    assert "requirements.md" not in status["artifacts"]
    assert status["next"]["text"] == "finish bugfix.md (draft), then ask for review"


def test_new_refuses_an_existing_folder_and_leaves_it_alone(loop: Loop, repo: Path) -> None:
    assert loop("new", "Retries", "--id", "42", cwd=repo).exit_code == 0
    item = repo / SPECS / "issue-42"
    (item / "requirements.md").write_text("my own words\n")
    before = snapshot(item)
    result = loop("new", "Something else", "--id", "42", cwd=repo)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: {item} already exists",
        "hint: pick another --id or title, or `loop work-on` the existing item",
    ]
    assert snapshot(item) == before
    assert hidden_leftovers(repo) == []
    # A second draft with the same title is the same folder: refused too.
    assert loop("new", "Retry budget", cwd=repo).exit_code == 0
    again = loop("new", "Retry   budget!", cwd=repo)
    assert again.exit_code == 1
    assert "draft-retry-budget already exists" in again.stderr


def test_new_leaves_nothing_when_a_template_fails(
    loop: Loop, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """requirements.md is rendered and written first; the log's template then fails."""
    from the_loop.io import templating
    from the_loop.workflow import item_lifecycle

    real = templating.render

    def failing(name: str, **context: object) -> str:
        if name.startswith("execution-log"):
            raise TemplateError(f"template {name!r} failed to render: boom")
        return real(name, **context)

    monkeypatch.setattr(item_lifecycle, "render", failing)
    result = loop("new", "Retries", "--id", "42", cwd=repo)
    assert result.exit_code == 1
    assert "error: template 'execution-log.md.j2' failed to render: boom" in result.stderr
    assert list((repo / SPECS).iterdir()) == []


def test_new_leaves_nothing_when_the_final_rename_fails(
    loop: Loop, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(os, "rename", failing)
    result = loop("new", "Retries", "--id", "42", cwd=repo)
    assert result.exit_code == 1  # a clear write error (issue 14), and no debris
    assert result.stderr.splitlines()[0].endswith(
        "cannot write issue-42: permission denied; nothing was created"
    )
    assert list((repo / SPECS).iterdir()) == []


# --- loop promote -------------------------------------------------------------------------

BRAINSTORM = """\
---
# the idea before the requirements
type: brainstorm
workItem: draft-retry-budget   # the item id
status: draft
---

# Brainstorm: retry budget

Keep `workItem: draft-retry-budget` in this sentence: only front matter is rewritten.
"""


@pytest.fixture
def draft(loop: Loop, repo: Path) -> Path:
    assert loop("new", "Retry budget", cwd=repo).exit_code == 0
    folder = repo / SPECS / "draft-retry-budget"
    (folder / "brainstorm.md").write_text(BRAINSTORM)
    return folder


def test_promote_renames_and_rewrites_work_item_in_every_file(
    loop: Loop, repo: Path, draft: Path
) -> None:
    before = snapshot(draft)
    result = loop("promote", "draft-retry-budget", "--id", "42", cwd=repo)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "promoted draft-retry-budget → issue-42  docs/specs/issue-42",
        "  workItem: rewritten in 3 file(s)",
    ]
    item = repo / SPECS / "issue-42"
    assert not draft.exists()
    after = snapshot(item)
    assert sorted(after) == ["brainstorm.md", "execution-log.md", "requirements.md"]
    for name, old in before.items():
        assert front_matter(item / name)["workItem"] == "issue-42", name
        old_lines = old.decode().split("\n")
        new_lines = after[name].decode().split("\n")
        assert len(new_lines) == len(old_lines), name
        changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
        # only the workItem line, and in the log the command that names the item
        resume = [i for i in changed if "`loop resume issue-42`" in new_lines[i]]
        assert len(changed) == 1 + len(resume), name
        assert resume == [] or name == "execution-log.md", name
        assert new_lines[changed[0]].startswith("workItem: issue-42"), name
    # The comment on that line is kept; the body mention is not front matter.
    brainstorm = after["brainstorm.md"].decode().split("\n")
    assert re.fullmatch(r"workItem: issue-42\s+# the item id", brainstorm[3])
    assert brainstorm[1] == "# the idea before the requirements"
    assert "Keep `workItem: draft-retry-budget` in this sentence" in after["brainstorm.md"].decode()
    status = json.loads(loop("status", "42", "--json", cwd=repo).stdout)
    assert status["item"] == "issue-42"
    assert status["phase"]["relation"] == "same"


def test_promote_json(loop: Loop, repo: Path, draft: Path) -> None:
    result = loop("promote", "draft-retry-budget", "--id", "PROJ-9", "--json", cwd=repo)
    assert result.exit_code == 0, result.output
    item = repo / SPECS / "PROJ-9"
    data = json.loads(result.stdout)
    assert data["item"] == "PROJ-9"
    assert data["path"] == str(item)
    assert sorted(data["rewritten"]) == sorted(
        str(item / n) for n in ("brainstorm.md", "execution-log.md", "requirements.md")
    )


def test_promote_refuses_an_existing_target(loop: Loop, repo: Path, draft: Path) -> None:
    assert loop("new", "Other", "--id", "42", cwd=repo).exit_code == 0
    before_draft, before_target = snapshot(draft), snapshot(repo / SPECS / "issue-42")
    result = loop("promote", "draft-retry-budget", "--id", "issue-42", cwd=repo)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: {repo / SPECS / 'issue-42'} already exists",
        "hint: choose another id",
    ]
    assert snapshot(draft) == before_draft
    assert snapshot(repo / SPECS / "issue-42") == before_target


def test_promote_refuses_an_unknown_draft_or_a_bad_id(loop: Loop, repo: Path, draft: Path) -> None:
    unknown = loop("promote", "draft-nope", "--id", "42", cwd=repo)
    assert unknown.exit_code == 2
    assert "no work item 'draft-nope'" in unknown.stderr
    bad = loop("promote", "draft-retry-budget", "--id", "../42", cwd=repo)
    assert bad.exit_code == 2
    assert draft.is_dir()


def test_promote_leaves_no_command_naming_the_old_draft(
    loop: Loop, repo: Path, draft: Path
) -> None:
    (draft / "brainstorm.md").unlink()
    assert loop("promote", "draft-retry-budget", "--id", "42", cwd=repo).exit_code == 0
    for path in (repo / SPECS / "issue-42").iterdir():
        assert "draft-retry-budget" not in path.read_text(), path.name


# --- loop approve -------------------------------------------------------------------------

REQUIREMENTS = """\
---
# owned by the platform team
type: requirements
workItem: issue-42   # ticket
phase: requirements-definition
status: draft   # draft | in-review | approved
approvedBy: []
collaborators: [pm, engineer]
overrides: {}
---

# Requirements: retries

### R1 — bounded retries

1. WHEN a dispatch fails THEN the system SHALL retry it up to the budget.
2. WHEN the budget is exhausted THEN the system SHALL log a terminal failure.
"""

DESIGN = """\
---
type: design
workItem: issue-42
status: draft
approvedBy: []
---

# Design: retries

A retry ledger in the poller.
"""

# Task 1 at line 10, task 2 at line 13.
TASKS = """\
---
type: tasks
workItem: issue-42
status: draft
approvedBy: []
---

# Tasks: retries

- [ ] 1. Retry ledger
  - _Depends on:_ none
  - _Requirements:_ R1.1
- [ ] 2. Give-up log line
  - _Depends on:_ 1
  - _Requirements:_ R1.2
"""


@pytest.fixture
def item(loop: Loop, repo: Path) -> Path:
    assert loop("new", "Retries", "--id", "42", cwd=repo).exit_code == 0
    folder = repo / SPECS / "issue-42"
    (folder / "requirements.md").write_text(REQUIREMENTS)
    return folder


def approve(loop: Loop, repo: Path, artifact: str, by: str = "@ann") -> Result:
    return loop("approve", "42", artifact, "--by", by, cwd=repo)


def status(loop: Loop, repo: Path) -> dict:
    result = loop("status", "42", "--json", cwd=repo)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def head_and_body(path: Path) -> tuple[list[str], str]:
    text = path.read_text()
    _, head, body = text.split("---\n", 2)
    return head.splitlines(), body


def test_approve_edits_front_matter_round_trip(loop: Loop, repo: Path, item: Path) -> None:
    path = item / "requirements.md"
    _, body_before = head_and_body(path)
    result = approve(loop, repo, "requirements")
    assert result.exit_code == 0, result.output
    digest = status(loop, repo)["artifacts"]["requirements.md"]["hash"]
    assert re.fullmatch(r"sha256:[0-9a-f]{16}", digest)
    assert result.stdout.splitlines() == [
        f"approved requirements.md by @ann  {digest}",
        "next: `loop work-on issue-42`",
    ]
    head, body = head_and_body(path)
    assert body == body_before
    assert head[0] == "# owned by the platform team"
    assert head[2] == "workItem: issue-42   # ticket"
    assert re.fullmatch(r"status: approved\s+# draft \| in-review \| approved", head[4])
    assert head[-3:] == ["approval:", f"  hash: {digest}", f"  at: {NOW}"]
    data = front_matter(path)
    assert list(data) == [
        "type",
        "workItem",
        "phase",
        "status",
        "approvedBy",
        "collaborators",
        "overrides",
        "approval",
    ]
    assert data["approvedBy"] == [f"@ann ({TODAY})"]
    assert data["collaborators"] == ["pm", "engineer"]
    assert data["approval"] == {"hash": digest, "at": NOW}  # nothing upstream of it


def test_approve_json(loop: Loop, repo: Path, item: Path) -> None:
    result = loop("approve", "issue-42", "requirements", "--by", "@ann", "--json", cwd=repo)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data == {
        "item": "issue-42",
        "artifact": "requirements.md",
        "by": "@ann",
        "hash": front_matter(item / "requirements.md")["approval"]["hash"],
        "changed": True,
    }


def test_re_approving_unchanged_is_a_no_op(loop: Loop, repo: Path, item: Path) -> None:
    assert approve(loop, repo, "requirements").exit_code == 0
    before = (item / "requirements.md").read_bytes()
    digest = front_matter(item / "requirements.md")["approval"]["hash"]
    again = approve(loop, repo, "requirements", by="@bo")
    assert again.exit_code == 0, again.output
    assert again.stdout == f"requirements.md is already approved and unchanged ({digest})\n"
    assert (item / "requirements.md").read_bytes() == before


def test_approving_a_changed_artifact_appends_the_approver(
    loop: Loop, repo: Path, item: Path
) -> None:
    assert approve(loop, repo, "requirements").exit_code == 0
    path = item / "requirements.md"
    path.write_text(path.read_text().replace("up to the budget", "up to the configured budget"))
    assert status(loop, repo)["artifacts"]["requirements.md"]["stale"] is True
    assert approve(loop, repo, "requirements", by="@bo").exit_code == 0
    data = front_matter(path)
    assert data["approvedBy"] == [f"@ann ({TODAY})", f"@bo ({TODAY})"]
    assert status(loop, repo)["artifacts"]["requirements.md"]["stale"] is False


def test_approve_records_upstream_hashes(loop: Loop, repo: Path, item: Path) -> None:
    (item / "design.md").write_text(DESIGN)
    (item / "tasks.md").write_text(TASKS)
    for artifact in ("requirements", "design", "tasks"):
        assert approve(loop, repo, artifact).exit_code == 0
    hashes = {
        name: art["hash"] for name, art in status(loop, repo)["artifacts"].items() if "hash" in art
    }
    assert front_matter(item / "design.md")["approval"]["upstream"] == {
        "requirements.md": hashes["requirements.md"]
    }
    assert front_matter(item / "tasks.md")["approval"]["upstream"] == {
        "requirements.md": hashes["requirements.md"],
        "design.md": hashes["design.md"],
    }
    assert front_matter(item / "tasks.md")["approval"]["hash"] == hashes["tasks.md"]


def test_approve_refuses_while_upstream_is_unapproved(loop: Loop, repo: Path, item: Path) -> None:
    (item / "design.md").write_text(DESIGN)
    result = approve(loop, repo, "design")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: docs/specs/issue-42/requirements.md: cannot approve design.md while "
        "requirements.md is draft",
        "hint: approve upstream first: `loop approve issue-42 requirements --by @ann`",
    ]
    assert (item / "design.md").read_text() == DESIGN


def test_approve_refuses_a_missing_artifact(loop: Loop, repo: Path, item: Path) -> None:
    result = approve(loop, repo, "design")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: docs/specs/issue-42/design.md: design.md does not exist yet",
        "hint: `loop work-on issue-42` says what to write first",
    ]


def test_approve_refuses_while_upstream_is_stale(loop: Loop, repo: Path, item: Path) -> None:
    (item / "design.md").write_text(DESIGN)
    (item / "tasks.md").write_text(TASKS)
    assert approve(loop, repo, "requirements").exit_code == 0
    assert approve(loop, repo, "design").exit_code == 0
    req = item / "requirements.md"
    req.write_text(req.read_text().replace("terminal failure", "terminal failure, once"))
    tasks_before = (item / "tasks.md").read_bytes()
    refused = approve(loop, repo, "tasks")
    assert refused.exit_code == 1
    assert "cannot approve tasks.md while requirements.md is stale" in refused.stderr
    assert (item / "tasks.md").read_bytes() == tasks_before
    # Re-locking requirements is not enough: design was approved against the old text.
    assert approve(loop, repo, "requirements").exit_code == 0
    design = status(loop, repo)["artifacts"]["design.md"]
    assert design["staleBecause"] == ["requirements.md changed since design.md was approved"]
    refused = approve(loop, repo, "tasks")
    assert refused.exit_code == 1
    assert "cannot approve tasks.md while design.md is stale" in refused.stderr
    assert approve(loop, repo, "design").exit_code == 0
    assert approve(loop, repo, "tasks").exit_code == 0


def test_approve_refuses_tasks_with_a_cycle_and_names_the_line(
    loop: Loop, repo: Path, item: Path
) -> None:
    (item / "design.md").write_text(DESIGN)
    broken = TASKS.replace("_Depends on:_ none", "_Depends on:_ 2")
    (item / "tasks.md").write_text(broken)
    assert approve(loop, repo, "requirements").exit_code == 0
    assert approve(loop, repo, "design").exit_code == 0
    result = approve(loop, repo, "tasks")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: docs/specs/issue-42/tasks.md:10: tasks.md has 1 error(s); a broken task graph "
        "cannot be locked (first: cycle: 1 → 2 → 1)",
        "hint: `loop check issue-42` lists them all",
    ]
    assert (item / "tasks.md").read_text() == broken


def test_approve_refuses_an_empty_task_list(loop: Loop, repo: Path, item: Path) -> None:
    (item / "design.md").write_text(DESIGN)
    (item / "tasks.md").write_text(TASKS.split("- [ ]")[0])
    assert approve(loop, repo, "requirements").exit_code == 0
    assert approve(loop, repo, "design").exit_code == 0
    result = approve(loop, repo, "tasks")
    assert result.exit_code == 1
    assert "tasks.md lists no tasks" in result.stderr


@pytest.mark.parametrize("name", ["bugfix", "bugfix.md", "requirements", "requirements.md"])
def test_approve_accepts_every_name_of_the_requirements_slot(
    loop: Loop, repo: Path, name: str
) -> None:
    assert loop("new", "Dead sessions", "--id", "80", "--bug", cwd=repo).exit_code == 0
    bugfix = repo / SPECS / "issue-80/bugfix.md"
    bugfix.write_text(
        bugfix.read_text().replace("<trigger>", "a session dies").replace("<response>", "retry")
    )
    result = loop("approve", "80", name, "--by", "@ann", cwd=repo)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("approved bugfix.md by @ann  sha256:")
    assert front_matter(repo / SPECS / "issue-80/bugfix.md")["status"] == "approved"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("frobnicate", "--by", "@ann"), "'frobnicate' is not an artifact that can be approved"),
        (("requirements", "--by", "  "), "--by needs a handle or name"),
    ],
)
def test_approve_usage_errors(
    loop: Loop, repo: Path, item: Path, args: tuple[str, ...], message: str
) -> None:
    before = snapshot(item)
    result = loop("approve", "42", *args, cwd=repo)
    assert result.exit_code == 2
    assert message in result.stderr
    assert snapshot(item) == before


def test_ticking_never_makes_tasks_stale_but_editing_a_task_does(
    loop: Loop, repo: Path, item: Path
) -> None:
    (item / "design.md").write_text(DESIGN)
    (item / "tasks.md").write_text(TASKS)
    for artifact in ("requirements", "design", "tasks"):
        assert approve(loop, repo, artifact).exit_code == 0
    path = item / "tasks.md"
    approved_text = path.read_text()
    locked = status(loop, repo)["artifacts"]["tasks.md"]
    assert (locked["stale"], locked["locked"]) == (False, True)
    for mark in ("[x]", "[X]", "[-]"):
        path.write_text(approved_text.replace("- [ ] 1.", f"- {mark} 1."))
        tasks = status(loop, repo)["artifacts"]["tasks.md"]
        assert (tasks["stale"], tasks["hash"]) == (False, locked["hash"]), mark
    path.write_text(approved_text.replace("1. Retry ledger", "1. Retry ledger with jitter"))
    edited = status(loop, repo)["artifacts"]["tasks.md"]
    assert edited["stale"] is True
    assert edited["staleBecause"] == ["tasks.md changed since it was approved"]
    check = loop("check", "42", cwd=repo)
    assert check.exit_code == 1
    assert "tasks.md is approved but stale: tasks.md changed since it was approved" in (
        check.stdout
    )
    # Putting the text back restores the lock: the hash is of content, not of edits.
    path.write_text(approved_text)
    assert status(loop, repo)["artifacts"]["tasks.md"]["stale"] is False
