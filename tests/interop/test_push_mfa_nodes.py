"""Push-MFA SSE across Keyward nodes, with an independent Python device (joserfc) and a `requests` browser.

PostgreSQL: two `keyward serve` processes on one database behind one public URL (as behind a load balancer). The
browser signs in and follows its challenge's event stream on node A; the phone gets its token, lists the pending
login and approves it through node B; the stream on A must report PENDING then APPROVED within one second of B's
answer (the issue's requirement; the only timing assertion here). SQLite: the same with one node.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
import urllib.parse
import uuid

import pytest
import requests

from keyward_peer import CLIENT_ID, CLIENT_SECRET, HTTP_TIMEOUT, KeywardServer, ProofMaker, b64u_decode

PUBLIC_URL = "http://keyward.test"
REALM_PATH = "/realms/demo"


class Node(KeywardServer):
    """A server whose public URL is the shared one, not its own port."""

    def __init__(self, *args, public_url: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.public_url = public_url

    def command(self, port: int) -> list[str]:
        cmd = super().command(port)
        if self.public_url:
            cmd[cmd.index("--public-url") + 1] = self.public_url
        return cmd

    @property
    def public(self) -> str:
        return self.public_url or self.base


def admin(keyward_bin: str, node: Node, *args: str, password: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEYWARD_")}
    env["KEYWARD_PUBLIC_URL"] = node.public
    if node.backend.master_key:
        env["KEYWARD_MASTER_KEY"] = node.backend.master_key
    if password:
        env["KEYWARD_NEW_PASSWORD"] = password
    cmd = [keyward_bin, *args, "--data-dir", str(node.data_dir)]
    if node.backend.database_url:
        cmd += ["--database", node.backend.database_url]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


class Phone:
    """The original's demo device, as docs/PUSH-MFA-PROTOCOL.md §10 describes it: ES256 key, enrollment JWT, DPoP with sub + deviceId."""

    def __init__(self):
        self.maker = ProofMaker("ES256")
        self.device_id = str(uuid.uuid4())
        self.credential_id = str(uuid.uuid4())
        self.user_id = ""
        self.token = ""

    def enroll(self, node: Node, link: str) -> None:
        token = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["token"][0]
        claims = json.loads(b64u_decode(token.split(".")[1]))
        self.user_id = claims["sub"]
        jwk = {**self.maker.public_jwk, "alg": "ES256", "use": "sig"}
        device_jwt = self.maker.sign({"alg": "ES256", "typ": "JWT"}, {
            "enrollmentId": claims["enrollmentId"], "nonce": claims["nonce"], "sub": self.user_id,
            "deviceType": "android", "pushProviderId": "demo", "pushProviderType": "log",
            "credentialId": self.credential_id, "deviceId": self.device_id, "deviceLabel": "Python phone",
            "exp": int(time.time()) + 300, "cnf": {"jwk": jwk},
        })
        answer = requests.post(f"{node.base}{REALM_PATH}/push-mfa/enroll/complete", json={"token": device_jwt}, timeout=HTTP_TIMEOUT)
        assert answer.status_code == 200 and answer.json() == {"status": "enrolled"}, answer.text

    def proof(self, node: Node, method: str, path: str, access_token: str | None = None) -> str:
        return self.maker.proof(method, node.public + path, access_token, sub=self.user_id, deviceId=self.device_id)

    def get_token(self, node: Node) -> None:
        path = f"{REALM_PATH}/protocol/openid-connect/token"
        answer = requests.post(
            node.base + path, headers={"DPoP": self.proof(node, "POST", path)},
            data={"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}, timeout=HTTP_TIMEOUT,
        )
        assert answer.status_code == 200, answer.text
        self.token = answer.json()["access_token"]

    def call(self, node: Node, method: str, path: str, query: str = "", body: dict | None = None) -> requests.Response:
        headers = {"Authorization": f"DPoP {self.token}", "DPoP": self.proof(node, method, path, self.token)}
        return requests.request(method, node.base + path + query, headers=headers, json=body, timeout=HTTP_TIMEOUT)

    def approve(self, node: Node, cid: str) -> requests.Response:
        login_jwt = self.maker.sign({"alg": "ES256", "typ": "JWT"}, {
            "cid": cid, "credId": self.credential_id, "deviceId": self.device_id, "action": "approve", "exp": int(time.time()) + 120,
        })
        return self.call(node, "POST", f"{REALM_PATH}/push-mfa/login/challenges/{cid}/respond", body={"token": login_jwt})


def browser_waiting_page(node: Node, username: str, password: str) -> tuple[requests.Session, str, str]:
    session = requests.Session()
    login = session.get(f"{node.base}{REALM_PATH}/login", timeout=HTTP_TIMEOUT)
    csrf = re.search(r'name="csrf" value="([^"]+)"', login.text).group(1)
    signed_in = session.post(f"{node.base}{REALM_PATH}/login", data={"csrf": csrf, "username": username, "password": password},
                             allow_redirects=False, timeout=HTTP_TIMEOUT)
    assert signed_in.status_code == 303 and signed_in.headers["Location"].endswith("/login/push"), signed_in.text
    waiting = session.get(f"{node.base}{REALM_PATH}/login/push", timeout=HTTP_TIMEOUT)
    assert waiting.status_code == 200, waiting.text
    cid = re.search(r'name="challengeId" value="([^"]+)"', waiting.text).group(1)
    events = re.search(r'data-events-url="([^"]+)"', waiting.text).group(1).replace("&amp;", "&")
    return session, cid, events


class StreamWatcher(threading.Thread):
    """Reads an SSE stream until a status other than PENDING or the stream's end; notes every line, and each
    status with the monotonic time it arrived."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url = url
        self.lines: list[str] = []
        self.statuses: list[tuple[str, float]] = []
        self.pending_seen = threading.Event()

    def run(self) -> None:
        with requests.get(self.url, stream=True, timeout=HTTP_TIMEOUT, headers={"Accept": "text/event-stream"}) as response:
            assert response.headers["Content-Type"].startswith("text/event-stream")
            for line in response.iter_lines(decode_unicode=True):
                self.lines.append(line)
                if line and line.startswith("data: "):
                    status = json.loads(line[6:])["status"]
                    self.statuses.append((status, time.monotonic()))
                    if status == "PENDING":
                        self.pending_seen.set()
                    else:
                        return


def test_stream_on_one_node_sees_approval_through_another(backend, keyward_bin, tmp_path):
    shared = PUBLIC_URL if backend.name == "postgres" else None
    node_a = Node(keyward_bin, backend, tmp_path / "a", None, "node-a", public_url=shared).start()
    node_b = Node(keyward_bin, backend, tmp_path / "b", None, "node-b", public_url=shared).start() if backend.name == "postgres" else node_a
    try:
        username = f"sse-{uuid.uuid4().hex[:8]}"
        admin(keyward_bin, node_a, "users", "create", "--realm", "demo", username, password="pw-sse")
        link = admin(keyward_bin, node_a, "enrollment-link", "--realm", "demo", "--username", username).strip()
        phone = Phone()
        phone.enroll(node_a, link)

        _, cid, events = browser_waiting_page(node_a, username, "pw-sse")
        watcher = StreamWatcher(node_a.base + events)
        watcher.start()
        assert watcher.pending_seen.wait(HTTP_TIMEOUT), "the stream never reported PENDING"

        phone.get_token(node_b)
        pending = phone.call(node_b, "GET", f"{REALM_PATH}/push-mfa/login/pending", query=f"?userId={phone.user_id}")
        assert pending.status_code == 200, pending.text
        assert [c["cid"] for c in pending.json()["challenges"]] == [cid]
        approved = phone.approve(node_b, cid)
        answered_at = time.monotonic()
        assert approved.status_code == 200 and approved.json() == {"status": "approved"}, approved.text

        watcher.join(timeout=HTTP_TIMEOUT)
        assert [status for status, _ in watcher.statuses] == ["PENDING", "APPROVED"]
        delay = watcher.statuses[-1][1] - answered_at
        assert delay < 1.0, f"the stream on node A saw APPROVED {delay:.3f} s after node B answered"
    finally:
        if node_b is not node_a:
            node_b.terminate()
        node_a.terminate()


def test_stopping_node_ends_its_event_streams_with_a_retry(backend, keyward_bin, tmp_path):
    """SIGTERM does not wait out an open stream's lifetime (55 s): the stream gets its status again with a
    `retry:` hint and ends, so the browser reconnects (to another node behind a load balancer), and the node
    exits 0 within the shutdown limit."""
    node = Node(keyward_bin, backend, tmp_path / "stop", None, "node-stop").start()
    try:
        username = f"stop-{uuid.uuid4().hex[:8]}"
        admin(keyward_bin, node, "users", "create", "--realm", "demo", username, password="pw-stop")
        Phone().enroll(node, admin(keyward_bin, node, "enrollment-link", "--realm", "demo", "--username", username).strip())
        _, _, events = browser_waiting_page(node, username, "pw-stop")
        watcher = StreamWatcher(node.base + events)
        watcher.start()
        assert watcher.pending_seen.wait(HTTP_TIMEOUT), "the stream never reported PENDING"

        code = node.terminate()
        watcher.join(timeout=HTTP_TIMEOUT)
        assert not watcher.is_alive(), "the stream was still open after the node stopped"
        assert code == 0, f"exit code {code} after SIGTERM (None: still running after 10 s, killed)"
        assert [status for status, _ in watcher.statuses] == ["PENDING", "PENDING"], watcher.lines
        assert "retry: 3000" in watcher.lines, watcher.lines
        last = [line for line in watcher.lines if line.startswith("data: ")][-1]
        assert json.loads(last[6:])["retryAfterMillis"] == 3000, watcher.lines
    finally:
        node.terminate()
