"""The waiting page's script when the server turns its event stream away (headless Chromium, Selenium).

A node at its SSE connection cap answers TOO_MANY_CONNECTIONS. Submitting the page's form on that status (as the
original's script does for any non-PENDING status) reloads the page, which opens a stream at once, is turned away
again, and so on: a reload loop against a node that is already busy. Keyward's script instead waits the
`retryAfterMillis` the server asks for and opens the stream again, and the page still moves on by itself when the
phone approves.
"""

from __future__ import annotations

import json
import re
import time

import requests

from keyward_peer import Backend, CommandLine, KeywardServer
from test_browser_journey import SCREENSHOTS, WAIT_SECONDS, browser, device_bin  # noqa: F401  (fixtures)

HOLD_SECONDS = 4.0  # how long the only stream slot stays taken while the browser waits


def _requests(server: KeywardServer, method: str, route: str) -> int:
    """How many finished requests of `method` on `route` the server's access log holds."""
    count = 0
    for line in server.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            count += entry.get("msg") == "request" and entry.get("method") == method and entry.get("route") == route
    return count


def test_busy_stream_is_retried_without_reloading_the_page(browser, device_bin, keyward_bin, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    server = KeywardServer(
        keyward_bin, Backend("sqlite", None, None), tmp_path / "busy", None, "busy",
        settings={"KEYWARD_SSE_MAX_CONNECTIONS": "1"},
    ).start()
    holder = None
    try:
        cli = CommandLine(server, keyward_bin, device_bin, tmp_path / "phone")
        device = cli.device
        # Two logins may wait at once: the stream holder's and the browser's.
        cli.settings("maxPendingChallenges=2", "userVerification=none")
        link = cli.admin("enrollment-link", "--realm", "demo", "--username", "test").strip()
        device("enroll", link, "--issuer", server.issuer, "--key-type", "EC")

        # Another login's page takes the node's only stream slot and keeps it open.
        other = requests.Session()
        login = other.get(f"{server.issuer}/login", timeout=30)
        csrf = re.search(r'name="csrf" value="([^"]+)"', login.text).group(1)
        waiting = other.post(f"{server.issuer}/login", data={"csrf": csrf, "username": "test", "password": "test"}, timeout=30)
        assert waiting.url.endswith("/login/push"), waiting.url
        events = re.search(r'data-events-url="([^"]+)"', waiting.text).group(1)
        holder = other.get(server.base + events, stream=True, timeout=30)
        lines = holder.iter_lines(decode_unicode=True)
        assert next(lines) == "event: status"
        assert json.loads(next(lines).removeprefix("data: "))["status"] == "PENDING"

        # The browser signs in and waits; its stream is turned away while the slot is held. (Stream requests are
        # logged when their headers go out.)
        events_route = "/realms/{realm}/push-mfa/login/challenges/{cid}/events"
        streams_before = _requests(server, "GET", events_route)
        browser.get(f"{server.issuer}/login")
        browser.find_element(By.ID, "username").send_keys("test")
        browser.find_element(By.ID, "password").send_keys("test")
        browser.find_element(By.ID, "sign-in").click()
        WebDriverWait(browser, WAIT_SECONDS).until(EC.url_contains("/login/push"))
        time.sleep(HOLD_SECONDS)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SCREENSHOTS / "busy-stream-waiting.png"))
        assert _requests(server, "POST", "/realms/{realm}/login/push") == 0, "the page reloaded itself on TOO_MANY_CONNECTIONS"
        turned_away = _requests(server, "GET", events_route) - streams_before
        assert 2 <= turned_away <= 1 + HOLD_SECONDS, f"{turned_away} stream attempts: expected one per retryAfterMillis (3 s)"

        # The other login is cancelled, which ends its stream and frees the slot; the phone approves the browser's.
        other.post(f"{server.issuer}/login/push", data={"csrf": csrf_of(waiting.text), "cancel": "true"}, timeout=30)
        holder.close()
        pending = json.loads(device("pending", "--json"))["challenges"]
        assert len(pending) == 1
        assert device("approve", pending[0]["cid"]).strip() == "approved"
        WebDriverWait(browser, WAIT_SECONDS).until(EC.url_matches(r".*/realms/demo/account$"))
        assert browser.find_element(By.ID, "username").text == "test"
        # The other login's cancel, and this page's one submission after the approval.
        assert _requests(server, "POST", "/realms/{realm}/login/push") == 2
    finally:
        if holder is not None:
            holder.close()
        server.terminate()


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)
