"""The benchmark's provider double hands out id_tokens signed before they are asked for, and still refuses what a
provider must refuse (reused codes, wrong verifiers), so the benchmark measures a real exchange."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from relying_party import REDIRECT_URI, pkce_pair, redirect_params, verified_claims
from social_callback_provider import SocialCallbackProvider

CLIENT_ID = "bench-client"


@pytest.fixture
def provider():
    with SocialCallbackProvider(client_id=CLIENT_ID, tokens=4, subjects=2).serve() as served:
        yield served


def exchange(provider: SocialCallbackProvider, code: str, verifier: str, **extra) -> requests.Response:
    form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier, "client_id": CLIENT_ID,
            "redirect_uri": REDIRECT_URI, **extra}
    return requests.post(f"{provider.base_url}/token", data=form, timeout=10)


def test_presigned_tokens_match_the_manifest_and_verify(provider):
    entries = requests.get(f"{provider.base_url}/_bench/manifest", timeout=10).json()
    assert len(entries) == 4 and {entry["sub"] for entry in entries} == {"bench-user-0", "bench-user-1"}
    signing_kid = provider.keys.current.kid
    provider.keys.rotate(keep_old=True)  # anything signed from now on would carry the new kid
    for entry in entries:
        response = exchange(provider, entry["code"], entry["code_verifier"])
        assert response.status_code == 200, response.text
        header, claims = verified_claims(response.json()["id_token"], f"{provider.base_url}/jwks", ["RS256"])
        assert header["kid"] == signing_kid, "signed before serving, not at the token request"
        assert claims["nonce"] == entry["nonce"] and claims["sub"] == entry["sub"]
        assert claims["iss"] == provider.base_url and claims["aud"] == CLIENT_ID


def test_codes_are_single_use_and_need_the_right_verifier(provider):
    first, second = provider.manifest()[:2]
    assert exchange(provider, first["code"], first["code_verifier"]).status_code == 200
    reused = exchange(provider, first["code"], first["code_verifier"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    wrong = exchange(provider, second["code"], pkce_pair()[0])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    assert exchange(provider, "made-up", first["code_verifier"]).status_code == 400


def test_authorize_signs_up_front_and_redirects_with_code_state_and_iss(provider):
    verifier, challenge = pkce_pair()
    response = requests.get(f"{provider.base_url}/authorize", params={
        "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "response_type": "code", "state": "s1",
        "nonce": "n1", "code_challenge": challenge, "code_challenge_method": "S256"},
        allow_redirects=False, timeout=10)
    params = redirect_params(response)
    assert params["state"] == "s1" and params["iss"] == provider.issuer
    assert exchange(provider, params["code"], verifier, redirect_uri="http://elsewhere/cb").status_code == 400
    refused_plain = requests.get(f"{provider.base_url}/authorize", params={
        "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "nonce": "n", "code_challenge": verifier,
        "code_challenge_method": "plain"}, allow_redirects=False, timeout=10)
    assert refused_plain.status_code == 400


def test_authorize_signs_in_the_login_hint_when_given(provider):
    verifier, challenge = pkce_pair()
    response = requests.get(f"{provider.base_url}/authorize", params={
        "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "state": "s", "nonce": "n", "login_hint": "chosen-7",
        "code_challenge": challenge, "code_challenge_method": "S256"}, allow_redirects=False, timeout=10)
    answer = exchange(provider, redirect_params(response)["code"], verifier)
    assert answer.status_code == 200, answer.text
    _, claims = verified_claims(answer.json()["id_token"], f"{provider.base_url}/jwks", ["RS256"])
    assert claims["sub"] == "chosen-7" and claims["nonce"] == "n"


def test_cpu_report_counts_token_requests_since_the_mark(provider):
    entry = provider.manifest()[0]
    exchange(provider, entry["code"], entry["code_verifier"])
    before = requests.get(f"{provider.base_url}/_bench/cpu", timeout=10).json()
    assert before["token_requests"] == 1 and before["cpu_seconds"] > 0
    marked = requests.post(f"{provider.base_url}/_bench/mark", timeout=10).json()
    assert marked["token_requests_since_mark"] == 0 and marked["token_requests"] == 1
    requests.get(f"{provider.base_url}/jwks", timeout=10)
    after = requests.get(f"{provider.base_url}/_bench/cpu", timeout=10).json()
    assert after["jwks_requests_since_mark"] == 1 and after["token_requests_since_mark"] == 0


def test_jwks_and_discovery_are_warm_cache_friendly(provider):
    jwks = requests.get(f"{provider.base_url}/jwks", timeout=10)
    assert jwks.headers["Cache-Control"] == "public, max-age=3600"
    document = requests.get(f"{provider.base_url}/.well-known/openid-configuration", timeout=10).json()
    assert document["token_endpoint"] == f"{provider.base_url}/token"


def test_cli_stops_on_sigterm_even_when_started_with_it_blocked():
    script = Path(__file__).with_name("social_callback_provider.py")
    process = subprocess.Popen([sys.executable, str(script), "--port", "0", "--client-id", CLIENT_ID, "--tokens", "0",
                                "--max-seconds", "60"], stdout=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}))
    try:
        json.loads(process.stdout.readline())
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
    assert json.loads(process.stdout.readline())["event"] == "exit"


def test_cli_presigns_writes_the_manifest_and_prints_its_cpu_on_exit(tmp_path):
    manifest = tmp_path / "manifest.json"
    script = Path(__file__).with_name("social_callback_provider.py")
    process = subprocess.Popen([sys.executable, str(script), "--port", "0", "--client-id", CLIENT_ID,
                                "--tokens", "3", "--manifest", str(manifest), "--max-seconds", "60"],
                               stdout=subprocess.PIPE, text=True)
    try:
        announced = json.loads(process.stdout.readline())
        assert announced["tokens"] == 3
        entry = json.loads(manifest.read_text())[0]
        response = requests.post(announced["token_endpoint"], data={
            "grant_type": "authorization_code", "code": entry["code"], "code_verifier": entry["code_verifier"]},
            auth=(CLIENT_ID, "any-secret"), timeout=10)
        assert response.status_code == 200, response.text
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    report = json.loads(process.stdout.readline())
    assert report["event"] == "exit" and report["token_requests_since_mark"] == 1 and report["cpu_seconds"] > 0
