"""``loop worker --backend temporal --repo CLONE``: run task attempts for coordinators anywhere."""

from __future__ import annotations

from pathlib import Path

import click

from the_loop.cli.app import Env


@click.command()
@click.option(
    "--backend",
    type=click.Choice(["temporal"]),
    default="temporal",
    show_default=True,
    help="The engine the attempts come from.",
)
@click.option(
    "--repo",
    "clone",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="This machine's clone of the project (default: the current project).",
)
@click.option(
    "--temporal-address", metavar="HOST:PORT", help="Default: config, else 127.0.0.1:7233."
)
@click.option("--temporal-namespace", metavar="NAME", help="Default: config, else default.")
@click.option("--task-queue", metavar="NAME", help="Default: config, else loop.")
@click.option(
    "--lanes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Attempts this worker runs at once.",
)
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="On Ctrl-C, seconds running attempts get to finish before they are handed back.",
)
@click.option("--name", default="", help="How this worker is named in results (default host:pid).")
@click.pass_obj
def worker(
    env: Env,
    backend: str,
    clone: Path | None,
    temporal_address: str | None,
    temporal_namespace: str | None,
    task_queue: str | None,
    lanes: int,
    grace: float,
    name: str,
) -> None:
    """Run task attempts from a Temporal task queue in this clone.

    Each attempt runs as a local lane does: a git worktree from the base commit
    the coordinator named (fetched from the shared remote), the configured agent,
    the task's test, one commit, pushed to the remote as the task's branch. The
    coordinator (`loop execute-tasks ID --agent … --parallel N --backend
    temporal`) merges and checkpoints. Ctrl-C drains; see docs/agents.md.
    """
    from the_loop.config.loader import load_config
    from the_loop.config.project_root import find_project_root
    from the_loop.driver.temporal.settings import (
        backend_settings,
        exit_at_once,
        require_extra,
        target_of,
    )

    require_extra()
    root = find_project_root(clone or env.cwd, clone)
    settings = backend_settings(load_config(root), temporal_address, temporal_namespace, task_queue)
    from the_loop.driver.temporal.worker import WorkerOptions, serve

    options = WorkerOptions(
        clone=root, target=target_of(settings), lanes=lanes, grace_seconds=grace, name=name
    )
    serve(options, lambda line: click.echo(line, err=True))
    click.echo("worker stopped", err=True)
    exit_at_once(0)
