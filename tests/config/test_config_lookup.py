"""Which config file loop reads: config.yaml, else the upstream harness-config.yaml."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import CORPUS_HEAD, Result, write_tree

from the_loop.config.loader import config_path, load_config
from the_loop.errors import ConfigError

Loop = Callable[..., Result]
PHASES_12 = (
    "[not-started, phase-selection, brainstorming, requirements-definition, design, "
    "test-planning, tasks-breakdown, implementation, verification, needs-review, complete, "
    "cleanup]"
)


def _config(folder: Path, name: str, spec_dir: str) -> Path:
    write_tree(
        folder,
        {
            f".the-loop/{name}": (
                f'version: "0.2.0"\nworkflow:\n  specDir: {spec_dir}\n  phases: {PHASES_12}\n'
            )
        },
    )
    return folder / ".the-loop" / name


def test_harness_config_is_read_where_config_yaml_is_absent(tmp_path: Path) -> None:
    path = _config(tmp_path, "harness-config.yaml", "specs")
    assert config_path(tmp_path) == path
    config = load_config(tmp_path)
    assert (config.file, config.workflow.spec_dir) == (path, "specs")
    assert "test-planning" in config.workflow.phases


def test_config_yaml_is_read_when_it_is_the_only_one(tmp_path: Path) -> None:
    path = _config(tmp_path, "config.yaml", "docs/specs")
    assert load_config(tmp_path).file == path


def test_both_files_are_an_error_naming_both(tmp_path: Path, loop: Loop) -> None:
    ours = _config(tmp_path, "config.yaml", "a")
    upstream = _config(tmp_path, "harness-config.yaml", "b")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(ours) in caught.value.message and str(upstream) in caught.value.message
    result = loop("-C", str(tmp_path), "config", "validate")
    assert result.exit_code == 1
    assert "two config files" in result.stderr and "harness-config.yaml" in result.stderr
    assert "keep one" in result.stderr


def test_init_keeps_an_upstream_config_and_writes_no_second_one(tmp_path: Path, loop: Loop) -> None:
    path = _config(tmp_path, "harness-config.yaml", "specs")
    result = loop("-C", str(tmp_path), "init")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / ".the-loop" / "config.yaml").exists()
    assert ".the-loop/harness-config.yaml" in result.stdout
    assert (tmp_path / "specs").is_dir()
    assert path.read_text().startswith('version: "0.2.0"')


def test_init_writes_config_yaml_where_there_is_none(tmp_path: Path, loop: Loop) -> None:
    assert loop("-C", str(tmp_path), "init").exit_code == 0
    assert (tmp_path / ".the-loop" / "config.yaml").is_file()


@pytest.mark.skipif(not CORPUS_HEAD.is_dir(), reason=f"corpus not found at {CORPUS_HEAD}")
def test_config_validate_accepts_the_upstream_harness_config(tmp_path: Path, loop: Loop) -> None:
    """`loop config validate` in head-a's own layout: harness-config.yaml, no config.yaml."""
    shutil.copytree(CORPUS_HEAD / ".the-loop", tmp_path / ".the-loop")
    assert not (tmp_path / ".the-loop" / "config.yaml").exists()
    result = loop("-C", str(tmp_path), "config", "validate")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().startswith("valid: ")
    assert result.stdout.strip().endswith("harness-config.yaml")
    in_place = loop("-C", str(CORPUS_HEAD), "config", "validate")
    assert in_place.exit_code == 0, in_place.output
