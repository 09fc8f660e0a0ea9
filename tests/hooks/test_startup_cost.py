"""The hook read paths stay light: what ``loop hook`` imports, measured with -X importtime.

PostToolUse runs after every tool call: no Jinja, no jsonschema, not even
tasks.md's reader below the soft threshold. SessionStart renders the resume
brief (Jinja) but never validates with jsonschema once the config is known
valid (its cache). Times are not asserted (the machine's load decides them);
the modules are.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.hooks import claude_transcript, payload


def imported(root: Path, event: str, stdin: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "the_loop", "hook", event],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=True,
    )
    assert done.stdout is not None
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_post_tool_use_imports_neither_jinja_nor_jsonschema(in_task: Path, tmp_path: Path) -> None:
    transcript = claude_transcript(tmp_path / "t.jsonl", 20_000)
    stdin = payload("PostToolUse", in_task, transcript_path=transcript, tool_name="Bash")
    imported(in_task, "PostToolUse", stdin)  # first call: records the session and its policy

    names = imported(in_task, "PostToolUse", stdin)

    assert "the_loop.hooks.tool_use" in names  # the measurement is of the real path
    heavy = {n for n in names if n.split(".")[0] in ("jinja2", "jsonschema")}
    assert heavy == set()
    assert "the_loop.tasks.reader" not in names
    assert "the_loop.workflow.briefs" not in names
    # below the soft threshold: no project opened, no tempfile (click parses the command
    # line: it is the one parser, decision 0016)
    assert {"the_loop.spec.project", "tempfile"} & names == set()


def test_session_start_imports_no_jsonschema(in_task: Path) -> None:
    stdin = payload("SessionStart", in_task, source="startup")
    imported(in_task, "SessionStart", stdin)

    names = imported(in_task, "SessionStart", stdin)

    assert "the_loop.workflow.briefs" in names
    assert {n for n in names if n.split(".")[0] == "jsonschema"} == set()
