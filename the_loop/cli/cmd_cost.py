"""``loop cost ID``: tokens and dollars per task and per item, from the ledger."""

from __future__ import annotations

import click

from the_loop.cli.app import Env
from the_loop.cli.output import dim, emit_json, json_option, wants_json
from the_loop.ledger.cost_text import cost_table
from the_loop.ledger.item_cost import item_cost


@click.command()
@click.argument("item_ref", metavar="ID")
@json_option
@click.pass_obj
def cost(env: Env, item_ref: str, json_output: bool) -> None:
    """What the agent runs of a work item cost, per task and for the item.

    Every run the driver started (task runs, retries, compaction passes) and
    every hook-seen turn of a session with the item in focus is in the ledger
    (.the-loop/state/ledger/), with tokens read from the harness's own records.
    Compaction passes are counted apart. Dollars use agent.prices; a model
    without a price shows tokens only. The forecast is the mean cost of the
    finished tasks times the tasks still open.
    """

    found = item_cost(env.root, item_ref, cwd=env.cwd)
    data = found.to_json()
    if wants_json(env, json_output):
        emit_json(data)
        return
    click.echo(cost_table(data), nl=False)
    if found.forecast is not None:
        click.echo(dim("  forecast: " + found.forecast.line()))
