"""The Apple double behaves like Sign in with Apple where Keyward's handling is tested: form_post with the `user`
JSON once, the ES256 client secret, string booleans in the id_token, single-use codes, revocation."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from joserfc.jwk import ECKey

from apple_double import AppleDouble
from relying_party import REDIRECT_URI, FakeClock, apple_client_secret, pkce_pair, read_form_post, verified_claims

CLIENT_ID = "test.keyward.web"
TEAM_ID = "TEAM123456"
KEY_ID = "KEY1234567"
CLIENT_KEY = ECKey.generate_key("P-256")


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def apple(clock):
    double = AppleDouble(client_id=CLIENT_ID, team_id=TEAM_ID, key_id=KEY_ID,
                         client_public_key=CLIENT_KEY.as_pem(private=False), clock=clock)
    with double.serve() as served:
        yield served


def secret(**overrides) -> str:
    arguments = {"team_id": TEAM_ID, "client_id": CLIENT_ID, "key_id": KEY_ID}
    key = overrides.pop("key", CLIENT_KEY)
    arguments.update(overrides)
    return apple_client_secret(key, **arguments)


def authorize(apple: AppleDouble, sub: str = "001234.abcd", scope: str = "name email", challenge: str | None = None,
              response_type: str = "code", **form) -> requests.Response:
    query = {"client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "response_type": response_type,
             "response_mode": "form_post", "scope": scope, "state": "st-1", "nonce": "no-1"}
    if challenge:
        query.update(code_challenge=challenge, code_challenge_method="S256")
    return requests.post(f"{apple.base_url}/auth/authorize", params=query,
                         data={"sub": sub, "first_name": "Ada", "last_name": "Lovelace", **form}, timeout=10)


def posted_fields(apple: AppleDouble, **kwargs) -> dict[str, str]:
    response = authorize(apple, **kwargs)
    assert response.status_code == 200, response.text
    action, method, fields = read_form_post(response.text)
    assert (action, method) == (REDIRECT_URI, "post")
    assert "document.forms[0].submit()" in response.text
    return fields


def token(apple: AppleDouble, code: str, client_secret: str | None = None, verifier: str | None = None):
    form = {"client_id": CLIENT_ID, "client_secret": client_secret or secret(), "grant_type": "authorization_code",
            "code": code, "redirect_uri": REDIRECT_URI}
    if verifier:
        form["code_verifier"] = verifier
    return requests.post(f"{apple.base_url}/auth/token", data=form, timeout=10)


def test_user_json_is_posted_on_the_first_authorization_only(apple):
    first = posted_fields(apple)
    assert first["state"] == "st-1" and first["code"]
    assert json.loads(first["user"]) == {"name": {"firstName": "Ada", "lastName": "Lovelace"},
                                         "email": "001234.abcd@example.test"}
    second = posted_fields(apple)
    assert "user" not in second and second["code"]
    assert "user" in posted_fields(apple, sub="another.subject"), "first time for another subject"


def test_id_token_is_posted_only_when_response_type_asks_for_it(apple):
    assert "id_token" not in posted_fields(apple)
    fields = posted_fields(apple, response_type="code id_token")
    _, claims = verified_claims(fields["id_token"], f"{apple.base_url}/auth/keys", ["RS256"])
    assert claims["nonce"] == "no-1" and "c_hash" in claims


def test_token_endpoint_id_token_has_apple_claims_with_string_booleans(apple):
    fields = posted_fields(apple, private_email="1")
    response = token(apple, fields["code"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "Bearer" and body["refresh_token"] and body["access_token"]
    header, claims = verified_claims(body["id_token"], f"{apple.base_url}/auth/keys", ["RS256"])
    assert header["alg"] == "RS256" and header["kid"] == apple.keys.current.kid
    assert claims["iss"] == "https://appleid.apple.com"
    assert claims["aud"] == CLIENT_ID, "Apple's aud is a string"
    assert claims["sub"] == "001234.abcd" and claims["nonce"] == "no-1" and claims["nonce_supported"] is True
    assert claims["email"] == "001234.abcd@privaterelay.appleid.com"
    assert claims["email_verified"] == "true" and claims["is_private_email"] == "true"


def test_boolean_claims_and_issuer_are_options(clock):
    double = AppleDouble(client_id=CLIENT_ID, team_id=TEAM_ID, key_id=KEY_ID, client_public_key=CLIENT_KEY,
                         issuer="http://127.0.0.1:1/apple", boolean_claims=True, clock=clock)
    with double.serve() as apple:
        _, claims = verified_claims(token(apple, posted_fields(apple)["code"]).json()["id_token"],
                                    f"{apple.base_url}/auth/keys", ["RS256"])
    assert claims["iss"] == "http://127.0.0.1:1/apple"
    assert claims["email_verified"] is True and claims["is_private_email"] is False


@pytest.mark.parametrize("bad_secret, expected", [
    (lambda: secret(key=ECKey.generate_key("P-256")), "bad_signature"),
    (lambda: secret(key_id="OTHERKEYID"), "kid 'OTHERKEYID'"),
    (lambda: secret(audience="https://appleid.apple.com/auth/token"), "aud must be"),
    (lambda: secret(team_id="OTHERTEAM1"), "iss is not the team id"),
    (lambda: secret(client_id="other.client"), "sub is not the client_id"),
    (lambda: secret(iat=int(time.time()) - 7200, lifetime=3600), "client_secret expired"),
    (lambda: secret(lifetime=15_777_001), "longer than 15777000"),
    (lambda: secret(iat=int(time.time()) + 3600), "iat is in the future"),
    (lambda: "not-a-jwt", "decode_error"),
])
def test_bad_client_secrets_are_invalid_client(apple, bad_secret, expected):
    code = posted_fields(apple)["code"]
    response = token(apple, code, client_secret=bad_secret())
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_client"
    assert expected in response.json()["error_description"]


def test_a_secret_lasting_exactly_six_months_is_accepted(apple):
    response = token(apple, posted_fields(apple)["code"], client_secret=secret(lifetime=15_777_000))
    assert response.status_code == 200, response.text


def test_codes_are_single_use_and_live_five_minutes(apple, clock):
    code = posted_fields(apple)["code"]
    assert token(apple, code).status_code == 200
    reused = token(apple, code)
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    late = posted_fields(apple)["code"]
    clock.now += 301
    expired = token(apple, late, client_secret=secret(iat=int(clock.now)))
    assert expired.status_code == 400 and expired.json()["error"] == "invalid_grant"


def test_pkce_is_checked_when_a_challenge_was_sent(apple):
    verifier, challenge = pkce_pair()
    code = posted_fields(apple, challenge=challenge)["code"]
    wrong = token(apple, code, verifier=pkce_pair()[0])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    code = posted_fields(apple, challenge=challenge)["code"]
    assert token(apple, code, verifier=verifier).status_code == 200


def test_name_or_email_scope_requires_form_post(apple):
    query = {"client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "response_type": "code", "scope": "email",
             "response_mode": "query", "state": "s"}
    response = requests.get(f"{apple.base_url}/auth/authorize", params=query, timeout=10)
    assert response.status_code == 400 and "form_post" in response.text
    query["scope"] = "openid"
    consent = requests.get(f"{apple.base_url}/auth/authorize", params=query, timeout=10)
    assert consent.status_code == 200 and 'id="approve"' in consent.text
    approved = requests.post(consent.url, data={"sub": "s1"}, allow_redirects=False, timeout=10)
    assert approved.status_code == 302 and "code=" in approved.headers["Location"]


def test_unknown_client_and_plain_pkce_are_refused(apple):
    base = {"redirect_uri": REDIRECT_URI, "response_type": "code", "response_mode": "form_post", "scope": "name"}
    assert requests.get(f"{apple.base_url}/auth/authorize", params={**base, "client_id": "other"},
                        timeout=10).status_code == 400
    plain = {**base, "client_id": CLIENT_ID, "code_challenge": pkce_pair()[0], "code_challenge_method": "plain"}
    assert requests.get(f"{apple.base_url}/auth/authorize", params=plain, timeout=10).status_code == 400


def test_denial_posts_user_cancelled_authorize(apple):
    response = authorize(apple, action="deny")
    _, _, fields = read_form_post(response.text)
    assert fields == {"error": "user_cancelled_authorize", "state": "st-1"}


def test_revocation_is_recorded_and_ends_the_authorization(apple):
    assert "user" in posted_fields(apple)
    tokens = token(apple, posted_fields(apple)["code"]).json()
    refused = requests.post(f"{apple.base_url}/auth/revoke", data={
        "client_id": CLIENT_ID, "client_secret": secret(key_id="WRONGKEYID"), "token": tokens["refresh_token"]},
        timeout=10)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_client"
    assert apple.revocations == []
    revoked = requests.post(f"{apple.base_url}/auth/revoke", data={
        "client_id": CLIENT_ID, "client_secret": secret(), "token": tokens["refresh_token"],
        "token_type_hint": "refresh_token"}, timeout=10)
    assert revoked.status_code == 200
    [record] = apple.revocations
    assert record["token"] == tokens["refresh_token"] and record["kind"] == "refresh_token"
    assert record["sub"] == "001234.abcd" and record["known"] is True
    assert requests.get(f"{apple.base_url}/_double/revocations", timeout=10).json() == [record]
    refresh = requests.post(f"{apple.base_url}/auth/token", data={
        "client_id": CLIENT_ID, "client_secret": secret(), "grant_type": "refresh_token",
        "refresh_token": tokens["refresh_token"]}, timeout=10)
    assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant"
    assert "user" in posted_fields(apple), "after revocation the next sign-in is a first one"


def test_cli_writes_a_p8_the_double_then_accepts(tmp_path):
    p8 = tmp_path / "AuthKey.p8"
    script = Path(__file__).with_name("apple_double.py")
    process = subprocess.Popen([sys.executable, str(script), "--port", "0", "--client-id", CLIENT_ID,
                                "--team-id", TEAM_ID, "--key-id", KEY_ID, "--write-p8", str(p8),
                                "--exit-on-stdin-close", "--max-seconds", "60"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        announced = json.loads(process.stdout.readline())
        assert announced["issuer"] == "https://appleid.apple.com" and announced["p8_file"] == str(p8)
        key = ECKey.import_key(p8.read_bytes())
        query = {"client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "response_type": "code",
                 "response_mode": "form_post", "scope": "name email", "state": "s"}
        page = requests.post(announced["authorization_endpoint"], params=query, data={"sub": "cli"}, timeout=10)
        code = read_form_post(page.text)[2]["code"]
        response = requests.post(announced["token_endpoint"], data={
            "client_id": CLIENT_ID, "client_secret": secret(key=key), "grant_type": "authorization_code",
            "code": code, "redirect_uri": REDIRECT_URI}, timeout=10)
        assert response.status_code == 200, response.text
    finally:
        process.stdin.close()
        assert process.wait(timeout=10) == 0
