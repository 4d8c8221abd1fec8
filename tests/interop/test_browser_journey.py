"""The whole push-MFA journey in a real browser (headless Chromium driven by Selenium) and a phone on the
command line (keyward-device): sign in as `test`, enroll from the link on the page, log out, sign in again,
approve on the device with the number the page shows, and land signed in without touching the page.
Screenshots of every step go to .ci-artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from keyward_peer import Backend, CommandLine, KeywardServer

IN_CI = os.environ.get("CI", "").lower() == "true"
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / ".ci-artifacts" / "screenshots"
WAIT_SECONDS = 20  # a limit for the page to move on by itself, not a measurement


def _missing(reason: str):
    if IN_CI:
        pytest.fail(reason + " (CI=true requires it)")
    pytest.skip(reason)


@pytest.fixture
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed in the venv")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        _missing("Debian packages chromium and chromium-driver are not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1000,1200"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture
def device_bin(keyward_bin) -> str:
    candidate = Path(keyward_bin).with_name("keyward-device")
    if not candidate.is_file():
        _missing(f"no keyward-device next to {keyward_bin} (swift build --product keyward-device)")
    return str(candidate)


def test_enroll_then_approve_with_the_number_shown(browser, device_bin, keyward_bin, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    server = KeywardServer(keyward_bin, Backend("sqlite", None, None), tmp_path / "journey", None, "journey").start()
    try:
        cli = CommandLine(server, keyward_bin, device_bin, tmp_path / "phone")
        admin, device = cli.admin, cli.device

        SCREENSHOTS.mkdir(parents=True, exist_ok=True)

        def shot(name: str) -> None:
            browser.save_screenshot(str(SCREENSHOTS / f"journey-{name}.png"))

        admin("push-mfa", "settings", "--realm", "demo", "userVerification=number-match", "requirePushMfa=true")
        wait = WebDriverWait(browser, WAIT_SECONDS)

        def sign_in(step: str) -> None:
            browser.get(f"{server.issuer}/login")
            browser.find_element(By.ID, "username").send_keys("test")
            browser.find_element(By.ID, "password").send_keys("test")
            shot(step)
            browser.find_element(By.ID, "sign-in").click()

        # 1. Password, then the realm requires a device: the enrollment page with its QR code.
        sign_in("1-login")
        wait.until(EC.url_contains("/account/enroll"))
        qr = browser.find_element(By.CSS_SELECTOR, "#qr svg")
        assert qr.is_displayed()
        link = browser.find_element(By.ID, "enrollment-link").get_attribute("value")
        assert link.startswith("my-secure://enroll?token=")
        shot("2-enroll-qr")

        # 2. The phone enrolls from the link; the page follows over SSE and moves on by itself.
        device("enroll", link, "--issuer", server.issuer, "--key-type", "EC", "--device-label", "Journey phone")
        wait.until(EC.url_matches(r".*/realms/demo/account$"))
        assert "Journey phone" in browser.page_source
        shot("3-account-enrolled")

        # 3. Log out, sign in again: the waiting page shows the number to tap.
        browser.find_element(By.ID, "logout").click()
        wait.until(EC.url_contains("/login"))
        shot("4-logged-out")
        sign_in("5-login-again")
        wait.until(EC.url_contains("/login/push"))
        number = wait.until(EC.visibility_of_element_located((By.ID, "verification-code"))).text.strip()
        assert number.isdigit()
        shot("6-waiting-with-number")

        # 4. The phone sees the challenge with three choices, one of them the number on the page, and approves it.
        pending = json.loads(device("pending", "--json"))["challenges"]
        assert len(pending) == 1
        assert number in pending[0]["userVerification"]["numbers"]
        assert device("approve", pending[0]["cid"], "--answer", number).strip() == "approved"

        # 5. The browser lands signed in without a click.
        wait.until(EC.url_matches(r".*/realms/demo/account$"))
        assert browser.find_element(By.ID, "username").text == "test"
        shot("7-signed-in")
    finally:
        server.terminate()
