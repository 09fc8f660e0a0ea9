"""docs/formats.md places every finding code loop can report under the confidence rule."""

from __future__ import annotations

import re

from helpers import REPO_ROOT

_AREAS = "artifact|config|dag|frontmatter|item|lock|log|phase|req|tasks|trace|tick"


def _codes_in_source() -> set[str]:
    source = "\n".join(p.read_text() for p in (REPO_ROOT / "the_loop").rglob("*.py"))
    codes = set(re.findall(rf'"((?:{_AREAS})\.[a-z]+(?:-[a-z]+)*)",\n', source))
    codes |= set(re.findall(rf'Level\.[A-Z]+,\s*"((?:{_AREAS})\.[a-z-]+)"', source))
    return {c for c in codes if c.rsplit(".", 1)[1] not in ("md", "json", "yaml", "log")}


def test_every_finding_code_is_in_the_confidence_table() -> None:
    doc = (REPO_ROOT / "docs" / "formats.md").read_text()
    table = doc[doc.index("## The confidence rule") : doc.index("## The work-item folder")]
    codes = _codes_in_source()
    assert len(codes) > 60  # the search finds them (it reads the source, not a list)
    assert sorted(c for c in codes if f"`{c}`" not in table) == []
