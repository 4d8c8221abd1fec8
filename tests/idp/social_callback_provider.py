"""OIDC provider double for the keyward-bench `social-callback` benchmark: it never signs while the benchmark measures.

Every id_token is signed ahead of time and /token answers from memory (code → the serialized response bytes), so
what the benchmark times is Keyward (cookie open, code exchange, id_token verification, provisioning, session),
not this process. Its own CPU time is reported on request and printed on exit, to be shown beside Keyward's.

Two ways to get codes, both signed outside the measured phase:
  * pre-signed: at start, `--tokens N` entries are made (code, code_verifier, nonce, sub) and signed before the
    double announces itself. The benchmark reads them (GET /_bench/manifest or --manifest FILE) and builds its
    transaction cookies with those nonces and verifiers;
  * through Keyward's own start route: GET /authorize (client_id, redirect_uri, state, nonce, code_challenge with
    S256) signs the id_token there and then, and redirects with code, state and iss, no consent page. Run all the
    authorizations before the measured callbacks. The subject is `login_hint` when the request has one (the
    benchmark decides who signs in, first time or again), else a random one of the `--subjects`.
POST /token (authorization_code; client_id in the form or HTTP Basic; code_verifier required, S256) is single-use
per code. GET /jwks (Cache-Control max-age, default 3600: the warm-cache case), GET /.well-known/openid-configuration.
GET /_bench/cpu → {"cpu_seconds", "cpu_seconds_since_mark", "token_requests", "token_requests_since_mark",
"jwks_requests", "jwks_requests_since_mark"} (JWKS fetches since the mark: 0 when Keyward's key cache stayed warm);
POST /_bench/mark starts the "since mark" counters (call it when the measured phase begins).

Python:  with SocialCallbackProvider(client_id="bench", tokens=1000).serve() as provider: provider.manifest() …
CLI:     python tests/idp/social_callback_provider.py --port 0 --client-id ID --tokens N [--subjects K]
             [--issuer URL] [--manifest FILE] [--jwks-max-age S] [--token-lifetime S]
         prints {"base_url", "issuer", "token_endpoint", "jwks_uri", "authorization_endpoint", "discovery_url",
         "tokens", "presign_seconds"} once the tokens are signed, then serves; on exit prints
         {"event": "exit", "cpu_seconds", ...}.
"""

from __future__ import annotations

import argparse
import base64
import hmac
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlencode, urlsplit

from joserfc import jwt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oauth_codes import s256  # noqa: E402
from signing_keys import SIGNING_ALG, SigningKeys  # noqa: E402


class SocialCallbackProvider:
    def __init__(self, *, client_id: str, tokens: int, subjects: int | None = None, issuer: str | None = None,
                 token_lifetime: int = 3600, jwks_max_age: int = 3600):
        self.client_id = client_id
        self.token_count = tokens
        self.subjects = subjects or max(tokens, 1)
        self.issuer = issuer
        self.token_lifetime = token_lifetime
        self.jwks_max_age = jwks_max_age
        self.keys = SigningKeys()
        self.base_url: str | None = None
        self.presign_seconds = 0.0
        self._lock = threading.Lock()
        self._grants: dict[str, dict[str, Any]] = {}  # code → {challenge, redirect_uri, response (bytes)}
        self._manifest: list[dict[str, str]] = []
        self._token_requests = 0
        self._jwks_requests = 0
        self._mark = (time.process_time(), 0, 0)

    # ------------------------------------------------------------------------------------------- signing, ahead
    def _signed_response(self, sub: str, nonce: str) -> bytes:
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": self.client_id, "azp": self.client_id, "sub": sub, "iat": now,
                  "exp": now + self.token_lifetime, "nonce": nonce, "email": f"{sub}@bench.example.test",
                  "email_verified": True}
        key = self.keys.current
        id_token = jwt.encode({"alg": SIGNING_ALG, "kid": key.kid, "typ": "JWT"}, claims, key,
                              algorithms=[SIGNING_ALG])
        return json.dumps({"access_token": secrets.token_urlsafe(24), "token_type": "Bearer",
                           "expires_in": self.token_lifetime, "scope": "openid email",
                           "id_token": id_token}).encode()

    def presign(self, base_url: str) -> None:
        self.base_url = base_url
        self.issuer = self.issuer or base_url
        started = time.perf_counter()
        for index in range(self.token_count):
            code, verifier, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(48), secrets.token_urlsafe(24)
            sub = f"bench-user-{index % self.subjects}"
            self._grants[code] = {"challenge": s256(verifier), "redirect_uri": None,
                                  "response": self._signed_response(sub, nonce)}
            self._manifest.append({"code": code, "code_verifier": verifier, "nonce": nonce, "sub": sub})
        self.presign_seconds = time.perf_counter() - started

    def manifest(self) -> list[dict[str, str]]:
        return list(self._manifest)

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if query.get("client_id") != self.client_id or not query.get("redirect_uri"):
            return 400, {"Content-Type": "text/plain"}, b"unknown client_id or no redirect_uri"
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge") or not query.get("nonce"):
            return 400, {"Content-Type": "text/plain"}, b"PKCE S256 and nonce are required"
        code = secrets.token_urlsafe(24)
        sub = query.get("login_hint") or f"bench-user-{secrets.randbelow(self.subjects)}"
        grant = {"challenge": query["code_challenge"], "redirect_uri": query["redirect_uri"],
                 "response": self._signed_response(sub, query["nonce"])}
        with self._lock:
            self._grants[code] = grant
        params = {"code": code, "iss": self.issuer}
        if "state" in query:
            params["state"] = query["state"]
        separator = "&" if "?" in query["redirect_uri"] else "?"
        return 302, {"Location": query["redirect_uri"] + separator + urlencode(params)}, b""

    # ------------------------------------------------------------------------------------------- answering, from memory
    def token(self, form: dict[str, str], basic_client: str | None) -> tuple[int, bytes]:
        with self._lock:
            self._token_requests += 1
            grant = self._grants.pop(form.get("code", ""), None)
        client_id = basic_client or form.get("client_id")
        if form.get("grant_type") != "authorization_code" or client_id != self.client_id:
            return 400, b'{"error":"invalid_request"}'
        if grant is None:
            return 400, b'{"error":"invalid_grant","error_description":"unknown or used code"}'
        verifier = form.get("code_verifier", "")
        if not verifier or not hmac.compare_digest(s256(verifier), grant["challenge"]):
            return 400, b'{"error":"invalid_grant","error_description":"code_verifier"}'
        if grant["redirect_uri"] is not None and form.get("redirect_uri") != grant["redirect_uri"]:
            return 400, b'{"error":"invalid_grant","error_description":"redirect_uri"}'
        return 200, grant["response"]

    def jwks(self) -> dict[str, Any]:
        with self._lock:
            self._jwks_requests += 1
        return self.keys.jwks()

    def mark(self) -> None:
        with self._lock:
            self._mark = (time.process_time(), self._token_requests, self._jwks_requests)

    def cpu_report(self) -> dict[str, Any]:
        now = time.process_time()
        with self._lock:
            mark_cpu, mark_requests, mark_jwks = self._mark
            requests_total, jwks_total = self._token_requests, self._jwks_requests
        return {"cpu_seconds": round(now, 4), "cpu_seconds_since_mark": round(now - mark_cpu, 4),
                "token_requests": requests_total, "token_requests_since_mark": requests_total - mark_requests,
                "jwks_requests": jwks_total, "jwks_requests_since_mark": jwks_total - mark_jwks}

    def discovery(self) -> dict[str, Any]:
        base = self.base_url
        return {"issuer": self.issuer, "authorization_endpoint": f"{base}/authorize", "token_endpoint": f"{base}/token",
                "jwks_uri": f"{base}/jwks", "response_types_supported": ["code"],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": [SIGNING_ALG],
                "code_challenge_methods_supported": ["S256"]}

    def endpoints(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "issuer": self.issuer, "token_endpoint": f"{self.base_url}/token",
                "jwks_uri": f"{self.base_url}/jwks", "authorization_endpoint": f"{self.base_url}/authorize",
                "discovery_url": f"{self.base_url}/.well-known/openid-configuration",
                "tokens": self.token_count, "presign_seconds": round(self.presign_seconds, 3)}

    # ------------------------------------------------------------------------------------------- serving
    def make_server(self, host: str, port: int) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer((host, port), _handler_for(self))
        server.daemon_threads = True
        return server

    @contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Iterator["SocialCallbackProvider"]:
        server = self.make_server(host, port)
        self.presign(f"http://{host}:{server.server_port}")
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)


def _handler_for(provider: SocialCallbackProvider):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: Keyward's HTTP client reuses its connections

        def setup(self) -> None:
            super().setup()
            # Headers and body leave in two writes; with Nagle on, the second waits for the client's delayed ACK
            # (~40 ms a response), which would make this double, not Keyward, the bottleneck.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None,
                  content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, value: Any, headers: dict[str, str] | None = None) -> None:
            self._send(200, json.dumps(value).encode(), headers)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/jwks":
                body = json.dumps(provider.jwks()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", f"public, max-age={provider.jwks_max_age}")
                self.end_headers()
                self.wfile.write(body)
            elif parts.path == "/.well-known/openid-configuration":
                self._json(provider.discovery())
            elif parts.path == "/authorize":
                query = {name: values[0] for name, values in parse_qs(parts.query).items()}
                status, headers, body = provider.authorize(query)
                self._send(status, body, headers, headers.get("Content-Type", "text/plain"))
            elif parts.path == "/_bench/manifest":
                self._json(provider.manifest())
            elif parts.path == "/_bench/cpu":
                self._json(provider.cpu_report())
            else:
                self._send(404, b'{"error":"not_found"}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8", "replace")
            path = urlsplit(self.path).path
            if path == "/token":
                form = {name: values[0] for name, values in parse_qs(body).items()}
                status, answer = provider.token(form, _basic_client(self.headers.get("Authorization")))
                self._send(status, answer)
            elif path == "/_bench/mark":
                provider.mark()
                self._json(provider.cpu_report())
            else:
                self._send(404, b'{"error":"not_found"}')

    return Handler


def _basic_client(authorization: str | None) -> str | None:
    if not authorization or not authorization.lower().startswith("basic "):
        return None
    try:
        user, _, _ = base64.b64decode(authorization[6:]).decode().partition(":")
    except ValueError:
        return None
    return user


def main() -> None:
    parser = argparse.ArgumentParser(description="pre-signing OIDC provider double for keyward-bench social-callback")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--tokens", type=int, default=1000, help="id_tokens to sign before serving (default 1000)")
    parser.add_argument("--subjects", type=int, help="distinct users among them (default: one per token)")
    parser.add_argument("--issuer", help="iss of the id_tokens (default: the base URL)")
    parser.add_argument("--manifest", help="also write the pre-signed entries to this JSON file")
    parser.add_argument("--jwks-max-age", type=int, default=3600)
    parser.add_argument("--token-lifetime", type=int, default=3600, help="exp - iat of the id_tokens")
    parser.add_argument("--max-seconds", type=float, default=3600.0)
    options = parser.parse_args()
    provider = SocialCallbackProvider(client_id=options.client_id, tokens=options.tokens, subjects=options.subjects,
                                      issuer=options.issuer, token_lifetime=options.token_lifetime,
                                      jwks_max_age=options.jwks_max_age)
    server = provider.make_server(options.host, options.port)
    provider.presign(f"http://{options.host}:{server.server_port}")
    if options.manifest:
        Path(options.manifest).write_text(json.dumps(provider.manifest()))
    provider.mark()

    def stop(*_):
        print(json.dumps({"event": "exit", **provider.cpu_report()}), flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A parent may start this with those signals blocked (Foundation's Process, spawning from a Swift thread,
    # passes its thread's mask on): SIGTERM would then stay pending and the double never stop.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    watchdog = threading.Timer(options.max_seconds, stop)
    watchdog.daemon = True
    watchdog.start()
    print(json.dumps(provider.endpoints()), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
