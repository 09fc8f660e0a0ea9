"""The one Jinja environment: strict, newline-preserving, confined to templates/.

Jinja is imported here only, and only by commands that render something, to
keep it off the start-up path of read-only commands.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from the_loop.errors import TemplateError
from the_loop.io.plain_templates import render_shipped, render_source
from the_loop.io.resources import resource_dir


@cache
def _environment() -> Any:
    import jinja2

    root = resource_dir("templates")

    class ConfinedLoader(jinja2.FileSystemLoader):
        """A file loader that refuses any name resolving outside the template root."""

        def get_source(self, environment: jinja2.Environment, template: str) -> Any:
            target = (root / template).resolve()
            if not target.is_relative_to(root.resolve()):
                raise jinja2.TemplateNotFound(template)
            return super().get_source(environment, template)

    return jinja2.Environment(
        loader=ConfinedLoader(str(root)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # markdown and YAML, never HTML
    )


def render(name: str, **context: Any) -> str:
    """Render the shipped template ``name`` with ``context``."""
    # The checkpoint's own templates need no Jinja (a tenth of a `task done`).
    plain = render_shipped(name, context)
    if plain is not None:
        return plain
    import jinja2

    try:
        return str(_environment().get_template(name).render(**context))
    except jinja2.TemplateNotFound as exc:
        raise TemplateError(f"template {name!r} not found in loop's templates/") from exc
    except jinja2.TemplateError as exc:
        raise TemplateError(f"template {name!r} failed to render: {exc}") from exc


def render_string(source: str, *, what: str, **context: Any) -> str:
    """Render a user-supplied template string (from config) in a sandbox.

    The sandbox has no loader (``include``, ``import`` and ``extends`` find
    nothing), refuses unsafe attribute access, and bounds ``*`` and ``**``, so a
    template can neither reach files nor spend minutes computing; every failure
    is a ``TemplateError``.
    """
    # The usual subject template only puts names in place: no Jinja needed for it.
    plain = render_source(source, context)
    if plain is not None:
        return plain
    import jinja2

    env = _sandbox()
    try:
        return str(env.from_string(source).render(**context))
    except jinja2.TemplateError as exc:
        reason = f"{type(exc).__name__}: {exc}" if isinstance(exc, jinja2.TemplateNotFound) else exc
        raise TemplateError(
            f"{what} failed to render: {reason}",
            hint="available names: " + ", ".join(sorted(context)),
        ) from exc
    except (ArithmeticError, LookupError, TypeError, ValueError, MemoryError) as exc:
        # Errors of the expression itself ({{ 1/0 }}, {{ "%d" % "x" }}).
        raise TemplateError(
            f"{what} failed to render: {type(exc).__name__}: {exc}",
            hint="available names: " + ", ".join(sorted(context)),
        ) from exc


_MAX_RESULT = 10_000  # characters or digits a bounded * or ** may produce


@cache
def _sandbox() -> Any:
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    class BoundedSandbox(SandboxedEnvironment):
        """A sandbox where ``*`` and ``**`` cannot build huge strings or numbers."""

        intercepted_binops = frozenset({"*", "**"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if operator == "**":
                if _big_power(left, right):
                    raise jinja2.sandbox.SecurityError("the power is too large")
                return left**right
            if _big_product(left, right):
                raise jinja2.sandbox.SecurityError("the product is too large")
            return left * right

    return BoundedSandbox(
        loader=jinja2.DictLoader({}),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def _big_power(base: Any, exponent: Any) -> bool:
    if isinstance(base, (int, float)) and isinstance(exponent, (int, float)):
        magnitude = abs(float(base)) if abs(base) > 1 else 1.0
        return exponent > 0 and math.log10(magnitude) * float(exponent) > _MAX_RESULT
    return False


def _big_product(left: Any, right: Any) -> bool:
    for seq, times in ((left, right), (right, left)):
        if isinstance(seq, (str, list, tuple)) and isinstance(times, int):
            return len(seq) * times > _MAX_RESULT
    return False
