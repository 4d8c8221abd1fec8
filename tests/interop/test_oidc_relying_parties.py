"""OpenID Connect relying parties Keyward did not write sign a person in against it (issue 28): requests-oauth2client
with the authorization code flow, PKCE, DPoP (the code bound with dpop_jkt) and a pushed request; Authlib's
OAuth2Session with the code flow and PKCE; headless Chromium does the browser part (the sign-in page), and every
id_token is verified with joserfc against the realm's JWKS. On the shared server of each engine (SQLite and
PostgreSQL), in a realm of the test's own.
"""

from __future__ import annotations

import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet

from test_browser_journey import WAIT_SECONDS, browser, device_bin  # noqa: F401  (fixtures)
from test_host_tokens import admin

PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="module")
def realm(server, keyward_bin):
    """A realm of this module's own with a user and two apps: a DPoP-bound one (requests-oauth2client) and one
    without DPoP (Authlib), both first-party, both on the loopback redirect with any port (RFC 8252 §7.3)."""
    name = "rp-" + uuid.uuid4().hex[:8]
    admin(server, keyward_bin, "realms", "create", name)
    done = __import__("subprocess").run(
        [keyward_bin, "users", "create", "--realm", name, "alice", "--data-dir", str(server.data_dir),
         *(["--database", server.backend.database_url] if server.backend.database_url else [])],
        env={**server.environment(), "KEYWARD_NEW_PASSWORD": PASSWORD}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    admin(server, keyward_bin, "clients", "create", "--realm", name, "dpop-app", "--public", "--first-party", "--scope", "profile",
          "--redirect-uri", "http://127.0.0.1/cb", "--post-logout-redirect-uri", "http://127.0.0.1/bye")
    admin(server, keyward_bin, "clients", "create", "--realm", name, "bearer-app", "--public", "--first-party", "--allow-bearer",
          "--redirect-uri", "http://127.0.0.1/callback")
    return name


def phone(server, keyward_bin: str, device_bin: str, realm: str, directory):
    """keyward-device as a phone of `realm`: the realm gets the confidential client phones take their tokens from."""
    import subprocess

    created = admin(server, keyward_bin, "clients", "create", "--realm", realm, "push-device-client").stdout
    secret = next(line.split(": ", 1)[1].strip() for line in created.splitlines() if line.startswith("secret: "))

    def run(*args: str) -> str:
        done = subprocess.run([device_bin, *args, "--state-dir", str(directory), f"--client-secret={secret}"],  # may begin with "-"
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"keyward-device {args[0]}: {done.stderr}"
        return done.stdout
    return run


def issuer(server, realm: str) -> str:
    return f"{server.base}/realms/{realm}"


@pytest.fixture
def loopback():
    """The app's loopback redirect listener (RFC 8252 §7.3): answers the browser with a page, on a port of its own."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            body = b"<!doctype html><title>Signed in</title><p>You can close this window."
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()


def sign_in_in_browser(driver, url: str, redirect_prefix: str) -> str:
    """Opens the authorization URL, signs in as alice when the sign-in page shows (a signed-in browser goes straight
    back), and returns the URL the browser was sent back to."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    if not driver.current_url.startswith(redirect_prefix):
        driver.find_element(By.ID, "username").send_keys("alice")
        driver.find_element(By.ID, "password").send_keys(PASSWORD)
        driver.find_element(By.ID, "sign-in").click()
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: d.current_url.startswith(redirect_prefix))
    return driver.current_url


def verified_id_token(server, realm: str, token: str, client_id: str, nonce: str) -> dict:
    keys = KeySet.import_key_set(requests.get(issuer(server, realm) + "/protocol/openid-connect/certs", timeout=30).json())
    decoded = jwt.decode(token, keys, algorithms=["ES256"])
    claims = jwt.JWTClaimsRegistry(
        iss={"essential": True, "value": issuer(server, realm)}, aud={"essential": True, "value": client_id},
        nonce={"essential": True, "value": nonce}, sub={"essential": True}, exp={"essential": True},
    )
    claims.validate(decoded.claims)
    return decoded.claims


def test_requests_oauth2client_signs_in_with_pkce_and_dpop_then_refreshes(server, realm, browser, loopback):  # noqa: F811
    from requests_oauth2client import OAuth2Client

    client = OAuth2Client.from_discovery_endpoint(
        issuer(server, realm) + "/.well-known/openid-configuration", client_id="dpop-app", issuer=issuer(server, realm), testing=True,  # testing: http on the loopback
    )
    for pushed in (False, True):
        azr = client.authorization_request(
            scope="openid profile", redirect_uri=f"http://127.0.0.1:{loopback}/cb", dpop=True,
        )
        assert azr.dpop_jkt, "the code is bound to the client's DPoP key (RFC 9449 §10)"
        url = str(azr.uri)
        if pushed:
            url = str(client.pushed_authorization_request(azr).uri)
            assert "request_uri=" in url and "code_challenge" not in url
        answer = sign_in_in_browser(browser, url, f"http://127.0.0.1:{loopback}/cb")
        response = azr.validate_callback(answer)  # state and RFC 9207 iss
        token = client.authorization_code(response, dpop=True, validate=False)
        assert token.token_type.lower() == "dpop", token
        claims = verified_id_token(server, realm, str(token.id_token), "dpop-app", azr.nonce)
        assert claims["amr"] == ["pwd"] and claims["acr"] == "urn:keyward:acr:1fa", claims
        assert parse_qs(urlparse(answer).query)["iss"] == [issuer(server, realm)]

        # userinfo with the DPoP-bound token: requests-oauth2client signs each call with the token's key.
        info = requests.get(issuer(server, realm) + "/protocol/openid-connect/userinfo", auth=token, timeout=30)
        assert info.status_code == 200, info.text
        assert info.json()["preferred_username"] == "alice"

        refreshed = client.refresh_token(token, dpop=True, dpop_key=token.dpop_key)
        assert refreshed.refresh_token and refreshed.refresh_token != token.refresh_token, "refresh tokens rotate"
        replay = requests.post(client.token_endpoint, data={
            "grant_type": "refresh_token", "refresh_token": str(token.refresh_token), "client_id": "dpop-app",
        }, headers={"DPoP": str(token.dpop_key.proof(htm="POST", htu=client.token_endpoint))}, timeout=30)
        assert replay.status_code == 400 and replay.json().get("reason") == "refresh_token_reused", replay.text
        # The reuse revoked the family: the current token is refused too.
        revoked = requests.post(client.token_endpoint, data={
            "grant_type": "refresh_token", "refresh_token": str(refreshed.refresh_token), "client_id": "dpop-app",
        }, headers={"DPoP": str(token.dpop_key.proof(htm="POST", htu=client.token_endpoint))}, timeout=30)
        assert revoked.status_code == 400 and revoked.json().get("reason") == "refresh_token_revoked", revoked.text


def test_authlib_client_signs_in_with_pkce_and_a_code_used_twice_is_refused(server, realm, browser, loopback):  # noqa: F811
    from authlib.integrations.requests_client import OAuth2Session
    from authlib.common.security import generate_token

    meta = requests.get(issuer(server, realm) + "/.well-known/openid-configuration", timeout=30).json()
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["authorization_response_iss_parameter_supported"] is True
    session = OAuth2Session(
        "bearer-app", redirect_uri=f"http://127.0.0.1:{loopback}/callback", scope="openid",
        code_challenge_method="S256", token_endpoint_auth_method="none",
    )
    verifier, nonce = generate_token(48), generate_token(20)
    url, state = session.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
    answer = sign_in_in_browser(browser, url, f"http://127.0.0.1:{loopback}/callback")
    query = parse_qs(urlparse(answer).query)
    assert query["state"] == [state] and query["iss"] == [issuer(server, realm)]
    token = session.fetch_token(meta["token_endpoint"], authorization_response=answer, code_verifier=verifier)
    assert token["token_type"] == "Bearer"
    claims = verified_id_token(server, realm, token["id_token"], "bearer-app", nonce)
    assert claims["auth_time"] <= time.time() + 5

    again = requests.post(meta["token_endpoint"], data={
        "grant_type": "authorization_code", "code": query["code"][0], "code_verifier": verifier,
        "redirect_uri": f"http://127.0.0.1:{loopback}/callback", "client_id": "bearer-app",
    }, timeout=30)
    assert again.status_code == 400 and again.json()["reason"] == "code_reused", again.text
    after = requests.post(meta["token_endpoint"], data={
        "grant_type": "refresh_token", "refresh_token": token["refresh_token"], "client_id": "bearer-app",
    }, timeout=30)
    assert after.status_code == 400 and after.json()["reason"] == "refresh_token_revoked", "the first use's tokens are revoked"
    browser.delete_all_cookies()


def test_an_app_signs_a_person_in_through_the_provider_then_with_the_phone(
        server, keyward_bin, device_bin, browser, loopback, tmp_path):  # noqa: F811
    """The relying party (requests-oauth2client) asks for the provider directly (kc_idp_hint): the person signs up
    through it; then, with a phone enrolled from the account page, the app asks for a fresh sign-in with a second
    factor, the push step shows a number, keyward-device approves with it, and the id_token says fed and mfa."""
    import json
    import re
    import sys
    from pathlib import Path

    from requests_oauth2client import OAuth2Client
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "idp"))
    from strict_oidc_provider import StrictOIDCProvider, User

    run = uuid.uuid4().hex[:8]
    subject, realm = f"rp-{run}", "rp-push-" + run
    admin(server, keyward_bin, "realms", "create", realm)
    admin(server, keyward_bin, "push-mfa", "settings", "--realm", realm, "userVerification=number-match")
    admin(server, keyward_bin, "clients", "create", "--realm", realm, "app", "--public", "--first-party", "--redirect-uri", "http://127.0.0.1/cb")
    wait = WebDriverWait(browser, WAIT_SECONDS)
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["https://cdn.jsdelivr.net/*"]})
    users = [User(sub=subject, claims={"email": f"{subject}@example.test", "email_verified": True, "name": "App Person"})]
    with StrictOIDCProvider(users=users).serve() as idp:
        secret = tmp_path / "client-secret"
        secret.write_text("rp-client-secret\n")
        admin(server, keyward_bin, "providers", "add", "--realm", realm, "idp", "--type", "oidc", "--issuer", idp.base_url,
              "--client-id", "keyward", "--client-secret-file", str(secret))
        client = OAuth2Client.from_discovery_endpoint(
            issuer(server, realm) + "/.well-known/openid-configuration", client_id="app", issuer=issuer(server, realm), testing=True,
        )
        redirect = f"http://127.0.0.1:{loopback}/cb"

        def through_the_provider(then: str) -> None:
            """The provider's login form when it shows one (a provider with its own session may answer at once)."""
            wait.until(lambda d: d.current_url.startswith(f"{idp.base_url}/oauth2/authorize") or then in d.current_url)
            if then in browser.current_url:
                return
            field = wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "input[name='sub']")))
            field.send_keys(subject)
            field.find_element(By.XPATH, "ancestor::form//button[@type='submit']").click()

        # 1. Sign-up through the provider, straight from the app's request.
        azr = client.authorization_request(scope="openid", redirect_uri=redirect, dpop=True, kc_idp_hint="idp")
        browser.get(str(azr.uri))
        through_the_provider(then=redirect)
        wait.until(lambda d: d.current_url.startswith(redirect))
        token = client.authorization_code(azr.validate_callback(browser.current_url), dpop=True, validate=False)
        first = verified_id_token(server, realm, str(token.id_token), "app", azr.nonce)
        assert first["amr"] == ["fed"], first

        # 2. A phone, enrolled from the account page.
        device = phone(server, keyward_bin, device_bin, realm, tmp_path / "phone")
        browser.get(f"{issuer(server, realm)}/account/enroll")
        link = wait.until(EC.presence_of_element_located((By.ID, "enrollment-link"))).get_attribute("value")
        device("enroll", link, "--issuer", issuer(server, realm), "--key-type", "EC")
        wait.until(EC.url_matches(re.escape(f"{issuer(server, realm)}/account") + "$"))

        # 3. The app asks for a fresh sign-in with a second factor: the provider, then the phone with the number.
        azr = client.authorization_request(
            scope="openid", redirect_uri=redirect, dpop=True, kc_idp_hint="idp", prompt="login", acr_values="urn:keyward:acr:mfa",
        )
        browser.get(str(azr.uri))
        through_the_provider(then=f"/realms/{realm}/login/push")
        wait.until(EC.url_contains(f"/realms/{realm}/login/push"))
        number = wait.until(EC.visibility_of_element_located((By.ID, "verification-code"))).text.strip()
        pending = json.loads(device("pending", "--json"))["challenges"]
        assert len(pending) == 1, pending
        assert device("approve", pending[0]["cid"], "--answer", number).strip() == "approved"
        wait.until(lambda d: d.current_url.startswith(redirect))
        token = client.authorization_code(azr.validate_callback(browser.current_url), dpop=True, validate=False)
        second = verified_id_token(server, realm, str(token.id_token), "app", azr.nonce)
        assert second["sub"] == first["sub"], "the same person"
        assert second["amr"] == ["fed", "mfa"] and second["acr"] == "urn:keyward:acr:mfa", second
        assert second["auth_time"] >= first["auth_time"]


def test_password_and_push_approval_sign_an_app_in(server, keyward_bin, device_bin, browser, loopback, tmp_path):  # noqa: F811
    """A person with a password and a phone: the app's request leads to the sign-in page, then the push step; the phone
    approves with the number on the page and the app gets its code."""
    import json
    import subprocess

    from requests_oauth2client import OAuth2Client
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    realm = "rp-pwd-" + uuid.uuid4().hex[:8]
    admin(server, keyward_bin, "realms", "create", realm)
    admin(server, keyward_bin, "push-mfa", "settings", "--realm", realm, "userVerification=number-match", "requirePushMfa=true")
    admin(server, keyward_bin, "clients", "create", "--realm", realm, "app", "--public", "--first-party", "--redirect-uri", "http://127.0.0.1/cb")
    done = subprocess.run(
        [keyward_bin, "users", "create", "--realm", realm, "alice", "--data-dir", str(server.data_dir),
         *(["--database", server.backend.database_url] if server.backend.database_url else [])],
        env={**server.environment(), "KEYWARD_NEW_PASSWORD": PASSWORD}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    wait = WebDriverWait(browser, WAIT_SECONDS)
    device = phone(server, keyward_bin, device_bin, realm, tmp_path / "phone")
    client = OAuth2Client.from_discovery_endpoint(
        issuer(server, realm) + "/.well-known/openid-configuration", client_id="app", issuer=issuer(server, realm), testing=True,
    )
    redirect = f"http://127.0.0.1:{loopback}/cb"

    def password() -> None:
        try:
            wait.until(EC.presence_of_element_located((By.ID, "username"))).send_keys("alice")
        except Exception:
            raise AssertionError(f"no sign-in form at {browser.current_url}: {browser.page_source[-1500:]}")
        browser.find_element(By.ID, "password").send_keys(PASSWORD)
        browser.find_element(By.ID, "sign-in").click()

    # The realm requires a phone: the first sign-in enrolls one, then goes on to the app.
    azr = client.authorization_request(scope="openid", redirect_uri=redirect, dpop=True)
    browser.get(str(azr.uri))
    password()
    link = wait.until(EC.presence_of_element_located((By.ID, "enrollment-link"))).get_attribute("value")
    device("enroll", link, "--issuer", issuer(server, realm), "--key-type", "EC")
    wait.until(lambda d: d.current_url.startswith(redirect))
    client.authorization_code(azr.validate_callback(browser.current_url), dpop=True, validate=False)

    # A fresh sign-in: password, then the push with the number on the page.
    azr = client.authorization_request(scope="openid", redirect_uri=redirect, dpop=True, prompt="login")
    browser.get(str(azr.uri))
    password()
    wait.until(EC.url_contains(f"/realms/{realm}/login/push"))
    number = wait.until(EC.visibility_of_element_located((By.ID, "verification-code"))).text.strip()
    pending = json.loads(device("pending", "--json"))["challenges"]
    assert device("approve", pending[0]["cid"], "--answer", number).strip() == "approved"
    wait.until(lambda d: d.current_url.startswith(redirect))
    token = client.authorization_code(azr.validate_callback(browser.current_url), dpop=True, validate=False)
    claims = verified_id_token(server, realm, str(token.id_token), "app", azr.nonce)
    assert claims["amr"] == ["pwd", "mfa"] and claims["acr"] == "urn:keyward:acr:mfa", claims


def test_keyward_device_logs_in_refreshes_and_logs_out(server, realm, browser, device_bin, loopback, tmp_path):  # noqa: F811
    """keyward-device login prints the URL, the browser signs in, the address it ends at goes to stdin, and the
    id_token's claims come out; refresh rotates with the device key; logout revokes and prints the realm's logout URL."""
    import json
    import subprocess

    state = str(tmp_path / "device")
    redirect = f"http://127.0.0.1:{loopback}/cb"
    login = subprocess.Popen(
        [device_bin, "login", "--issuer", issuer(server, realm), "--client-id", "dpop-app", "--redirect-uri", redirect,
         "--scope", "openid profile", "--post-logout-redirect-uri", "http://127.0.0.1/bye", "--state-dir", state],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    url = login.stdout.readline().strip()
    assert url.startswith(issuer(server, realm) + "/protocol/openid-connect/auth?") and "dpop_jkt=" in url, url
    answer = sign_in_in_browser(browser, url, redirect)
    out, err = login.communicate(answer + "\n", timeout=60)
    assert login.returncode == 0, err
    claims = json.loads(out.strip().splitlines()[-1])
    assert claims["amr"] == ["pwd"] and claims["acr"] == "urn:keyward:acr:1fa" and claims["sub"], claims

    def device(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([device_bin, *args, "--state-dir", state], capture_output=True, text=True, timeout=60)

    refreshed = device("refresh")
    assert refreshed.returncode == 0 and refreshed.stdout.startswith("refreshed"), refreshed.stderr
    signed_out = device("logout")
    assert signed_out.returncode == 0, signed_out.stderr
    lines = signed_out.stdout.splitlines()
    assert lines[0] == "signed out" and lines[1].startswith(issuer(server, realm) + "/protocol/openid-connect/logout?id_token_hint="), lines
    again = device("refresh")
    assert again.returncode != 0 and "run keyward-device login first" in again.stderr, again.stderr


def test_keyward_device_one_key_registers_signs_in_approves_and_is_removed(server, keyward_bin, device_bin, browser, loopback, tmp_path):  # noqa: F811
    """One device, one key on the command line (issue 32): `register --app-id`, `login --app-id` (the tokens name the
    registered device), `push enable` (no QR code, no client secret), a browser login approved with `pending` and
    `approve` on the same key, then `keyward devices remove`: the sign-in and the approvals end."""
    import json
    import subprocess

    from requests_oauth2client import OAuth2Client
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    realm = "rp-onekey-" + uuid.uuid4().hex[:8]
    app_id = "com.example.onekey"
    admin(server, keyward_bin, "realms", "create", realm)
    admin(server, keyward_bin, "push-mfa", "settings", "--realm", realm, "userVerification=number-match")
    admin(server, keyward_bin, "clients", "create", "--realm", realm, "app", "--public", "--first-party", "--redirect-uri", "http://127.0.0.1/cb")
    admin(server, keyward_bin, "apps", "add", "--realm", realm, app_id, "--platform", "ios", "--environment", "production",
          "--team-id", "ABCDE12345", "--bundle-id", "com.example.onekey", "--missing-attestation", "accept")
    done = subprocess.run(
        [keyward_bin, "users", "create", "--realm", realm, "alice", "--data-dir", str(server.data_dir),
         *(["--database", server.backend.database_url] if server.backend.database_url else [])],
        env={**server.environment(), "KEYWARD_NEW_PASSWORD": PASSWORD}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    state = str(tmp_path / "installation")
    redirect = f"http://127.0.0.1:{loopback}/cb"

    def device(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([device_bin, *args, "--state-dir", state], capture_output=True, text=True, timeout=60)

    registered = device("register", "--issuer", issuer(server, realm), "--app-id", app_id)
    assert registered.returncode == 0, registered.stderr
    device_id = json.loads((tmp_path / "installation" / f"registration-{app_id}.json").read_text())["device_id"]

    login = subprocess.Popen(
        [device_bin, "login", "--issuer", issuer(server, realm), "--client-id", "app", "--redirect-uri", redirect,
         "--app-id", app_id, "--prompt", "login", "--state-dir", state],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    url = login.stdout.readline().strip()
    answer = sign_in_in_browser(browser, url, redirect)
    out, err = login.communicate(answer + "\n", timeout=60)
    assert login.returncode == 0, err
    claims = json.loads(out.strip().splitlines()[-1])
    assert claims["device_id"] == device_id, claims

    enabled = device("push", "enable", "--device-label", "CLI iPhone")
    assert enabled.returncode == 0 and f"push approvals on for device {device_id}" in enabled.stdout, enabled.stderr
    refused = device("rotate-key")
    assert refused.returncode != 0 and "rotate-device-key --app-id" in refused.stderr, refused.stderr

    # A browser login, approved on the installation with the number on the page.
    wait = WebDriverWait(browser, WAIT_SECONDS)
    client = OAuth2Client.from_discovery_endpoint(
        issuer(server, realm) + "/.well-known/openid-configuration", client_id="app", issuer=issuer(server, realm), testing=True,
    )
    azr = client.authorization_request(scope="openid", redirect_uri=redirect, dpop=True, prompt="login")
    browser.get(str(azr.uri))
    wait.until(EC.presence_of_element_located((By.ID, "username"))).send_keys("alice")
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    browser.find_element(By.ID, "sign-in").click()
    wait.until(EC.url_contains(f"/realms/{realm}/login/push"))
    assert "CLI iPhone" in browser.page_source, browser.page_source[-1500:]
    number = wait.until(EC.visibility_of_element_located((By.ID, "verification-code"))).text.strip()
    pending = device("pending", "--json")
    assert pending.returncode == 0, pending.stderr
    challenges = json.loads(pending.stdout)["challenges"]
    assert len(challenges) == 1, challenges
    approved = device("approve", challenges[0]["cid"], "--answer", number)
    assert approved.returncode == 0 and approved.stdout.strip() == "approved", approved.stderr
    wait.until(lambda d: d.current_url.startswith(redirect))
    token = client.authorization_code(azr.validate_callback(browser.current_url), dpop=True, validate=False)
    assert verified_id_token(server, realm, str(token.id_token), "app", azr.nonce)["acr"] == "urn:keyward:acr:mfa"

    # Removed by the operator: refreshing and approving end.
    admin(server, keyward_bin, "devices", "remove", "--realm", realm, app_id, device_id)
    refreshed = device("refresh")
    assert refreshed.returncode != 0 and "invalid_grant" in refreshed.stderr, refreshed.stderr
    after = device("pending")
    assert after.returncode != 0, after.stdout
