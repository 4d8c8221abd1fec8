"""Host-signed tokens with independent peers: a customer's auth provider played by joserfc (RS256 JWTs, a JWKS served
over real HTTP) and `cryptography` (a self-signed PEM certificate), the operator's `keyward issuers` and `keyward
clients create --public`, and requests-oauth2client exchanging the token through RFC 7523's jwt-bearer grant with a
DPoP proof, then calling a DPoP-protected resource with the result."""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from joserfc import jwt
from joserfc.jwk import RSAKey
from requests_oauth2client import DPoPKey, DPoPToken, OAuth2Client
from requests_oauth2client.exceptions import InvalidGrant

from keyward_peer import jwt_parts

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class JWKSEndpoint:
    """A JWK Set on http://127.0.0.1:PORT/jwks (loopback: the only place Keyward accepts plain http for keys)."""

    def __init__(self, keys: list[dict]):
        self.document = json.dumps({"keys": keys}).encode()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the http.server interface
                self.send_response(200)
                self.send_header("Content-Type", "application/jwk-set+json")
                self.send_header("Cache-Control", "max-age=300")
                self.end_headers()
                self.wfile.write(endpoint.document)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/jwks"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


def admin(server, keyward_bin: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [keyward_bin, *args, "--data-dir", str(server.data_dir)]
    if server.backend.database_url:
        cmd += ["--database", server.backend.database_url]
    done = subprocess.run(cmd, env=server.environment(), capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, f"keyward {' '.join(args[:2])}: {done.stdout}\n{done.stderr}"
    return done


def host_token(key: RSAKey, iss: str, sub: str, aud: str, kid: str | None = "k1", changes: dict | None = None) -> str:
    now = int(time.time())
    claims = {"iss": iss, "sub": sub, "aud": aud, "iat": now, "exp": now + 300, "jti": str(uuid.uuid4()), **(changes or {})}
    header = {"alg": "RS256", "typ": "JWT"}
    if kid:
        header["kid"] = kid
    return jwt.encode(header, claims, key)


@pytest.fixture(scope="module")
def provider(server, keyward_bin, tmp_path_factory):
    """A registered JWKS issuer with two enrolled ids (from a CSV file) and a public app client."""
    run = uuid.uuid4().hex[:8]
    key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    endpoint = JWKSEndpoint([key.as_dict(private=False)])
    issuer = f"https://auth-{run}.customer.example"
    client_id = f"app-{run}"
    created = admin(server, keyward_bin, "clients", "create", "--realm", "demo", "--public", client_id)
    assert "has no secret" in created.stdout
    added = admin(server, keyward_bin, "issuers", "add", "--realm", "demo", issuer, "--jwks-url", endpoint.url)
    assert "jti: required  DPoP: required" in added.stdout, added.stdout
    csv = tmp_path_factory.mktemp("csv") / "users.csv"
    csv.write_text(f"enterprise_id,name\ne1-{run},Ann\n\"e2-{run}\",Bob\n")
    enrolled = admin(server, keyward_bin, "issuers", "enroll", "--realm", "demo", issuer, "--csv", str(csv))
    assert "2 of 2 enterprise ids enrolled" in enrolled.stdout, enrolled.stdout
    users = dict(re.findall(r"^enrolled (\S+)\tuser=(\S+)$", enrolled.stdout, re.MULTILINE))
    yield {"key": key, "issuer": issuer, "client_id": client_id, "users": users, "run": run}
    endpoint.close()


def test_requests_oauth2client_exchanges_a_host_token_and_calls_whoami(server, provider):
    subject = f"e1-{provider['run']}"
    assertion = host_token(provider["key"], provider["issuer"], subject, server.issuer)
    client = OAuth2Client(token_endpoint=server.token_endpoint, client_id=provider["client_id"], testing=True)
    dpop_key = DPoPKey.generate(alg="ES256")
    token = client.jwt_bearer(assertion, dpop=True, dpop_key=dpop_key)
    assert isinstance(token, DPoPToken), type(token)
    assert token.refresh_token is None
    _, claims = jwt_parts(str(token.access_token))
    assert claims["sub"] == provider["users"][subject]

    response = requests.get(server.whoami_url, auth=token, timeout=30)
    assert response.status_code == 200, response.text
    assert response.json()["sub"] == provider["users"][subject]
    assert response.json()["cnf"]["jkt"] == dpop_key.dpop_jkt

    # The same host token again: its jti was spent.
    with pytest.raises(InvalidGrant):
        client.jwt_bearer(assertion, dpop=True, dpop_key=DPoPKey.generate(alg="ES256"))


def test_refusals_name_their_rule(server, provider):
    subject = f"e2-{provider['run']}"
    def make(**changes) -> str:
        return host_token(provider["key"], provider["issuer"], subject, server.issuer, changes=changes)

    cases = {
        "subject_not_enrolled": make(sub="nobody"),
        "aud_mismatch": make(aud="https://elsewhere.example"),
        "lifetime_too_long": make(exp=int(time.time()) + 7200),
        "expired": make(iat=int(time.time()) - 900, exp=int(time.time()) - 600),
    }
    for reason, assertion in cases.items():
        response = requests.post(server.token_endpoint, data={
            "grant_type": JWT_BEARER, "assertion": assertion, "client_id": provider["client_id"],
        }, headers={"DPoP": str(DPoPKey.generate(alg="ES256").proof("POST", server.token_endpoint))}, timeout=30)
        assert response.status_code == 400, response.text
        body = response.json()
        assert body["error"] == "invalid_grant" and body["reason"] == reason, body


def test_pem_certificate_issuer(server, keyward_bin, tmp_path):
    run = uuid.uuid4().hex[:8]
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"pem issuer {run}")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=30)).sign(private, hashes.SHA256()))
    pem = tmp_path / "issuer.pem"
    pem.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    issuer = f"https://pem-{run}.customer.example"
    admin(server, keyward_bin, "issuers", "add", "--realm", "demo", issuer, "--pem-file", str(pem))
    admin(server, keyward_bin, "issuers", "enroll", "--realm", "demo", issuer, f"pem-{run}")
    client_id = f"pem-app-{run}"
    admin(server, keyward_bin, "clients", "create", "--realm", "demo", "--public", client_id)

    key = RSAKey.import_key(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
    assertion = host_token(key, issuer, f"pem-{run}", server.issuer, kid=None)
    token = OAuth2Client(token_endpoint=server.token_endpoint, client_id=client_id, testing=True).jwt_bearer(
        assertion, dpop=True, dpop_key=DPoPKey.generate(alg="ES256"))
    assert isinstance(token, DPoPToken)
    assert "pem certificates (1)" in admin(server, keyward_bin, "issuers", "list", "--realm", "demo").stdout


def test_cli_refuses_plain_http_off_loopback(server, keyward_bin):
    refused = admin(server, keyward_bin, "issuers", "add", "--realm", "demo", "https://x.example",
                    "--jwks-url", "http://keys.example/jwks", check=False)
    assert refused.returncode != 0
    assert "http is allowed only on a loopback address" in refused.stderr, refused.stderr


def test_cli_update_binds_the_issuer_to_clients_in_place(server, keyward_bin, provider):
    subject = f"e1-{provider['run']}"

    def exchange() -> requests.Response:
        return requests.post(server.token_endpoint, data={
            "grant_type": JWT_BEARER, "client_id": provider["client_id"],
            "assertion": host_token(provider["key"], provider["issuer"], subject, server.issuer),
        }, headers={"DPoP": str(DPoPKey.generate(alg="ES256").proof("POST", server.token_endpoint))}, timeout=30)

    updated = admin(server, keyward_bin, "issuers", "update", "--realm", "demo", provider["issuer"], "--clients", "another-app")
    assert "clients: another-app" in updated.stdout, updated.stdout
    time.sleep(5.5)  # the serving node reads issuer settings through a 5 s cache
    refused = exchange()
    assert refused.status_code == 400 and refused.json()["reason"] == "client_not_allowed", refused.text
    admin(server, keyward_bin, "issuers", "update", "--realm", "demo", provider["issuer"], "--any-client")
    time.sleep(5.5)
    assert exchange().status_code == 200
