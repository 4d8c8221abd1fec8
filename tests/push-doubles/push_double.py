"""Shared machinery for the FCM and APNs test doubles (fcm_double.py, apns_double.py).

A double is a small ASGI app served by hypercorn on 127.0.0.1. It:
  * prints the port it listens on as the first line of stdout (it binds port 0, so runs never collide);
  * appends one JSON line per request to the --records file (method, path, query, HTTP version, headers, body)
    *before* answering, so a test that has its response can read the record without racing the double;
  * answers from --rule options first, then from the service-specific default handler.

A rule is a JSON object:
  {"match": "substring", "status": 410, "body": {...} | "text", "headers": {"name": "value"},
   "times": 1, "delay": 0.3}
"match" is looked for in "<METHOD> <path>\\n<body>" (so it can name a device token in the path, an FCM
registration token in the body, or a path such as "/token"); "times" limits how often the rule fires (default:
always); "delay" (seconds) holds the answer back, which lets tests make concurrent callers overlap.

The double stops when its stdin closes (the test process went away) or after --max-seconds, so a crashed test run
never leaves it behind.
"""

import argparse
import asyncio
import json
import os
import socket
import sys
import threading
from typing import Awaitable, Callable, Optional

from hypercorn.asyncio import serve
from hypercorn.config import Config

Handler = Callable[[dict, bytes], Awaitable[tuple[int, dict, bytes]]]


def parse_arguments(description: str, extra: Optional[Callable[[argparse.ArgumentParser], None]] = None):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--records", required=True, help="file that gets one JSON line per request")
    parser.add_argument("--rule", action="append", default=[], help="JSON rule (see push_double.py)")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="exit after this long in any case")
    if extra is not None:
        extra(parser)
    return parser.parse_args()


class Rules:
    def __init__(self, raw_rules: list[str]):
        self.rules = [json.loads(text) for text in raw_rules]
        for rule in self.rules:
            if "match" not in rule or "status" not in rule:
                raise SystemExit(f"rule needs 'match' and 'status': {rule}")

    def find(self, method: str, path: str, body: bytes) -> Optional[dict]:
        subject = f"{method} {path}\n{body.decode('utf-8', 'replace')}"
        for rule in self.rules:
            if rule["match"] in subject and rule.get("times", 1) > 0:
                if "times" in rule:
                    rule["times"] -= 1
                return rule
        return None


def rule_response(rule: dict) -> tuple[int, dict, bytes]:
    body = rule.get("body", b"")
    if isinstance(body, (dict, list)):
        payload = json.dumps(body).encode()
        headers = {"content-type": "application/json"}
    else:
        payload = str(body).encode()
        headers = {"content-type": "text/plain"}
    headers.update(rule.get("headers", {}))
    return rule["status"], headers, payload


def json_response(status: int, body: dict, headers: Optional[dict] = None) -> tuple[int, dict, bytes]:
    merged = {"content-type": "application/json"}
    merged.update(headers or {})
    return status, merged, json.dumps(body).encode()


class Recorder:
    def __init__(self, path: str):
        self.file = open(path, "a", encoding="utf-8")

    def write(self, scope: dict, body: bytes) -> None:
        record = {
            "method": scope["method"],
            "path": scope["path"],
            "query": scope.get("query_string", b"").decode("latin-1"),
            "http_version": scope["http_version"],
            "scheme": scope.get("scheme", ""),
            "headers": [[name.decode("latin-1").lower(), value.decode("latin-1")] for name, value in scope["headers"]],
            "body": body.decode("utf-8", "replace"),
        }
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()


def make_app(recorder: Recorder, rules: Rules, default_handler: Handler):
    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        recorder.write(scope, body)
        rule = rules.find(scope["method"], scope["path"], body)
        if rule is not None:
            if rule.get("delay"):
                await asyncio.sleep(float(rule["delay"]))
            status, headers, payload = rule_response(rule)
        else:
            status, headers, payload = await default_handler(scope, body)
        await send({
            "type": "http.response.start",
            "status": status,
            "headers": [(name.encode(), str(value).encode()) for name, value in headers.items()],
        })
        await send({"type": "http.response.body", "body": payload})

    return app


def _exit_when_stdin_closes() -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    os._exit(0)


def run(app, certfile: Optional[str] = None, keyfile: Optional[str] = None, max_seconds: float = 300.0,
        alpn_protocols: Optional[list[str]] = None) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    config = Config()
    config.bind = [f"fd://{listener.fileno()}"]
    config.certfile = certfile
    config.keyfile = keyfile
    if alpn_protocols is not None:
        config.alpn_protocols = alpn_protocols
    config.accesslog = None
    config.errorlog = "-"
    config.graceful_timeout = 0.5
    print(listener.getsockname()[1], flush=True)

    threading.Thread(target=_exit_when_stdin_closes, daemon=True).start()
    watchdog = threading.Timer(max_seconds, lambda: os._exit(3))
    watchdog.daemon = True
    watchdog.start()
    asyncio.run(serve(app, config, mode="asgi"))
