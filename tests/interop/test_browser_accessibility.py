"""Every page a person meets, in headless Chromium, checked by axe-core (the WCAG 2.0/2.1 level A and AA rules it
automates: contrast, labels, language, names, roles, ...) and by keyboard: Tab follows the form and the focus ring
stands out from the page (3:1, WCAG 2.1 1.4.11). The pages are reached the way a person reaches them, with a phone
on the command line (keyward-device) answering, so the outcome pages are the real ones. Screenshots of each page go
to .ci-artifacts/screenshots/a11y-*.png.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re

import requests

from keyward_peer import Backend, CommandLine, KeywardServer
from test_browser_journey import SCREENSHOTS, WAIT_SECONDS, _missing, browser, device_bin  # noqa: F401  (fixtures)

# axe-core's tags for the success criteria it automates at levels A and AA (its 3.1 release has no wcag21a rule).
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21aa"]


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def rgb(css: str) -> tuple[float, float, float]:
    values = [float(v) for v in re.findall(r"[\d.]+", css)[:3]]
    return values[0], values[1], values[2]


def test_every_page_passes_axe_and_keyboard_checks(browser, device_bin, keyward_bin, tmp_path):  # noqa: F811
    try:
        from axe_selenium_python import Axe
    except ImportError:
        _missing("axe-selenium-python (axe-core for Selenium) is not installed in the venv")
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    server = KeywardServer(keyward_bin, Backend("sqlite", None, None), tmp_path / "a11y", None, "a11y").start()
    try:
        cli = CommandLine(server, keyward_bin, device_bin, tmp_path / "phone")
        settings, device = cli.settings, cli.device

        wait = WebDriverWait(browser, WAIT_SECONDS)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        findings: dict[str, list[str]] = {}
        audited: list[str] = []

        def audit(name: str) -> None:
            wait.until(lambda _: browser.execute_script("return document.readyState") == "complete")
            Axe(browser).inject()
            # A rejected run (bad options, a broken page) answers with its error instead of timing out.
            result = browser.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "axe.run(document, arguments[0]).then(done, (error) => done({error: String(error)}));",
                {"runOnly": {"type": "tag", "values": WCAG_TAGS}},
            )
            assert "error" not in result, f"axe-core failed on {name}: {result.get('error')}"
            browser.save_screenshot(str(SCREENSHOTS / f"a11y-{name}.png"))
            audited.append(name)
            for violation in result["violations"]:
                nodes = "; ".join(node["html"][:120] for node in violation["nodes"][:3])
                findings.setdefault(name, []).append(f"{violation['id']} ({violation['impact']}): {nodes}")

        def heading() -> str:
            # The waiting pages move on by themselves: the element found can be gone before its text is read
            # (Chromium then reports a stale element, or, mid-navigation, a node that "does not belong to the
            # document"); the wait reads again.
            try:
                return browser.find_element(By.TAG_NAME, "h1").text
            except (NoSuchElementException, StaleElementReferenceException):
                return ""
            except WebDriverException as error:
                if "does not belong to the document" in str(error):
                    return ""
                raise

        def sign_in(password: str = "test") -> None:
            browser.get(f"{server.issuer}/login")
            browser.find_element(By.ID, "username").send_keys("test")
            browser.find_element(By.ID, "password").send_keys(password)
            browser.find_element(By.ID, "sign-in").click()

        def waiting_page() -> None:
            wait.until(EC.url_contains("/login/push"))
            wait.until(EC.presence_of_element_located((By.ID, "push-form")))

        def wait_for_heading(text: str) -> None:
            wait.until(lambda _: heading() == text)

        settings("userVerification=number-match")

        # The login page: focus starts in the username field, Tab walks the form in order, and the focus ring on
        # the button contrasts with the card behind it.
        browser.get(f"{server.issuer}/login")
        audit("login")
        order = [browser.switch_to.active_element.get_attribute("id")]
        for _ in range(2):
            browser.switch_to.active_element.send_keys(Keys.TAB)
            order.append(browser.switch_to.active_element.get_attribute("id"))
        assert order == ["username", "password", "sign-in"]
        ring = browser.execute_script(
            "const s = getComputedStyle(document.activeElement);"
            "return [s.outlineStyle, s.outlineWidth, s.outlineColor, getComputedStyle(document.getElementById('main')).backgroundColor];"
        )
        assert ring[0] != "none" and float(ring[1].rstrip("px")) >= 2, ring
        assert contrast(rgb(ring[2]), rgb(ring[3])) >= 3, f"focus ring {ring[2]} on {ring[3]}"

        sign_in(password="wrong")
        # The click starts a navigation: audit the answer to the post, not the form it replaces.
        wait.until(EC.presence_of_element_located((By.ID, "login-error")))
        audit("login-wrong-password")
        browser.get(f"{server.base}/realms/no-such-realm/login")
        audit("error-not-found")
        browser.get(f"{server.issuer}/login")
        browser.execute_script("document.querySelector('input[name=csrf]').value = 'forged';")
        browser.find_element(By.ID, "username").send_keys("test")
        browser.find_element(By.ID, "password").send_keys("test")
        browser.find_element(By.ID, "sign-in").click()
        wait_for_heading("This form has expired")
        audit("form-expired")

        # No device yet: the account page, then the enrollment page, which moves on when the phone enrolls.
        sign_in()
        wait.until(EC.url_matches(r".*/realms/demo/account$"))
        audit("account-no-device")
        browser.find_element(By.ID, "add-device").click()
        wait.until(EC.presence_of_element_located((By.ID, "enrollment-link")))
        audit("enroll")
        device("enroll", browser.find_element(By.ID, "enrollment-link").get_attribute("value"), "--issuer", server.issuer, "--key-type", "EC")
        wait.until(EC.url_matches(r".*/realms/demo/account$"))
        audit("account-with-device")

        # An app that is not first-party asks for consent; a refused authorization request is a page; a sign-out an
        # app asks for without an id_token_hint is confirmed first.
        cli.admin("clients", "create", "--realm", "demo", "partner", "--public", "--scope", "profile",
                  "--redirect-uri", "https://partner.example/cb")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(b"a11y-verifier-" + b"x" * 40).digest()).rstrip(b"=").decode()
        authorize = (f"{server.issuer}/protocol/openid-connect/auth?response_type=code&client_id=partner"
                     f"&redirect_uri=https%3A%2F%2Fpartner.example%2Fcb&scope=openid%20profile&state=s1"
                     f"&code_challenge={challenge}&code_challenge_method=S256")
        browser.get(authorize)
        wait.until(EC.presence_of_element_located((By.ID, "consent-form")))
        audit("consent")
        # The session signed in with a password before the phone: an app asking for a second factor gets the step-up page.
        cli.admin("clients", "create", "--realm", "demo", "stepper", "--public", "--first-party", "--scope", "profile",
                  "--redirect-uri", "https://partner.example/cb")
        browser.get(authorize.replace("client_id=partner", "client_id=stepper") + "&acr_values=urn%3Akeyward%3Aacr%3Amfa")
        wait.until(EC.presence_of_element_located((By.ID, "step-up-form")))
        audit("step-up")
        browser.get(authorize.replace("partner.example%2Fcb", "evil.example%2Fcb"))
        wait_for_heading("This sign-in request cannot be completed")
        audit("authorization-refused")
        browser.get(f"{server.issuer}/protocol/openid-connect/logout?client_id=partner")
        wait.until(EC.presence_of_element_located((By.ID, "logout-form")))
        audit("logout-confirm")
        browser.get(f"{server.issuer}/account")
        browser.find_element(By.ID, "logout").click()
        wait.until(EC.url_contains("notice=logged-out"))
        audit("logged-out")

        # The waiting page with the number, and the phone denying.
        sign_in()
        waiting_page()
        audit("waiting-number")
        cid = json.loads(device("pending", "--json"))["challenges"][0]["cid"]
        device("deny", cid)
        wait_for_heading("Login denied")
        audit("denied")

        # Another login is waiting already.
        other = requests.Session()
        csrf = re.search(r'name="csrf" value="([^"]+)"', other.get(f"{server.issuer}/login", timeout=30).text).group(1)
        other_page = other.post(f"{server.issuer}/login", data={"csrf": csrf, "username": "test", "password": "test"}, timeout=30)
        assert other_page.url.endswith("/login/push"), other_page.url
        sign_in()
        wait_for_heading("Approval already pending")
        audit("too-many-pending")
        other_csrf = re.search(r'name="csrf" value="([^"]+)"', other_page.text).group(1)
        other.post(f"{server.issuer}/login/push", data={"csrf": other_csrf, "cancel": "true"}, timeout=30)

        # Wait-challenge rate limiting: the second push in a row must wait, and Retry stays disabled meanwhile.
        settings("waitChallengeEnabled=true")
        browser.find_element(By.ID, "retry").click()
        waiting_page()
        browser.find_element(By.ID, "resend").click()
        wait_for_heading("Please wait")
        assert browser.find_element(By.ID, "retry").get_attribute("disabled") is not None
        audit("wait-required")

        # Expiry: the page follows the challenge until it expires and offers a retry.
        settings("waitChallengeEnabled=false", "loginChallengeTtlSeconds=10")
        sign_in()  # back on the login page: this browser's own pending push gives way
        waiting_page()
        WebDriverWait(browser, 30).until(lambda _: heading() == "Approval expired")
        audit("expired")

        # The phone's panic button.
        browser.find_element(By.ID, "retry").click()
        waiting_page()
        device("lockout")
        # The lockout ended the browser's session: the stream's outcome sends it back to the sign-in page.
        wait_for_heading("Sign in to demo")
        audit("locked-out")

        assert len(audited) == 18
        assert not findings, "axe-core found WCAG A/AA violations:\n" + "\n".join(
            f"{page}: {item}" for page, items in findings.items() for item in items
        )
    finally:
        server.terminate()
