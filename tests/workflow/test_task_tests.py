"""What in a _Test:_ command only a shell understands (loop runs tests without one)."""

from __future__ import annotations

import pytest

from the_loop.workflow.task_tests import explicit_shell, shell_features


@pytest.mark.parametrize(
    ("command", "features"),
    [
        ("pytest -q tests/test_x.py", ()),
        ("python -c 'print(1); print(2)'", ()),  # quoted: the program's own syntax
        ('pytest -k "a or b"', ()),
        ("echo '$HOME'", ()),
        ("cd sub && pytest", ("&&", "cd")),
        ("FOO=1 pytest", ("FOO=…",)),
        ("pytest | tee out.txt", ("|",)),
        ("pytest > out.txt", (">",)),
        ("make test; make lint", (";",)),
        ('echo "$HOME"', ("$HOME",)),
        ("pytest $(cat args)", ("$(",)),
        ("pytest tests/*.py", ("glob",)),
        ("ls ~/x", ("~",)),
        ("export X=1", ("export",)),
    ],
)
def test_shell_features(command: str, features: tuple[str, ...]) -> None:
    assert shell_features(command) == features


def test_an_explicit_shell_brings_its_own() -> None:
    assert explicit_shell(["sh", "-c", "cd x && y"])
    assert explicit_shell(["/bin/bash", "-c", "y"])
    assert not explicit_shell(["sh", "script.sh"])
    assert not explicit_shell(["pytest", "-c", "x"])
