"""Find the files loop ships: ``templates/``, ``commands/`` and ``schema/``.

In a source checkout they sit at the repository root, beside the package; in an
installed wheel they are packaged under ``the_loop/_resources``. This module is
the only place that knows both layouts.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from the_loop.errors import TemplateError

# This file lives in the_loop/io/; the package root is one level up.
_PACKAGE = Path(__file__).resolve().parent.parent
KINDS = ("templates", "commands", "schema")


@cache
def resource_dir(kind: str) -> Path:
    """The folder holding the shipped ``kind`` files (one of ``KINDS``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown resource kind {kind!r}")
    for candidate in (_PACKAGE / "_resources" / kind, _PACKAGE.parent / kind):
        if candidate.is_dir():
            return candidate
    raise TemplateError(
        f"loop's {kind}/ folder is missing from this installation",
        hint="reinstall loop (pip install --force-reinstall …): the wheel ships it inside",
    )


def resource_path(kind: str, name: str) -> Path:
    """The path of one shipped file; refuses names that would leave the folder."""
    root = resource_dir(kind)
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise TemplateError(f"{name!r} is outside loop's {kind}/ folder")
    if not path.is_file():
        raise TemplateError(f"loop's {kind}/ has no file {name!r}")
    return path


def read_resource(kind: str, name: str) -> str:
    """The text of one shipped file."""
    return resource_path(kind, name).read_text(encoding="utf-8")
