"""The one Jinja environment factory: loop's templates, and templates taken from config.

Every log entry, commit message, brief and artifact skeleton is rendered by
Jinja. Jinja is imported here only, and only by commands that render
something. Its compile cost is paid with its own means: a template is compiled
once per process (the environment keeps it), and the compiled code is kept in
loop's one cache (a ``jinja2.BytecodeCache`` over ``the_loop.io.content_cache``,
off with ``LOOP_NO_CACHE``), so a later process loads it instead of compiling.

A template taken from config (``checkpoint.messageTemplate``) is not loop's own:
it renders in a ``SandboxedEnvironment`` that has no loader, refuses unsafe
attribute access and bounds the work a template may do (see :func:`render_string`).
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any

from the_loop.errors import TemplateError
from the_loop.io.content_cache import private_folder, user_cache, user_cache_dir
from the_loop.io.resources import resource_dir

# What a template from config may do in one render: loop iterations in all, and
# characters of output. A commit subject needs a few of each; a template that
# needs more is a mistake or an attack, and fails at once instead of running on.
MAX_ITERATIONS = 10_000
MAX_OUTPUT = 64 * 1024
_MAX_RESULT = 10_000  # characters or digits a bounded * or ** may produce

# The iterations left to the render in progress (a one-item list, so the filter can count down).
_budget: ContextVar[list[int] | None] = ContextVar("loop_template_budget", default=None)


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
        bytecode_cache=_bytecode_cache(),
    )


def _bytecode_cache() -> Any:
    """Jinja's compiled templates, kept in loop's one cache (in the user's cache folder)."""
    import jinja2

    class KeptBytecode(jinja2.BytecodeCache):
        """A ``BytecodeCache`` whose store is ``content_cache``: same files, switch and limits.

        Jinja checks the template's source checksum in the bucket itself; the
        entry's key adds loop's code stamp (its templates' sizes and times).
        Compiled code is code: it is kept only in the user's own cache folder,
        never in a project, and read only while that folder is private.
        """

        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            cache = user_cache()
            if cache.enabled and private_folder(user_cache_dir()):
                data = cache.load_bytes("jinja", Path(bucket.key), bucket.key)
                if data is not None:
                    bucket.bytecode_from_string(data)

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            cache = user_cache()
            if cache.enabled:
                code = bucket.bytecode_to_string()
                cache.store_bytes("jinja", Path(bucket.key), bucket.key, code)

    return KeptBytecode()


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
    """Render a user-supplied template string (from config) in a bounded sandbox.

    The sandbox has no loader (``include``, ``import`` and ``extends`` find
    nothing), refuses unsafe attribute access, caps ``range`` (Jinja's sandbox
    does) and bounds ``*`` and ``**``; every loop of the template counts against
    :data:`MAX_ITERATIONS` iterations in all, and the output against
    :data:`MAX_OUTPUT` characters. So a template can neither reach files nor
    spend minutes computing: every failure, a bound included, is a
    ``TemplateError`` naming ``what``, raised before anything is written.
    """
    import jinja2

    hint = "available names: " + ", ".join(sorted(context))
    token = _budget.set([MAX_ITERATIONS])
    try:
        template = _compile_bounded(source)
        return _bounded_output(template.generate(**context), what)
    except jinja2.TemplateError as exc:
        reason = f"{type(exc).__name__}: {exc}" if isinstance(exc, jinja2.TemplateNotFound) else exc
        raise TemplateError(f"{what} failed to render: {reason}", hint=hint) from exc
    except (
        ArithmeticError,
        LookupError,
        TypeError,
        ValueError,
        MemoryError,
        RecursionError,
    ) as exc:
        # Errors of the expression itself ({{ 1/0 }}, {{ "%d" % "x" }}, range(10**9)).
        raise TemplateError(
            f"{what} failed to render: {type(exc).__name__}: {exc}", hint=hint
        ) from exc
    finally:
        _budget.reset(token)


def _bounded_output(chunks: Any, what: str) -> str:
    parts: list[str] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > MAX_OUTPUT:
            raise TemplateError(
                f"{what} failed to render: its output is over {MAX_OUTPUT} characters",
                hint="a template from config fills one line; remove the loop or filter "
                "that makes it this long",
            )
        parts.append(chunk)
    return "".join(parts)


@cache
def _compile_bounded(source: str) -> Any:
    """``source`` compiled in the sandbox, every ``{% for %}`` counting its iterations.

    Compiled once per process and source: the parsed tree's loops are wrapped
    in the budget filter before Jinja generates the code.
    """
    from jinja2 import nodes

    env = _sandbox()
    tree = env.parse(source)
    for loop in tree.find_all(nodes.For):
        loop.iter = nodes.Filter(loop.iter, _BUDGET_FILTER, [], [], None, None, lineno=loop.lineno)
    return env.template_class.from_code(env, env.compile(tree), env.make_globals(None), None)


_BUDGET_FILTER = "loop_iteration_budget"


def _counted(iterable: Any) -> Any:
    """Iterate ``iterable``, charging each step to the render's budget."""
    import jinja2.sandbox

    left = _budget.get()
    for value in iterable:
        if left is not None:
            left[0] -= 1
            if left[0] < 0:
                raise jinja2.sandbox.SecurityError(
                    f"the template's loops ran more than {MAX_ITERATIONS} iterations"
                )
        yield value


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

    env = BoundedSandbox(
        loader=jinja2.DictLoader({}),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters[_BUDGET_FILTER] = _counted
    return env


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
