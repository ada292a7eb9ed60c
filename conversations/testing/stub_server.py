"""A local HTTP server on a free port for a stand-in of an outside API (tests
point the real SDK at it). Subclasses set ``handler`` and ``stub``."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class StubHTTPServer(ThreadingHTTPServer):
    """The server a stub's handler sees as ``self.server``: it carries the stub."""

    stub: Any


class StubRequestHandler(BaseHTTPRequestHandler):
    server: StubHTTPServer


class LocalStubServer:
    handler: type[StubRequestHandler]

    def __init__(self, stub: Any) -> None:
        self.stub = stub
        self.httpd = StubHTTPServer(("127.0.0.1", 0), self.handler)
        self.httpd.stub = stub
        self.httpd.daemon_threads = True
        # shutdown() waits for the loop to look again: at the default 0.5 s that was a quarter of a
        # second per test that used a stub (about 2 of the test run's minutes).
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
