"""The strict oidc-provider-mock wrapper refuses what a lenient provider would let Keyward get away with."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from relying_party import REDIRECT_URI, pkce_pair, redirect_params, verified_claims
from strict_oidc_provider import StrictOIDCProvider, User, unwrapped_mock_app

CLIENT_ID = "keyward-test-client"


@pytest.fixture(scope="module")
def idp():
    users = [User(sub="alice", claims={"email": "alice@example.test", "email_verified": True})]
    with StrictOIDCProvider(users=users).serve() as provider:
        yield provider


def authorize(idp: StrictOIDCProvider, challenge: str | None, method: str | None = "S256",
              nonce: str | None = "nonce-1", sub: str = "alice", **extra: str) -> requests.Response:
    query = {"client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "response_type": "code",
             "scope": "openid email", "state": "state-1", "nonce": nonce,
             "code_challenge": challenge, "code_challenge_method": method, **extra}
    return requests.post(f"{idp.base_url}/oauth2/authorize", params={k: v for k, v in query.items() if v is not None},
                         data={"sub": sub}, allow_redirects=False, timeout=10)


def exchange(idp: StrictOIDCProvider, code: str, verifier: str | None) -> requests.Response:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI,
            "client_id": CLIENT_ID, "client_secret": "any-secret", "code_verifier": verifier}
    return requests.post(f"{idp.base_url}/oauth2/token", data={k: v for k, v in form.items() if v is not None},
                         timeout=10)


def fresh_code(idp: StrictOIDCProvider, nonce: str = "nonce-1", **extra: str) -> tuple[str, str]:
    verifier, challenge = pkce_pair()
    params = redirect_params(authorize(idp, challenge, nonce=nonce, **extra))
    assert "code" in params, params
    return params["code"], verifier


def test_correct_pkce_and_nonce_give_an_id_token_that_verifies_with_the_jwks(idp):
    code, verifier = fresh_code(idp, nonce="n-verify")
    response = exchange(idp, code, verifier)
    assert response.status_code == 200, response.text
    header, claims = verified_claims(response.json()["id_token"], f"{idp.base_url}/jwks", ["RS256"])
    assert header["alg"] == "RS256" and header["kid"] == idp.kid
    assert claims["iss"] == idp.base_url
    assert claims["aud"] == [CLIENT_ID], "the mock sends aud as an array"
    assert claims["nonce"] == "n-verify"
    assert claims["sub"] == "alice" and claims["email"] == "alice@example.test"


def test_wrong_verifier_is_invalid_grant(idp):
    code, _ = fresh_code(idp)
    other_verifier, _ = pkce_pair()
    response = exchange(idp, code, other_verifier)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_missing_verifier_is_invalid_request(idp):
    code, _ = fresh_code(idp)
    response = exchange(idp, code, None)
    assert response.status_code == 400
    assert response.json() == {"error": "invalid_request", "error_description": "Missing 'code_verifier'"}


def test_authorization_without_challenge_is_refused(idp):
    params = redirect_params(authorize(idp, None, None))
    assert params["error"] == "invalid_request" and "code" not in params
    assert params["state"] == "state-1"


@pytest.mark.parametrize("method", ["plain", None])
def test_plain_challenge_method_is_refused(idp, method):
    verifier, _ = pkce_pair()
    params = redirect_params(authorize(idp, verifier, method))
    assert params["error"] == "invalid_request" and "code" not in params


def test_missing_nonce_is_refused(idp):
    _, challenge = pkce_pair()
    params = redirect_params(authorize(idp, challenge, nonce=None))
    assert params["error"] == "invalid_request" and "nonce" in params["error_description"]


def test_a_code_is_single_use(idp):
    code, verifier = fresh_code(idp)
    assert exchange(idp, code, verifier).status_code == 200
    again = exchange(idp, code, verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_discovery_names_the_issuer_and_s256_only(idp):
    document = requests.get(f"{idp.base_url}/.well-known/openid-configuration", timeout=10).json()
    assert document["issuer"] == idp.base_url
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["jwks_uri"] == f"{idp.base_url}/jwks"


def test_werkzeug_debugger_is_off(idp):
    probe = "/?__debugger__=yes&cmd=resource&f=debugger.js"
    assert "javascript" in unwrapped_mock_app().test_client().get(probe).content_type, \
        "control: the unwrapped mock serves its debugger"
    response = requests.get(idp.base_url + probe, timeout=10)
    assert "javascript" not in response.headers["Content-Type"]
    assert idp.app.debug is False


def test_rotation_changes_the_kid_and_signs_with_the_new_key():
    with StrictOIDCProvider().serve() as idp:
        old_kid = idp.kid
        new_kid = idp.rotate_key()
        assert new_kid != old_kid and idp.kid == new_kid
        kids = [key["kid"] for key in requests.get(f"{idp.base_url}/jwks", timeout=10).json()["keys"]]
        assert kids == [new_kid], "without keep_old the old key is gone"
        code, verifier = fresh_code(idp)
        header, _ = verified_claims(exchange(idp, code, verifier).json()["id_token"], f"{idp.base_url}/jwks",
                                    ["RS256"])
        assert header["kid"] == new_kid
        newest = requests.post(f"{idp.base_url}/_double/rotate-key", data={"keep_old": "1"}, timeout=10).json()["kid"]
        kids = [key["kid"] for key in requests.get(f"{idp.base_url}/jwks", timeout=10).json()["keys"]]
        assert kids == [newest, new_kid]


def test_jwks_cache_header_is_an_option_and_jwks_can_fail():
    with StrictOIDCProvider(jwks_max_age=120).serve() as idp:
        jwks_url = f"{idp.base_url}/jwks"
        assert requests.get(jwks_url, timeout=10).headers["Cache-Control"] == "public, max-age=120"
        idp.jwks_max_age = None
        assert "Cache-Control" not in requests.get(jwks_url, timeout=10).headers
        idp.jwks_down = True
        assert requests.get(jwks_url, timeout=10).status_code == 503
        # The token endpoint keeps working while the JWKS is down: Keyward must rely on its cached keys.
        code, verifier = fresh_code(idp)
        assert exchange(idp, code, verifier).status_code == 200
        settings = requests.post(f"{idp.base_url}/_double/jwks", data={"mode": "up", "max_age": "60"}, timeout=10)
        assert settings.json() == {"down": False, "max_age": 60}
        assert requests.get(jwks_url, timeout=10).headers["Cache-Control"] == "public, max-age=60"


def test_configured_issuer_and_rfc9207_iss_parameter():
    with StrictOIDCProvider(issuer="https://accounts.google.com", send_iss=True).serve() as idp:
        verifier, challenge = pkce_pair()
        params = redirect_params(authorize(idp, challenge))
        assert params["iss"] == "https://accounts.google.com"
        _, claims = verified_claims(exchange(idp, params["code"], verifier).json()["id_token"],
                                    f"{idp.base_url}/jwks", ["RS256"])
        assert claims["iss"] == "https://accounts.google.com"
        document = requests.get(f"{idp.base_url}/.well-known/openid-configuration", timeout=10).json()
        assert document["issuer"] == "https://accounts.google.com"
        assert document["authorization_response_iss_parameter_supported"] is True


def test_cli_prints_its_endpoints_then_serves():
    script = Path(__file__).with_name("strict_oidc_provider.py")
    process = subprocess.Popen([sys.executable, str(script), "--port", "0", "--no-jwks-cache-header",
                                "--exit-on-stdin-close", "--max-seconds", "60"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        announced = json.loads(process.stdout.readline())
        assert announced["issuer"] == announced["base_url"]
        document = requests.get(announced["discovery_url"], timeout=10).json()
        assert document["token_endpoint"] == announced["token_endpoint"]
        assert "Cache-Control" not in requests.get(announced["jwks_uri"], timeout=10).headers
    finally:
        process.stdin.close()
        assert process.wait(timeout=10) == 0


def test_auth_time_is_the_remembered_sign_in_unless_the_request_insists_on_a_fresh_credential(idp):
    def auth_time(**extra: str) -> int:
        code, verifier = fresh_code(idp, nonce="n-auth-time", **extra)
        response = exchange(idp, code, verifier)
        assert response.status_code == 200, response.text
        return verified_claims(response.json()["id_token"], f"{idp.base_url}/jwks", ["RS256"])[1]["auth_time"]

    before = int(time.time())
    assert auth_time() >= before, "without a remembered sign-in the approval is a credential given now"
    idp.remember("alice", 1_600_000_000)
    try:
        assert auth_time() == 1_600_000_000, "answered from the provider's session"
        assert auth_time(prompt="login") >= before
        assert auth_time(max_age="0") >= before
        remembered = requests.post(f"{idp.base_url}/_double/remember", data={"sub": "alice", "auth_time": ""}, timeout=10)
        assert remembered.json() == {"remembered": {}}
        assert auth_time() >= before
    finally:
        idp.remember("alice", None)
