"""What the server must refuse (RFC 9449 §4.3 / §7, OIDF FAPI2 DPoP negative tests).

Every refusal is followed by nothing else: a correct request still works (see test_dpop_peers.py), and each case
builds its own proof so one failure does not mask another.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from urllib.parse import urlencode

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import ECKey

from keyward_peer import (
    CLIENT_ID,
    CLIENT_SECRET,
    ProofMaker,
    ath_of,
    b64u,
    b64u_json,
    es256_sign_raw,
    get_token,
    high_s_twin,
    jwt_parts,
    raw_request,
    token_request,
    unsigned_proof,
    whoami,
)


# --------------------------------------------------------------------------------------------- assertions
def assert_token_error(response, status: int, errors: set[str]) -> dict:
    assert response.status_code == status, f"expected {status}, got {response.status_code}: {response.text}"
    assert response.headers.get("Content-Type", "").startswith("application/json"), response.headers
    body = response.json()
    assert body.get("error") in errors, body
    assert isinstance(body.get("error_description", ""), str)
    assert "access_token" not in body
    return body


def assert_rs_refused(response, errors: set[str] | None = None) -> str:
    assert response.status_code == 401, f"expected 401, got {response.status_code}: {response.text}"
    challenge = response.headers.get("WWW-Authenticate", "")
    # Case-sensitive prefix: requests-oauth2client only reacts to a challenge that starts with "DPoP".
    assert challenge.startswith("DPoP"), f"WWW-Authenticate: {challenge!r}"
    if errors is not None:
        assert any(f'error="{e}"' in challenge for e in errors), f"expected error in {errors}: {challenge!r}"
    return challenge


INVALID_PROOF = {"invalid_dpop_proof"}


# --------------------------------------------------------------------------------------------- malformed proofs
def _alg_none(m, htm, htu, at):
    return unsigned_proof({"typ": "dpop+jwt", "alg": "none", "jwk": m.public_jwk}, m.claims(htm, htu, at))


def _jwk_with_private_d(m, htm, htu, at):
    return m.sign(m.header(jwk=dict(m.key.as_dict(private=True))), m.claims(htm, htu, at))


def _typ_missing(m, htm, htu, at):
    header = m.header()
    del header["typ"]
    return m.sign(header, m.claims(htm, htu, at))


def _typ_jwt(m, htm, htu, at):
    return m.sign(m.header(typ="JWT"), m.claims(htm, htu, at))


def _wrong_htm(m, htm, htu, at):
    return m.sign(m.header(), m.claims("PUT", htu, at))


def _htu_other_path(m, htm, htu, at):
    return m.sign(m.header(), m.claims(htm, htu.rsplit("/", 1)[0] + "/elsewhere", at))


def _htu_other_origin(m, htm, htu, at):
    return m.sign(m.header(), m.claims(htm, htu.replace("http://127.0.0.1:", "http://127.0.0.2:"), at))


def _iat_hour_ago(m, htm, htu, at):
    return m.sign(m.header(), m.claims(htm, htu, at, iat=int(time.time()) - 3600))


def _iat_hour_ahead(m, htm, htu, at):
    return m.sign(m.header(), m.claims(htm, htu, at, iat=int(time.time()) + 3600))


def _jti_missing(m, htm, htu, at):
    return m.sign(m.header(), m.claims(htm, htu, at, jti=None))


def _signature_corrupted(m, htm, htu, at):
    head, payload, sig = m.sign(m.header(), m.claims(htm, htu, at)).split(".")
    raw = bytearray(__import__("base64").urlsafe_b64decode(sig + "=" * (-len(sig) % 4)))
    raw[len(raw) // 2] ^= 0x01
    return f"{head}.{payload}.{b64u(bytes(raw))}"


def _two_parts(m, htm, htu, at):
    head, payload, _ = m.sign(m.header(), m.claims(htm, htu, at)).split(".")
    return f"{head}.{payload}"


def _hs256_keyed_with_public_jwk(m, htm, htu, at):
    # Algorithm confusion: HMAC keyed with the public JWK's JSON.
    header = {"typ": "dpop+jwt", "alg": "HS256", "jwk": m.public_jwk}
    signing_input = f"{b64u_json(header)}.{b64u_json(m.claims(htm, htu, at))}"
    mac = hmac.new(json.dumps(m.public_jwk, separators=(",", ":")).encode(), signing_input.encode(), hashlib.sha256)
    return f"{signing_input}.{b64u(mac.digest())}"


def _kid_instead_of_jwk(m, htm, htu, at):
    header = m.header(kid="device-key-1")
    del header["jwk"]
    return m.sign(header, m.claims(htm, htu, at))


def _padded_base64(m, htm, htu, at):
    head, payload, sig = m.sign(m.header(), m.claims(htm, htu, at)).split(".")
    pad = lambda s: s + "=" * (-len(s) % 4) if len(s) % 4 else s + "=="  # noqa: E731 - always add padding
    return f"{pad(head)}.{payload}.{sig}"


def _duplicate_alg_member(m, htm, htu, at):
    # {"alg":"none", ..., "alg":"ES256"}: parsers disagree on which one wins (Swift: first, Python: last).
    jwk = json.dumps(m.public_jwk, separators=(",", ":"))
    header = '{"typ":"dpop+jwt","alg":"none","jwk":%s,"alg":"ES256"}' % jwk
    return es256_sign_raw(m, header, json.dumps(m.claims(htm, htu, at), separators=(",", ":")))


def _oversized(m, htm, htu, at):
    # ~20 kB of header padding: must be refused by a size check, not parsed (and never answered with a 500).
    return m.sign(m.header(padding="A" * 20000), m.claims(htm, htu, at))


MALFORMED = {
    "duplicate-alg-member": _duplicate_alg_member,
    "oversized-20kB": _oversized,
    "alg-none": _alg_none,
    "jwk-has-private-d": _jwk_with_private_d,
    "typ-missing": _typ_missing,
    "typ-JWT": _typ_jwt,
    "htm-wrong": _wrong_htm,
    "htu-other-path": _htu_other_path,
    "htu-other-origin": _htu_other_origin,
    "iat-1h-ago": _iat_hour_ago,
    "iat-1h-ahead": _iat_hour_ahead,
    "jti-missing": _jti_missing,
    "signature-corrupted": _signature_corrupted,
    "two-parts": _two_parts,
    "alg-HS256-public-jwk-as-secret": _hs256_keyed_with_public_jwk,
    "kid-instead-of-jwk": _kid_instead_of_jwk,
    "base64-padding": _padded_base64,
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_token_endpoint_refuses_bad_proof(server, case):
    maker = ProofMaker("ES256")
    proof = MALFORMED[case](maker, "POST", server.token_endpoint, None)
    assert_token_error(token_request(server, proof), 400, INVALID_PROOF)


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_resource_refuses_bad_proof(server, case):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    proof = MALFORMED[case](maker, "GET", server.whoami_url, access_token)
    assert_rs_refused(whoami(server, access_token, proof), INVALID_PROOF)


# --------------------------------------------------------------------------------------------- token endpoint
def test_token_proof_replay_is_refused(server):
    maker = ProofMaker("ES256")
    proof = maker.proof("POST", server.token_endpoint)
    assert token_request(server, proof).status_code == 200
    assert_token_error(token_request(server, proof), 400, INVALID_PROOF)


def test_token_proof_jti_reuse_with_new_signature_is_refused(server):
    maker = ProofMaker("ES256")
    jti = str(uuid.uuid4())
    assert token_request(server, maker.proof("POST", server.token_endpoint, jti=jti)).status_code == 200
    # Same jti, later iat, hence a different signature: still a replay.
    second = maker.proof("POST", server.token_endpoint, jti=jti, iat=int(time.time()) + 1)
    assert_token_error(token_request(server, second), 400, INVALID_PROOF)


def test_token_proof_high_s_twin_is_refused(server):
    """ECDSA malleability: the (r, n-s) twin verifies, so only the jti replay check can refuse it."""
    maker = ProofMaker("ES256")
    proof = maker.proof("POST", server.token_endpoint)
    assert token_request(server, proof).status_code == 200
    assert_token_error(token_request(server, high_s_twin(proof)), 400, INVALID_PROOF)


def test_token_without_dpop_header_is_refused_for_dpop_client(server):
    assert_token_error(token_request(server, None), 400, INVALID_PROOF)


@pytest.mark.parametrize("auth", ["post", "basic"])
def test_wrong_client_secret_is_invalid_client(server, auth):
    maker = ProofMaker("ES256")
    response = token_request(server, maker.proof("POST", server.token_endpoint), secret="not-the-secret", auth=auth)
    assert_token_error(response, 401, {"invalid_client"})


def test_unknown_client_is_invalid_client(server):
    maker = ProofMaker("ES256")
    response = requests.post(
        server.token_endpoint,
        data={"grant_type": "client_credentials", "client_id": "no-such-client", "client_secret": CLIENT_SECRET},
        headers={"DPoP": maker.proof("POST", server.token_endpoint)},
        timeout=30,
    )
    assert_token_error(response, 401, {"invalid_client"})


def test_two_dpop_headers_at_token_endpoint(server):
    maker = ProofMaker("ES256")
    body = urlencode({"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}).encode()
    response = raw_request(server, "POST", server.token_endpoint, [
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("DPoP", maker.proof("POST", server.token_endpoint)),
        ("DPoP", maker.proof("POST", server.token_endpoint)),
    ], body)
    assert response.status == 400, response.body
    assert response.json()["error"] in {"invalid_dpop_proof", "invalid_request"}, response.body


# --------------------------------------------------------------------------------------------- resource (whoami)
def test_resource_proof_replay_is_refused(server):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    proof = maker.proof("GET", server.whoami_url, access_token)
    assert whoami(server, access_token, proof).status_code == 200
    assert_rs_refused(whoami(server, access_token, proof), INVALID_PROOF)


def test_resource_proof_for_token_endpoint_url_is_refused(server):
    """A proof made for another URL (here: the token endpoint) is not valid at the resource."""
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    proof = maker.proof("GET", server.token_endpoint, access_token)
    assert_rs_refused(whoami(server, access_token, proof), INVALID_PROOF)


def test_token_endpoint_refuses_proof_made_for_resource(server):
    maker = ProofMaker("ES256")
    assert_token_error(token_request(server, maker.proof("POST", server.whoami_url)), 400, INVALID_PROOF)


def test_bearer_scheme_with_dpop_bound_token_is_refused(server):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    # With a valid proof (downgrade attempt, RFC 9449 §7.2) ...
    assert_rs_refused(whoami(server, access_token, maker.proof("GET", server.whoami_url, access_token), scheme="Bearer"))
    # ... and without any proof.
    assert_rs_refused(whoami(server, access_token, None, scheme="Bearer"))
    assert_rs_refused(whoami(server, access_token, None, scheme="BeArEr"))


def test_missing_authorization_is_refused(server):
    maker = ProofMaker("ES256")
    assert_rs_refused(whoami(server, None, maker.proof("GET", server.whoami_url)))


def test_missing_proof_is_refused(server):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    assert_rs_refused(whoami(server, access_token, None), INVALID_PROOF)


def test_ath_mismatch_is_refused(server):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    other = get_token(server, maker)  # same key, other token: only ath differs
    assert_rs_refused(whoami(server, access_token, maker.proof("GET", server.whoami_url, other)), INVALID_PROOF)


def test_ath_missing_or_hex_is_refused(server):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    assert_rs_refused(whoami(server, access_token, maker.proof("GET", server.whoami_url)), INVALID_PROOF)
    hex_ath = hashlib.sha256(access_token.encode()).hexdigest()
    proof = maker.proof("GET", server.whoami_url, ath=hex_ath)
    assert_rs_refused(whoami(server, access_token, proof), INVALID_PROOF)
    assert ath_of(access_token) != hex_ath


def test_proof_by_other_key_than_cnf_jkt_is_refused(server):
    owner, thief = ProofMaker("ES256"), ProofMaker("ES256")
    access_token = get_token(server, owner)
    proof = thief.proof("GET", server.whoami_url, access_token)
    assert_rs_refused(whoami(server, access_token, proof), {"invalid_dpop_proof", "invalid_token"})


@pytest.mark.parametrize("kid", ["same-kid", "unknown-kid"])
def test_access_token_signed_by_key_not_in_jwks_is_refused(server, jwks, kid):
    """Forge a token with joserfc: real header and claims (cnf.jkt = our DPoP key), signed by an outside key."""
    maker = ProofMaker("ES256")
    genuine = get_token(server, maker)
    header, claims = jwt_parts(genuine)
    if kid == "unknown-kid":
        header["kid"] = "forged-" + str(uuid.uuid4())
    assert header["kid"] != "" and (kid == "unknown-kid" or header["kid"] in {k["kid"] for k in jwks["keys"]})
    forged = jwt.encode(header, claims, ECKey.generate_key("P-256"), algorithms=[header["alg"]])
    response = whoami(server, forged, maker.proof("GET", server.whoami_url, forged))
    assert_rs_refused(response, {"invalid_token"})


def test_two_dpop_headers_at_resource(server):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    response = raw_request(server, "GET", server.whoami_url, [
        ("Authorization", f"DPoP {access_token}"),
        ("DPoP", maker.proof("GET", server.whoami_url, access_token)),
        ("DPoP", maker.proof("GET", server.whoami_url, access_token)),
    ])
    assert response.status == 401, response.body
    assert response.headers.get("WWW-Authenticate", "").startswith("DPoP")


def test_two_authorization_headers_at_resource(server):
    maker = ProofMaker("ES256")
    access_token = get_token(server, maker)
    response = raw_request(server, "GET", server.whoami_url, [
        ("Authorization", f"DPoP {access_token}"),
        ("Authorization", f"DPoP {access_token}"),
        ("DPoP", maker.proof("GET", server.whoami_url, access_token)),
    ])
    assert response.status in (400, 401), response.body
