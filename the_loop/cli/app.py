"""The click application: the group, its global options and the command table.

Commands are loaded lazily (a command's module is imported only when that
command runs), so ``loop status`` does not pay for what ``loop init`` needs.
Each command parses its options, calls one core function and renders the
result as text or, with ``--json``, as JSON.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import click

from the_loop import __version__
from the_loop.cli.handler import guarded
from the_loop.errors import ExitCode

# name → (module, attribute, help section); listed in `loop --help` in this order,
# which follows the workflow.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("the_loop.cli.cmd_init", "init", "Set up"),
    "config": ("the_loop.cli.cmd_config", "config", "Set up"),
    "new": ("the_loop.cli.cmd_phase", "new", "Start and advance work"),
    "promote": ("the_loop.cli.cmd_phase", "promote", "Start and advance work"),
    "work-on": ("the_loop.cli.cmd_phase", "work_on", "Start and advance work"),
    "approve": ("the_loop.cli.cmd_phase", "approve", "Start and advance work"),
    "adopt": ("the_loop.cli.cmd_adopt", "adopt", "Start and advance work"),
    "finish": ("the_loop.cli.cmd_phase", "finish", "Start and advance work"),
    "status": ("the_loop.cli.cmd_items", "status", "See where things stand"),
    "next": ("the_loop.cli.cmd_items", "next_cmd", "See where things stand"),
    "check": ("the_loop.cli.cmd_items", "check", "See where things stand"),
    "graph": ("the_loop.cli.cmd_items", "graph", "See where things stand"),
    "log": ("the_loop.cli.cmd_tasks", "log_cmd", "See where things stand"),
    "resume": ("the_loop.cli.cmd_tasks", "resume", "See where things stand"),
    "cost": ("the_loop.cli.cmd_cost", "cost", "See where things stand"),
    "board": ("the_loop.cli.cmd_board", "board", "See where things stand"),
    "execute-tasks": ("the_loop.cli.cmd_tasks", "execute_tasks", "Tasks and checkpoints"),
    "task": ("the_loop.cli.cmd_tasks", "task", "Tasks and checkpoints"),
    "checkpoint": ("the_loop.cli.cmd_tasks", "checkpoint_cmd", "Tasks and checkpoints"),
    "pressure": ("the_loop.cli.cmd_tasks", "pressure", "Tasks and checkpoints"),
    "context": ("the_loop.cli.cmd_context", "context", "Tasks and checkpoints"),
    "reset": ("the_loop.cli.cmd_recover", "reset", "Recover"),
    "doctor": ("the_loop.cli.cmd_recover", "doctor", "Recover"),
    "install": ("the_loop.cli.cmd_install", "install", "Agent harnesses"),
    "hook": ("the_loop.cli.cmd_hook", "hook", "Agent harnesses"),
    "statusline": ("the_loop.cli.cmd_statusline", "statusline", "Agent harnesses"),
    "worker": ("the_loop.cli.cmd_worker", "worker", "Agent harnesses"),
}
SECTIONS = (
    "Set up",
    "Start and advance work",
    "See where things stand",
    "Tasks and checkpoints",
    "Recover",
    "Agent harnesses",
)


@dataclass
class Env:
    """What every command needs to know about how loop was invoked."""

    cwd: Path
    repo_option: Path | None
    json: bool
    debug: bool

    @cached_property
    def root(self) -> Path:
        """The project root (``--repo``, else found from the current folder)."""
        from the_loop.config.project_root import find_project_root
        from the_loop.io.atomic import confine_writes

        root = find_project_root(self.cwd, self.repo_option)
        confine_writes(root)  # nothing this command writes may land outside the project
        return root


def _crash_dir(ctx: click.Context) -> Path | None:
    """``.the-loop/state/crashes`` of the project in use, when there is one."""
    env = ctx.obj
    if not isinstance(env, Env):
        return None
    try:
        config_dir = env.root / ".the-loop"
    except Exception:  # no project: the report goes to the user's state folder
        return None
    # never create .the-loop/ in a folder that is not a project
    return config_dir / "state" / "crashes" if config_dir.is_dir() else None


# True when loop runs as its own process (``run_as_process``), not inside a test runner.
_AS_PROCESS = False


class GlobalOption(click.Option):
    """A global option (``--repo``, ``--json``, ``--debug``, ``--no-color``, ``--no-cache``)
    given after the command name: it does what it does before the name.

    Hidden from each command's help; ``loop --help`` lists them once.
    """


def _global_after(ctx: click.Context, param: click.Parameter, value: object) -> None:
    env = ctx.find_object(Env)
    if not value or env is None:
        return
    if param.name == "repo":
        assert isinstance(value, Path)
        env.repo_option = value
    elif param.name == "json_output":
        env.json = True
    elif param.name == "debug":
        env.debug = True
    elif param.name == "no_color":
        ctx.color = False
        ctx.find_root().color = False  # errors are shown from the group's context
    elif param.name == "no_cache":
        from the_loop.io import content_cache

        content_cache.switch_off(True)


def _global_options() -> list[click.Option]:
    def flag(name: str, *decls: str) -> GlobalOption:
        return GlobalOption(
            list(decls), name, is_flag=True, expose_value=False, hidden=True, callback=_global_after
        )

    repo = GlobalOption(
        ["-C", "--repo", "repo"],
        type=click.Path(path_type=Path, file_okay=False),
        expose_value=False,
        hidden=True,
        callback=_global_after,
    )
    return [
        repo,
        flag("json_output", "--json"),
        flag("debug", "--debug"),
        flag("no_color", "--no-color"),
        flag("no_cache", "--no-cache"),
    ]


def _accept_global_options(command: click.Command) -> None:
    """Let ``command`` (and, for a group, each of its commands) take the global options too."""
    if any(isinstance(p, GlobalOption) for p in command.params):
        return
    taken = {opt for p in command.params for opt in p.opts}
    command.params += [o for o in _global_options() if not taken & set(o.opts)]
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _accept_global_options(sub)


class LoopGroup(click.Group):
    """A group that imports commands on demand and runs them under one error handler."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        command: click.Command = getattr(importlib.import_module(spec[0]), spec[1])
        _accept_global_options(command)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        from the_loop.io.atomic import write_scope

        # `loop <command> … --json`: errors are JSON as well, even one in the command
        # line itself (the command's options are not parsed yet when click reports it).
        json_in_args = "--json" in ctx.args

        def env() -> Env | None:
            return ctx.obj if isinstance(ctx.obj, Env) else None

        def debug() -> bool:
            found = env()
            return bool(ctx.params.get("debug")) or (found is not None and found.debug)

        def json_output() -> bool:
            found = env()
            return bool(ctx.params.get("json_output")) or json_in_args or bool(found and found.json)

        try:
            with write_scope():
                try:
                    return guarded(
                        lambda: super(LoopGroup, self).invoke(ctx),
                        debug=debug,
                        crash_dir=lambda: _crash_dir(ctx),
                        json_output=json_output,
                    )
                finally:
                    report_recoveries()
                    if _AS_PROCESS:
                        # The command is over: a Ctrl-C from here on would only turn its
                        # exit status into death by the signal.
                        signal.signal(signal.SIGINT, signal.SIG_IGN)
        except KeyboardInterrupt:
            # Ctrl-C while an error was being shown or a recovery reported: still 130.
            click.echo("interrupted", err=True)
            raise click.exceptions.Exit(int(ExitCode.INTERRUPTED)) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        by_section: dict[str, list[tuple[str, str]]] = {s: [] for s in SECTIONS}
        for name in [*COMMANDS, *sorted(set(self.commands) - set(COMMANDS))]:
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            section = COMMANDS[name][2] if name in COMMANDS else SECTIONS[-1]
            by_section[section].append((name, command.get_short_help_str(limit=70)))
        for section, rows in by_section.items():
            if rows:
                with formatter.section(section):
                    formatter.write_dl(rows)


@click.group(cls=LoopGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="loop")
@click.option(
    "-C",
    "--repo",
    "repo",
    type=click.Path(path_type=Path, file_okay=False),
    help="Project folder (default: nearest folder upward with .the-loop/, "
    "else the git root, else the current folder).",
)
@click.option("--json", "json_output", is_flag=True, help="Print results as JSON.")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.option(
    "--no-color",
    "no_color",
    is_flag=True,
    help="No colour, even on a terminal (env NO_COLOR, any non-empty value, does the same).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Read every file afresh, without loop's parse cache (also: LOOP_NO_CACHE=1).",
)
@click.pass_context
def cli(
    ctx: click.Context,
    repo: Path | None,
    json_output: bool,
    debug: bool,
    no_color: bool,
    no_cache: bool,
) -> None:
    """loop keeps an AI coding agent's work on a spec, one checkpoint at a time.

    A work item moves through requirements, design and tasks (each approved
    before the next is written), then implementation of a task DAG, review and
    completion. State lives in files in your repository; every transition goes
    through loop; and no context reset happens without a checkpoint: task
    ticked, execution-log entry written, work committed.

    Start with `loop init`, then `loop new "<title>"` and `loop work-on <id>`.
    The options below may also follow the command name (`loop status 42 --json`).

    \b
    Environment variables:
      LOOP_SESSION_ID    stands in for --session (the agent session's id)
      LOOP_LOCK_TIMEOUT  seconds to wait for another loop command's lock (30)
      NO_COLOR           any non-empty value: no colour, as --no-color
      LOOP_NOW           pins the clock (ISO-8601 UTC), for demos and tests
      LOOP_NO_CACHE      1 (any value but 0): no parse cache, as --no-cache
    """
    from the_loop.io import content_cache

    if no_color or os.environ.get("NO_COLOR"):
        ctx.color = False  # every echo below this context inherits it
    content_cache.switch_off(no_cache)  # per invocation: tests run many in one process
    ctx.obj = Env(cwd=Path.cwd(), repo_option=repo, json=json_output, debug=debug)


def report_recoveries() -> None:
    """Say so when this command finished a checkpoint an earlier one left behind."""
    if "the_loop.checkpoint.transaction" not in sys.modules:
        return  # nothing that could recover ran
    from the_loop.checkpoint.transaction import recovered_here

    for found in recovered_here():
        text = (
            f"note: checkpoint {found.checkpoint} of {found.item} had been interrupted; "
            f"{found.action} (steps redone: {', '.join(found.steps) or 'none'})"
        )
        if found.detail:
            text += f": {found.detail}"
        outcome = found.outcome
        if outcome is not None and outcome.record is not None:
            text += (
                f". Its reset ({outcome.reset.reset.value}) was never shown: do it now, "
                f"then `loop reset confirm {found.item} --session <id>`"
            )
        click.echo(text, err=True)


def run_as_process() -> None:
    """Run the click application as this process's command.

    click would turn a Ctrl-C that lands outside a command (while the command
    line is parsed) into "Aborted!" and exit 1; loop's contract is exit 130. (A
    Ctrl-C outside click's own handling reaches ``the_loop.__main__``, which says
    the same.)
    """
    global _AS_PROCESS
    _AS_PROCESS = True
    try:
        code = cli.main(prog_name="loop", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        code = int(ExitCode.INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    sys.exit(code if isinstance(code, int) else 0)
