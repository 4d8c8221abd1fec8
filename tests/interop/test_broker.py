"""The broker's relay in headless Chromium (issue 29): keyward-device broker prints the relay URL, the browser signs
in and allows the app, the address it is sent back to (the app's registered return address with #code=…&nonce=…)
goes to keyward-device, which takes the hand-off with its session key, verifies the delegation and exchanges it for
a DPoP-bound token. Then, over HTTP with a session key made here (joserfc): the hand-off refused to another key,
burnt by a wrong nonce, taken once; a relay to an unregistered address or with a malformed key is a page and never
a redirect; a relay client's blob over 64 KiB is refused. On the shared server of each engine, in a realm of its own.
"""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet

from keyward_peer import ProofMaker
from test_browser_journey import WAIT_SECONDS, browser, device_bin  # noqa: F401  (fixtures)
from test_host_tokens import admin
from test_oidc_relying_parties import PASSWORD, loopback  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def realm(server, keyward_bin):
    """A realm with alice and a broker app returning to the loopback (any port), which is not first-party: the
    person is asked."""
    name = "broker-" + uuid.uuid4().hex[:8]
    admin(server, keyward_bin, "realms", "create", name)
    done = subprocess.run(
        [keyward_bin, "users", "create", "--realm", name, "alice", "--data-dir", str(server.data_dir),
         *(["--database", server.backend.database_url] if server.backend.database_url else [])],
        env={**server.environment(), "KEYWARD_NEW_PASSWORD": PASSWORD}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    admin(server, keyward_bin, "clients", "create", "--realm", name, "broker-app", "--public", "--broker", "--redirect-uri", "http://127.0.0.1/broker")
    return name


def issuer(server, realm: str) -> str:
    return f"{server.base}/realms/{realm}"


def relay_in_browser(driver, url: str, return_prefix: str) -> str:
    """Opens the relay, signs in as alice when asked, allows the app, and returns the address the browser ends at."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    wait = WebDriverWait(driver, WAIT_SECONDS)
    if driver.find_elements(By.ID, "password"):
        driver.find_element(By.ID, "username").send_keys("alice")
        driver.find_element(By.ID, "password").send_keys(PASSWORD)
        driver.find_element(By.ID, "sign-in").click()
    wait.until(lambda d: d.find_elements(By.ID, "allow") or d.current_url.startswith(return_prefix))
    if not driver.current_url.startswith(return_prefix):
        assert "for 30 days" in driver.page_source, driver.page_source[-1500:]
        driver.find_element(By.ID, "allow").click()
    wait.until(lambda d: d.current_url.startswith(return_prefix))
    return driver.current_url


def fragment(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlparse(url).fragment).items()}


def relay_url(server, realm: str, key: ProofMaker, nonce: str, return_url: str, client_id: str = "broker-app") -> str:
    public_key = base64.urlsafe_b64encode(json.dumps(key.public_jwk, separators=(",", ":")).encode()).rstrip(b"=").decode()
    return f"{issuer(server, realm)}/auth/relay?" + urlencode({"client_id": client_id, "nonce": nonce, "publicKey": public_key, "return": return_url})


def take(server, realm: str, key: ProofMaker, code: str, nonce: str) -> requests.Response:
    url = f"{issuer(server, realm)}/v1/broker/handoff/take"
    return requests.post(url, json={"code": code, "nonce": nonce}, headers={"DPoP": key.proof("POST", url)}, timeout=30)


def test_keyward_device_gets_a_delegation_through_the_relay_and_tokens_bound_to_its_key(
        server, realm, browser, device_bin, loopback, tmp_path):  # noqa: F811
    return_url = f"http://127.0.0.1:{loopback}/broker"
    broker = subprocess.Popen(
        [device_bin, "broker", "--issuer", issuer(server, realm), "--client-id", "broker-app", "--return", return_url,
         "--state-dir", str(tmp_path / "device")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    url = broker.stdout.readline().strip()
    assert url.startswith(issuer(server, realm) + "/auth/relay?"), url
    answer = relay_in_browser(browser, url, return_url)
    assert "code" in fragment(answer) and "nonce" in fragment(answer), answer
    out, err = broker.communicate(answer + "\n", timeout=60)
    assert broker.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["token_type"] == "DPoP" and result["sub"], result

    # The delegation, read by a JOSE library Keyward did not write: the realm's signature, its type, the app, the key.
    keys = KeySet.import_key_set(requests.get(issuer(server, realm) + "/protocol/openid-connect/certs", timeout=30).json())
    decoded = jwt.decode(result["delegation"], keys, algorithms=["ES256"])
    assert decoded.header["typ"] == "keyward-delegation+jwt"
    jwt.JWTClaimsRegistry(iss={"essential": True, "value": issuer(server, realm)}, aud={"essential": True, "value": "broker-app"},
                          sub={"essential": True}, exp={"essential": True}).validate(decoded.claims)
    assert decoded.claims["exp"] - decoded.claims["iat"] == 30 * 86400
    assert decoded.claims["cnf"]["jwk"]["kty"] == "OKP", "keyward-device's session key is Ed25519 by default"


def test_a_handoff_is_refused_to_another_key_burnt_by_a_wrong_nonce_and_taken_once(server, realm, browser, loopback):  # noqa: F811
    return_url = f"http://127.0.0.1:{loopback}/broker"
    session_key, thief = ProofMaker("ES256"), ProofMaker("ES256")

    def fresh_code(nonce: str) -> str:
        answer = relay_in_browser(browser, relay_url(server, realm, session_key, nonce, return_url), return_url)
        assert fragment(answer)["nonce"] == nonce, answer
        return fragment(answer)["code"]

    code = fresh_code("nonce-" + uuid.uuid4().hex)
    nonce = fragment(browser.current_url)["nonce"]
    stolen = take(server, realm, thief, code, nonce)
    assert stolen.status_code == 400 and stolen.json()["error"] == "handoff_invalid", stolen.text
    taken = take(server, realm, session_key, code, nonce)
    assert taken.status_code == 200 and taken.json()["kind"] == "delegation", taken.text
    again = take(server, realm, session_key, code, nonce)
    assert again.status_code == 400 and again.json()["error"] == "handoff_invalid", "taken twice"

    burnt = fresh_code("nonce-" + uuid.uuid4().hex)
    right_nonce = fragment(browser.current_url)["nonce"]
    wrong = take(server, realm, session_key, burnt, "nonce-wrong-" + uuid.uuid4().hex)
    assert wrong.status_code == 400 and wrong.json()["error"] == "handoff_invalid"
    after = take(server, realm, session_key, burnt, right_nonce)
    assert after.status_code == 400 and after.json()["error"] == "handoff_invalid", "the wrong nonce burnt the code"


def test_a_bad_relay_is_a_page_and_never_a_redirect(server, realm, loopback):  # noqa: F811
    key = ProofMaker("ES256")
    return_url = f"http://127.0.0.1:{loopback}/broker"
    private = dict(key.key.as_dict(private=True))
    cases = {
        "unregistered return": relay_url(server, realm, key, "nonce-" + uuid.uuid4().hex, "https://evil.example/broker"),
        "return with a trailing slash": relay_url(server, realm, key, "nonce-" + uuid.uuid4().hex, return_url + "/"),
        "private key": relay_url(server, realm, key, "nonce-" + uuid.uuid4().hex, return_url).replace(
            "publicKey=", "publicKey=" + base64.urlsafe_b64encode(json.dumps(private).encode()).rstrip(b"=").decode() + "&x="),
        "key not JSON": relay_url(server, realm, key, "nonce-" + uuid.uuid4().hex, return_url).replace("publicKey=", "publicKey=bm90LWpzb24&x="),
        "short nonce": relay_url(server, realm, key, "short", return_url),
    }
    for why, url in cases.items():
        answer = requests.get(url, allow_redirects=False, timeout=30)
        assert answer.status_code == 400 and "Location" not in answer.headers, f"{why}: {answer.status_code}"
        assert "cannot be completed" in answer.text, why


def test_a_relay_clients_blob_over_64_kib_is_refused(server, realm, keyward_bin):
    created = admin(server, keyward_bin, "clients", "create", "--realm", realm, "relay-" + uuid.uuid4().hex[:6], "--broker").stdout
    client_id = created.split()[2]
    secret = next(line.split(": ", 1)[1].strip() for line in created.splitlines() if line.startswith("secret: "))
    relay_key, session_key = ProofMaker("ES256"), ProofMaker("ES256")
    token_url = f"{issuer(server, realm)}/protocol/openid-connect/token"
    token = requests.post(token_url, headers={"DPoP": relay_key.proof("POST", token_url)}, timeout=30, data={
        "grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}).json()["access_token"]
    url = f"{issuer(server, realm)}/v1/broker/handoff"

    def put(blob: str) -> requests.Response:
        return requests.post(url, json={"nonce": "n-" + uuid.uuid4().hex, "jkt": session_key.thumbprint, "blob": blob},
                             headers={"Authorization": f"DPoP {token}", "DPoP": relay_key.proof("POST", url, token)}, timeout=30)

    assert put("x" * (64 * 1024)).status_code == 201
    oversize = put("x" * (64 * 1024 + 1))
    assert oversize.status_code == 400 and oversize.json()["error"] == "invalid_request", oversize.text


def test_the_cli_shows_and_changes_a_realms_broker_settings_and_names_a_bad_one(server, realm, keyward_bin):
    shown = admin(server, keyward_bin, "broker", "settings", "--realm", realm).stdout.split()
    assert shown == ["delegationLifetimeDays=30", "handoffLifetimeSeconds=120"], shown
    changed = admin(server, keyward_bin, "broker", "settings", "--realm", realm, "delegationLifetimeDays=7").stdout.split()
    assert changed == ["delegationLifetimeDays=7", "handoffLifetimeSeconds=120"], changed
    refused = admin(server, keyward_bin, "broker", "settings", "--realm", realm, "handoffLifetimeSeconds=301", check=False)
    assert refused.returncode != 0 and "handoffLifetimeSeconds" in refused.stderr and "10 to 300" in refused.stderr, refused.stderr
    admin(server, keyward_bin, "broker", "settings", "--realm", realm, "delegationLifetimeDays=30")


def test_a_late_take_finds_nothing_and_an_address_whose_takes_keep_failing_is_refused(server, realm, browser, keyward_bin, loopback):  # noqa: F811
    """Last in this module: the failed takes it makes leave 127.0.0.1 refused on this server for ten minutes."""
    import time

    return_url = f"http://127.0.0.1:{loopback}/broker"
    key = ProofMaker("ES256")
    admin(server, keyward_bin, "broker", "settings", "--realm", realm, "handoffLifetimeSeconds=10")
    try:
        time.sleep(5.5)  # the relay's nodes read settings through a 5 s cache
        nonce = "nonce-" + uuid.uuid4().hex
        answer = relay_in_browser(browser, relay_url(server, realm, key, nonce, return_url), return_url)
        time.sleep(11)
        late = take(server, realm, key, fragment(answer)["code"], nonce)
        assert late.status_code == 400 and late.json()["error"] == "handoff_invalid", "taken after its 10 s"
    finally:
        admin(server, keyward_bin, "broker", "settings", "--realm", realm, "handoffLifetimeSeconds=120")

    statuses = [take(server, realm, key, "guess-" + uuid.uuid4().hex, "nonce-guess-0000").status_code for _ in range(25)]
    assert 429 in statuses, statuses
    limited = take(server, realm, key, "guess-" + uuid.uuid4().hex, "nonce-guess-0000")
    assert limited.status_code == 429 and limited.json()["error"] == "too_many_attempts", limited.text
