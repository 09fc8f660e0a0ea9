"""Regular expressions compiled when first used, not when their module is imported.

The readers hold many patterns for forms a file rarely uses (arrow chains, tables,
ranges, prose clauses); compiling them all at import cost a cold ``loop next``
several milliseconds while most were never matched. ``compile_on_use`` returns a
stand-in that compiles the pattern on the first method call and from then on
answers with the compiled pattern's own bound methods.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing is not imported at run time: it costs every cold start ~2 ms
if TYPE_CHECKING:
    from typing import Any

# What a reader calls on a pattern; copied onto the stand-in once it is compiled.
_METHODS = ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn", "split")


class _OnUse:
    """A pattern not compiled yet; any attribute looked up compiles it (once)."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # Only called for names not yet set on the instance: the first use.
        compiled = re.compile(*self._source)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def compile_on_use(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done the first time the pattern is used."""
    return _OnUse(pattern, flags)  # type: ignore[return-value]
