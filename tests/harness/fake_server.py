"""The machinery both fake model servers share: the HTTP thread, dispatch, recording.

:class:`FakeModelServer` serves on 127.0.0.1 from a background thread, picks each reply with
the rules of ``harness.replies`` and records every exchange. The protocol modules
(``fake_anthropic``, ``fake_openai``) subclass it: they parse requests into a
:class:`~harness.replies.ModelRequest` and write replies as that API's server-sent events.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from harness.replies import (
    AnthropicUsage,
    Exchange,
    HttpError,
    ModelRequest,
    OpenAIUsage,
    PromptTooLong,
    Reply,
    ReplySource,
    Rule,
    Summary,
    Text,
    Usage,
    always,
    run_command,
)


@dataclass
class _Armed:
    rule: Rule
    left: int | None


# --- the server --------------------------------------------------------------------------


class FakeServerError(Exception):
    """A fault inside the fake itself (bad rule, wrong usage type); the test should fail."""


@dataclass
class Settings:
    """What a fake answers when no test rule decides; change fields at any time."""

    usage: Usage
    default_reply: Reply
    after_tool_reply: Reply = field(default_factory=lambda: Text("Tool finished."))
    summary_reply: Reply = field(default_factory=Summary)


_Server = TypeVar("_Server", bound="FakeModelServer")


class FakeModelServer:
    """A scriptable fake model API on 127.0.0.1, served from a background thread.

    Subclasses supply the protocol: :meth:`parse` (is this a model call, and what does it
    say) and :meth:`answer` (write a reply). Use it as a context manager or call
    :meth:`start` / :meth:`stop`.
    """

    usage_type: type[AnthropicUsage] | type[OpenAIUsage]

    def __init__(self, settings: Settings, host: str = "127.0.0.1", port: int = 0) -> None:
        self.settings = settings
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._rules: list[_Armed] = []
        self._exchanges: list[Exchange] = []
        self._others: list[tuple[str, str]] = []
        self._errors: list[str] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self: _Server) -> _Server:
        """Bind (port 0 picks a free port) and serve in a daemon thread."""
        handler = _handler_for(self)
        self._httpd = ThreadingHTTPServer((self._host, self._port), handler)
        self._httpd.daemon_threads = True
        # A short poll keeps stop() quick: shutdown() waits for the loop's next poll.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=type(self).__name__,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self: _Server) -> _Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._httpd is None:
            raise FakeServerError("the fake server is not running")
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``, without a path."""
        return f"http://{self._host}:{self.port}"

    # -- scripting

    def add(self, *rules: Rule) -> None:
        """Append rules; they are tried in the order added, before the built-in answers."""
        with self._lock:
            self._rules.extend(_Armed(rule, rule.times) for rule in rules)

    def enqueue(self, *replies: ReplySource) -> None:
        """Answer the next non-compaction requests with these replies, one each, in order."""
        self.add(*(Rule(when=always, reply=reply, times=1) for reply in replies))

    def clear_rules(self) -> None:
        """Forget every test rule (the built-in answers stay)."""
        with self._lock:
            self._rules.clear()

    # -- what happened

    @property
    def exchanges(self) -> list[Exchange]:
        """Every model call so far with its reply, oldest first (a copy)."""
        with self._lock:
            return list(self._exchanges)

    @property
    def requests(self) -> list[ModelRequest]:
        """Every model call so far, oldest first."""
        return [exchange.request for exchange in self.exchanges]

    def requests_containing(self, needle: str) -> list[ModelRequest]:
        """The model calls whose body contains ``needle`` anywhere."""
        return [request for request in self.requests if request.contains(needle)]

    @property
    def other_requests(self) -> list[tuple[str, str]]:
        """``(method, path)`` of requests that were not model calls (health checks, counts)."""
        with self._lock:
            return list(self._others)

    @property
    def errors(self) -> list[str]:
        """Faults inside the fake (a fixture fails the test when this is not empty)."""
        with self._lock:
            return list(self._errors)

    # -- dispatch (called from handler threads)

    def choose(self, request: ModelRequest) -> tuple[Reply, Usage | None]:
        """Pick the reply for ``request`` and record the exchange."""
        with self._lock:
            reply = self._pick(request)
            usage = self._usage_of(reply)
            self._exchanges.append(Exchange(request, reply, usage))
            return reply, usage

    def _pick(self, request: ModelRequest) -> Reply:
        for armed in self._rules:
            if armed.left == 0 or (request.is_compaction and not armed.rule.compaction):
                continue
            if armed.rule.when(request):
                if armed.left is not None:
                    armed.left -= 1
                source = armed.rule.reply
                return source(request) if callable(source) else source
        if request.is_compaction:
            return self.settings.summary_reply
        if request.is_tool_result:
            return self.settings.after_tool_reply
        return self.settings.default_reply

    def _usage_of(self, reply: Reply) -> Usage | None:
        if isinstance(reply, (HttpError, PromptTooLong)):
            return None
        usage = reply.usage or self.settings.usage
        if not isinstance(usage, self.usage_type):
            raise FakeServerError(f"{type(self).__name__} needs {self.usage_type.__name__} usage")
        return usage

    def next_index(self) -> int:
        """The index the next recorded model call will get."""
        with self._lock:
            return len(self._exchanges)

    def note_other(self, method: str, path: str) -> None:
        """Record a request that is not a model call."""
        with self._lock:
            self._others.append((method, path))

    def note_error(self, message: str) -> None:
        """Record a fault inside the fake."""
        with self._lock:
            self._errors.append(message)

    # -- protocol hooks

    def parse(self, index: int, path: str, headers: Mapping[str, str], raw: str) -> ModelRequest:
        """Turn a model call's body into a :class:`ModelRequest` (protocol-specific)."""
        raise NotImplementedError

    def is_model_call(self, method: str, path: str) -> bool:
        """Whether this request is a model call the rules decide (protocol-specific)."""
        raise NotImplementedError

    def answer(self, out: SseWriter, request: ModelRequest, reply: Reply, usage: Any) -> None:
        """Write ``reply`` to the client (protocol-specific)."""
        raise NotImplementedError

    def answer_other(self, out: SseWriter, method: str, path: str) -> None:
        """Answer a request that is not a model call: 200 ``{}`` unless overridden."""
        out.json(200, {})


# --- HTTP plumbing -----------------------------------------------------------------------


class SseWriter:
    """Writes JSON bodies and chunked server-sent event streams on one handler."""

    def __init__(self, handler: BaseHTTPRequestHandler, request_id: str) -> None:
        self._handler = handler
        self.request_id = request_id
        self._streaming = False

    def json(self, status: int, body: Mapping[str, Any]) -> None:
        """A complete JSON response with a Content-Length."""
        data = json.dumps(body).encode()
        self._handler.send_response(status)
        self._handler.send_header("Content-Type", "application/json")
        self._handler.send_header("Content-Length", str(len(data)))
        self._handler.send_header("request-id", self.request_id)
        self._handler.end_headers()
        if self._handler.command != "HEAD":
            self._handler.wfile.write(data)

    def event(self, name: str, data: Mapping[str, Any]) -> None:
        """One SSE event, as one HTTP chunk; the headers go out before the first event."""
        if not self._streaming:
            self._handler.send_response(200)
            self._handler.send_header("Content-Type", "text/event-stream")
            self._handler.send_header("Cache-Control", "no-cache")
            self._handler.send_header("Transfer-Encoding", "chunked")
            self._handler.send_header("request-id", self.request_id)
            self._handler.end_headers()
            self._streaming = True
        payload = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        self._handler.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")

    def finish(self) -> None:
        """End a chunked stream (a no-op after a plain JSON response)."""
        if self._streaming:
            self._handler.wfile.write(b"0\r\n\r\n")
            self._handler.wfile.flush()


def _handler_for(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1: both CLIs expect chunked event streams and reuse connections.
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self._serve()

        def do_GET(self) -> None:
            self._serve()

        def do_HEAD(self) -> None:
            self._serve()

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            path = self.path
            if not server.is_model_call(self.command, path):
                server.note_other(self.command, path)
                server.answer_other(SseWriter(self, "req_fake_other"), self.command, path)
                return
            index = server.next_index()
            out = SseWriter(self, f"req_fake_{index:04d}")
            try:
                headers = {key.lower(): value for key, value in self.headers.items()}
                request = server.parse(index, path, headers, raw)
                reply, usage = server.choose(request)
            except Exception as exc:  # a fault in the fake or a test rule: report, answer 500
                server.note_error(f"{type(exc).__name__}: {exc}")
                out.json(500, {"error": {"type": "fake_server_error", "message": str(exc)}})
                return
            try:
                server.answer(out, request, reply, usage)
                out.finish()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (for example a killed CLI); nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass  # tests read the recorded exchanges instead of an access log

    return Handler


def chunks(text: str, size: int = 24) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, the way deltas stream."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


_SAFE = re.compile(r"[^A-Za-z0-9_]")


def fake_id(prefix: str, index: int, suffix: int = 0) -> str:
    """A stable, readable id such as ``msg_fake_0003`` (suffix distinguishes blocks)."""
    tail = f"_{suffix}" if suffix else ""
    return _SAFE.sub("_", f"{prefix}_fake_{index:04d}{tail}")


def command_line(description: str, *, port: int, reply: str) -> argparse.ArgumentParser:
    """The options both fake servers take when run by hand; each adds its usage numbers."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--reply", default=reply)
    parser.add_argument("--after-tool", default="Tool finished.")
    parser.add_argument("--run-marker", help="prompt marker before a command to run, e.g. RUN:")
    parser.add_argument("--log", type=Path, help="append each request body as a JSON line")
    return parser


def serve_command_line(server: FakeModelServer, args: argparse.Namespace) -> int:
    """Serve as :func:`command_line`'s options say (``--run-marker``, ``--log``)."""
    if args.run_marker:
        server.add(run_command(args.run_marker))
    return serve_until_interrupted(server, args.log)


def serve_until_interrupted(server: FakeModelServer, log: Path | None) -> int:
    """Run ``server`` in the foreground: print its origin, log model calls, stop on Ctrl-C.

    Each model call is written as one JSON line (to ``log``, or to stdout): the facts the rules
    saw, the reply kind and the whole request body.
    """
    server.start()
    print(f"listening on {server.origin}", flush=True)
    written = 0
    try:
        while True:
            time.sleep(0.2)
            exchanges = server.exchanges
            for exchange in exchanges[written:]:
                _log_exchange(exchange, log)
            written = len(exchanges)
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


def _log_exchange(exchange: Exchange, log: Path | None) -> None:
    request = exchange.request
    line = json.dumps(
        {
            "index": request.index,
            "path": request.path,
            "prompt": request.prompt[-200:],
            "is_tool_result": request.is_tool_result,
            "is_compaction": request.is_compaction,
            "reply": type(exchange.reply).__name__,
            "body": request.body,
        }
    )
    if log is None:
        print(line, flush=True)
    else:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
