"""``loop config validate | show | schema`` end to end, through the real CLI in temp repos."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import CORPUS, REPO_ROOT, Result, requires_corpus
from ruamel.yaml import YAML

from the_loop.config import schema

Loop = Callable[..., Result]
BuildTree = Callable[..., Path]
ITEM = "docs/specs/issue-7"
CORPUS_CONFIGS = [
    ".the-loop/config.yaml",
    "skills/the-loop/templates/config.yaml",
]


@pytest.fixture
def project(git_repo: Path, loop: Loop) -> Path:
    """A git repo set up with `loop init --defaults`."""
    result = loop("init", "--defaults", cwd=git_repo)
    assert result.exit_code == 0, result.output
    return git_repo


def write_config(root: Path, text: str) -> Path:
    path = root / ".the-loop" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def defaults_with_version() -> dict[str, object]:
    return {**schema.defaults(), "version": "0.1.0"}


# --- validate ----------------------------------------------------------------------


def test_validate_checks_the_project_config_by_default(project: Path, loop: Loop) -> None:
    result = loop("config", "validate", cwd=project)

    assert result.exit_code == 0, result.output
    assert result.stdout == f"valid: {project / '.the-loop' / 'config.yaml'}\n"
    assert result.stderr == ""


def test_validate_finds_the_project_from_a_subfolder(project: Path, loop: Loop) -> None:
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)

    result = loop("config", "validate", cwd=sub)

    assert result.exit_code == 0, result.output
    assert result.stdout == f"valid: {project / '.the-loop' / 'config.yaml'}\n"


def test_validate_honours_repo_option(project: Path, tmp_path: Path, loop: Loop) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    result = loop("-C", str(project), "config", "validate", cwd=elsewhere)

    assert result.exit_code == 0, result.output
    assert result.stdout == f"valid: {project / '.the-loop' / 'config.yaml'}\n"


def test_an_invalid_project_config_exits_1_with_file_line_col(project: Path, loop: Loop) -> None:
    write_config(project, 'version: "0.1.0"\ncontextManagement:\n  midTask: clear\n')

    result = loop("config", "validate", cwd=project)

    assert result.exit_code == 1
    assert result.stdout == (
        ".the-loop/config.yaml:3:3: error: $.contextManagement.midTask: 'clear' is not allowed; "
        "choose one of: compact, off\n"
        "    hint: clearing inside an unfinished task is never allowed; use compact or off\n"
        f"invalid: {project / '.the-loop' / 'config.yaml'}\n"
    )
    assert result.stderr == ""


def test_validate_without_a_config_is_unusable_input(git_repo: Path, loop: Loop) -> None:
    result = loop("config", "validate", cwd=git_repo)

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"error: {git_repo / '.the-loop' / 'config.yaml'}: config file not found\n"
        "hint: run `loop init` to create one, or pass the file to check\n"
    )


def test_validate_several_files_reports_each_in_order(tmp_path: Path, loop: Loop) -> None:
    (tmp_path / "good.yaml").write_text('version: "0.1.0"\n')
    (tmp_path / "bad.yaml").write_text('version: "0.1.0"\ntdd:\n  mode: sometimes\n')
    (tmp_path / "also-good.yaml").write_text('version: "1.0"\n')

    result = loop("config", "validate", "good.yaml", "bad.yaml", "also-good.yaml", cwd=tmp_path)

    assert result.exit_code == 1
    assert result.stdout == (
        "valid: good.yaml\n"
        "bad.yaml:3:3: error: $.tdd.mode: 'sometimes' is not allowed; "
        "choose one of: standard, tdd-first, off\n"
        "invalid: bad.yaml\n"
        "valid: also-good.yaml\n"
    )


@pytest.mark.parametrize(
    "order", [("bad.yaml", "missing.yaml"), ("missing.yaml", "bad.yaml")], ids=["last", "first"]
)
def test_an_unusable_file_wins_over_an_invalid_one(
    order: tuple[str, str], tmp_path: Path, loop: Loop
) -> None:
    (tmp_path / "bad.yaml").write_text("version: 1\n")

    result = loop("config", "validate", *order, cwd=tmp_path)

    assert result.exit_code == 2
    assert "invalid: bad.yaml\n" in result.stdout
    assert result.stderr == (
        "error: missing.yaml: config file not found\n"
        "hint: run `loop init` to create one, or pass the file to check\n"
    )


def test_a_missing_file_among_valid_ones_still_exits_2(tmp_path: Path, loop: Loop) -> None:
    (tmp_path / "good.yaml").write_text('version: "0.1.0"\n')

    result = loop("config", "validate", "good.yaml", "missing.yaml", cwd=tmp_path)

    assert result.exit_code == 2
    assert result.stdout == "valid: good.yaml\n"
    assert "missing.yaml: config file not found" in result.stderr


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="running as root: chmod 000 does not stop root from reading the file",
)
def test_an_unreadable_file_exits_2(tmp_path: Path, loop: Loop) -> None:
    path = tmp_path / "locked.yaml"
    path.write_text('version: "0.1.0"\n')
    path.chmod(0)
    try:
        result = loop("config", "validate", "locked.yaml", cwd=tmp_path)
    finally:
        path.chmod(0o644)

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "error: locked.yaml: cannot read the config file: Permission denied\n"


def test_a_folder_given_as_a_file_is_a_usage_error(tmp_path: Path, loop: Loop) -> None:
    (tmp_path / "conf").mkdir()

    result = loop("config", "validate", "conf", cwd=tmp_path)

    assert result.exit_code == 2
    assert "'conf' is a directory" in result.stderr
    assert "Traceback" not in result.output


def test_a_non_utf8_file_exits_2_naming_the_line(tmp_path: Path, loop: Loop) -> None:
    (tmp_path / "latin1.yaml").write_bytes(
        b'version: "0.1.0"\n# r\xe9sum\xe9 of the settings\ntdd:\n  mode: off\n'
    )

    result = loop("config", "validate", "latin1.yaml", cwd=tmp_path)

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "error: latin1.yaml:2:4: not UTF-8 text: byte 0xe9 cannot be decoded\n"
        "hint: save the file as UTF-8\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("--json", "config", "validate"),
        ("config", "validate", "--json"),
    ],
    ids=["global-flag", "command-flag"],
)
def test_validate_json_shape(argv: tuple[str, ...], tmp_path: Path, loop: Loop) -> None:
    (tmp_path / "good.yaml").write_text('version: "0.1.0"\n')
    (tmp_path / "bad.yaml").write_text('version: "0.1.0"\nagent:\n  kindd: codex\n')

    result = loop(*argv, "good.yaml", "bad.yaml", "missing.yaml", cwd=tmp_path)

    assert result.exit_code == 2
    assert result.stderr == ""
    assert json.loads(result.stdout) == {
        "valid": False,
        "files": [
            {"path": "good.yaml", "usable": True, "valid": True, "findings": []},
            {
                "path": "bad.yaml",
                "usable": True,
                "valid": False,
                "findings": [
                    {
                        "level": "error",
                        "code": "config.schema",
                        "message": "$.agent.kindd: unknown key 'kindd'",
                        "path": "bad.yaml",
                        "line": 3,
                        "col": 3,
                        "hint": "did you mean 'kind'?",
                    }
                ],
            },
            {
                "path": "missing.yaml",
                "usable": False,
                "valid": False,
                "error": "missing.yaml: config file not found\n"
                "hint: run `loop init` to create one, or pass the file to check",
                "findings": [],
            },
        ],
    }


def test_validate_json_of_a_valid_project(project: Path, loop: Loop) -> None:
    result = loop("config", "validate", "--json", cwd=project)

    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "valid": True,
        "files": [
            {
                "path": str(project / ".the-loop" / "config.yaml"),
                "usable": True,
                "valid": True,
                "findings": [],
            }
        ],
    }


@requires_corpus()
@pytest.mark.parametrize("relpath", CORPUS_CONFIGS)
def test_the_corpus_configs_validate(relpath: str, loop: Loop) -> None:
    path = CORPUS / relpath

    result = loop("config", "validate", str(path), cwd=CORPUS)

    assert result.exit_code == 0, result.output
    assert result.stdout == f"valid: {path}\n"


@requires_corpus()
def test_the_corpus_configs_validate_together(loop: Loop, tmp_path: Path) -> None:
    paths = [str(CORPUS / p) for p in CORPUS_CONFIGS]

    result = loop("--json", "config", "validate", *paths, cwd=tmp_path)

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["valid"] is True


# --- show --------------------------------------------------------------------------


def test_show_prints_the_effective_config_as_yaml(project: Path, loop: Loop) -> None:
    result = loop("config", "show", cwd=project)

    assert result.exit_code == 0, result.output
    assert YAML(typ="safe").load(result.stdout) == defaults_with_version()


def test_show_without_a_config_prints_the_defaults(git_repo: Path, loop: Loop) -> None:
    result = loop("config", "show", "--json", cwd=git_repo)

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"config": schema.defaults()}


def test_show_json_with_both_flag_positions(project: Path, loop: Loop) -> None:
    local = loop("config", "show", "--json", cwd=project)
    global_ = loop("--json", "config", "show", cwd=project)

    assert local.exit_code == global_.exit_code == 0
    assert json.loads(local.stdout) == json.loads(global_.stdout)
    assert json.loads(local.stdout) == {"config": defaults_with_version()}


def test_show_reflects_the_config_file(project: Path, loop: Loop) -> None:
    write_config(project, 'version: "0.1.0"\ncontextManagement:\n  taskBoundary: off\n')

    result = loop("config", "show", "--json", cwd=project)

    assert result.exit_code == 0
    cm = json.loads(result.stdout)["config"]["contextManagement"]
    assert cm["taskBoundary"] == "off"
    assert cm["phaseBoundary"] == "clear"


def test_show_of_an_invalid_config_fails_with_every_finding(project: Path, loop: Loop) -> None:
    path = write_config(
        project, 'version: "0.1.0"\ncontextManagement:\n  midTask: clear\ntdd:\n  mode: x\n'
    )

    result = loop("config", "show", cwd=project)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "error: the configuration is invalid\n"
        f"  {path}:3:3: error: $.contextManagement.midTask: 'clear' is not allowed; "
        "choose one of: compact, off\n"
        "  hint: clearing inside an unfinished task is never allowed; use compact or off\n"
        f"  {path}:5:3: error: $.tdd.mode: 'x' is not allowed; "
        "choose one of: standard, tdd-first, off\n"
        "hint: fix the findings above; `loop config validate` checks the file alone\n"
    )


def _item(project: Path, build_tree: BuildTree, overrides: str) -> Path:
    design = project / ITEM / "design.md"
    build_tree(
        {f"{ITEM}/design.md": f"---\ntype: design\nstatus: draft\noverrides:\n{overrides}---\n"},
        project,
    )
    return design


def test_show_item_applies_its_overrides(project: Path, build_tree: BuildTree, loop: Loop) -> None:
    _item(project, build_tree, "  contextManagement:\n    taskBoundary: clear\n")

    plain = loop("config", "show", "--json", cwd=project)
    item = loop("config", "show", "--item", "7", "--json", cwd=project)

    assert plain.exit_code == item.exit_code == 0
    assert json.loads(plain.stdout)["config"]["contextManagement"]["taskBoundary"] == "compact"
    assert json.loads(item.stdout)["config"]["contextManagement"]["taskBoundary"] == "clear"


def test_show_item_refuses_a_project_wide_override(
    project: Path, build_tree: BuildTree, loop: Loop
) -> None:
    design = _item(project, build_tree, "  checkpoint:\n    commit: false\n")

    result = loop("config", "show", "--item", "issue-7", cwd=project)

    assert result.exit_code == 1
    assert result.stderr.startswith(
        "error: the configuration is invalid\n"
        f"  {design}:6:5: error: checkpoint.commit cannot be overridden by a work item\n"
        "  hint: set it in .the-loop/config.yaml; overridable keys: "
    )
    assert "Traceback" not in result.output


def test_show_item_of_an_unknown_item_is_a_usage_error(project: Path, loop: Loop) -> None:
    result = loop("config", "show", "--item", "99", cwd=project)

    assert result.exit_code == 2
    assert result.stderr.startswith("error: no work item '99'")


def _explain_rows(stdout: str) -> dict[str, tuple[str, str]]:
    """``key  value  # origin`` lines → ``{key: (value, origin)}``."""
    rows = {}
    for line in stdout.splitlines():
        head, _, origin = line.partition("  # ")
        key, _, value = head.partition(" ")
        rows[key] = (value.strip(), origin)
    return rows


def test_show_explain_names_each_origin(project: Path, build_tree: BuildTree, loop: Loop) -> None:
    config = write_config(
        project,
        'version: "0.1.0"\ncontextManagement:\n  pressure:\n    softTokens: 150000\n',
    )
    design = _item(project, build_tree, "  contextManagement:\n    taskBoundary: clear\n")

    result = loop("config", "show", "--item", "7", "--explain", cwd=project)

    assert result.exit_code == 0, result.output
    rows = _explain_rows(result.stdout)
    config_rel = config.relative_to(project)
    design_rel = design.relative_to(project)
    assert rows["version"] == ('"0.1.0"', f"{config_rel}:1:1")
    assert rows["contextManagement.pressure.softTokens"] == ("150000", f"{config_rel}:4:5")
    assert rows["contextManagement.taskBoundary"] == ('"clear"', f"{design_rel}:6:5")
    assert rows["contextManagement.pressure.hardTokens"] == ("280000", "schema default")
    assert rows["checkpoint.messageTemplate"] == (
        '"chore({{ item }}): checkpoint {{ subject }}"',
        "schema default",
    )


def test_show_explain_aligns_the_values(project: Path, loop: Loop) -> None:
    result = loop("config", "show", "--explain", cwd=project)

    lines = result.stdout.splitlines()
    width = max(len(line.split(" ", 1)[0]) for line in lines)
    assert all(line[width : width + 2] == "  " and line[width + 2] != " " for line in lines)


def test_show_explain_paths_are_relative_like_findings(project: Path, loop: Loop) -> None:
    write_config(project, 'version: "0.1.0"\ntdd:\n  mode: off\n')

    result = loop("config", "show", "--explain", cwd=project)

    assert _explain_rows(result.stdout)["tdd.mode"] == ('"off"', ".the-loop/config.yaml:3:3")


def test_show_explain_json_maps_keys_to_origins(project: Path, loop: Loop) -> None:
    config = project / ".the-loop" / "config.yaml"

    result = loop("config", "show", "--explain", "--json", cwd=project)

    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert set(payload) == {"config", "origins"}
    assert payload["config"] == defaults_with_version()
    config_rel = config.relative_to(project)
    assert payload["origins"]["version"] == f"{config_rel}:7:1"
    assert payload["origins"]["contextManagement.midTask"] == f"{config_rel}:30:3"
    assert payload["origins"]["ticketing.system"] == "schema default"


# --- schema ------------------------------------------------------------------------


def test_schema_prints_the_schema_file(tmp_path: Path, loop: Loop) -> None:
    result = loop("config", "schema", cwd=tmp_path)

    assert result.exit_code == 0
    assert result.stdout == (REPO_ROOT / "schema" / "config.schema.json").read_text()
    parsed = json.loads(result.stdout)
    assert parsed["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert parsed == json.loads((REPO_ROOT / "schema" / "config.schema.json").read_bytes())


def test_schema_needs_no_project(tmp_path: Path, loop: Loop) -> None:
    write_config(tmp_path, "not: [valid")

    result = loop("config", "schema", cwd=tmp_path)

    assert result.exit_code == 0
    assert json.loads(result.stdout)["title"].startswith("loop configuration")


@pytest.mark.parametrize(
    ("variable", "value", "key", "expected"),
    [
        ("DR_CTX_SOFT_TOKENS", "150000", "softTokens", 150_000),
        ("DR_CTX_HARD_TOKENS", "250000", "hardTokens", 250_000),
        ("CONSERVE_EMERGENCY_THRESHOLD", "0.85", "fullClearPercent", 85),
    ],
)
def test_each_environment_override_changes_config_show(
    project: Path, loop: Loop, variable: str, value: str, key: str, expected: int
) -> None:
    before = loop("config", "show", "--json", cwd=project)
    result = loop("config", "show", "--json", "--explain", cwd=project, env={variable: value})

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert json.loads(before.stdout)["config"]["contextManagement"]["pressure"][key] != expected
    assert data["config"]["contextManagement"]["pressure"][key] == expected
    assert data["origins"][f"contextManagement.pressure.{key}"] == f"${variable}"


def test_an_environment_override_below_the_floor_is_refused_by_name(
    project: Path, loop: Loop
) -> None:
    result = loop("config", "show", cwd=project, env={"CONSERVE_EMERGENCY_THRESHOLD": "0.2"})

    assert result.exit_code == 1
    assert result.stderr.startswith(
        "error: CONSERVE_EMERGENCY_THRESHOLD='0.2' must be a fraction of the window from 0.5 to 1\n"
    )


def test_a_policy_threshold_below_half_the_window_is_refused_at_its_line(
    project: Path, loop: Loop
) -> None:
    path = write_config(
        project,
        'version: "0.1.0"\ncontextManagement:\n  pressure:\n'
        "    selectivePercent: 10\n    fullClearPercent: 20\n",
    )

    result = loop("config", "show", cwd=project)

    assert result.exit_code == 1
    assert f"  {path}:5:5: error: $.contextManagement.pressure.fullClearPercent: " in result.stderr
    assert "must be at least 50, got 20\n" in result.stderr
