"""Discovery, JWKS and operations endpoints, read by plain HTTP clients."""

from __future__ import annotations

import requests
from joserfc.jwk import KeySet

PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "k", "oth"}


def test_discovery_is_consistent(server, discovery):
    assert discovery["issuer"] == server.issuer
    assert discovery["jwks_uri"] == server.jwks_uri
    assert discovery["token_endpoint"] == server.token_endpoint
    algs = discovery["dpop_signing_alg_values_supported"]
    assert isinstance(algs, list) and "ES256" in algs
    # Never advertise what a DPoP verifier must refuse.
    assert "none" not in algs and not any(a.startswith("HS") for a in algs)
    if "grant_types_supported" in discovery:
        assert "client_credentials" in discovery["grant_types_supported"]
    if "token_endpoint_auth_methods_supported" in discovery:
        assert {"client_secret_basic", "client_secret_post"} <= set(discovery["token_endpoint_auth_methods_supported"])


def test_discovery_of_unknown_realm_is_404(server):
    response = requests.get(f"{server.base}/realms/no-such-realm/.well-known/openid-configuration", timeout=30)
    assert response.status_code == 404


def test_jwks_has_public_keys_only(jwks):
    keys = jwks["keys"]
    assert keys, "JWKS is empty"
    for key in keys:
        assert key.get("kid"), f"key without kid: {key}"
        assert not PRIVATE_MEMBERS & set(key), f"JWKS publishes private material: {sorted(PRIVATE_MEMBERS & set(key))}"
    # joserfc can import every published key.
    key_set = KeySet.import_key_set(jwks)
    assert len(key_set.keys) == len(keys)


def test_health_ready_and_metrics(server):
    assert requests.get(f"{server.base}/healthz", timeout=30).status_code == 200
    assert requests.get(f"{server.base}/readyz", timeout=30).status_code == 200
    metrics = requests.get(f"{server.base}/metrics", timeout=30)
    assert metrics.status_code == 200
    assert metrics.headers.get("Content-Type", "").startswith("text/plain")
    assert "# TYPE " in metrics.text, metrics.text[:500]
