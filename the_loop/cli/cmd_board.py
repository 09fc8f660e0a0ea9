"""``loop board``: a read-only page on 127.0.0.1 with the items, the live DAG and the ledger."""

from __future__ import annotations

import time

import click

from the_loop.cli.app import Env
from the_loop.cli.output import dim


@click.command()
@click.argument("item_ref", metavar="ID", required=False)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1; 0 picks a free one.",
)
@click.pass_obj
def board(env: Env, item_ref: str | None, port: int) -> None:
    """Serve a live, read-only page on 127.0.0.1.

    The page shows every work item and its phase; for the item chosen (ID, or
    the one an agent is running on) the task graph by waves with live task
    states, each running agent's window against both pressure arms, and
    tokens and dollars per task from the ledger (`loop cost`). It refreshes
    every second, needs no network and changes nothing. Only 127.0.0.1 is
    listened on; the address is printed when it is ready.
    """
    from the_loop.board.server import Board

    served = Board(env.root, port=port, item=item_ref).start()
    click.echo(f"loop board: {served.url}", err=False)
    click.echo(dim("read-only, on 127.0.0.1 only; Ctrl-C stops it"), err=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        served.stop()
