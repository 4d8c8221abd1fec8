"""Keyward's passkey checks against an independent verifier, py_webauthn: a passkey made here (Python's
cryptography and cbor2, not Keyward's code) is registered and used to sign in through Keyward's JSON endpoints, and
every response, good or hostile, goes to both. Both accept the good ones; both refuse each hostile one, Keyward with a
stable reason, a 4xx and nothing stored. On both engines. Then keyward-device's software authenticator registers and
signs in the same way.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import uuid
from pathlib import Path

import cbor2
import pytest
import requests
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec


webauthn = pytest.importorskip("webauthn")


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Authenticator:
    """A passkey authenticator written for this test: a P-256 key (or `curve`'s), a counter, flags it is told."""

    def __init__(self, rp_id: str, origin: str, curve=ec.SECP256R1(), alg: int = -7):
        self.key = ec.generate_private_key(curve)
        self.credential_id = os.urandom(32)
        self.rp_id, self.origin, self.alg = rp_id, origin, alg
        self.count = 0
        self.user_handle: str | None = None

    def cose(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        size = (self.key.curve.key_size + 7) // 8
        crv = {256: 1, 384: 2}[self.key.curve.key_size]
        return cbor2.dumps({1: 2, 3: self.alg, -1: crv, -2: numbers.x.to_bytes(size, "big"), -3: numbers.y.to_bytes(size, "big")})

    def client_data(self, kind: str, challenge: str, **changes) -> bytes:
        data = {"type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": False, **changes}
        return json.dumps(data, separators=(",", ":")).encode()

    def registration(self, options: dict, flags: int = 0x45, rp_id: str | None = None, **client_changes) -> dict:
        self.user_handle = options["user"]["id"]
        client_data = self.client_data("webauthn.create", options["challenge"], **client_changes)
        auth_data = (hashlib.sha256((rp_id or self.rp_id).encode()).digest() + bytes([flags]) + (0).to_bytes(4, "big") + bytes(16)
                     + len(self.credential_id).to_bytes(2, "big") + self.credential_id + self.cose())
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        return {"id": b64(self.credential_id), "rawId": b64(self.credential_id), "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64(client_data), "attestationObject": b64(attestation), "transports": ["internal"]}}

    def assertion(self, options: dict, flags: int = 0x05, count: int | None = None, rp_id: str | None = None, **client_changes) -> dict:
        if count is None:
            self.count += 1
            count = self.count
        client_data = self.client_data("webauthn.get", options["challenge"], **client_changes)
        auth_data = hashlib.sha256((rp_id or self.rp_id).encode()).digest() + bytes([flags]) + count.to_bytes(4, "big")
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {"id": b64(self.credential_id), "rawId": b64(self.credential_id), "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64(client_data), "authenticatorData": b64(auth_data), "signature": b64(signature),
                             "userHandle": self.user_handle}}


class Realm:
    """The demo realm's passkey endpoints through a requests session, as a browser holds its cookie."""

    def __init__(self, server):
        self.server = server
        self.http = requests.Session()
        self.csrf: str | None = None

    def post(self, path: str, body: dict) -> requests.Response:
        headers = {"X-CSRF-Token": self.csrf} if self.csrf else {}
        answer = self.http.post(f"{self.server.issuer}/webauthn/{path}", json=body, headers=headers, timeout=10)
        if "X-CSRF-Token" in answer.headers:
            self.csrf = answer.headers["X-CSRF-Token"]
        return answer

    def sign_in_with_password(self, username: str, password: str) -> None:
        page = self.http.get(f"{self.server.issuer}/login", timeout=10).text
        token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        answer = self.http.post(f"{self.server.issuer}/login", data={"csrf": token, "username": username, "password": password},
                                allow_redirects=False, timeout=10)
        assert answer.status_code == 303 and answer.headers["Location"].endswith("/account"), answer.text
        self.csrf = self.http.get(f"{self.server.issuer}/v1/auth/session", timeout=10).json()["csrf_token"]

    def passkey_names(self) -> list[str]:
        page = self.http.get(f"{self.server.issuer}/account", timeout=10).text
        return re.findall(r'aria-label="Remove ([^"]+)"', page) + re.findall(r'<tr><td>([^<]+)</td><td>[^<]*</td><td>[^<]*</td><td>[^<]*</td>\n<td><form method="post" action="[^"]*/passkeys/', page)


@pytest.fixture
def account(passkey_server, keyward_bin):
    """A fresh account with a password, signed in on a Realm."""
    name = "pk-" + uuid.uuid4().hex[:8]
    server = passkey_server
    done = subprocess.run([keyward_bin, "users", "create", "--realm", "demo", name, "--data-dir", str(server.data_dir),
                           *(["--database", server.backend.database_url] if server.backend.database_url else [])],
                          env={**server.environment(), "KEYWARD_NEW_PASSWORD": "passkey-password-1"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    realm = Realm(server)
    realm.sign_in_with_password(name, "passkey-password-1")
    return name, realm


def py_registration(credential: dict, options: dict, origin: str, rp_id: str = "localhost") -> None:
    webauthn.verify_registration_response(credential=credential, expected_challenge=unb64(options["challenge"]), expected_rp_id=rp_id,
                                          expected_origin=origin, require_user_verification=True)


def refused_by_both(keyward: requests.Response, py_call, reason: str) -> None:
    assert keyward.status_code in (400, 403), keyward.text
    assert keyward.json().get("reason") == reason or keyward.json()["error"] == reason, keyward.text
    with pytest.raises(Exception):
        py_call()


def test_registration_agrees_with_py_webauthn(passkey_server, account):
    _, realm = account
    origin = passkey_server.base
    hostile = {
        "webauthn_origin_not_allowed": lambda a, o: a.registration(o, origin="https://evil.example"),
        "webauthn_type_mismatch": lambda a, o: a.registration(o, type="webauthn.get"),
        "webauthn_rp_id_mismatch": lambda a, o: a.registration(o, rp_id="evil.example"),
        "webauthn_user_not_present": lambda a, o: a.registration(o, flags=0x44),
        "webauthn_user_not_verified": lambda a, o: a.registration(o, flags=0x41),
    }
    for reason, make in hostile.items():
        options = realm.post("registration/options", {}).json()
        authenticator = Authenticator("localhost", origin)
        credential = make(authenticator, options)
        refused_by_both(realm.post("registration", credential), lambda: py_registration(credential, options, origin), reason)

    # An algorithm outside ES256, EdDSA, RS256 (P-384, ES384): Keyward and py_webauthn, told the same list, refuse it.
    options = realm.post("registration/options", {}).json()
    p384 = Authenticator("localhost", origin, curve=ec.SECP384R1(), alg=-35)
    credential = p384.registration(options)
    keyward = realm.post("registration", credential)
    assert keyward.json().get("reason") == "webauthn_unsupported_algorithm", keyward.text
    with pytest.raises(Exception):
        webauthn.verify_registration_response(credential=credential, expected_challenge=unb64(options["challenge"]), expected_rp_id="localhost",
                                              expected_origin=origin, supported_pub_key_algs=[webauthn.helpers.structs.COSEAlgorithmIdentifier(-7)])
    # Malformed and oversized CBOR.
    for garbage in (b"\xff\x00", cbor2.dumps({"fmt": "none"}), b"\x5a\xff\xff\xff\xff" + bytes(10), cbor2.dumps(bytes(40_000))):
        options = realm.post("registration/options", {}).json()
        credential = Authenticator("localhost", origin).registration(options)
        credential["response"]["attestationObject"] = b64(garbage)
        answer = realm.post("registration", credential)
        assert answer.status_code in (400, 413), answer.text
        with pytest.raises(Exception):
            py_registration(credential, options, origin)
    assert realm.passkey_names() == [], "no refusal stored anything"

    options = realm.post("registration/options", {}).json()
    good = Authenticator("localhost", origin)
    credential = good.registration(options)
    py_registration(credential, options, origin)
    answer = realm.post("registration", {**credential, "name": "Python"})
    assert answer.status_code == 201, answer.text


def test_sign_in_agrees_with_py_webauthn(passkey_server, account):
    _, owner = account
    origin = passkey_server.base
    options = owner.post("registration/options", {}).json()
    authenticator = Authenticator("localhost", origin)
    registered = owner.post("registration", authenticator.registration(options))
    assert registered.status_code == 201, registered.text
    public_key = authenticator.cose()

    def attempt(make, reason: str | None, stored_count: int | None = None):
        realm = Realm(passkey_server)
        options = realm.post("authentication/options", {}).json()
        assert realm.csrf, "a caller with no cookie gets a sign-in state and its token"
        credential = make(options)

        def py():
            return webauthn.verify_authentication_response(
                credential=credential, expected_challenge=unb64(options["challenge"]), expected_rp_id="localhost", expected_origin=origin,
                credential_public_key=public_key, credential_current_sign_count=authenticator.count if stored_count is None else stored_count,
                require_user_verification=True,
            )

        answer = realm.post("authentication", credential)
        if reason is None:
            assert answer.status_code == 200, answer.text
            assert answer.json()["amr"] == ["hwk", "user"]
            return
        refused_by_both(answer, py, reason)
        assert "keyward-session" not in "".join(c.name + "=" + c.value for c in realm.http.cookies if not c.value.startswith("p1.")), \
            "a refusal signs nobody in"

    def tampered(field: str, index: int | None):
        """A byte of `field` flipped, or (no index) a space added: the same JSON, other bytes under the signature."""
        def make(options):
            credential = authenticator.assertion(options)
            raw = bytearray(unb64(credential["response"][field]))
            if index is None:
                raw += b" "
            else:
                raw[index] ^= 1
            credential["response"][field] = b64(bytes(raw))
            return credential
        return make

    counted = authenticator.count
    attempt(lambda o: authenticator.assertion(o, origin="https://evil.example"), "webauthn_origin_not_allowed")
    attempt(lambda o: authenticator.assertion(o, rp_id="evil.example"), "webauthn_rp_id_mismatch")
    attempt(lambda o: authenticator.assertion(o, flags=0x04), "webauthn_user_not_present")
    attempt(lambda o: authenticator.assertion(o, flags=0x01), "webauthn_user_not_verified")
    attempt(tampered("signature", 10), "webauthn_signature_invalid")
    attempt(tampered("authenticatorData", 36), "webauthn_signature_invalid")
    attempt(tampered("clientDataJSON", None), "webauthn_signature_invalid")
    authenticator.count = counted
    attempt(lambda o: authenticator.assertion(o), None)

    # A challenge replayed from another sign-in: py_webauthn, expecting the new one, refuses it too.
    first = Realm(passkey_server)
    old_options = first.post("authentication/options", {}).json()
    attempt(lambda o: authenticator.assertion(old_options), "webauthn_challenge_other_session")
    # Another account's passkey named by this one's handle.
    attempt(lambda o: {**authenticator.assertion(o), "response": {**authenticator.assertion(o)["response"], "userHandle": b64(b"someone")}},
            "webauthn_user_handle_mismatch")
    # A counter that goes back: refused, and the passkey suspended (py_webauthn refuses the same counter).
    attempt(lambda o: authenticator.assertion(o, count=1), "webauthn_counter_not_increasing", stored_count=authenticator.count)


def test_keyward_device_registers_and_signs_in_with_a_software_passkey(passkey_server, keyward_bin, tmp_path):
    device = Path(keyward_bin).with_name("keyward-device")
    if not device.is_file():
        pytest.skip("no keyward-device beside keyward")
    server = passkey_server
    name = "dev-" + uuid.uuid4().hex[:8]
    done = subprocess.run([keyward_bin, "users", "create", "--realm", "demo", name, "--data-dir", str(server.data_dir),
                           *(["--database", server.backend.database_url] if server.backend.database_url else [])],
                          env={**server.environment(), "KEYWARD_NEW_PASSWORD": "device-password-1"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEYWARD_")}
    state = str(tmp_path / "device")

    def run(*args: str, password: str | None = None) -> subprocess.CompletedProcess:
        extra = {"KEYWARD_DEVICE_PASSWORD": password} if password else {}
        return subprocess.run([str(device), "passkey", *args, "--issuer", server.issuer, "--state-dir", state], env={**env, **extra},
                              capture_output=True, text=True, timeout=60)

    missing = run("register", "--username", name)
    assert missing.returncode != 0 and "KEYWARD_DEVICE_PASSWORD" in missing.stderr
    registered = run("register", "--username", name, "--name", "CLI", password="device-password-1")
    assert registered.returncode == 0, registered.stderr
    assert "registered passkey" in registered.stdout
    assert oct(os.stat(Path(state) / "passkeys.json").st_mode & 0o777) == "0o600"
    signed_in = run("sign-in")
    assert signed_in.returncode == 0, signed_in.stderr
    assert "amr hwk user" in signed_in.stdout
    named = run("sign-in", "--username", name)
    assert named.returncode == 0, named.stderr
    unverified = subprocess.run([str(device), "passkey", "sign-in", "--issuer", server.issuer, "--state-dir", state, "--no-user-verification"],
                                env=env, capture_output=True, text=True, timeout=60)
    assert unverified.returncode != 0 and "webauthn_user_not_verified" in unverified.stderr, unverified.stderr
