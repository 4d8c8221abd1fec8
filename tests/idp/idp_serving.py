"""How every identity-provider double in this folder is served: in a thread for pytest, or as a CLI process.

In-process, `serve_in_thread(app)` yields a `Listening` with the base URL (port 0: the kernel picks a free one).
As a CLI, `serve_cli(app, options, announce)` binds first, prints ONE JSON line on stdout (`announce(base_url)`:
at least "base_url", plus whatever the double wants a test to know, e.g. its issuer), then serves until SIGTERM,
SIGINT, --max-seconds, or (with --exit-on-stdin-close) the parent closing our stdin, so a crashed test run never
leaves a double behind.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

import werkzeug.serving


@dataclass(frozen=True)
class Listening:
    host: str
    port: int

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"


def add_serving_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument("--max-seconds", type=float, default=3600.0, help="exit after this long in any case")
    parser.add_argument("--exit-on-stdin-close", action="store_true",
                        help="exit when stdin reaches end of file (start the double with stdin=PIPE)")


class _QuietHandler(werkzeug.serving.WSGIRequestHandler):
    """Werkzeug logs a line per request to stderr; a double speaks only when something fails."""

    def log_request(self, *args, **kwargs) -> None:
        pass


def _make_server(app, host: str, port: int) -> werkzeug.serving.BaseWSGIServer:
    return werkzeug.serving.make_server(host, port, app, threaded=True, request_handler=_QuietHandler)


@contextmanager
def serve_in_thread(app, host: str = "127.0.0.1", port: int = 0) -> Iterator[Listening]:
    server = _make_server(app, host, port)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Listening(host, server.server_port)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def serve_cli(app, options: argparse.Namespace, announce: Callable[[str], dict],
              on_exit: Callable[[], None] | None = None) -> None:
    server = _make_server(app, options.host, options.port)
    listening = Listening(options.host, server.server_port)
    print(json.dumps(announce(listening.base_url)), flush=True)

    def stop(*_):
        if on_exit is not None:
            on_exit()
        sys.stdout.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    watchdog = threading.Timer(options.max_seconds, stop)
    watchdog.daemon = True
    watchdog.start()
    if options.exit_on_stdin_close:
        def wait_for_stdin_end():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except (OSError, ValueError):
                pass
            stop()
        threading.Thread(target=wait_for_stdin_end, daemon=True).start()
    server.serve_forever()
