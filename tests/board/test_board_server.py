"""The board's server and snapshot without a browser: loopback only, read-only, live state."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from driver.driver_project import FOUR, make_item
from helpers.project import ok

from the_loop.board.server import Board
from the_loop.board.state_reader import live_state
from the_loop.checkpoint.run_state import RunState
from the_loop.ledger import store

pytestmark = pytest.mark.slow  # a real project, approved through loop itself


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = make_item(tmp_path / "p", FOUR)
    ok(root, "work-on", "7")
    return root


def get(url: str, method: str = "GET") -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_serves_on_loopback_only_and_only_reads(project: Path) -> None:
    board = Board(project).start()
    try:
        assert board.url.startswith("http://127.0.0.1:")
        status, page = get(board.url)
        assert status == 200 and b"loop board" in page
        # Nothing is fetched from elsewhere: the only URL is the SVG namespace's name.
        assert set(re.findall(rb"https?://[^\"' )]+", page)) == {b"http://www.w3.org/2000/svg"}
        status, body = get(board.url + "state.json")
        data = json.loads(body)
        assert status == 200 and [i["id"] for i in data["items"]] == ["issue-7"]
        assert sorted(t["id"] for t in data["item"]["tasks"]) == ["1", "2", "3", "4"]
        assert get(board.url + "graph.svg")[1].startswith(b"<svg")
        assert get(board.url + "state.json", method="POST")[0] == 405
        assert get(board.url + "nothing")[0] == 404
    finally:
        board.stop()


def test_live_state_from_the_driver_and_from_a_parallel_run_state(project: Path) -> None:
    assert live_state(project, "issue-7") is None
    store.announce(project, "issue-7", {"task": "1", "session": "s-1", "agent": "command"})
    serial = live_state(project, "issue-7")
    assert serial is not None and serial.tasks == {"1": "running"}

    # The parallel runner's own writer makes the file the board reads.
    run = RunState(project, "issue-7", run="r1", parallel=4, agent="command", branch="main")
    for task, state in (("1", "merged"), ("2", "merging"), ("3", "running"), ("4", "failed")):
        run.task(task, state=state)
    lane = {"lane": 2, "task": "3", "state": "running", "tokens": 900, "session": "s-3"}
    run.save(lanes=[{**lane, "since": 1_800_000_000.0}], now=True)
    board = Board(project).start()
    try:
        item = json.loads(get(board.url + "state.json")[1])["item"]
        run.task("4", state="evicted")
        run.task("1", state="open")  # a state the board leaves to tasks.md
        run.save(now=True)
        moved = json.loads(get(board.url + "state.json")[1])["item"]
        run.save(active=False, lanes=[], now=True)  # the run ended: tasks.md has the last word
        ended = json.loads(get(board.url + "state.json")[1])["item"]
    finally:
        board.stop()
    assert item["source"] == "parallel"
    assert {t["id"]: t["state"] for t in item["tasks"]} == {
        "1": "merged",
        "2": "queued",
        "3": "running",
        "4": "blocked",
    }
    assert {t["id"]: t["lane"] for t in item["tasks"]}["3"] == 2
    (shown,) = item["lanes"]
    assert (shown["lane"], shown["task"], shown["state"], shown["window"]["tokens"]) == (
        2,
        "3",
        "running",
        900,
    )
    assert (shown["agent"], shown["session"], shown["since"]) == (
        "command",
        "s-3",
        "2027-01-15T08:00:00Z",
    )
    assert shown["window"]["softTokens"] == 200000
    moved_states = {t["id"]: t["state"] for t in moved["tasks"]}
    assert moved_states["4"] == "evicted" and moved_states["1"] == "ready"
    assert ended["source"] == "serial"  # the announcement above is still there
