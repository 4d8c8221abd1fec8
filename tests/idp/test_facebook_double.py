"""The Facebook double makes Keyward do what Facebook requires: exchange the code with the app secret, check the user
token with debug_token and an app token, and prove the app secret on every Graph call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from facebook_double import FacebookDouble, appsecret_proof
from relying_party import REDIRECT_URI, FakeClock, pkce_pair, redirect_params

APP_ID, APP_SECRET = "1111111111", "app-secret-1"
OTHER_APP_ID, OTHER_SECRET = "2222222222", "app-secret-2"


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def facebook(clock):
    with FacebookDouble(apps={APP_ID: APP_SECRET, OTHER_APP_ID: OTHER_SECRET}, clock=clock).serve() as served:
        yield served


def code_for(facebook: FacebookDouble, app_id: str = APP_ID, scope: str = "email,public_profile",
             challenge: str | None = None, prefix: str = "", **form) -> str:
    query = {"client_id": app_id, "redirect_uri": REDIRECT_URI, "state": "st", "scope": scope}
    if challenge:
        query.update(code_challenge=challenge, code_challenge_method="S256")
    response = requests.post(f"{facebook.base_url}{prefix}/dialog/oauth", params=query,
                             data={"sub": "10001", "name": "Grace Hopper", **form}, allow_redirects=False, timeout=10)
    params = redirect_params(response)
    assert params["state"] == "st"
    return params["code"]


def user_token(facebook: FacebookDouble, code: str, app_id: str = APP_ID, secret: str = APP_SECRET,
               verifier: str | None = None) -> requests.Response:
    query = {"client_id": app_id, "client_secret": secret, "redirect_uri": REDIRECT_URI, "code": code}
    if verifier:
        query["code_verifier"] = verifier
    return requests.get(f"{facebook.base_url}/v19.0/oauth/access_token", params=query, timeout=10)


def me(facebook: FacebookDouble, token: str, proof: str | None, fields: str = "id,name,email") -> requests.Response:
    query = {"fields": fields, "access_token": token}
    if proof is not None:
        query["appsecret_proof"] = proof
    return requests.get(f"{facebook.base_url}/v19.0/me", params=query, timeout=10)


def debug(facebook: FacebookDouble, token: str, app_token: str | None) -> requests.Response:
    query = {"input_token": token}
    if app_token is not None:
        query["access_token"] = app_token
    return requests.get(f"{facebook.base_url}/debug_token", params=query, timeout=10)


def test_code_exchange_debug_token_and_me(facebook):
    response = user_token(facebook, code_for(facebook, prefix="/v19.0"))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "bearer" and body["expires_in"] > 0
    token = body["access_token"]
    data = debug(facebook, token, f"{APP_ID}|{APP_SECRET}").json()["data"]
    assert data["app_id"] == APP_ID and data["is_valid"] is True and data["user_id"] == "10001"
    assert data["type"] == "USER" and "email" in data["scopes"]
    profile = me(facebook, token, appsecret_proof(token, APP_SECRET))
    assert profile.status_code == 200, profile.text
    assert profile.json() == {"id": "10001", "name": "Grace Hopper", "email": "10001@example.test"}


def test_me_refuses_a_wrong_or_missing_appsecret_proof(facebook):
    token = user_token(facebook, code_for(facebook)).json()["access_token"]
    wrong = me(facebook, token, appsecret_proof(token, OTHER_SECRET))
    assert wrong.status_code == 400
    assert wrong.json()["error"]["message"] == "Invalid appsecret_proof provided in the API argument"
    missing = me(facebook, token, None)
    assert missing.status_code == 400 and "require an appsecret_proof" in missing.json()["error"]["message"]
    of_another_token = me(facebook, token, appsecret_proof(token + "x", APP_SECRET))
    assert of_another_token.status_code == 400


def test_debug_token_requires_an_app_token(facebook):
    token = user_token(facebook, code_for(facebook)).json()["access_token"]
    for app_token in (None, f"{APP_ID}|wrong-secret", token):
        refused = debug(facebook, token, app_token)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == 190, app_token
    app_token = requests.get(f"{facebook.base_url}/oauth/access_token", params={
        "client_id": APP_ID, "client_secret": APP_SECRET, "grant_type": "client_credentials"}, timeout=10).json()
    assert debug(facebook, token, app_token["access_token"]).json()["data"]["is_valid"] is True


def test_debug_token_reports_the_app_a_token_was_issued_to(facebook):
    foreign = user_token(facebook, code_for(facebook, app_id=OTHER_APP_ID), OTHER_APP_ID, OTHER_SECRET)
    data = debug(facebook, foreign.json()["access_token"], f"{APP_ID}|{APP_SECRET}").json()["data"]
    assert data["app_id"] == OTHER_APP_ID and data["is_valid"] is True


def test_expired_or_unknown_tokens_are_not_valid(facebook, clock):
    token = user_token(facebook, code_for(facebook)).json()["access_token"]
    clock.now += facebook.token_lifetime + 1
    data = debug(facebook, token, f"{APP_ID}|{APP_SECRET}").json()["data"]
    assert data["is_valid"] is False and data["error"]["code"] == 190
    assert debug(facebook, "EAAunknown", f"{APP_ID}|{APP_SECRET}").json()["data"]["is_valid"] is False
    assert me(facebook, token, appsecret_proof(token, APP_SECRET)).json()["error"]["code"] == 190


def test_code_is_single_use_and_needs_the_app_secret(facebook):
    code = code_for(facebook)
    wrong_secret = user_token(facebook, code, secret="nope")
    assert wrong_secret.status_code == 400 and wrong_secret.json()["error"]["message"] == "Error validating client secret."
    assert user_token(facebook, code).status_code == 200
    reused = user_token(facebook, code)
    assert reused.status_code == 400 and reused.json()["error"]["type"] == "OAuthException"


def test_pkce_when_sent_and_email_only_with_the_permission(facebook):
    verifier, challenge = pkce_pair()
    code = code_for(facebook, challenge=challenge, scope="public_profile")
    assert user_token(facebook, code, verifier=pkce_pair()[0]).status_code == 400
    code = code_for(facebook, challenge=challenge, scope="public_profile")
    token = user_token(facebook, code, verifier=verifier).json()["access_token"]
    assert me(facebook, token, appsecret_proof(token, APP_SECRET)).json() == {"id": "10001", "name": "Grace Hopper"}


def test_denial_redirects_with_access_denied(facebook):
    response = requests.post(f"{facebook.base_url}/dialog/oauth", params={
        "client_id": APP_ID, "redirect_uri": REDIRECT_URI, "state": "st"}, data={"action": "deny"},
        allow_redirects=False, timeout=10)
    params = redirect_params(response)
    assert params["error"] == "access_denied" and params["error_reason"] == "user_denied" and params["state"] == "st"


def test_cli_prints_its_endpoints(tmp_path):
    script = Path(__file__).with_name("facebook_double.py")
    process = subprocess.Popen([sys.executable, str(script), "--port", "0", "--app", f"{APP_ID}:{APP_SECRET}",
                                "--exit-on-stdin-close", "--max-seconds", "60"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        announced = json.loads(process.stdout.readline())
        assert announced["apps"] == [APP_ID]
        consent = requests.get(announced["authorization_endpoint"], params={
            "client_id": APP_ID, "redirect_uri": REDIRECT_URI}, timeout=10)
        assert consent.status_code == 200 and 'id="approve"' in consent.text
    finally:
        process.stdin.close()
        assert process.wait(timeout=10) == 0
