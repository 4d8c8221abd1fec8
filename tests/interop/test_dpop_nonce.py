"""Server-issued DPoP nonces (RFC 9449 §8) with `dpop.requireNonce`: an independent client follows the
`use_dpop_nonce` challenge on its own and gets a token."""

from __future__ import annotations

import requests
from requests_oauth2client import DPoPKey, DPoPToken, OAuth2Client

from keyward_peer import CLIENT_ID, CLIENT_SECRET, ProofMaker, token_request


def test_requests_oauth2client_follows_the_nonce_challenge(backend, spawn_server):
    srv = spawn_server(backend, "nonce", {"KEYWARD_DPOP_REQUIRE_NONCE": "true"})

    # A proof without a nonce is answered with the challenge and a fresh nonce.
    challenge = token_request(srv, ProofMaker("ES256").proof("POST", srv.token_endpoint))
    assert challenge.status_code == 400, challenge.text
    assert challenge.json()["error"] == "use_dpop_nonce"
    assert challenge.headers.get("DPoP-Nonce")

    # requests-oauth2client stores the DPoP-Nonce and retries with it, without help from the test.
    client = OAuth2Client(token_endpoint=srv.token_endpoint, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, testing=True)
    dpop_key = DPoPKey.generate(alg="ES256")
    token = client.client_credentials(dpop=True, dpop_key=dpop_key)
    assert isinstance(token, DPoPToken)
    response = requests.get(srv.whoami_url, auth=token, timeout=30)
    assert response.status_code == 200, response.text
    assert response.json()["cnf"]["jkt"] == dpop_key.dpop_jkt
