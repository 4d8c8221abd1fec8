"""Independent DPoP peers obtain and use tokens: requests-oauth2client as the client, joserfc as the verifier."""

from __future__ import annotations

import time

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet
from joserfc.jwt import JWTClaimsRegistry
from requests_oauth2client import ClientSecretBasic, DPoPKey, DPoPToken, OAuth2Client
from requests_oauth2client.exceptions import InvalidClient

from keyward_peer import (
    CLIENT_ID,
    CLIENT_SECRET,
    ProofMaker,
    get_token,
    jwt_parts,
    token_request,
    whoami,
)

# RFC 9449 clients in the wild use these; ES256, ES384 and RS256 must work, the others when advertised.
REQUIRED_ALGS = ["ES256", "ES384", "RS256"]
OPTIONAL_ALGS = ["ES512", "PS256", "EdDSA"]


def oauth2_client(server, auth: str = "post") -> OAuth2Client:
    if auth == "basic":
        return OAuth2Client(token_endpoint=server.token_endpoint, auth=ClientSecretBasic(CLIENT_ID, CLIENT_SECRET),
                            testing=True)  # testing=True: allow http:// on loopback
    return OAuth2Client(token_endpoint=server.token_endpoint, client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                        testing=True)


@pytest.mark.parametrize("alg", REQUIRED_ALGS + OPTIONAL_ALGS)
def test_requests_oauth2client_client_credentials_and_whoami(server, discovery, alg):
    if alg in OPTIONAL_ALGS and alg not in discovery["dpop_signing_alg_values_supported"]:
        pytest.skip(f"{alg} not advertised in dpop_signing_alg_values_supported")
    assert alg in discovery["dpop_signing_alg_values_supported"]

    dpop_key = DPoPKey.generate(alg=alg)
    token = oauth2_client(server).client_credentials(dpop=True, dpop_key=dpop_key)
    assert isinstance(token, DPoPToken), type(token)
    assert token.token_type.lower() == "dpop"
    assert token.expires_at is not None

    # The library adds `Authorization: DPoP <at>` and a fresh proof with ath to each request.
    response = requests.get(server.whoami_url, auth=token, timeout=30)
    assert response.status_code == 200, f"{response.status_code} {response.headers} {response.text}"
    body = response.json()
    assert body["cnf"]["jkt"] == dpop_key.dpop_jkt
    assert body["azp"] == CLIENT_ID
    assert body["sub"]
    assert body["exp"] > time.time() - 60

    # Second call with the same token: a new proof (new jti) is accepted.
    again = requests.get(server.whoami_url, auth=token, timeout=30)
    assert again.status_code == 200, again.text


def test_requests_oauth2client_with_client_secret_basic(server):
    dpop_key = DPoPKey.generate(alg="ES256")
    token = oauth2_client(server, auth="basic").client_credentials(dpop=True, dpop_key=dpop_key)
    response = requests.get(server.whoami_url, auth=token, timeout=30)
    assert response.status_code == 200, response.text
    assert response.json()["cnf"]["jkt"] == dpop_key.dpop_jkt


def test_requests_oauth2client_sees_invalid_client(server):
    client = OAuth2Client(token_endpoint=server.token_endpoint, client_id=CLIENT_ID, client_secret="wrong-secret",
                          testing=True)
    with pytest.raises(InvalidClient):
        client.client_credentials(dpop=True, dpop_key=DPoPKey.generate(alg="ES256"))


def test_token_response_shape(server):
    maker = ProofMaker("ES256")
    response = token_request(server, maker.proof("POST", server.token_endpoint))
    assert response.status_code == 200, response.text
    assert "no-store" in response.headers.get("Cache-Control", "")
    body = response.json()
    assert body["token_type"] == "DPoP"
    assert isinstance(body["access_token"], str) and body["access_token"].count(".") == 2
    assert isinstance(body["expires_in"], int) and body["expires_in"] > 0
    # RFC 6749 §5.1: scope may be omitted when it is what was requested (nothing was requested here).
    assert isinstance(body.get("scope", ""), str)
    assert "refresh_token" not in body  # client_credentials issues none (RFC 6749 §4.4.3)


def test_joserfc_verifies_access_token(server, discovery):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    jwks = requests.get(discovery["jwks_uri"], timeout=30).json()
    header, _ = jwt_parts(access_token)
    assert header["alg"] == "ES256"
    assert header.get("kid") in {k["kid"] for k in jwks["keys"]}

    token = jwt.decode(access_token, KeySet.import_key_set(jwks), algorithms=["ES256"])
    JWTClaimsRegistry(
        iss={"essential": True, "value": discovery["issuer"]},
        exp={"essential": True},
        leeway=60,
    ).validate(token.claims)
    assert token.claims["exp"] > time.time() - 60
    # RFC 9449 §6.1: cnf.jkt is the RFC 7638 thumbprint of the proof key, computed here by joserfc.
    assert token.claims["cnf"]["jkt"] == maker.thumbprint
    assert token.claims.get("azp", token.claims.get("client_id")) == CLIENT_ID


def test_hand_made_proof_with_push_mfa_claims(server):
    """A push-MFA device proof carries `sub`, `deviceId` and a header `kid` next to the jwk: extra members are ignored."""
    maker = ProofMaker("ES256")
    extra = {"sub": "device-user-1", "deviceId": "device-123"}
    response = token_request(
        server, maker.proof("POST", server.token_endpoint, header={"kid": "device-key-1"}, **extra)
    )
    assert response.status_code == 200, response.text
    access_token = response.json()["access_token"]
    _, claims = jwt_parts(access_token)
    assert claims["cnf"]["jkt"] == maker.thumbprint

    proof = maker.proof("GET", server.whoami_url, access_token, header={"kid": "device-key-1"}, **extra)
    response = whoami(server, access_token, proof)
    assert response.status_code == 200, response.text
    assert response.json()["cnf"]["jkt"] == maker.thumbprint


def test_hand_made_proofs_per_alg(server):
    for alg in REQUIRED_ALGS:
        maker = ProofMaker(alg)
        access_token = get_token(server, maker)
        response = whoami(server, access_token, maker.proof("GET", server.whoami_url, access_token))
        assert response.status_code == 200, f"{alg}: {response.text}"


def test_dpop_scheme_is_case_insensitive(server):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    for scheme in ("dpop", "DPOP"):
        response = whoami(server, access_token, maker.proof("GET", server.whoami_url, access_token), scheme=scheme)
        assert response.status_code == 200, f"{scheme}: {response.text}"


def test_htu_query_and_fragment_are_ignored(server):
    """OIDF FAPI2 DPoP tests: htu with `?query#fragment` and a request with a query both succeed."""
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    proof = maker.proof("GET", server.whoami_url + "?x=1#frag", access_token)
    assert whoami(server, access_token, proof).status_code == 200
    proof = maker.proof("GET", server.whoami_url, access_token)
    assert whoami(server, access_token, proof, url=server.whoami_url + "?y=2").status_code == 200


def test_extra_header_members_and_claims_are_ignored(server):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    proof = maker.proof("GET", server.whoami_url, access_token, header={"tx_id_key": "x"}, tx_id="1", foo="bar",
                        exp=int(time.time()) + 60, nbf=int(time.time()) - 5)
    response = whoami(server, access_token, proof)
    assert response.status_code == 200, response.text
