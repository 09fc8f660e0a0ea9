"""Acceptance: a person following `loop` step by step never gets a wrong or stale answer.

One work item, from `loop new` to `loop finish`: three approvals, five tasks.
In the middle, the things people do: a vague --next (refused, with a proposal
that is then accepted), a junk file beside the real work, a _Test:_ command
written for a shell, a task ticked by hand with sed, a reset aborted and one
never confirmed. At the end `loop check` reports exactly the two problems left
in the files (the hand tick and the shell test), then, once the tick is adopted
and the item finished, only the shell test, and no reset is left open.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import DESIGN, REQUIREMENTS, Result, git

from the_loop.log.execution_log import read_log

ITEM = "issue-9"
SPEC = Path("docs/specs") / ITEM
TASKS = """\
---
type: tasks
phase: tasks-breakdown
workItem: issue-9
status: draft  # draft | in-review | approved
approvedBy: []
overrides: {}
---

# Tasks: retries

## Task list

- [ ] 1. Config key
  - _Depends on:_ none
  - _Requirements:_ R2.1
  - _Test:_ `true`
- [ ] 2. Retry ledger
  - _Depends on:_ 1
  - _Requirements:_ R1.1
  - _Test:_ `true`
- [ ] 3. Give-up log line
  - _Depends on:_ 1
  - _Requirements:_ R1.2
  - _Test:_ `cd . && true`
- [ ] 4. Wire ledger into poller
  - _Depends on:_ 2, 3
  - _Requirements:_ R1
  - _Test:_ `true`
- [ ] 5. Operator docs
  - _Depends on:_ 4
  - _Requirements:_ R2
  - _Test:_ `true`
"""

SHELL_TEST = "  - _Test:_ `cd . && true`"
HAND_TICKED = "- [x] 4. Wire ledger into poller"

Loop = Callable[..., Result]


def _ok(loop: Loop, repo: Path, *args: str) -> Result:
    result = loop(*args, cwd=repo)
    assert result.exit_code == 0, f"loop {' '.join(args)}:\n{result.output}"
    return result


def _loud(loop: Loop, repo: Path) -> tuple[int, list[tuple[str, str, str]]]:
    """`loop check`'s exit code and every finding as (level, code, file:line)."""
    result = loop("check", "9", "--json", cwd=repo)
    data = json.loads(result.stdout)
    return result.exit_code, [
        (f["level"], f["code"], f"{Path(f['path']).name}:{f['line']}") for f in data["findings"]
    ]


def _line(path: Path, text: str) -> int:
    return path.read_text().splitlines().index(text) + 1


def _done(task: str, *extra: str, nxt: str, did: str | None = None) -> tuple[str, ...]:
    return ("task", "done", "9", task, "--did", did or f"built task {task}", "--next", nxt, *extra)


def test_a_walk_with_the_usual_mistakes_ends_truthful(
    loop: Loop, git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOP_NOW", "2026-11-30T12:00Z")
    repo = git_repo
    item = repo / SPEC
    log = item / "execution-log.md"
    _ok(loop, repo, "init", "--defaults")
    _ok(loop, repo, "new", "Retry budget for the poller", "--id", "9")

    # Three approvals, each artifact written for real (the templates' <slots> filled).
    (item / "requirements.md").write_text(REQUIREMENTS.format(item=ITEM, title="retries"))
    _ok(loop, repo, "approve", "9", "requirements", "--by", "@ann")
    assert "reset: clear" in _ok(loop, repo, "work-on", "9", "--session", "s1").stdout
    _ok(loop, repo, "reset", "confirm", "9", "--session", "s2")
    (item / "design.md").write_text(DESIGN.format(item=ITEM, title="retries"))
    _ok(loop, repo, "approve", "9", "design", "--by", "@bo")
    _ok(loop, repo, "work-on", "9", "--session", "s2")
    _ok(loop, repo, "reset", "confirm", "9", "--session", "s3")
    (item / "tasks.md").write_text(TASKS)
    _ok(loop, repo, "approve", "9", "tasks", "--by", "@cy")  # a shell test is a warning
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "spec for issue-9")
    _ok(loop, repo, "execute-tasks", "9", "--session", "s3")  # into implementation: clear
    session = "s4"
    _ok(loop, repo, "reset", "confirm", "9", "--session", session)

    # Task 1, with a vague --next first: refused, nothing written, a proposal given.
    assert _ok(loop, repo, "execute-tasks", "9").stdout.startswith("# issue-9 task 1:")
    before = log.read_bytes()
    vague = loop(*_done("1", nxt="tbd tbd tbd"), cwd=repo)
    assert vague.exit_code == 2
    assert "--next must name a concrete next step" in vague.stderr
    assert log.read_bytes() == before
    proposal = re.search(r"hint: e\.g\. --next '(.+)'$", vague.stderr, re.MULTILINE)
    assert proposal is not None
    assert proposal[1] == "implement task 2: Retry ledger (loop execute-tasks issue-9 hands it out)"
    done = _ok(loop, repo, *_done("1", "--session", session, nxt=proposal[1]))
    assert "reset: compact" in done.stdout
    # The compaction did not happen after all: aborted, and the log corrected.
    _ok(loop, repo, "reset", "abort", "9", "--reason", "kept the context")
    last = read_log(log).entries[-1]
    assert last.summary.startswith("correction: the compact announced by checkpoint ")
    assert last.context == "not reset: the compact was aborted (kept the context)"
    assert last.next == proposal[1]  # the resume anchor stays where it was

    # Task 2, with a junk file beside the real work.
    assert _ok(loop, repo, "execute-tasks", "9").stdout.startswith("# issue-9 task 2:")
    (repo / "poller").mkdir()
    (repo / "poller" / "ledger.py").write_text("BUDGET = 3\n")
    (repo / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    done = _ok(
        loop,
        repo,
        *_done("2", "--session", session, "--json", nxt="implement task 3: Give-up log line"),
    )
    assert "poller/ledger.py" in git(repo, "show", "--name-only", "--format=", "HEAD").stdout
    committed = json.loads(done.stdout)["checkpoint"]["committedFiles"]
    assert isinstance(committed, list)
    assert ".DS_Store" not in committed  # junk is never part of a checkpoint
    _ok(loop, repo, "reset", "confirm", "9", "--session", session)

    # Task 3's test needs a shell: --verify refuses before running anything.
    assert _ok(loop, repo, "execute-tasks", "9").stdout.startswith("# issue-9 task 3:")
    verify = loop(*_done("3", "--verify", nxt="implement task 4 next"), cwd=repo)
    assert verify.exit_code == 1
    assert "needs a shell (&&, cd); nothing was run" in verify.stderr
    assert "running:" not in verify.stderr
    _ok(
        loop,
        repo,
        *_done("3", "--session", session, "--tests", "ran it by hand: ok", nxt="task 4 next"),
    )
    _ok(loop, repo, "reset", "confirm", "9", "--session", session)

    # Task 4 is ticked by hand. Nothing notices… except loop.
    tasks = item / "tasks.md"
    tasks.write_text(tasks.read_text().replace("- [ ] 4. Wire", "- [x] 4. Wire"))
    status = json.loads(_ok(loop, repo, "status", "9", "--json").stdout)
    assert [t["task"] for t in status["ticksWithoutCheckpoint"]] == ["4"]
    assert status["phase"]["implied"] == "implementation"

    # Task 5: not the last one with a checkpoint, so no phase crossing; its compact
    # is never confirmed.
    assert _ok(loop, repo, "execute-tasks", "9").stdout.startswith("# issue-9 task 5:")
    done = _ok(loop, repo, *_done("5", "--session", session, nxt="adopt task 4: `loop status 9`"))
    assert "reset: compact" in done.stdout

    # The check names exactly what is wrong in the files, and nothing else.
    code, findings = _loud(loop, repo)
    assert code == 1
    shell_test = ("warning", "tasks.test-needs-shell", f"tasks.md:{_line(tasks, SHELL_TEST)}")
    hand_tick = ("error", "tick.no-checkpoint", f"tasks.md:{_line(tasks, HAND_TICKED)}")
    assert findings == [shell_test, hand_tick]  # in file order
    refused = loop("execute-tasks", "9", cwd=repo)
    assert refused.exit_code == 1  # no review while a tick has no checkpoint
    assert (
        "loop task done issue-9 4 --adopt --did '<what was done>' --next '<the next step>'"
        in refused.stderr
    )

    # Adopting the tick is the last checkpoint of the implementation: one reset for
    # the task and the phase boundary, and the unconfirmed compact is corrected.
    adopted = _ok(
        loop,
        repo,
        *_done(
            "4",
            "--adopt",
            "--session",
            session,
            "--json",
            did="wired the ledger in (ticked by hand earlier)",
            nxt="review the work: `loop work-on 9`",
        ),
    )
    data = json.loads(adopted.stdout)
    assert data["reset"] == "clear"
    assert data["phase"] == "needs-review"
    assert [(s["mode"], s["state"]) for s in data["settledResets"]] == [("compact", "skipped")]
    entry = read_log(log).entries[-1]
    assert entry.summary == (
        "task 4 done: Wire ledger into poller (adopted: it was ticked by hand); "
        "entered needs-review"
    )
    assert entry.context is not None and entry.context.startswith("clear (about to): task 4 done")
    assert entry.fields["corrections"].endswith(
        "was not seen to happen: a later checkpoint came first and no compaction was seen"
    )
    step = json.loads(_ok(loop, repo, "execute-tasks", "9", "--json").stdout)
    assert step["step"] == "complete" and step["reset"] is None  # no second reset

    # Finish: the open clear is settled, so nothing is left to confirm.
    _ok(loop, repo, "finish", "9", "--by", "@lead", "--session", "s5")
    assert _ok(loop, repo, "doctor").exit_code == 0
    assert json.loads(_ok(loop, repo, "status", "9", "--json").stdout)["openResets"] == []
    code, findings = _loud(loop, repo)
    assert code == 0
    assert findings == [shell_test]
    assert git(repo, "status", "--porcelain").stdout.strip() in ("", "?? .DS_Store")
