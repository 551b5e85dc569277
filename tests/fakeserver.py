"""A scripted HTTP server on 127.0.0.1 for testing the real SDK clients offline (stdlib only),
and the `LocalServer` it (and modelserver.py's ModelServer) runs on.

Each request pops the next scripted response (an empty script answers 500) and is recorded.
A response may be cut: part of its body is sent, then the connection is dropped.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


@dataclass(frozen=True)
class Scripted:
    status: int = 200
    body: Any = None  # bytes and str are sent as they are; anything else as JSON
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    cut: int | None = None  # send only this many bytes of the body, then drop the connection

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body).encode("utf-8")


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # names lowercased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


EMPTY = Scripted(500, {"error": {"message": "fake server: no scripted response left"}})


class LocalServer:
    """An HTTP server on 127.0.0.1, serving from a thread of its own for the length of a `with`
    block; `url` is `http://127.0.0.1:PORT`. `port` 0 takes a free one."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True  # a handler still sleeping never blocks teardown
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class FakeServer(LocalServer):
    """`with FakeServer() as server: server.push(...)`; `server.url` is `http://127.0.0.1:PORT`."""

    def __init__(self) -> None:
        self.script: deque[Scripted] = deque()
        self.requests: list[Recorded] = []
        super().__init__(self._handler())

    def push(
        self,
        status: int = 200,
        body: Any = None,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
        cut: int | None = None,
    ) -> None:
        self.script.append(Scripted(status, body, headers or {}, delay, cut))

    def bodies(self) -> list[Any]:
        """The JSON bodies of the requests received so far, in order."""
        return [request.json() for request in self.requests]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
            disable_nagle_algorithm = True  # otherwise ~40 ms per request (Nagle + delayed ACK)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                headers = {name.lower(): value for name, value in self.headers.items()}
                server.requests.append(Recorded(self.command, self.path, headers, body))
                try:
                    scripted = server.script.popleft()
                except IndexError:
                    scripted = EMPTY
                if scripted.delay:
                    time.sleep(scripted.delay)
                data = scripted.encoded()
                try:
                    self.send_response(scripted.status)
                    for name, value in {
                        "Content-Type": "application/json",
                        **scripted.headers,
                    }.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if scripted.cut is not None:
                        self.wfile.write(data[: scripted.cut])
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout)

            do_GET = do_POST = _answer

        return Handler
