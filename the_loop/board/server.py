"""The board's web server: the standard library's ``http.server``, in a thread, on 127.0.0.1.

It binds to the loopback address only (port 0 unless one is asked for: the system picks a
free one) and answers GET and HEAD alone — it is read-only:

* ``/``: the page (``page.html``: inline CSS and JavaScript, nothing from a CDN);
* ``/state.json?item=ID``: :func:`~the_loop.board.snapshot.board_snapshot`, taken
  afresh per request (the page polls it every second);
* ``/graph.svg?item=ID``: the selected item's DAG alone.

Any other method gets 405 and any other path 404.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from the_loop.board.snapshot import board_snapshot
from the_loop.errors import LoopError

HOST = "127.0.0.1"  # never beyond loopback
PAGE = Path(__file__).with_name("page.html")
POLL_MS = 1000


class Board:
    """A running board server; ``url`` is where to point a browser."""

    def __init__(self, root: Path, *, port: int = 0, item: str | None = None) -> None:
        self.root = root
        self.item = item
        self._httpd = ThreadingHTTPServer((HOST, port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>/`` (with ``?item=`` when one was chosen)."""
        port = self._httpd.server_address[1]
        return f"http://{HOST}:{port}/" + (f"?item={self.item}" if self.item else "")

    def start(self) -> Board:
        """Serve from a daemon thread."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="loop-board",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def snapshot(self, item: str | None) -> dict[str, object]:
        """The page's data (see ``snapshot``)."""
        return board_snapshot(self.root, item or self.item)

    def page(self) -> bytes:
        """The page, with the poll interval filled in."""
        return PAGE.read_text(encoding="utf-8").replace("__POLL_MS__", str(POLL_MS)).encode()


def _handler(board: Board) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "loop-board"

        def do_GET(self) -> None:
            self._answer(send_body=True)

        def do_HEAD(self) -> None:
            self._answer(send_body=False)

        def _refuse(self) -> None:
            self._send(405, "text/plain", b"read-only: GET and HEAD only\n", True)

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

        def _answer(self, *, send_body: bool) -> None:
            url = urlsplit(self.path)
            asked = parse_qs(url.query).get("item")
            item = asked[0] if asked else None
            routes: dict[str, Callable[[], tuple[str, bytes]]] = {
                "/": lambda: ("text/html; charset=utf-8", board.page()),
                "/state.json": lambda: ("application/json", _json(board.snapshot(item))),
                "/graph.svg": lambda: ("image/svg+xml", _svg(board.snapshot(item))),
            }
            route = routes.get(url.path)
            if route is None:
                self._send(404, "text/plain", b"not found\n", send_body)
                return
            try:
                kind, body = route()
            except LoopError as exc:
                self._send(500, "application/json", _json({"error": exc.render()}), send_body)
                return
            self._send(200, kind, body, send_body)

        def _send(self, status: int, kind: str, body: bytes, send_body: bool) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a poll per second would flood the terminal

    return Handler


def _json(data: object) -> bytes:
    return json.dumps(data).encode()


def _svg(snapshot: dict[str, object]) -> bytes:
    item = snapshot.get("item")
    svg = item.get("svg") if isinstance(item, dict) else None
    return str(svg or '<svg xmlns="http://www.w3.org/2000/svg"/>').encode()
