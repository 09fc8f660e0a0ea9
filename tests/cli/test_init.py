"""``loop init``: creates what a project needs, is idempotent, never overwrites a user's file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import REPO_ROOT, Result

from the_loop.config import schema

Loop = Callable[..., Result]

FIRST_LINE = "# yaml-language-server: $schema=./config.schema.json"
STEP_PATHS = [
    ".the-loop/",
    ".the-loop/config.yaml",
    ".the-loop/config.schema.json",
    ".the-loop/.gitignore",
    "docs/specs/",
    ".git",
]


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for folders)."""
    return {
        str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    }


def steps(result: Result) -> list[tuple[str, str, str]]:
    return [(s["path"], s["action"], s["detail"]) for s in json.loads(result.stdout)["steps"]]


def test_init_defaults_creates_the_project_files(git_repo: Path, loop: Loop) -> None:
    result = loop("init", "--defaults", cwd=git_repo)

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    folder = git_repo / ".the-loop"
    config = (folder / "config.yaml").read_text()
    assert config.splitlines()[0] == FIRST_LINE
    assert (folder / "config.schema.json").read_bytes() == (
        REPO_ROOT / "schema" / "config.schema.json"
    ).read_bytes()
    assert "state/" in (folder / ".gitignore").read_text().splitlines()
    assert (git_repo / "docs" / "specs").is_dir()
    assert result.stdout == (
        "created          .the-loop/  folder\n"
        "created          .the-loop/config.yaml  from the template, with the schema defaults\n"
        "created          .the-loop/config.schema.json  schema copy for editors\n"
        "created          .the-loop/.gitignore  ignores loop's runtime state\n"
        "created          docs/specs/  folder\n"
        "skipped          .git  git repository found\n"
        'ready: create a work item with `loop new "<title>"`\n'
    )


def test_the_written_config_has_a_comment_on_each_section(git_repo: Path, loop: Loop) -> None:
    loop("init", "--defaults", cwd=git_repo)
    lines = (git_repo / ".the-loop" / "config.yaml").read_text().splitlines()

    sections = [i for i, line in enumerate(lines) if line and line[0].isalpha()]
    assert [lines[i].split(":")[0] for i in sections] == [
        "version",
        "workflow",
        "contextManagement",
        "checkpoint",
        "agent",
    ]
    for i in sections[1:]:
        assert lines[i - 1].startswith("#"), f"no comment above {lines[i]!r}"


def test_the_written_config_validates(git_repo: Path, loop: Loop) -> None:
    loop("init", "--defaults", cwd=git_repo)

    result = loop("config", "validate", cwd=git_repo)

    assert result.exit_code == 0, result.output
    assert result.stdout == f"valid: {git_repo / '.the-loop' / 'config.yaml'}\n"


def test_the_written_config_equals_the_schema_defaults(git_repo: Path, loop: Loop) -> None:
    loop("init", "--defaults", cwd=git_repo)

    result = loop("config", "show", "--json", cwd=git_repo)

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["config"] == {**schema.defaults(), "version": "0.1.0"}


def test_every_written_value_comes_from_the_file(git_repo: Path, loop: Loop) -> None:
    """The sections the template writes are spelled out in full, not left to defaults."""
    loop("init", "--defaults", cwd=git_repo)

    result = loop("config", "show", "--explain", "--json", cwd=git_repo)

    origins = json.loads(result.stdout)["origins"]
    written = {"workflow.specDir", "workflow.phases", "contextManagement.midTask"}
    written |= {k for k in origins if k.startswith(("contextManagement.", "checkpoint.", "agent."))}
    assert {k for k in written if origins[k] == "schema default"} == set()


def test_rerunning_init_is_idempotent(git_repo: Path, loop: Loop) -> None:
    first = loop("init", "--defaults", cwd=git_repo)
    before = snapshot(git_repo)

    again = loop("init", "--defaults", "--json", cwd=git_repo)

    assert first.exit_code == again.exit_code == 0
    assert [action for _p, action, _d in steps(again)] == ["skipped"] * len(STEP_PATHS)
    assert snapshot(git_repo) == before


def test_rerunning_init_reports_skips_in_text(git_repo: Path, loop: Loop) -> None:
    loop("init", "--defaults", cwd=git_repo)

    result = loop("init", "--defaults", cwd=git_repo)

    assert result.exit_code == 0
    assert result.stdout == (
        "skipped          .the-loop/  exists\n"
        "skipped          .the-loop/config.yaml  exists and is valid (not overwritten)\n"
        "skipped          .the-loop/config.schema.json  up to date\n"
        "skipped          .the-loop/.gitignore  already ignores state/\n"
        "skipped          docs/specs/  exists\n"
        "skipped          .git  git repository found\n"
        'ready: create a work item with `loop new "<title>"`\n'
    )


def test_init_never_overwrites_an_edited_config(git_repo: Path, loop: Loop) -> None:
    loop("init", "--defaults", cwd=git_repo)
    config = git_repo / ".the-loop" / "config.yaml"
    edited = config.read_bytes().replace(b"taskBoundary: compact", b"taskBoundary: clear")
    edited += b"# my own note\n"
    config.write_bytes(edited)

    result = loop("init", "--defaults", cwd=git_repo)

    assert result.exit_code == 0
    assert config.read_bytes() == edited


def test_init_keeps_a_minimal_user_config_and_its_spec_dir(git_repo: Path, loop: Loop) -> None:
    config = git_repo / ".the-loop" / "config.yaml"
    config.parent.mkdir()
    text = 'version: "0.1.0"\nworkflow:\n  specDir: specs\n'
    config.write_text(text)

    result = loop("init", "--defaults", "--json", cwd=git_repo)

    assert result.exit_code == 0
    assert config.read_text() == text
    assert (".the-loop/config.yaml", "skipped", "exists and is valid (not overwritten)") in steps(
        result
    )
    assert ("specs/", "created", "folder") in steps(result)
    assert (git_repo / "specs").is_dir()
    assert not (git_repo / "docs" / "specs").exists()


def test_init_refreshes_a_stale_schema_copy(git_repo: Path, loop: Loop) -> None:
    loop("init", "--defaults", cwd=git_repo)
    copy = git_repo / ".the-loop" / "config.schema.json"
    copy.write_text("{}")

    result = loop("init", "--defaults", "--json", cwd=git_repo)

    assert (".the-loop/config.schema.json", "updated", "schema copy for editors") in steps(result)
    assert copy.read_bytes() == schema.schema_bytes()


def test_dry_run_writes_nothing(git_repo: Path, loop: Loop) -> None:
    before = snapshot(git_repo)

    result = loop("init", "--defaults", "--dry-run", cwd=git_repo)

    assert result.exit_code == 0, result.output
    assert snapshot(git_repo) == before
    assert result.stdout == (
        "would be created .the-loop/  folder\n"
        "would be created .the-loop/config.yaml  from the template, with the schema defaults\n"
        "would be created .the-loop/config.schema.json  schema copy for editors\n"
        "would be created .the-loop/.gitignore  ignores loop's runtime state\n"
        "would be created docs/specs/  folder\n"
        "skipped          .git  git repository found\n"
    )


def test_dry_run_json_says_so(git_repo: Path, loop: Loop) -> None:
    before = snapshot(git_repo)

    result = loop("init", "--defaults", "--dry-run", "--json", cwd=git_repo)

    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["dryRun"] is True
    assert [s["action"] for s in payload["steps"]] == ["created"] * 5 + ["skipped"]
    assert snapshot(git_repo) == before


def test_dry_run_on_a_set_up_project_changes_nothing(git_repo: Path, loop: Loop) -> None:
    loop("init", "--defaults", cwd=git_repo)
    (git_repo / ".the-loop" / "config.schema.json").write_text("{}")
    before = snapshot(git_repo)

    result = loop("init", "--dry-run", "--json", cwd=git_repo)

    assert result.exit_code == 0
    assert steps(result)[2][:2] == (".the-loop/config.schema.json", "updated")
    assert snapshot(git_repo) == before


def test_an_invalid_existing_config_needs_attention(git_repo: Path, loop: Loop) -> None:
    config = git_repo / ".the-loop" / "config.yaml"
    config.parent.mkdir()
    text = 'version: "0.1.0"\ncontextManagement:\n  midTask: clear\ntdd:\n  mode: x\n'
    config.write_text(text)

    result = loop("init", "--defaults", cwd=git_repo)

    assert result.exit_code == 0, result.output
    assert config.read_text() == text
    assert (
        "needs-attention  .the-loop/config.yaml  exists but has 2 error(s): "
        "run `loop config validate`\n"
    ) in result.stdout
    assert result.stdout.endswith("1 item(s) need attention\n")
    assert "ready:" not in result.stdout


def test_an_unparseable_existing_config_needs_attention(git_repo: Path, loop: Loop) -> None:
    config = git_repo / ".the-loop" / "config.yaml"
    config.parent.mkdir()
    config.write_bytes(b"version: \xff\n")

    result = loop("init", "--defaults", "--json", cwd=git_repo)

    assert result.exit_code == 0
    assert (
        ".the-loop/config.yaml",
        "needs-attention",
        "not UTF-8 text: byte 0xff cannot be decoded",
    ) in steps(result)
    assert config.read_bytes() == b"version: \xff\n"


def test_a_gitignore_without_state_needs_attention(git_repo: Path, loop: Loop) -> None:
    ignore = git_repo / ".the-loop" / ".gitignore"
    ignore.parent.mkdir()
    ignore.write_text("*.tmp\n")

    result = loop("init", "--defaults", "--json", cwd=git_repo)

    assert result.exit_code == 0
    assert (
        ".the-loop/.gitignore",
        "needs-attention",
        "add the line `state/`: loop's runtime state is not for git",
    ) in steps(result)
    assert ignore.read_text() == "*.tmp\n"


def test_outside_a_git_repository_commits_need_attention(tmp_path: Path, loop: Loop) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()

    result = loop("init", "--defaults", cwd=folder)

    assert result.exit_code == 0, result.output
    assert (folder / ".the-loop" / "config.yaml").is_file()
    assert (
        "needs-attention  .git  not a git repository: checkpoints will be noted in the log, "
        "not committed (run `git init` to enable commits)\n"
    ) in result.stdout
    assert result.stdout.endswith("1 item(s) need attention\n")


def test_init_json_shape(git_repo: Path, loop: Loop) -> None:
    result = loop("--json", "init", "--defaults", cwd=git_repo)

    assert result.exit_code == 0
    assert result.stderr == ""
    assert json.loads(result.stdout) == {
        "root": str(git_repo),
        "dryRun": False,
        "steps": [
            {"path": ".the-loop/", "action": "created", "detail": "folder"},
            {
                "path": ".the-loop/config.yaml",
                "action": "created",
                "detail": "from the template, with the schema defaults",
            },
            {
                "path": ".the-loop/config.schema.json",
                "action": "created",
                "detail": "schema copy for editors",
            },
            {
                "path": ".the-loop/.gitignore",
                "action": "created",
                "detail": "ignores loop's runtime state",
            },
            {"path": "docs/specs/", "action": "created", "detail": "folder"},
            {"path": ".git", "action": "skipped", "detail": "git repository found"},
        ],
    }


def test_init_from_a_subfolder_sets_up_the_git_root(git_repo: Path, loop: Loop) -> None:
    sub = git_repo / "pkg" / "src"
    sub.mkdir(parents=True)

    result = loop("init", "--defaults", cwd=sub)

    assert result.exit_code == 0
    assert (git_repo / ".the-loop" / "config.yaml").is_file()
    assert not (sub / ".the-loop").exists()


def test_init_honours_repo_option(git_repo: Path, tmp_path: Path, loop: Loop) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    result = loop("-C", str(git_repo), "init", "--defaults", cwd=elsewhere)

    assert result.exit_code == 0
    assert (git_repo / ".the-loop" / "config.yaml").is_file()
    assert not (elsewhere / ".the-loop").exists()


@pytest.mark.parametrize("argv", [("init",), ("init", "--json")], ids=["text", "json"])
def test_without_defaults_and_without_a_terminal_init_asks_nothing(
    argv: tuple[str, ...], git_repo: Path, loop: Loop
) -> None:
    # The runner's stdin is not a TTY; with no input at all, a prompt would abort.
    result = loop(*argv, cwd=git_repo, input="")

    assert result.exit_code == 0, result.output
    assert "Folder for work items" not in result.output
    assert "Commit work in progress" not in result.output
    assert "[Y/n]" not in result.output
    shown = loop("config", "show", "--json", cwd=git_repo)
    assert json.loads(shown.stdout)["config"] == {**schema.defaults(), "version": "0.1.0"}


def test_init_creates_nothing_outside_the_project(tmp_path: Path, loop: Loop) -> None:
    project = tmp_path / "project"
    config = project / ".the-loop" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text('version: "0.1.0"\nworkflow:\n  specDir: ../outside\n')

    loop("init", "--defaults", cwd=project)

    assert not (tmp_path / "outside").exists()
