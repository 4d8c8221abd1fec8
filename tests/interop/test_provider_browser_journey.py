"""Sign-up through an identity provider, then push MFA, in a real browser (issue 17, first test that must exist).

A real OIDC provider plays Google: oidc-provider-mock behind tests/idp's strict wrapper (PKCE S256 and nonce
required), on 127.0.0.1, registered with `keyward providers add`. Headless Chromium (Selenium) does what a person
does: Keyward's sign-in page → the provider's button → the provider's login form → back to Keyward, where the
account page names a new user with a generated `<alias>-…` username. The person enrolls a phone from the account
page (keyward-device plays the phone), logs out and signs in through the provider again: this time the push step
follows, the page shows a number, the phone approves with it, and the browser lands on the account page signed in
as the same user (same username and user id; `amr` fed then mfa). Screenshots of every step go to
.ci-artifacts/screenshots/provider-journey-*.png. SQLite and PostgreSQL (the `server` fixture).
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import requests

from keyward_peer import CommandLine
from test_browser_journey import SCREENSHOTS, WAIT_SECONDS, browser, device_bin  # noqa: F401  (fixtures)
from test_host_tokens import admin

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "idp"))
from strict_oidc_provider import StrictOIDCProvider, User  # noqa: E402

# The subject and address are unique to this run: the PostgreSQL database can be reused between runs, and accounts
# are matched by e-mail address.
RUN = uuid.uuid4().hex[:8]
SUBJECT = f"journey-{RUN}"
EMAIL = f"journey-{RUN}@example.test"
DISPLAY_NAME = "Google (local double)"
PHONE_LABEL = "Provider journey phone"


@pytest.fixture(scope="module")
def idp():
    users = [User(sub=SUBJECT, claims={"email": EMAIL, "email_verified": True, "name": "Journey Person"})]
    with StrictOIDCProvider(users=users).serve() as provider:
        yield provider


@pytest.fixture(scope="module")
def provider_alias(server, keyward_bin, idp, tmp_path_factory) -> str:
    alias = f"gj-{uuid.uuid4().hex[:6]}"
    secret = tmp_path_factory.mktemp("journey-secret") / "client-secret"
    secret.write_text("journey-client-secret\n")
    added = admin(server, keyward_bin, "providers", "add", "--realm", "demo", alias, "--type", "oidc", "--issuer", idp.base_url,
                  "--client-id", "keyward", "--client-secret-file", str(secret), "--display-name", DISPLAY_NAME)
    assert f"/realms/demo/v1/auth/{alias}/callback" in added.stdout, added.stdout
    return alias


@pytest.fixture
def number_match(server, keyward_bin):
    """The realm's push asks for number matching during the test; the previous setting comes back afterwards, since
    the server (and, on PostgreSQL, the database) is shared with other tests."""
    shown = admin(server, keyward_bin, "push-mfa", "settings", "--realm", "demo").stdout
    before = re.search(r"^userVerification=(\S+)$", shown, re.MULTILINE)
    assert before, shown
    admin(server, keyward_bin, "push-mfa", "settings", "--realm", "demo", "userVerification=number-match")
    yield
    admin(server, keyward_bin, "push-mfa", "settings", "--realm", "demo", f"userVerification={before.group(1)}")


def session_of(server, driver) -> requests.Response:
    """Keyward's session JSON for the browser's cookies (as a single-page app on the realm's origin reads it)."""
    cookies = {cookie["name"]: cookie["value"] for cookie in driver.get_cookies()}
    return requests.get(f"{server.issuer}/v1/auth/session", cookies=cookies, timeout=30)


def test_a_person_signs_up_through_the_provider_then_signs_in_again_with_the_phone_as_the_same_user(
        server, keyward_bin, device_bin, browser, idp, provider_alias, number_match, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    # The mock's pages link a stylesheet on a CDN: blocked, so the journey depends on nothing beyond 127.0.0.1.
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["https://cdn.jsdelivr.net/*"]})
    wait = WebDriverWait(browser, WAIT_SECONDS)
    device = CommandLine(server, keyward_bin, device_bin, tmp_path / "phone").device
    account_url = re.escape(f"{server.issuer}/account") + "$"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def shot(name: str) -> None:
        browser.save_screenshot(str(SCREENSHOTS / f"provider-journey-{server.backend.name}-{name}.png"))

    def through_the_provider(step: int, suffix: str = "") -> None:
        """From Keyward's sign-in page, the provider's button, then the person signs in on the provider's form."""
        browser.get(f"{server.issuer}/login")
        button = wait.until(EC.element_to_be_clickable((By.ID, f"provider-{provider_alias}")))
        assert button.text.strip() == DISPLAY_NAME
        shot(f"{step:02d}-sign-in-page{suffix}")
        button.click()

        wait.until(EC.url_contains(f"{idp.base_url}/oauth2/authorize"))
        query = parse_qs(urlparse(browser.current_url).query)
        assert query["code_challenge_method"] == ["S256"] and query["nonce"] and query["state"], query
        subject = wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "input[name='sub']")))
        subject.send_keys(SUBJECT)
        shot(f"{step + 1:02d}-provider-login{suffix}")
        subject.find_element(By.XPATH, "ancestor::form//button[@type='submit']").click()

    # 1. Sign-up: provider button, the provider's login, back to Keyward's account page naming a new generated user.
    through_the_provider(1)
    wait.until(EC.url_matches(account_url))
    username = browser.find_element(By.ID, "username").text.strip()
    assert re.fullmatch(rf"{re.escape(provider_alias)}-[a-z0-9_-]+", username), username
    assert EMAIL in browser.find_element(By.ID, "identities").text
    assert browser.find_element(By.ID, "no-devices").is_displayed(), "a new user has no phone yet"
    first = session_of(server, browser)
    assert first.status_code == 200, first.text
    assert first.json()["user"]["username"] == username and first.json()["amr"] == ["fed"], first.json()
    user_id = first.json()["user"]["id"]
    shot("03-account-new-user")

    # 2. The phone enrolls from the account page's link; the page follows and returns to the account by itself.
    browser.find_element(By.ID, "add-device").click()
    wait.until(EC.url_contains("/account/enroll"))
    link = browser.find_element(By.ID, "enrollment-link").get_attribute("value")
    assert link.startswith("my-secure://enroll?token="), link
    shot("04-enroll-qr")
    device("enroll", link, "--issuer", server.issuer, "--key-type", "EC", "--device-label", PHONE_LABEL)
    wait.until(EC.url_matches(account_url))
    assert PHONE_LABEL in browser.page_source
    assert not browser.find_elements(By.ID, "no-devices")
    assert browser.find_element(By.ID, "username").text.strip() == username
    shot("05-account-enrolled")

    # 3. Log out: the browser is signed in no more.
    browser.find_element(By.ID, "logout").click()
    wait.until(EC.url_contains("/realms/demo/login"))
    assert session_of(server, browser).status_code == 401
    shot("06-logged-out")

    # 4. The provider again; this time the first factor alone does not sign in: the push step shows a number.
    through_the_provider(7, "-again")
    wait.until(EC.url_contains("/realms/demo/login/push"))
    number = wait.until(EC.visibility_of_element_located((By.ID, "verification-code"))).text.strip()
    assert number.isdigit(), number
    waiting = session_of(server, browser)
    assert waiting.status_code == 401, "signed in before the phone approved: " + waiting.text
    shot("09-waiting-with-number")

    # 5. The phone sees the challenge, one of its choices the number on the page, and approves with that number.
    pending = json.loads(device("pending", "--json"))["challenges"]
    assert len(pending) == 1, pending
    assert number in pending[0]["userVerification"]["numbers"], pending
    assert device("approve", pending[0]["cid"], "--answer", number).strip() == "approved"

    # 6. The browser lands on the account page by itself, the same user as at sign-up, now with both factors.
    wait.until(EC.url_matches(account_url))
    assert browser.find_element(By.ID, "username").text.strip() == username
    second = session_of(server, browser)
    assert second.status_code == 200, second.text
    assert second.json()["user"] == {"id": user_id, "username": username}, second.json()
    assert second.json()["amr"] == ["fed", "mfa"], second.json()
    shot("10-signed-in-with-phone")
