"""`keyward serve --demo` as a newcomer sees it, on a terminal (a pseudo-terminal here): human log lines instead of
JSON, and a banner naming the sign-in page, the account page and the keyward-device commands, which are run here
as printed (with the keyward-device binary in place of `swift run … keyward-device`) through enroll, pending and
approve.
"""

from __future__ import annotations

import os
import pty
import re
import shlex
import signal
import subprocess
import threading
import time

import requests

from keyward_peer import free_port
from test_browser_journey import device_bin  # noqa: F401  (fixture)
from test_cli import _sign_in

WAIT_SECONDS = 60.0


class Terminal:
    """The master side of a pseudo-terminal, drained by a thread so the server never blocks on a full buffer."""

    def __init__(self, master: int):
        self.master = master
        self.text = ""
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO once the last writer is gone
                chunk = b""
            with self.changed:
                if not chunk:
                    self.changed.notify_all()
                    return
                self.text += chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
                self.changed.notify_all()

    def wait_for(self, pattern: str) -> re.Match:
        deadline = time.monotonic() + WAIT_SECONDS
        with self.changed:
            while True:
                found = re.search(pattern, self.text, re.MULTILINE)
                if found:
                    return found
                left = deadline - time.monotonic()
                assert left > 0 and self.thread.is_alive(), f"no match for {pattern!r} in:\n{self.text}"
                self.changed.wait(left)


def test_demo_on_a_terminal_logs_text_and_its_banner_commands_work(keyward_bin, device_bin, tmp_path):  # noqa: F811
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data = tmp_path / "data"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KEYWARD_") and k != "NO_COLOR"}
    master, follower = pty.openpty()
    server = subprocess.Popen(
        [keyward_bin, "serve", "--demo", "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data)],
        stdin=follower, stdout=follower, stderr=follower, env=environment, cwd=tmp_path, start_new_session=True,
    )
    os.close(follower)
    terminal = Terminal(master)
    try:
        # The banner: the pages a person opens first, then the phone.
        terminal.wait_for(r"^  health: ")
        assert re.search(rf"^  sign in: +{re.escape(base)}/realms/demo/login +\(user test, password test\)$", terminal.text, re.MULTILINE), terminal.text
        assert re.search(rf"^  account: +{re.escape(base)}/realms/demo/account ", terminal.text, re.MULTILINE), terminal.text
        for endpoint in ("/.well-known/openid-configuration", "/protocol/openid-connect/certs", "/protocol/openid-connect/token", "/v1/whoami"):
            assert f"{base}/realms/demo{endpoint}" in terminal.text

        # Human log lines, and no JSON ones.
        assert requests.get(f"{base}/healthz", timeout=30).status_code == 200
        request_line = terminal.wait_for(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info +request .*$").group(0)
        assert re.search(r" method=GET .*request_id=\w+ route=/healthz status=200", request_line), request_line
        assert "\x1b" not in request_line, "info is not coloured"
        assert not [line for line in terminal.text.splitlines() if line.startswith("{")], terminal.text

        # The phone, as the banner says to run it.
        secret = re.search(r"export KEYWARD_CLIENT_SECRET=(\S+)$", terminal.text, re.MULTILINE).group(1)
        commands = {}
        for line in terminal.text.splitlines():
            words = shlex.split(line.split("#")[0]) if line.startswith(" ") and "keyward-device " in line else []
            if words:
                words = words[words.index("keyward-device") + 1:]
                commands[words[0]] = words
        assert set(commands) == {"enroll", "pending", "approve"}, terminal.text
        phone_env = {**environment, "KEYWARD_CLIENT_SECRET": secret}

        def phone(command: str, **replace: str) -> str:
            words = [replace.get(word, word) for word in commands[command]]
            done = subprocess.run([device_bin, *words], env=phone_env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, f"keyward-device {' '.join(words)}: {done.stderr}"
            return done.stdout

        link = subprocess.run(
            [keyward_bin, "enrollment-link", "--realm", "demo", "--username", "test", "--data-dir", str(data)],
            env={**environment, "KEYWARD_PUBLIC_URL": base}, capture_output=True, text=True, timeout=60, check=True,
        ).stdout.strip()
        assert "enrolled" in phone("enroll", **{"<enrollment link>": link})
        browser, status = _sign_in(base, "demo", "test", "test")
        assert status in (302, 303), status
        assert browser.get(f"{base}/realms/demo/login/push", timeout=30).status_code == 200  # the waiting page sends the push
        waiting = phone("pending").splitlines()
        assert len(waiting) == 1 and "user=test" in waiting[0], waiting
        assert phone("approve", **{"<cid>": waiting[0].split("\t")[0]}).strip() == "approved"
        signed_in = browser.get(f"{base}/realms/demo/login/push", allow_redirects=False, timeout=30)
        assert signed_in.headers.get("Location", "").endswith("/realms/demo/account"), (signed_in.status_code, signed_in.headers)
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            code = server.wait(timeout=30)
        terminal.thread.join(timeout=10)
        os.close(master)
    assert code == 0, f"exit {code} after SIGTERM\n{terminal.text}"
    assert re.search(r"^\S+Z info +stopped serving", terminal.text, re.MULTILINE), terminal.text
