"""A device registered by the real `keyward-device register` against a `keyward serve` process whose app was added
with `keyward apps add … --missing-attestation accept` (no platform attestation on Linux), then `signed-call`,
`rotate-device-key`, and requests this file signs itself with the key keyward-device keeps: the README's message
format written a second time, in Python, must be what the server accepts.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import subprocess
import time
import uuid
from pathlib import Path

import requests

from keyward_peer import Backend
from test_browser_journey import device_bin  # noqa: F401  (fixture)
from test_cli import run

APP_ID = "com.example.kit"


class Phone:
    """keyward-device as an installation of APP_ID with its state in `directory`."""

    def __init__(self, binary: str, issuer: str, directory: Path):
        self.binary, self.issuer, self.directory = binary, issuer, directory
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("KEYWARD_")}

    def __call__(self, command: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.binary, command, "--issuer", self.issuer, "--app-id", APP_ID, "--state-dir", str(self.directory), *args],
            capture_output=True, text=True, env=self.env, timeout=120,
        )

    @property
    def state_file(self) -> Path:
        return self.directory / f"registration-{APP_ID}.json"

    def state(self) -> dict:
        return json.loads(self.state_file.read_text())

    def private_key(self):
        """The device key as keyward-device stores it: {"alg": "ES256", "key": base64url(DER)}."""
        from cryptography.hazmat.primitives.serialization import load_der_private_key

        stored = json.loads((self.directory / f"{self.state()['key_name']}.key").read_text())
        assert stored["alg"] == "ES256", stored
        der = base64.urlsafe_b64decode(stored["key"] + "=" * (-len(stored["key"]) % 4))
        return load_der_private_key(der, password=None)


def signed_headers(key, device_id: str, method: str, target: str, body: bytes = b"", timestamp: int | None = None,
                   nonce: str | None = None) -> dict[str, str]:
    """README, "Signed device requests": METHOD \\n TARGET \\n TIMESTAMP \\n NONCE \\n hex(SHA-256(BODY)), ECDSA P-256
    SHA-256, DER, base64."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    timestamp = int(time.time()) if timestamp is None else timestamp
    nonce = nonce or str(uuid.uuid4())
    message = "\n".join([method.upper(), target, str(timestamp), nonce, hashlib.sha256(body).hexdigest()]).encode()
    signature = key.sign(message, ec.ECDSA(hashes.SHA256()))
    return {
        "X-App-ID": APP_ID, "X-Device-ID": device_id, "X-Keyward-Timestamp": str(timestamp), "X-Keyward-Nonce": nonce,
        "X-Keyward-Sig-Version": "1", "X-Keyward-Signature": base64.b64encode(signature).decode(),
    }


def test_register_then_signed_call(keyward_bin, device_bin, tmp_path, spawn_server):  # noqa: F811
    srv = spawn_server(Backend("sqlite", None, None), "devices")
    added = run(keyward_bin, srv.data_dir, "apps", "add", "--realm", "demo", APP_ID, "--platform", "ios", "--environment", "production",
                "--team-id", "ABCDE12345", "--bundle-id", "com.example.kit", "--missing-attestation", "accept")
    assert added.returncode == 0, added.stderr
    phone = Phone(device_bin, srv.issuer, tmp_path / "phone")

    first = phone("register")
    assert first.returncode == 0, first.stderr
    match = re.fullmatch(rf"registered device (\S+) for app {re.escape(APP_ID)} \(status registered\)\n", first.stdout)
    assert match, first.stdout
    device_id = match.group(1)
    state = phone.state()
    assert (state["phase"], state["device_id"], state["status"]) == ("registered", device_id, "registered")
    assert stat.S_IMODE(phone.state_file.stat().st_mode) == 0o600
    listing = run(keyward_bin, srv.data_dir, "apps", "list", "--realm", "demo", "--devices")
    assert device_id in listing.stdout, listing.stdout

    again = phone("register")
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"already registered: device {device_id} for app {APP_ID} (status registered)\n"

    call = phone("signed-call")
    assert call.returncode == 0, call.stderr
    status_line, body = call.stdout.split("\n", 1)
    assert status_line == "HTTP 200"
    answer = json.loads(body)
    assert (answer["device_id"], answer["app_id"], answer["status"], answer["platform"]) == (device_id, APP_ID, "registered", "ios")
    assert "key_rotated_at" not in answer

    # The key keyward-device keeps signs requests built here, by the README alone.
    url = f"{srv.issuer}/v1/device/status"
    target = f"/realms/demo/v1/device/status"
    headers = signed_headers(phone.private_key(), device_id, "GET", target)
    assert requests.get(url, headers=headers, timeout=30).status_code == 200
    replayed = requests.get(url, headers=headers, timeout=30)
    assert replayed.status_code == 401 and replayed.json()["error"] == "NONCE_REPLAY", replayed.text
    skewed = requests.get(url, headers=signed_headers(phone.private_key(), device_id, "GET", target, timestamp=int(time.time()) - 3600), timeout=30)
    assert skewed.status_code == 401 and skewed.json()["error"] == "CLOCK_SKEW", skewed.text
    assert abs(skewed.json()["server_timestamp"] - time.time()) < 300

    old_key = phone.private_key()
    rotated = phone("rotate-device-key")
    assert rotated.returncode == 0, rotated.stderr
    assert rotated.stdout == f"rotated the key of device {device_id} for app {APP_ID}\n"
    after = phone("signed-call")
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout.split("\n", 1)[1])["key_rotated_at"]
    refused = requests.get(url, headers=signed_headers(old_key, device_id, "GET", target), timeout=30)
    assert refused.status_code == 401 and refused.json()["error"] == "INVALID_SIGNATURE", refused.text
    assert requests.get(url, headers=signed_headers(phone.private_key(), device_id, "GET", target), timeout=30).status_code == 200

    # A refused call prints the server's answer and exits 1.
    missing = phone("signed-call", "--method", "POST", "--data", "{}", "/v1/device/nothing-here")
    assert missing.returncode == 1
    assert missing.stdout.startswith("HTTP 404\n"), missing.stdout


def test_registration_refused_by_the_apps_policy_is_one_clear_line(keyward_bin, device_bin, tmp_path, spawn_server):  # noqa: F811
    srv = spawn_server(Backend("sqlite", None, None), "devices-strict")
    added = run(keyward_bin, srv.data_dir, "apps", "add", "--realm", "demo", APP_ID, "--platform", "ios", "--environment", "production",
                "--team-id", "ABCDE12345", "--bundle-id", "com.example.kit")
    assert added.returncode == 0, added.stderr
    phone = Phone(device_bin, srv.issuer, tmp_path / "phone")

    refused = phone("register")
    assert refused.returncode != 0
    errors = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("Error: server answered 400 ATTESTATION_UNAVAILABLE"), refused.stderr
    assert phone.state()["phase"] == "unregistered"

    unregistered = phone("signed-call")
    assert unregistered.returncode != 0
    assert f"no device is registered for app '{APP_ID}'" in unregistered.stderr

    assert "--missing-attestation" in phone("register", "--help").stdout
