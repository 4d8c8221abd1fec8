"""Helpers for the interop tests: start a real `keyward serve --demo` process, and craft DPoP proofs by hand.

Proofs made here use joserfc (an independent JOSE implementation) for the signature, and plain byte
manipulation for the malformed ones. Nothing in here knows Keyward's internals: only its HTTP contract.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from joserfc import jws
from joserfc.jws import JWSRegistry
from joserfc.jwk import ECKey, OKPKey, RSAKey

REALM = "demo"
CLIENT_ID = "push-device-client"
CLIENT_SECRET = "device-client-secret"
# The iOS device app the contract run registers installations of (no attestation: its policy accepts that).
DEVICE_APP = "contract-ios-app"

# How long a server may take to answer /readyz 200 (cold PostgreSQL migrations included). A limit, not an assertion.
READY_LIMIT_SECONDS = float(os.environ.get("KEYWARD_INTEROP_READY_SECONDS", "120"))
# Graceful shutdown requirement: exit code 0 within this many seconds of SIGTERM.
SHUTDOWN_LIMIT_SECONDS = 10.0
HTTP_TIMEOUT = 30


# --------------------------------------------------------------------------------------------- encoding helpers
def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64u_json(value: Any) -> str:
    return b64u(json.dumps(value, separators=(",", ":")).encode("utf-8"))


def b64u_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def ath_of(access_token: str) -> str:
    """RFC 9449 §4.2: base64url(SHA-256(ASCII(access token)))."""
    return b64u(hashlib.sha256(access_token.encode("ascii")).digest())


def jwt_parts(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Header and claims of a compact JWS, without verifying anything."""
    header, payload, _ = token.split(".")
    return json.loads(b64u_decode(header)), json.loads(b64u_decode(payload))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------------------------- DPoP keys and proofs
def generate_key(alg: str):
    """A fresh private joserfc key suited to the JWS `alg`."""
    if alg == "ES256":
        return ECKey.generate_key("P-256")
    if alg == "ES384":
        return ECKey.generate_key("P-384")
    if alg == "ES512":
        return ECKey.generate_key("P-521")
    if alg in ("RS256", "RS384", "RS512", "PS256"):
        return RSAKey.generate_key(2048)
    if alg == "EdDSA":
        return OKPKey.generate_key("Ed25519")
    raise ValueError(f"no key type for {alg}")


class ProofMaker:
    """A DPoP key pair (joserfc) that makes RFC 9449 proofs, well-formed by default, broken on request."""

    def __init__(self, alg: str = "ES256", key=None):
        self.alg = alg
        self.key = key if key is not None else generate_key(alg)

    @property
    def public_jwk(self) -> dict[str, Any]:
        return dict(self.key.as_dict(private=False))

    @property
    def thumbprint(self) -> str:
        """RFC 7638 SHA-256 thumbprint, as computed by joserfc."""
        return self.key.thumbprint()

    def claims(self, htm: str, htu: str, access_token: str | None = None, **extra: Any) -> dict[str, Any]:
        claims: dict[str, Any] = {"jti": str(uuid.uuid4()), "htm": htm, "htu": htu, "iat": int(time.time())}
        if access_token is not None:
            claims["ath"] = ath_of(access_token)
        claims.update(extra)
        return claims

    def header(self, **extra: Any) -> dict[str, Any]:
        header: dict[str, Any] = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.public_jwk}
        header.update(extra)
        return header

    def sign(self, header: dict[str, Any], claims: dict[str, Any]) -> str:
        """Signs exactly this header and these claims (keys whose value is None are dropped)."""
        header = {k: v for k, v in header.items() if v is not None}
        claims = {k: v for k, v in claims.items() if v is not None}
        payload = json.dumps(claims, separators=(",", ":")).encode("utf-8")
        # strict_check_header=False: proofs may carry unregistered header members (RFC 9449 says ignore them).
        registry = JWSRegistry(algorithms=[header.get("alg", self.alg)], strict_check_header=False)
        return jws.serialize_compact(header, payload, self.key, registry=registry)

    def proof(self, htm: str, htu: str, access_token: str | None = None, *, header: dict[str, Any] | None = None,
              **claims: Any) -> str:
        return self.sign(self.header(**(header or {})), self.claims(htm, htu, access_token, **claims))


P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def es256_sign_raw(maker: ProofMaker, header_json: str, claims_json: str) -> str:
    """ES256 over exactly these JSON texts (e.g. with a duplicate member), with `cryptography` directly."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    signing_input = f"{b64u(header_json.encode())}.{b64u(claims_json.encode())}"
    der = maker.key.private_key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return f"{signing_input}.{b64u(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def high_s_twin(proof: str) -> str:
    """The malleated twin (r, n - s) of an ES256 JWS: a different, equally valid signature."""
    head, payload, sig = proof.split(".")
    raw = b64u_decode(sig)
    r, s = raw[:32], int.from_bytes(raw[32:], "big")
    return f"{head}.{payload}.{b64u(r + (P256_ORDER - s).to_bytes(32, 'big'))}"


def unsigned_proof(header: dict[str, Any], claims: dict[str, Any]) -> str:
    """`header.payload.` with an empty signature, e.g. for `alg: none`."""
    return f"{b64u_json(header)}.{b64u_json(claims)}."


# --------------------------------------------------------------------------------------------- the server process
@dataclass(frozen=True)
class Backend:
    name: str  # "sqlite" | "postgres"
    database_url: str | None
    master_key: str | None


class KeywardServer:
    """One `keyward serve --demo` process on a free loopback port with its own data directory."""

    def __init__(self, binary: str, backend: Backend, workdir: Path, artifacts: Path | None = None, label: str = "server",
                 settings: dict[str, str] | None = None, public_host: str = "127.0.0.1"):
        self.settings = settings or {}
        # The host of the public URL; the server listens on 127.0.0.1 either way. Passkeys need a host name
        # ("localhost"): browsers refuse an IP address as a WebAuthn RP ID.
        self.public_host = public_host
        self.binary = binary
        self.backend = backend
        self.workdir = workdir
        self.artifacts = artifacts
        self.label = label
        self.data_dir = workdir / "data"
        self.log_path = workdir / "keyward.log"
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.returncode: int | None = None
        self._log_file = None

    # ---- URLs
    @property
    def base(self) -> str:
        return f"http://{self.public_host}:{self.port}"

    @property
    def issuer(self) -> str:
        return f"{self.base}/realms/{REALM}"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/protocol/openid-connect/token"

    @property
    def jwks_uri(self) -> str:
        return f"{self.issuer}/protocol/openid-connect/certs"

    @property
    def discovery_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    @property
    def whoami_url(self) -> str:
        return f"{self.issuer}/v1/whoami"

    # ---- lifecycle
    def command(self, port: int) -> list[str]:
        cmd = [
            self.binary, "serve", "--demo",
            "--host", "127.0.0.1",
            "--port", str(port),
            "--data-dir", str(self.data_dir),
            "--public-url", f"http://{self.public_host}:{port}",
        ]
        if self.backend.database_url:
            cmd += ["--database", self.backend.database_url]
        return cmd

    def environment(self) -> dict[str, str]:
        # Only flags configure the server: drop any KEYWARD_* setting inherited from a developer's shell.
        env = {k: v for k, v in os.environ.items() if not k.startswith("KEYWARD_")}
        if self.backend.master_key:
            env["KEYWARD_MASTER_KEY"] = self.backend.master_key
        env.update(self.settings)
        return env

    def start(self) -> "KeywardServer":
        self.data_dir.mkdir(parents=True, exist_ok=True)
        last_error = ""
        for _attempt in range(3):
            self.port = free_port()
            self._log_file = open(self.log_path, "ab")
            self._log_file.write(f"### {' '.join(self.command(self.port))}\n".encode())
            self._log_file.flush()
            self.proc = subprocess.Popen(
                self.command(self.port), stdin=subprocess.DEVNULL, stdout=self._log_file, stderr=subprocess.STDOUT,
                env=self.environment(), cwd=self.workdir, start_new_session=True,
            )
            outcome = self._wait_ready()
            if outcome == "ready":
                return self
            last_error = outcome
            self._kill()
            if "address" not in self.log_tail(40).lower():  # retry only a lost race for the port
                break
        raise RuntimeError(f"keyward ({self.backend.name}) did not become ready: {last_error}\n{self.log_tail()}")

    def _wait_ready(self) -> str:
        deadline = time.monotonic() + READY_LIMIT_SECONDS
        last = "no answer"
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                return f"process exited with code {code} before it was ready"
            try:
                response = requests.get(f"http://127.0.0.1:{self.port}/readyz", timeout=2)
                if response.status_code == 200:
                    return "ready"
                last = f"/readyz answered {response.status_code}: {response.text[:200]}"
            except requests.RequestException as exc:
                last = f"/readyz: {type(exc).__name__}"
            time.sleep(0.2)
        return f"not ready after {READY_LIMIT_SECONDS:.0f}s ({last})"

    def terminate(self) -> int | None:
        """SIGTERM, then wait up to SHUTDOWN_LIMIT_SECONDS. Returns the exit code, or None if it had to be killed."""
        if self.proc is None:
            return self.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.returncode = self.proc.wait(timeout=SHUTDOWN_LIMIT_SECONDS)
            except subprocess.TimeoutExpired:
                self._kill()
                self.returncode = None
        else:
            self.returncode = self.proc.returncode
        self._close()
        return self.returncode

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)
        self._close()

    def _close(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self.artifacts is not None and self.log_path.exists():
            self.artifacts.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.log_path, self.artifacts / f"{self.backend.name}-{self.label}.log")

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 60) -> str:
        try:
            if self._log_file is not None:
                self._log_file.flush()
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"(no log: {exc})"
        tail = text.splitlines()[-lines:]
        return f"--- last {len(tail)} lines of {self.log_path} ({self.backend.name}) ---\n" + "\n".join(tail)


# --------------------------------------------------------------------------------------------- raw HTTP calls
class CommandLine:
    """The keyward CLI (on the server's data directory) and a keyward-device phone, run as an operator and a phone
    would run them against `server`, with none of this process's KEYWARD_* settings leaking in."""

    def __init__(self, server: KeywardServer, keyward_bin: str, device_bin: str, phone_dir: Path):
        self.server, self.keyward_bin, self.device_bin, self.phone_dir = server, keyward_bin, device_bin, phone_dir
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith("KEYWARD_")}, "KEYWARD_PUBLIC_URL": server.base}

    def run(self, binary: str, *args: str) -> str:
        done = subprocess.run([binary, *args], env=self.env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{Path(binary).name} {' '.join(args[:2])}: {done.stderr}"
        return done.stdout

    def admin(self, *args: str) -> str:
        return self.run(self.keyward_bin, *args, "--data-dir", str(self.server.data_dir))

    def settings(self, *assignments: str) -> None:
        self.admin("push-mfa", "settings", "--realm", "demo", *assignments)

    def device(self, *args: str) -> str:
        return self.run(self.device_bin, *args, "--state-dir", str(self.phone_dir), "--client-secret", CLIENT_SECRET)


def token_request(server: KeywardServer, proof: str | None, *, secret: str = CLIENT_SECRET, auth: str = "post",
                  headers: dict[str, str] | None = None, **form: str) -> requests.Response:
    """POST grant_type=client_credentials with client_secret_post (default) or client_secret_basic."""
    data = {"grant_type": "client_credentials", **form}
    hdrs = dict(headers or {})
    basic = None
    if auth == "post":
        data.update(client_id=CLIENT_ID, client_secret=secret)
    elif auth == "basic":
        basic = (CLIENT_ID, secret)
    if proof is not None:
        hdrs["DPoP"] = proof
    return requests.post(server.token_endpoint, data=data, headers=hdrs, auth=basic, timeout=HTTP_TIMEOUT)


def get_token(server: KeywardServer, maker: ProofMaker, **kwargs: Any) -> str:
    response = token_request(server, maker.proof("POST", server.token_endpoint), **kwargs)
    assert response.status_code == 200, f"token request failed: {response.status_code} {response.text}"
    body = response.json()
    assert body["token_type"] == "DPoP", body
    return body["access_token"]


def whoami(server: KeywardServer, access_token: str | None, proof: str | None, scheme: str = "DPoP",
           url: str | None = None) -> requests.Response:
    headers = {}
    if access_token is not None:
        headers["Authorization"] = f"{scheme} {access_token}"
    if proof is not None:
        headers["DPoP"] = proof
    return requests.get(url or server.whoami_url, headers=headers, timeout=HTTP_TIMEOUT)


@dataclass
class RawResponse:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def raw_request(server: KeywardServer, method: str, url: str, headers: list[tuple[str, str]],
                body: bytes | None = None) -> RawResponse:
    """http.client request that can repeat a header name (requests folds a dict into one value per name)."""
    path = url[len(server.base):] if url.startswith(server.base) else url
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=HTTP_TIMEOUT)
    try:
        conn.putrequest(method, path)
        for name, value in headers:
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return RawResponse(response.status, response.headers, response.read())
    finally:
        conn.close()
