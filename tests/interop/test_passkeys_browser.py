"""Passkeys in a real browser: headless Chromium with a virtual authenticator (the Chrome DevTools WebAuthn domain,
through Selenium) adds a passkey on the account page, signs out, signs in with it without a username, through
autofill (conditional mediation), and as the second step after a password; on both engines. Every registration and
assertion the browser sent is then checked by an independent verifier, py_webauthn, which must accept what Keyward
accepted. Screenshots go to .ci-artifacts/screenshots/.
"""

from __future__ import annotations

import base64
import json
import requests

from test_browser_journey import SCREENSHOTS, WAIT_SECONDS, _missing, browser  # noqa: F401  (fixture)
from test_host_tokens import admin

# Records each passkey request body and answer the page's script exchanges, so the test can hand the browser's own
# responses to py_webauthn afterwards. Installed before the page's script runs (CDP addScriptToEvaluateOnNewDocument).
RECORDER = """
(function () {
  var original = window.fetch;
  var append = function (entry) {
    var log = JSON.parse(sessionStorage.getItem("keyward-webauthn") || "[]");
    log.push(entry);
    sessionStorage.setItem("keyward-webauthn", JSON.stringify(log));
  };
  window.fetch = function (url, init) {
    var target = String(url);
    var answered = original.apply(this, arguments);
    if (target.indexOf("/webauthn/") < 0) { return answered; }
    // A ceremony's answer is sent just before the page moves on: record it now, not when the response comes.
    if (!/options$/.test(target)) { append({ url: target, request: init && init.body ? init.body : null }); return answered; }
    return answered.then(function (response) {
      return response.clone().text().then(function (text) { append({ url: target, answer: text }); return response; });
    });
  };
})();
"""


def add_virtual_authenticator(driver) -> None:
    """A platform authenticator that holds discoverable credentials and verifies the person (Chrome DevTools'
    WebAuthn domain), and the recorder of the page's passkey exchanges."""
    from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions

    options = VirtualAuthenticatorOptions()
    options.protocol = Protocol.CTAP2
    options.transport = Transport.INTERNAL
    options.has_resident_key = True
    options.has_user_verification = True
    options.is_user_verified = True
    options.is_user_consenting = True
    driver.add_virtual_authenticator(options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})


def test_add_a_passkey_then_sign_in_with_it_every_way(browser, passkey_server, backend):  # noqa: F811
    try:
        from axe_selenium_python import Axe
    except ImportError:
        _missing("axe-selenium-python (axe-core for Selenium) is not installed in the venv")
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    server = passkey_server
    add_virtual_authenticator(browser)
    wait = WebDriverWait(browser, WAIT_SECONDS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def shot(name: str) -> None:
        browser.save_screenshot(str(SCREENSHOTS / f"passkeys-{backend.name}-{name}.png"))

    violations: dict[str, list[str]] = {}

    def audit(name: str) -> None:
        """axe-core's WCAG 2.0/2.1 A and AA rules on the page as it stands (as test_browser_accessibility runs them)."""
        Axe(browser).inject()
        result = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, arguments[0]).then(done, (error) => done({error: String(error)}));",
            {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21aa"]}},
        )
        assert "error" not in result, f"axe-core failed on {name}: {result.get('error')}"
        for violation in result["violations"]:
            violations.setdefault(name, []).append(f"{violation['id']}: {violation['nodes'][0]['html'][:120]}")

    def session_amr() -> list[str]:
        browser.get(f"{server.issuer}/v1/auth/session")
        return json.loads(browser.find_element(By.TAG_NAME, "body").text)["amr"]

    def sign_out(then: str = "notice=logged-out") -> None:
        browser.get(f"{server.issuer}/account")
        logout = browser.find_element(By.ID, "logout")
        logout.click()
        # A check made while the page is being replaced may be answered "Node with given id does not belong to the
        # document" by chromedriver rather than as a stale element (it failed a CI run once); the next check sees it
        # stale.
        WebDriverWait(browser, WAIT_SECONDS, ignored_exceptions=[WebDriverException]).until(EC.staleness_of(logout))
        wait.until(EC.url_contains(then))

    # 1. Password, then add a passkey on the account page.
    browser.get(f"{server.issuer}/login")
    browser.find_element(By.ID, "username").send_keys("test")
    browser.find_element(By.ID, "password").send_keys("test")
    browser.find_element(By.ID, "sign-in").click()
    wait.until(EC.url_contains("/account"))
    browser.find_element(By.ID, "passkey-name").send_keys("Chromium")
    add = wait.until(EC.element_to_be_clickable((By.ID, "add-passkey")))
    add.click()
    wait.until(EC.url_contains("notice=passkey-added"))
    assert "Chromium" in browser.find_element(By.ID, "passkeys").text
    shot("1-added")
    audit("account-with-passkey")
    sign_out()

    # 2. Without a username: the button asks for any passkey of this site.
    button = wait.until(EC.element_to_be_clickable((By.ID, "passkey-sign-in")))
    shot("2-sign-in-page")
    audit("sign-in-with-passkey-button")
    button.click()
    wait.until(EC.url_contains("/account"))
    assert session_amr() == ["hwk", "user"]
    shot("3-signed-in-with-passkey")
    sign_out()

    # 3. The second step after a password.
    browser.find_element(By.ID, "username").send_keys("test")
    browser.find_element(By.ID, "password").send_keys("test")
    browser.find_element(By.ID, "sign-in").click()
    wait.until(EC.url_contains("/login/passkey"))
    shot("4-second-step")
    audit("passkey-second-step")
    wait.until(EC.element_to_be_clickable((By.ID, "passkey-confirm"))).click()
    wait.until(EC.url_contains("/account"))
    assert session_amr() == ["pwd", "hwk", "user"]
    shot("5-signed-in-after-second-step")

    # 4. Autofill: once the realm prefers passkeys, the sign-in page asks the browser in the background
    #    (conditional mediation). The virtual authenticator answers at once, as a person picking the passkey the
    #    browser offers in the username field would: signing out lands on the sign-in page, which signs in again.
    admin(server, server.binary, "realms", "update", "demo", "--passkeys", "preferred")

    def prefers_passkeys(_) -> bool:
        # Asked outside the browser: a sign-in page it loaded would sign it in again in the background.
        return 'data-conditional="1"' in requests.get(f"{server.issuer}/login", timeout=5).text

    WebDriverWait(browser, WAIT_SECONDS, poll_frequency=1).until(prefers_passkeys)  # nodes read settings within 5 s
    sign_out(then="/realms/demo/account")
    assert session_amr() == ["hwk", "user"]
    shot("6-signed-in-through-autofill")

    assert not violations, violations

    # 5. The independent verifier agrees with every answer Keyward accepted.
    log = json.loads(browser.execute_script("return sessionStorage.getItem('keyward-webauthn') || '[]'"))
    checked = verify_with_py_webauthn(log, rp_id="localhost", origin=server.base)
    assert checked == {"registration": 1, "authentication": 3}, checked


def _bytes(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_with_py_webauthn(log: list[dict], rp_id: str, origin: str) -> dict[str, int]:
    """Replays the browser's exchanges through py_webauthn: each registration and assertion Keyward accepted must
    verify there too, with the challenge of the options that came before it."""
    try:
        import webauthn
    except ImportError:
        _missing("py_webauthn (PyPI webauthn) is not installed in the venv")
    counts = {"registration": 0, "authentication": 0}
    options = None
    public_key = None
    sign_count = 0
    for entry in log:
        if entry["url"].endswith("/options"):
            options = json.loads(entry["answer"])
            continue
        credential = json.loads(entry["request"])
        if entry["url"].endswith("/registration"):
            verified = webauthn.verify_registration_response(
                credential=credential, expected_challenge=_bytes(options["challenge"]), expected_rp_id=rp_id, expected_origin=origin,
                require_user_verification=True,
            )
            public_key, sign_count = verified.credential_public_key, verified.sign_count
            counts["registration"] += 1
        else:
            verified = webauthn.verify_authentication_response(
                credential=credential, expected_challenge=_bytes(options["challenge"]), expected_rp_id=rp_id, expected_origin=origin,
                credential_public_key=public_key, credential_current_sign_count=sign_count, require_user_verification=True,
            )
            sign_count = verified.new_sign_count
            counts["authentication"] += 1
    return counts
