"""The one Jinja environment: strict, newline-preserving, confined to templates/.

Jinja is imported here only, and only by commands that render something, to
keep it off the start-up path of read-only commands.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from the_loop.errors import TemplateError
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
    import jinja2

    try:
        return str(_environment().get_template(name).render(**context))
    except jinja2.TemplateNotFound as exc:
        raise TemplateError(f"template {name!r} not found in loop's templates/") from exc
    except jinja2.TemplateError as exc:
        raise TemplateError(f"template {name!r} failed to render: {exc}") from exc


def render_string(source: str, *, what: str, **context: Any) -> str:
    """Render a user-supplied template string (from config) in a sandbox."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    try:
        return str(env.from_string(source).render(**context))
    except jinja2.TemplateError as exc:
        raise TemplateError(
            f"{what} failed to render: {exc}",
            hint="available names: " + ", ".join(sorted(context)),
        ) from exc
