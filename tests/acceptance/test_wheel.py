"""The built wheel ships templates/, commands/ and schema/ and runs alone, offline.

Builds the wheel from this checkout with the venv's own build backend (no build
isolation, no index: nothing is downloaded). When hatchling is not installed in
the venv the test skips and says so; `.ci/run` does the full online install.

The install check uses a fresh virtual environment holding only the wheel. Its
dependencies come from this venv's site-packages via PYTHONPATH; Python does not
process .pth files in PYTHONPATH folders, so the editable install of the
checkout stays invisible and `the_loop` must come from the new venv.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from helpers import REPO_ROOT

from the_loop import __version__

pytestmark = pytest.mark.slow

RESOURCES = "the_loop/_resources"


def _run(
    argv: list[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=dict(env or os.environ), capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from REPO_ROOT, offline; skip when the build backend is absent."""
    env = {**os.environ, "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    backend = _run([sys.executable, "-c", "import hatchling.build"], env=env)
    if backend.returncode != 0:
        pytest.skip(
            "hatchling (the build backend) is not installed in this venv, so the wheel cannot "
            "be built offline with --no-build-isolation; .ci/run builds and installs it online"
        )
    out = tmp_path_factory.mktemp("dist")
    started = time.monotonic()
    proc = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(out),
            str(REPO_ROOT),
        ],
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    print(f"wheel built in {time.monotonic() - started:.1f}s: {wheels[0].name}")
    return wheels[0]


def test_the_wheel_ships_the_resources(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())

    assert f"{RESOURCES}/templates/config.yaml.j2" in names
    assert f"{RESOURCES}/schema/config.schema.json" in names
    assert any(n.startswith(f"{RESOURCES}/commands/") for n in names)
    for kind in ("templates", "schema", "commands"):
        shipped = {
            str(p.relative_to(REPO_ROOT)).replace(os.sep, "/")
            for p in (REPO_ROOT / kind).rglob("*")
            if p.is_file() and p.name != ".keep"
        }
        in_wheel = {n.removeprefix(f"{RESOURCES}/") for n in names if n.startswith(RESOURCES)}
        assert shipped <= in_wheel, f"{kind}/ files missing from the wheel: {shipped - in_wheel}"
    assert "the_loop/__init__.py" in names
    assert "the_loop/__main__.py" in names
    assert not any(n.startswith(("tests/", "the_loop/tests/")) for n in names)


def test_the_wheel_schema_is_the_repository_schema(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read(f"{RESOURCES}/schema/config.schema.json")

    assert shipped == (REPO_ROOT / "schema" / "config.schema.json").read_bytes()


def test_the_wheel_metadata(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        metadata = archive.read(f"{info}/METADATA").decode()

    parser = configparser.ConfigParser()
    parser.read_string(entry_points)
    assert parser["console_scripts"]["loop"] == "the_loop.__main__:main"
    headers = dict(
        line.split(": ", 1) for line in metadata.split("\n\n", 1)[0].splitlines() if ": " in line
    )
    assert headers["Name"] != "the-loopy-one"
    assert headers["Version"] == __version__


def _site_packages() -> str:
    paths = sysconfig.get_paths()
    return os.pathsep.join(dict.fromkeys([paths["purelib"], paths["platlib"]]))


def test_the_wheel_installed_alone_runs_init_and_validate(
    wheel: Path, tmp_path: Path, git_repo: Path
) -> None:
    started = time.monotonic()
    venv = tmp_path / "venv"
    created = _run([sys.executable, "-m", "venv", str(venv)])
    assert created.returncode == 0, created.stderr
    python = venv / "bin" / "python"
    installed = _run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
        env={**os.environ, "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    env = {**os.environ, "PYTHONPATH": _site_packages()}
    env.pop("PYTHONHOME", None)

    where = _run(
        [
            str(python),
            "-c",
            "import the_loop, the_loop.io.resources as r; "
            "print(the_loop.__file__); print(r.resource_dir('schema'))",
        ],
        env=env,
        cwd=git_repo,
    )
    assert where.returncode == 0, where.stderr
    module_file, schema_dir = (Path(line) for line in where.stdout.splitlines())
    assert module_file.is_relative_to(venv), f"the_loop imported from {module_file}"
    assert schema_dir.is_relative_to(venv), f"resources found at {schema_dir}"

    version = _run([str(python), "-m", "the_loop", "--version"], env=env, cwd=git_repo)
    assert version.returncode == 0, version.stderr
    assert version.stdout == f"loop, version {__version__}\n"

    script = _run([str(venv / "bin" / "loop"), "--version"], env=env, cwd=git_repo)
    assert script.returncode == 0, script.stderr
    assert script.stdout == f"loop, version {__version__}\n"

    init = _run([str(python), "-m", "the_loop", "init", "--defaults"], env=env, cwd=git_repo)
    assert init.returncode == 0, init.stdout + init.stderr
    assert "created          .the-loop/config.yaml" in init.stdout
    config = git_repo / ".the-loop" / "config.yaml"
    assert config.read_text().startswith("# yaml-language-server: $schema=./config.schema.json\n")

    validate = _run([str(python), "-m", "the_loop", "config", "validate"], env=env, cwd=git_repo)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert validate.stdout == f"valid: {config.resolve()}\n"
    print(f"offline install check took {time.monotonic() - started:.1f}s")
