"""``load_config``, ``check_file`` and ``explain``: precedence, origins, overrides, the cache.

Effective config = schema defaults ← ``.the-loop/config.yaml`` ← the work
item's front-matter ``overrides`` (brainstorm, requirements/bugfix, design,
tasks; a later artifact wins), validated again after the merge. Work items are
real files written with ``build_tree``; their override sources come from
``the_loop.spec.project.open_item``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from the_loop.config.loader import (
    OverrideSource,
    check_file,
    config_path,
    explain,
    load_config,
    schema,
)
from the_loop.config.settings import Config
from the_loop.config.validation import validate
from the_loop.errors import ConfigError, ExitCode, UnusableInputError, Where
from the_loop.findings import Level
from the_loop.spec.project import open_item

BuildTree = Callable[..., Path]
ITEM = "docs/specs/issue-7"
MINIMAL = {".the-loop/config.yaml": 'version: "0.1.0"\n'}


def artifact(kind: str, overrides: str) -> str:
    """An artifact whose front matter holds ``overrides`` (YAML, indented under the key).

    Line 1 is ``---``; the ``overrides:`` key is on line 4, its first child on line 5.
    """
    body = textwrap.indent(textwrap.dedent(overrides).strip("\n"), "  ")
    return f"---\ntype: {kind}\nstatus: draft\noverrides:\n{body}\n---\n# {kind}\n"


def item_config(root: Path, ref: str = "issue-7") -> Config:
    return open_item(root, ref, cwd=root).config


def origin_of(config: Config, key: str) -> str:
    return {k: origin for k, _v, origin in explain(config)}[key]


def value_of(config: Config, key: str) -> object:
    return {k: v for k, v, _o in explain(config)}[key]


def details_of(exc: pytest.ExceptionInfo[ConfigError]) -> str:
    return "\n".join(exc.value.details)


# --- defaults and the config file -------------------------------------------------


def test_a_missing_config_file_means_the_schema_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path)

    assert config.file is None
    assert config.data == schema.defaults()
    assert {origin for _k, _v, origin in explain(config)} == {"schema default"}
    assert config.context.mid_task == "compact"
    assert config.context.pressure.soft_tokens == 200000
    assert config.context.pressure.hard_tokens == 280000
    assert config.context.pressure.selective_percent == 75
    assert config.context.pressure.full_clear_percent == 90
    assert config.workflow.spec_dir == "docs/specs"
    assert config.checkpoint.commit is True
    assert config.agent.kind == "claude"
    assert config.agent.command == ()


def test_the_config_file_overrides_defaults_key_by_key(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            ".the-loop/config.yaml": textwrap.dedent(
                """\
                version: "0.1.0"
                contextManagement:
                  taskBoundary: clear
                  pressure:
                    softTokens: 150000
                checkpoint:
                  commit: false
                """
            )
        }
    )

    config = load_config(root)

    assert config.file == config_path(root)
    assert config.context.task_boundary == "clear"
    assert config.context.phase_boundary == "clear"  # default, untouched by the merge
    assert config.context.pressure.soft_tokens == 150000
    assert config.context.pressure.hard_tokens == 280000
    assert config.checkpoint.commit is False
    assert config.checkpoint.trailers is True
    assert config.data["version"] == "0.1.0"


def test_explain_names_the_schema_default_or_the_config_line(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            ".the-loop/config.yaml": 'version: "0.1.0"\n'
            "contextManagement:\n"
            "  pressure:\n"
            "    softTokens: 150000\n"
            "workflow:\n"
            "  phases: [not-started, requirements-definition, design, tasks-breakdown,"
            " implementation, needs-review, complete]\n"
        }
    )
    file = config_path(root)

    config = load_config(root)

    assert origin_of(config, "version") == f"{file}:1:1"
    assert origin_of(config, "contextManagement.pressure.softTokens") == f"{file}:4:5"
    assert origin_of(config, "contextManagement.pressure.hardTokens") == "schema default"
    # a list is one value: its origin is the key that set it
    assert origin_of(config, "workflow.phases") == f"{file}:6:3"
    assert "brainstorming" not in value_of(config, "workflow.phases")  # type: ignore[operator]


def test_explain_lists_every_effective_leaf_once(tmp_path: Path) -> None:
    rows = explain(load_config(tmp_path))
    keys = [key for key, _v, _o in rows]

    assert len(keys) == len(set(keys))
    assert "contextManagement.pressure.fullClearPercent" in keys
    assert "checkpoint.messageTemplate" in keys
    assert "contextManagement" not in keys  # mappings are not leaves


def test_an_invalid_config_file_raises_with_every_finding(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            ".the-loop/config.yaml": 'version: "0.1.0"\n'
            "contextManagement:\n"
            "  midTask: clear\n"
            "reviews:\n"
            "  selfReviewCount: -1\n"
        }
    )
    file = config_path(root)

    with pytest.raises(ConfigError) as exc:
        load_config(root)

    assert exc.value.exit_code is ExitCode.FAILURE
    assert exc.value.message == "the configuration is invalid"
    assert exc.value.details == (
        f"{file}:3:3: error: $.contextManagement.midTask: 'clear' is not allowed; "
        "choose one of: compact, off\n"
        "  hint: clearing inside an unfinished task is never allowed; use compact or off",
        f"{file}:5:3: error: $.reviews.selfReviewCount: must be at least 0, got -1",
    )
    assert exc.value.hint == "fix the findings above; `loop config validate` checks the file alone"


# --- check_file --------------------------------------------------------------------


def test_check_file_sorts_findings_by_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        'version: "0.1.0"\n'
        "checkpoint:\n"
        "  stage: some\n"
        "contextManagement:\n"
        "  midTask: clear\n"
        "  phaseBoundary: never\n"
        "bogus: 1\n"
    )

    findings = check_file(path)

    assert [(f.where.line, f.where.col) for f in findings if f.where] == [
        (3, 3),
        (5, 3),
        (6, 3),
        (7, 1),
    ]
    assert all(f.level is Level.ERROR for f in findings)
    assert {f.code for f in findings} == {"config.schema"}


def test_check_file_reports_the_loader_cross_checks_with_their_own_codes(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        'version: "0.1.0"\n'
        "contextManagement:\n"
        "  pressure: {softTokens: 9, hardTokens: 9, selectivePercent: 80, fullClearPercent: 70}\n"
        "workflow:\n"
        "  phases: [not-started]\n"
    )

    findings = check_file(path)

    assert [(f.code, f.where) for f in findings] == [
        ("config.pressure-order", Where(path, 3, 14)),
        ("config.pressure-order", Where(path, 3, 44)),
        ("config.phases-missing", Where(path, 5, 3)),
    ]


def test_check_file_of_a_missing_file_is_unusable_input(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"

    with pytest.raises(UnusableInputError) as exc:
        check_file(path)

    assert exc.value.exit_code is ExitCode.USAGE
    assert exc.value.render() == (
        f"{path}: config file not found\n"
        "hint: run `loop init` to create one, or pass the file to check"
    )


def test_check_file_of_non_utf8_text_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b'version: "0.1.0"\nworkflow:\n  specDir: caf\xe9\n')

    with pytest.raises(UnusableInputError) as exc:
        check_file(path)

    assert exc.value.exit_code is ExitCode.USAGE
    assert exc.value.where == Where(path, 3, 15)
    assert exc.value.render() == (
        f"{path}:3:15: not UTF-8 text: byte 0xe9 cannot be decoded\nhint: save the file as UTF-8"
    )


# --- work-item overrides -----------------------------------------------------------


def test_overrides_sit_on_top_of_the_config_file(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            ".the-loop/config.yaml": 'version: "0.1.0"\n'
            "contextManagement:\n"
            "  taskBoundary: off\n"
            "  pressure:\n"
            "    softTokens: 150000\n",
            f"{ITEM}/requirements.md": artifact(
                "requirements",
                """
                contextManagement:
                  taskBoundary: clear
                  pressure:
                    hardTokens: 250000
                """,
            ),
        }
    )
    file = config_path(root)
    req = root / ITEM / "requirements.md"

    config = item_config(root)

    assert config.context.task_boundary == "clear"
    assert config.context.pressure.soft_tokens == 150000
    assert config.context.pressure.hard_tokens == 250000
    assert config.context.pressure.selective_percent == 75
    assert origin_of(config, "contextManagement.taskBoundary") == f"{req}:6:5"
    assert origin_of(config, "contextManagement.pressure.hardTokens") == f"{req}:8:7"
    assert origin_of(config, "contextManagement.pressure.softTokens") == f"{file}:5:5"
    assert origin_of(config, "contextManagement.pressure.selectivePercent") == "schema default"
    # the project's own config is untouched by the item
    assert load_config(root).context.task_boundary == "off"


CHAIN = ("brainstorm", "requirements", "design", "tasks")


@pytest.mark.parametrize(
    "present",
    [
        ("brainstorm",),
        ("brainstorm", "requirements"),
        ("brainstorm", "requirements", "design"),
        CHAIN,
        ("requirements", "tasks"),
        ("brainstorm", "design"),
        ("bugfix", "design"),
        ("brainstorm", "bugfix"),
    ],
    ids=lambda kinds: "+".join(kinds),
)
def test_the_later_artifact_wins(present: tuple[str, ...], build_tree: BuildTree) -> None:
    """Order: brainstorm, requirements or bugfix, design, tasks."""
    order = ("brainstorm", "requirements", "bugfix", "design", "tasks")
    timeouts = {kind: 100 + order.index(kind) for kind in present}
    root = build_tree(
        {
            **MINIMAL,
            **{
                f"{ITEM}/{kind}.md": artifact(kind, f"agent:\n  timeoutSeconds: {seconds}")
                for kind, seconds in timeouts.items()
            },
        }
    )
    winner = max(present, key=order.index)

    config = item_config(root)

    assert config.agent.timeout_seconds == timeouts[winner]
    assert origin_of(config, "agent.timeoutSeconds") == f"{root / ITEM / winner}.md:6:5"


def test_override_sources_are_in_precedence_order(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            **MINIMAL,
            **{
                f"{ITEM}/{kind}.md": artifact(kind, "tdd:\n  mode: off") for kind in reversed(CHAIN)
            },
        }
    )
    item = open_item(root, "7", cwd=root).item

    sources = item.override_sources()

    assert [s.path.name for s in sources] == [f"{kind}.md" for kind in CHAIN]
    assert all(isinstance(s, OverrideSource) and s.first_line == 2 for s in sources)


def test_a_later_artifact_overrides_only_the_keys_it_names(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            **MINIMAL,
            f"{ITEM}/requirements.md": artifact(
                "requirements", "contextManagement:\n  taskBoundary: clear\n  midTask: off"
            ),
            f"{ITEM}/design.md": artifact("design", "contextManagement:\n  taskBoundary: off"),
        }
    )

    config = item_config(root)

    assert config.context.task_boundary == "off"
    assert config.context.mid_task == "off"
    assert origin_of(config, "contextManagement.midTask") == f"{root / ITEM}/requirements.md:7:5"


def test_a_list_in_an_override_replaces_the_whole_list(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            ".the-loop/config.yaml": 'version: "0.1.0"\n'
            "tokenEconomy:\n"
            "  outputVerbosity:\n"
            "    preserve: [code, errors, diffs]\n",
            f"{ITEM}/design.md": artifact(
                "design", "tokenEconomy:\n  outputVerbosity:\n    preserve: [specs]"
            ),
        }
    )

    config = item_config(root)

    assert config.data["tokenEconomy"]["outputVerbosity"]["preserve"] == ["specs"]
    assert config.data["tokenEconomy"]["outputVerbosity"]["mode"] == "concise"


@pytest.mark.parametrize(
    ("overrides", "key", "line", "col"),
    [
        ("workflow:\n  specDir: elsewhere", "workflow.specDir", 6, 5),
        ("checkpoint:\n  commit: false", "checkpoint.commit", 6, 5),
        ("agent:\n  kind: codex", "agent.kind", 6, 5),
        ("version: '9.9'", "version", 5, 3),
    ],
)
def test_overriding_a_project_wide_key_is_an_error_at_its_line(
    overrides: str, key: str, line: int, col: int, build_tree: BuildTree
) -> None:
    root = build_tree({f"{ITEM}/tasks.md": artifact("tasks", overrides)})
    tasks = root / ITEM / "tasks.md"

    with pytest.raises(ConfigError) as exc:
        item_config(root)

    assert exc.value.exit_code is ExitCode.FAILURE
    first, hint = exc.value.details[0].split("\n")
    assert first == f"{tasks}:{line}:{col}: error: {key} cannot be overridden by a work item"
    assert hint.startswith("  hint: set it in .the-loop/config.yaml; overridable keys: ")
    assert "contextManagement" in hint
    assert "checkpoint.verifyTests" in hint


def test_every_refused_key_is_reported_not_just_the_first(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            f"{ITEM}/design.md": artifact(
                "design",
                "workflow:\n  specDir: x\ncheckpoint:\n  commit: false\n  verifyTests: true",
            )
        }
    )

    with pytest.raises(ConfigError) as exc:
        item_config(root)

    text = details_of(exc)
    assert "design.md:6:5: error: workflow.specDir cannot be overridden" in text
    assert "design.md:8:5: error: checkpoint.commit cannot be overridden" in text
    assert "checkpoint.verifyTests" not in text.split("hint:")[0]


def test_overridable_keys_inside_a_project_wide_section_are_allowed(
    build_tree: BuildTree,
) -> None:
    root = build_tree(
        {
            **MINIMAL,
            f"{ITEM}/tasks.md": artifact(
                "tasks",
                "checkpoint:\n  verifyTests: true\n  testTimeoutSeconds: 30\n"
                "agent:\n  timeoutSeconds: 60",
            ),
        }
    )

    config = item_config(root)

    assert config.checkpoint.verify_tests is True
    assert config.checkpoint.test_timeout_seconds == 30
    assert config.agent.timeout_seconds == 60
    assert config.checkpoint.commit is True


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            "contextManagement: {midTask: clear}",
            "tasks.md:5:23: error: $.contextManagement.midTask: 'clear' is not allowed; "
            "choose one of: compact, off\n"
            "  hint: clearing inside an unfinished task is never allowed; use compact or off",
        ),
        (
            "contextManagement:\n  pressure: {softTokens: 999999}",
            "tasks.md:6:16: error: $.contextManagement.pressure.softTokens: softTokens (999999) "
            "must be below hardTokens (280000)\n"
            "  hint: the tokens arm needs a lower threshold for compaction than for a clear",
        ),
        (
            "contextManagement:\n  pressure:\n    selectivePercent: 95",
            "tasks.md:7:7: error: $.contextManagement.pressure.selectivePercent: "
            "selectivePercent (95) must be below fullClearPercent (90)",
        ),
        (
            "reviews:\n  selfReviewCount: many",
            "tasks.md:6:5: error: $.reviews.selfReviewCount: expected a whole number, "
            "got the text 'many'",
        ),
        (
            "contextManagement:\n  enabeld: false",
            "tasks.md:6:5: error: $.contextManagement.enabeld: unknown key 'enabeld'\n"
            "  hint: did you mean 'enabled'?",
        ),
    ],
    ids=["mid-task-clear", "soft-above-hard", "selective-above-full", "type", "unknown-key"],
)
def test_an_override_that_breaks_the_merged_config_is_blamed_on_its_line(
    overrides: str, expected: str, build_tree: BuildTree
) -> None:
    root = build_tree(
        {
            ".the-loop/config.yaml": 'version: "0.1.0"\n',
            f"{ITEM}/tasks.md": artifact("tasks", overrides),
        }
    )

    with pytest.raises(ConfigError) as exc:
        item_config(root)

    assert exc.value.exit_code is ExitCode.FAILURE
    assert details_of(exc).startswith(f"{root / ITEM}/{expected}")


def test_an_override_lowering_hard_tokens_below_the_config_is_blamed_on_the_override(
    build_tree: BuildTree,
) -> None:
    root = build_tree(
        {
            ".the-loop/config.yaml": 'version: "0.1.0"\n'
            "contextManagement:\n"
            "  pressure:\n"
            "    softTokens: 250000\n",
            f"{ITEM}/tasks.md": artifact(
                "tasks", "contextManagement:\n  pressure:\n    hardTokens: 240000"
            ),
        }
    )

    with pytest.raises(ConfigError) as exc:
        item_config(root)

    assert details_of(exc).startswith(f"{root / ITEM}/tasks.md:7:7: error: ")


def test_overrides_apply_when_there_is_no_config_file(build_tree: BuildTree) -> None:
    root = build_tree({f"{ITEM}/design.md": artifact("design", "tdd:\n  mode: off")})

    config = item_config(root)

    assert config.file is None
    assert config.data["tdd"]["mode"] == "off"


def test_an_override_that_is_not_a_mapping_is_an_error(build_tree: BuildTree) -> None:
    root = build_tree(
        {f"{ITEM}/design.md": "---\ntype: design\nstatus: draft\noverrides: [1, 2]\n---\n"}
    )

    with pytest.raises(ConfigError) as exc:
        item_config(root)

    assert details_of(exc) == (
        f"{root / ITEM}/design.md:4:12: error: overrides must be a mapping of config keys\n"
        "  hint: write `overrides: {}` or nested keys such as `contextManagement:`"
    )


@pytest.mark.parametrize("overrides", ["overrides: {}\n", "overrides:\n", ""])
def test_empty_or_absent_overrides_change_nothing(overrides: str, build_tree: BuildTree) -> None:
    root = build_tree({f"{ITEM}/design.md": f"---\ntype: design\nstatus: draft\n{overrides}---\n"})

    config = item_config(root)

    assert config.data == schema.defaults()


def test_an_invalid_config_file_is_reported_before_any_override(build_tree: BuildTree) -> None:
    root = build_tree(
        {
            ".the-loop/config.yaml": 'version: "0.1.0"\ncheckpoint:\n  stage: some\n',
            f"{ITEM}/tasks.md": artifact("tasks", "contextManagement:\n  midTask: off"),
        }
    )

    with pytest.raises(ConfigError) as exc:
        item_config(root)

    assert details_of(exc).startswith(f"{config_path(root)}:3:3: error: $.checkpoint.stage:")


def test_an_empty_section_in_an_override_keeps_the_defaults(build_tree: BuildTree) -> None:
    root = build_tree({**MINIMAL, f"{ITEM}/tasks.md": artifact("tasks", "contextManagement: {}")})

    config = item_config(root)

    assert config.context.pressure.soft_tokens == 200000


def test_an_empty_section_in_the_config_file_keeps_the_defaults(build_tree: BuildTree) -> None:
    root = build_tree({".the-loop/config.yaml": 'version: "0.1.0"\ncheckpoint: {}\n'})

    config = load_config(root)

    assert config.checkpoint.commit is True


def test_integer_settings_are_ints_even_when_written_as_floats(build_tree: BuildTree) -> None:
    root = build_tree(
        {".the-loop/config.yaml": 'version: "0.1.0"\nagent:\n  timeoutSeconds: 2.5e5\n'}
    )

    config = load_config(root)

    assert type(config.agent.timeout_seconds) is int


# --- the validation cache ----------------------------------------------------------

_PROBE = (
    "import sys; from pathlib import Path; from the_loop.config.loader import load_config; "
    "load_config(Path(sys.argv[1])); print('jsonschema' in sys.modules)"
)


def _imports_jsonschema(root: Path, env: Mapping[str, str] | None = None) -> bool:
    """Load ``root``'s config in a fresh interpreter; did that import jsonschema?"""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(root)],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return {"True\n": True, "False\n": False}[proc.stdout]


def test_a_valid_config_is_validated_once(build_tree: BuildTree, hermetic_env: Path) -> None:
    root = build_tree({".the-loop/config.yaml": 'version: "0.1.0"\ntdd:\n  mode: off\n'})

    assert _imports_jsonschema(root) is True
    assert _imports_jsonschema(root) is False
    assert list((hermetic_env / ".cache" / "loop").glob("config-*.entry"))


def test_a_changed_config_is_validated_again(build_tree: BuildTree) -> None:
    root = build_tree({".the-loop/config.yaml": 'version: "0.1.0"\ntdd:\n  mode: off\n'})
    assert _imports_jsonschema(root) is True
    assert _imports_jsonschema(root) is False

    config_path(root).write_text('version: "0.1.0"\ntdd:\n  mode: standard\n')

    assert _imports_jsonschema(root) is True
    assert _imports_jsonschema(root) is False


def test_the_cache_lives_under_xdg_cache_home(build_tree: BuildTree, tmp_path: Path) -> None:
    root = build_tree({".the-loop/config.yaml": 'version: "0.1.0"\n'})
    first, second = tmp_path / "cache-a", tmp_path / "cache-b"

    assert _imports_jsonschema(root, {"XDG_CACHE_HOME": str(first)}) is True
    assert _imports_jsonschema(root, {"XDG_CACHE_HOME": str(second)}) is True
    assert _imports_jsonschema(root, {"XDG_CACHE_HOME": str(first)}) is False
    assert list((first / "loop").glob("config-*.entry"))


def test_no_cache_means_no_config_cache(build_tree: BuildTree, hermetic_env: Path) -> None:
    root = build_tree({".the-loop/config.yaml": 'version: "0.1.0"\n'})

    assert _imports_jsonschema(root, {"LOOP_NO_CACHE": "1"}) is True
    assert _imports_jsonschema(root, {"LOOP_NO_CACHE": "1"}) is True
    assert not (hermetic_env / ".cache" / "loop").exists()


def test_an_invalid_config_is_never_cached(build_tree: BuildTree) -> None:
    root = build_tree({".the-loop/config.yaml": 'version: "0.1.0"\ntdd:\n  mode: sometimes\n'})

    for _ in range(2):
        with pytest.raises(ConfigError):
            load_config(root)
        assert validate({"version": "0.1.0", "tdd": {"mode": "sometimes"}}) != []


def test_an_unwritable_cache_only_costs_the_validation(
    build_tree: BuildTree, tmp_path: Path
) -> None:
    root = build_tree({".the-loop/config.yaml": 'version: "0.1.0"\n'})
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")

    assert _imports_jsonschema(root, {"XDG_CACHE_HOME": str(blocker)}) is True
    assert _imports_jsonschema(root, {"XDG_CACHE_HOME": str(blocker)}) is True


def test_a_corrupt_cache_file_is_ignored(build_tree: BuildTree, hermetic_env: Path) -> None:
    root = build_tree({".the-loop/config.yaml": 'version: "0.1.0"\n'})
    assert _imports_jsonschema(root) is True
    entries = list((hermetic_env / ".cache" / "loop").glob("*.entry"))
    assert entries
    for entry in entries:
        entry.write_bytes(b"\xff\xfe not text")

    assert load_config(root).data["version"] == "0.1.0"
    assert _imports_jsonschema(root) is False  # the load above replaced the damaged entries
