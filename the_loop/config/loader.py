"""Load, check and merge the configuration: one function, ``load_config``.

Effective config = schema defaults ← ``.the-loop/config.yaml`` ← the work
item's front-matter ``overrides`` (only keys the schema marks overridable),
validated again after the merge. Every value remembers where it came from, for
``loop config show --explain``. Past this module, code reads frozen settings
objects, never raw dicts.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from the_loop.config import schema
from the_loop.config.env_overrides import environment_overrides
from the_loop.config.project_root import CONFIG_DIR, CONFIG_FILE
from the_loop.config.settings import (
    AgentSettings,
    CheckpointSettings,
    ClaudeAgentSettings,
    CodexAgentSettings,
    Config,
    ContextPolicy,
    Origin,
    Path_,
    Pressure,
    TestingSettings,
    WorkflowSettings,
)
from the_loop.config.validation import validate
from the_loop.errors import ConfigError, UnusableInputError, Where
from the_loop.findings import Finding, Level, failing, sorted_findings
from the_loop.io import yamlio
from the_loop.io.content_cache import findings_from_plain, findings_to_plain, user_cache
from the_loop.io.textfile import CONFIG_LIMIT, decode_utf8, read_limited

if TYPE_CHECKING:
    from typing import Any

# The upstream format's name for the same file; read where config.yaml is absent.
UPSTREAM_CONFIG_FILE = "harness-config.yaml"
# loop's own phases: the default `workflow.phases`.
PHASES = (
    "not-started",
    "brainstorming",
    "requirements-definition",
    "design",
    "tasks-breakdown",
    "implementation",
    "needs-review",
    "complete",
)
# Every phase the upstream format names, in its order: loop's eight and four
# optional ones. A configured list keeps this order.
ALL_PHASES = (
    "not-started",
    "phase-selection",
    "brainstorming",
    "requirements-definition",
    "design",
    "test-planning",
    "tasks-breakdown",
    "implementation",
    "verification",
    "needs-review",
    "complete",
    "cleanup",
)
OPTIONAL_PHASES = frozenset(
    {"phase-selection", "brainstorming", "test-planning", "verification", "cleanup"}
)


@dataclass(frozen=True)
class OverrideSource:
    """The ``overrides`` mapping of one artifact's front matter."""

    path: Path
    node: Any  # the ruamel node, which knows its lines
    first_line: int  # file line of the first front-matter line


def config_path(repo: Path) -> Path:
    """Where the repository's config file lives.

    ``.the-loop/config.yaml``; where it is absent and the upstream name
    ``.the-loop/harness-config.yaml`` exists, that one. With both present,
    ``ConfigError`` names both: loop will not guess which one is meant.
    """
    folder = repo / CONFIG_DIR
    ours, upstream = folder / CONFIG_FILE, folder / UPSTREAM_CONFIG_FILE
    if ours.is_file() and upstream.is_file():
        raise ConfigError(
            f"two config files: {ours} and {upstream}",
            where=Where(upstream),
            hint=f"keep one: {UPSTREAM_CONFIG_FILE} is the upstream name of {CONFIG_FILE}; "
            "move its settings into the other and delete it",
        )
    return upstream if upstream.is_file() and not ours.exists() else ours


def check_file(path: Path) -> list[Finding]:
    """Every finding for one config file on its own (defaults filled in).

    Raises ``UnusableInputError`` when the file is missing or unreadable.
    """
    _node, _data, findings = _read(path)
    return sorted_findings(findings)


def load_config(repo: Path, *, overrides: Sequence[OverrideSource] = ()) -> Config:
    """The effective config for ``repo`` (and a work item's ``overrides``).

    A missing config file means schema defaults; an invalid one raises
    ``ConfigError`` listing every finding. A valid file's effective config is
    kept in loop's user cache, keyed by the file's content (and loop's code and
    schema), so an unchanged config is neither parsed (ruamel) nor validated
    (jsonschema) again.
    """
    file = config_path(repo)
    if file.is_file():
        text = _read_text(file)
        base = user_cache().cached(
            "config",
            file,
            text,
            lambda: _load_file(file, text),
            encode=_plain_config,
            decode=lambda plain: _config_from_plain(file, plain),
        )
    else:
        defaults = schema.defaults()
        origins = {p: Origin("default") for p, _ in _leaves(defaults)}
        base = _build(defaults, origins, None, [])
    base = with_environment(base, os.environ)
    return with_overrides(base, overrides) if overrides else base


def with_environment(base: Config, env: Mapping[str, str]) -> Config:
    """``base`` with the pressure thresholds' environment overrides applied and re-validated.

    They sit over ``config.yaml`` (a deployment's setting); a work item's own
    overrides stay the most specific. See ``config/env_overrides.py``.
    """

    found = environment_overrides(env)
    if not found:
        return base

    merged = copy.deepcopy(dict(base.data))
    origins = dict(base.origins)
    for override in found:
        node = merged
        for key in override.path[:-1]:
            node = node[key]
        node[override.path[-1]] = override.value
        origins[override.path] = Origin("environment", Where(f"${override.variable}"))
    findings = _recheck(merged, origins)
    _raise_if_failing(findings)
    return _build(merged, origins, base.file, [*base.warnings, *findings])


def _load_file(file: Path, text: str) -> Config:
    """The effective config of ``file`` (whose content is ``text``) without overrides."""
    merged = schema.defaults()
    origins: dict[Path_, Origin] = {p: Origin("default") for p, _ in _leaves(merged)}
    node, data, findings = _read(file, text)
    if data is not None and not failing(findings):
        _merge(merged, origins, data, lambda p: _origin(file, node, p, "config"))
    _raise_if_failing(findings)
    return _build(merged, origins, file, findings)


def _plain_config(config: Config) -> list[Any]:
    """What the cache keeps of a file's effective config: the data, origins and warnings.

    Only a valid config is kept (an invalid one raises before), and the settings
    objects are built again from the data, which costs nothing beside a parse.
    """
    origins = [
        [list(path), o.kind, None if o.where is None else [o.where.line, o.where.col]]
        for path, o in config.origins.items()
    ]
    return [config.data, origins, findings_to_plain(config.warnings)]


def _config_from_plain(file: Path, plain: list[Any]) -> Config:
    """The effective config :func:`_plain_config` kept for ``file``."""
    data, rows, warnings = plain
    origins: dict[Path_, Origin] = {}
    for path, kind, where in rows:
        origins[tuple(path)] = Origin(kind, None if where is None else Where(file, *where))
    return _build(data, origins, file, findings_from_plain(warnings))


def with_overrides(base: Config, overrides: Sequence[OverrideSource]) -> Config:
    """``base`` with a work item's front-matter overrides applied and re-validated.

    Reuses the already-loaded project config, so a report over many items
    parses ``config.yaml`` once.
    """
    sources = [
        s for s in overrides if not (isinstance(s.node, dict) and not s.node) and s.node is not None
    ]
    if not sources:
        return base

    merged = copy.deepcopy(dict(base.data))
    origins = dict(base.origins)
    findings: list[Finding] = []
    for source in sources:
        findings.extend(_apply_override(merged, origins, source))
    if not failing(findings):
        findings.extend(_recheck(merged, origins))
    _raise_if_failing(findings)
    return _build(merged, origins, base.file, [*base.warnings, *findings])


class InvalidConfig(ConfigError):
    """A config (or a work item's overrides) with errors; ``findings`` lists each one."""

    def __init__(self, findings: list[Finding]) -> None:
        ordered = sorted_findings(findings)
        super().__init__(
            "the configuration is invalid",
            details=tuple(f.render() for f in ordered),
            hint="fix the findings above; `loop config validate` checks the file alone",
        )
        self.findings = tuple(ordered)


def _raise_if_failing(findings: list[Finding]) -> None:
    if failing(findings):
        raise InvalidConfig(findings)


def _read(path: Path, text: str | None = None) -> tuple[Any, dict[str, Any] | None, list[Finding]]:
    """Parse and validate one config file: ``(node, plain data, findings)``."""
    if text is None:
        text = _read_text(path)
    if not text.strip():
        return None, None, [_empty(path)]
    node, problem = yamlio.parse(text)
    if problem is not None:
        where = Where(path, problem.line, problem.col)
        finding = Finding(Level.ERROR, "config.yaml", problem.message, where, problem.hint)
        return None, None, [finding]
    if node is None:  # only comments and blank lines
        return None, None, [_empty(path)]
    if not isinstance(node, dict):
        what = "a list" if isinstance(node, list) else "a single value"
        finding = Finding(
            Level.ERROR,
            "config.root",
            f"the config must be a mapping of keys, not {what}",
            _first_content(path, text, node),
            hint='start the file with `version: "0.1.0"`',
        )
        return node, None, [finding]
    collisions = _collisions(path, node)
    if collisions:
        return node, None, collisions
    data = yamlio.to_plain(node)
    findings = _schema_findings(path, node, data)
    if not failing(findings):
        merged = schema.defaults()
        _merge(merged, {}, data, lambda p: Origin("config"))
        findings.extend(_cross_checks(merged, lambda *ps: _in_file(path, node, data, ps)))
    return node, data, findings


def _empty(path: Path) -> Finding:
    return Finding(
        Level.ERROR,
        "config.empty",
        "the config file is empty",
        Where(path, 1),
        hint='run `loop init` to write a starting config, or add at least `version: "0.1.0"`',
    )


def _first_content(path: Path, text: str, node: Any) -> Where:
    """Where a value without its own position (a scalar root) starts: the first real line."""
    where = yamlio.where_of(path, node, ())
    if where.line is not None:
        return where
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped != "---":
            return Where(path, number, len(line) - len(line.lstrip()) + 1)
    return Where(path, 1)


def _collisions(path: Path, node: Any) -> list[Finding]:
    return [
        Finding(
            Level.ERROR,
            "config.yaml",
            f'duplicate key {key!r}: {key} and "{key}" are one key once read as text',
            yamlio.where_of(path, node, at),
            hint="a key may appear once per mapping; keep one of them",
        )
        for at, key in yamlio.key_collisions(node)
    ]


def _read_text(path: Path) -> str:
    try:
        raw = read_limited(path, CONFIG_LIMIT, what="config file")
    except FileNotFoundError:
        raise UnusableInputError(
            "config file not found",
            where=Where(path),
            hint="run `loop init` to create one, or pass the file to check",
        ) from None
    except OSError as exc:
        raise UnusableInputError(
            f"cannot read the config file: {exc.strerror}", where=Where(path)
        ) from exc
    return decode_utf8(raw, path)


def _schema_findings(path: Path, node: Any, data: Any, *, first_line: int = 1) -> list[Finding]:
    return [
        Finding(
            Level.ERROR,
            "config.schema",
            f"{yamlio.json_path_text(issue.path)}: {issue.message}",
            yamlio.where_of(path, node, issue.path, first_line=first_line),
            issue.hint,
        )
        for issue in validate(data)
    ]


def _cross_checks(merged: Mapping[str, Any], where: Any) -> list[Finding]:
    """Rules JSON Schema cannot express: orderings between two values, safe paths.

    ``where(*paths)`` locates a finding at the most specific origin among
    ``paths`` (an override beats config.yaml beats a default).
    """
    findings: list[Finding] = []
    pressure = merged["contextManagement"]["pressure"]
    pairs = (
        ("softTokens", "hardTokens", "tokens"),
        ("selectivePercent", "fullClearPercent", "percent"),
    )
    for low, high, unit in pairs:
        if pressure[low] >= pressure[high]:
            at = where(
                ("contextManagement", "pressure", low), ("contextManagement", "pressure", high)
            )
            findings.append(
                Finding(
                    Level.ERROR,
                    "config.pressure-order",
                    f"$.contextManagement.pressure.{low}: {low} ({pressure[low]}) must be below "
                    f"{high} ({pressure[high]})",
                    at,
                    hint=f"the {unit} arm needs a lower threshold for compaction than for a clear",
                )
            )
    findings.extend(_phase_checks(merged["workflow"]["phases"], where))
    findings.extend(_spec_dir_check(str(merged["workflow"]["specDir"]), where))
    return findings


def _spec_dir_check(spec_dir: str, where: Any) -> list[Finding]:
    normal = os.path.normpath(spec_dir)
    if not (os.path.isabs(spec_dir) or normal == ".." or normal.startswith(".." + os.sep)):
        return []
    return [
        Finding(
            Level.ERROR,
            "config.spec-dir",
            f"$.workflow.specDir: {spec_dir!r} is outside the project",
            where(("workflow", "specDir")),
            hint="use a folder relative to the project root, e.g. docs/specs",
        )
    ]


def _phase_checks(phases: list[str], where: Any) -> list[Finding]:
    missing = [p for p in PHASES if p not in phases and p not in OPTIONAL_PHASES]
    order = [p for p in ALL_PHASES if p in phases]
    findings = []
    if missing:
        findings.append(
            Finding(
                Level.ERROR,
                "config.phases-missing",
                "$.workflow.phases: required phases missing: " + ", ".join(missing),
                where(("workflow", "phases")),
                hint="only the optional phases ("
                + ", ".join(p for p in ALL_PHASES if p in OPTIONAL_PHASES)
                + ") may be left out of workflow.phases",
            )
        )
    elif list(phases) != order or len(set(phases)) != len(phases):
        findings.append(
            Finding(
                Level.ERROR,
                "config.phases-order",
                "$.workflow.phases: phases must appear once each, in the process order: "
                + " → ".join(order),
                where(("workflow", "phases")),
            )
        )
    return findings


def _in_file(path: Path, node: Any, data: Any, paths: tuple[Path_, ...]) -> Where:
    """The first of ``paths`` the file itself sets (else the first one's nearest ancestor)."""
    for candidate in paths:
        if _has(data, candidate):
            return yamlio.where_of(path, node, candidate)
    return yamlio.where_of(path, node, paths[0])


def _has(data: Any, path: Path_) -> bool:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def _origin(path: Path, node: Any, json_path: Path_, kind: str, first_line: int = 1) -> Origin:
    return Origin(kind, yamlio.where_of(path, node, json_path, first_line=first_line))


def _leaves(data: Any, prefix: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Leaf values: scalars and lists (lists are replaced whole, never merged)."""
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from _leaves(value, (*prefix, key))
    else:
        yield prefix, data


def _merge(
    base: dict[str, Any],
    origins: dict[Path_, Origin],
    top: Mapping[str, Any],
    origin_of: Any,
    prefix: Path_ = (),
) -> None:
    """Deep-merge ``top`` into ``base``; mappings merge, everything else replaces."""
    for key, value in top.items():
        path = (*prefix, key)
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], origins, value, origin_of, path)
            continue
        base[key] = value
        for stale in [p for p in origins if p[: len(path)] == path]:
            del origins[stale]
        for leaf, _ in _leaves(value, path):
            origins[leaf] = origin_of(leaf)


def _apply_override(
    merged: dict[str, Any], origins: dict[Path_, Origin], source: OverrideSource
) -> list[Finding]:
    node = source.node
    if node is None or (isinstance(node, dict) and not node):
        return []
    where_root = yamlio.where_of(source.path, node, (), first_line=source.first_line)
    if not isinstance(node, dict):
        return [
            Finding(
                Level.ERROR,
                "config.override-shape",
                "overrides must be a mapping of config keys",
                where_root,
                hint="write `overrides: {}` or nested keys such as `contextManagement:`",
            )
        ]
    data = yamlio.to_plain(node)
    refused = [p for p, _ in _leaves(data) if not schema.is_overridable(p)]
    if refused:
        return [
            Finding(
                Level.ERROR,
                "config.override-refused",
                f"{'.'.join(map(str, p))} cannot be overridden by a work item",
                yamlio.where_of(source.path, node, p, first_line=source.first_line),
                hint="set it in .the-loop/config.yaml; overridable keys: "
                + ", ".join(schema.overridable_paths()),
            )
            for p in refused
        ]
    _merge(
        merged,
        origins,
        data,
        lambda p: _origin(source.path, node, p, "override", source.first_line),
    )
    return []


_RANK = {"override": 3, "environment": 2, "config": 1, "default": 0}


def _recheck(merged: dict[str, Any], origins: Mapping[Path_, Origin]) -> list[Finding]:
    """Validate the merged result; blame each problem on the value's origin."""

    def origin(path: Path_) -> Origin | None:
        for cut in range(len(path), -1, -1):
            found = origins.get(path[:cut])
            if found is not None:
                return found
        return None

    def where(*paths: Path_) -> Where | None:
        found = [o for o in (origin(p) for p in paths) if o is not None]
        best = max(found, key=lambda o: _RANK[o.kind], default=None)
        return best.where if best else None

    # Without a config file there is no `version`; what is checked here is the merge.
    instance = {"version": "0.1.0", **merged}
    findings = [
        Finding(
            Level.ERROR,
            "config.schema",
            f"{yamlio.json_path_text(i.path)}: {i.message}",
            where(i.path),
            i.hint,
        )
        for i in validate(instance)
    ]
    if not findings:
        findings = _cross_checks(merged, where)
    return findings


def _build(
    merged: dict[str, Any], origins: dict[Path_, Origin], file: Path | None, findings: list[Finding]
) -> Config:
    cm = merged["contextManagement"]
    pr = cm["pressure"]
    cp = merged["checkpoint"]
    ag = merged["agent"]
    wf = merged["workflow"]
    return Config(
        data=merged,
        origins=origins,
        file=file,
        workflow=WorkflowSettings(
            spec_dir=wf["specDir"],
            phases=tuple(wf["phases"]),
            require_human_review=wf["requireHumanReviewPerPhase"],
            phase_label_prefix=wf["phaseLabelPrefix"],
        ),
        context=ContextPolicy(
            enabled=cm["enabled"],
            phase_boundary=cm["phaseBoundary"],
            task_boundary=cm["taskBoundary"],
            mid_task=cm["midTask"],
            pressure=Pressure(
                int(pr["softTokens"]),
                int(pr["hardTokens"]),
                int(pr["selectivePercent"]),
                int(pr["fullClearPercent"]),
            ),
        ),
        checkpoint=CheckpointSettings(
            commit=cp["commit"],
            stage=cp["stage"],
            message_template=cp["messageTemplate"],
            trailers=cp["trailers"],
            verify_tests=cp["verifyTests"],
            test_timeout_seconds=int(cp["testTimeoutSeconds"]),
            hook_timeout_seconds=int(cp["hookTimeoutSeconds"]),
            max_file_bytes=int(cp["maxFileBytes"]),
        ),
        agent=_agent(ag),
        warnings=tuple(f for f in findings if f.level is not Level.ERROR),
        testing=TestingSettings(shell=bool(merged.get("testing", {}).get("shell", False))),
    )


def _agent(ag: Mapping[str, Any]) -> AgentSettings:
    claude = ag["claude"]
    codex = ag["codex"]
    return AgentSettings(
        kind=ag["kind"],
        command=tuple(ag["command"]),
        timeout_seconds=int(ag["timeoutSeconds"]),
        max_attempts=int(ag["maxAttempts"]),
        backoff_seconds=float(ag["backoffSeconds"]),
        claude=ClaudeAgentSettings(
            allowed_tools=tuple(claude["allowedTools"]),
            model=claude.get("model"),
            args=tuple(claude["args"]),
        ),
        codex=CodexAgentSettings(
            sandbox=codex["sandbox"], model=codex.get("model"), args=tuple(codex["args"])
        ),
    )


def explain(config: Config) -> list[tuple[str, Any, str]]:
    """``(dotted key, value, origin)`` for every effective leaf, in file order."""
    rows = []
    for path, value in _leaves(dict(config.data)):
        origin = config.origins.get(path, Origin("default"))
        rows.append((".".join(map(str, path)), value, str(origin)))
    return rows
