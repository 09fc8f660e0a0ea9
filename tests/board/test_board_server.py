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
from the_loop.board.state_reader import ParallelStateReader, live_state
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


def test_live_state_from_the_driver_and_from_a_parallel_state_file(project: Path) -> None:
    assert live_state(project, "issue-7") is None
    store.announce(project, "issue-7", {"task": "1", "session": "s-1", "agent": "command"})
    serial = live_state(project, "issue-7")
    assert serial is not None and serial.tasks == {"1": "running"}

    folder = project / ".the-loop" / "state" / ParallelStateReader.FOLDER
    folder.mkdir()
    (folder / "issue-7.json").write_text(
        json.dumps(
            {
                "lanes": [{"lane": 2, "task": "3", "state": "running", "tokens": 900}],
                "tasks": {"3": "running", "1": "merged", "2": "queued", "4": "evicted"},
            }
        )
    )
    board = Board(project).start()
    try:
        item = json.loads(get(board.url + "state.json")[1])["item"]
    finally:
        board.stop()
    assert item["source"] == "parallel"
    assert {t["id"]: t["state"] for t in item["tasks"]} == {
        "1": "merged",
        "2": "queued",
        "3": "running",
        "4": "evicted",
    }
    (lane,) = item["lanes"]
    assert (lane["lane"], lane["task"], lane["window"]["tokens"]) == (2, "3", 900)
    assert lane["window"]["softTokens"] == 200000
