"""The admin API driven by an independent OAuth client: requests-oauth2client gets DPoP-bound client_credentials
tokens for clients granted admin scopes with the CLI, and its DPoP auth signs every call. Creates a provider, a client
and a user, reads, updates with If-Match, loses an update (412), deletes; scopes and realms enforced; replayed proofs
refused. Both engines."""

from __future__ import annotations

import base64
import hashlib
import re
import uuid

import pytest
import requests
from requests_oauth2client import DPoPKey, DPoPToken, OAuth2Client

from test_host_tokens import admin

TIMEOUT = 30


def issuer(server, realm: str) -> str:
    return f"{server.base}/realms/{realm}"


def token_for(server, realm: str, client_id: str, secret: str, scope: str | None = None) -> DPoPToken:
    client = OAuth2Client(token_endpoint=f"{issuer(server, realm)}/protocol/openid-connect/token", client_id=client_id,
                          client_secret=secret, testing=True)
    token = client.client_credentials(scope=scope, dpop=True, dpop_key=DPoPKey.generate(alg="ES256"))
    assert isinstance(token, DPoPToken), token
    return token


def admin_client(server, keyward_bin, realm: str, client_id: str, scopes: str) -> str:
    done = admin(server, keyward_bin, "clients", "create", "--realm", realm, client_id, "--admin-scope", scopes)
    assert f"admin scopes on" in done.stdout, done.stdout
    return re.search(r"^secret: (\S+)$", done.stdout, re.MULTILINE).group(1)


def signed(token: DPoPToken, url: str, method: str = "GET") -> dict[str, str]:
    """The headers requests-oauth2client would send, made by hand: its auth treats every 401 with a DPoP challenge
    as a nonce request (it does not read the challenge's error), so a call expected to be refused is sent so."""
    ath = base64.urlsafe_b64encode(hashlib.sha256(token.access_token.encode()).digest()).rstrip(b"=").decode()
    return {"Authorization": f"DPoP {token.access_token}", "DPoP": str(token.dpop_key.proof(htm=method, htu=url, ath=ath))}


def problem(response: requests.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/problem+json", response.headers
    body = response.json()
    assert body["code"] == code and body["status"] == status and body["type"] == f"urn:keyward:problem:{code}", body
    assert body["detail"] and body["request_id"], body
    return body


@pytest.fixture(scope="module")
def realms(server, keyward_bin):
    """Two realms, each with an operator client holding admin scopes."""
    names = ["adm-" + uuid.uuid4().hex[:8], "adm-" + uuid.uuid4().hex[:8]]
    for name in names:
        admin(server, keyward_bin, "realms", "create", name)
    scopes = "users:read,users:write,clients:read,clients:write,providers:read,providers:write"
    secrets = [admin_client(server, keyward_bin, name, "ops", scopes) for name in names]
    return list(zip(names, secrets))


def test_clients_and_users_end_to_end(server, realms):
    (realm, secret), _ = realms
    token = token_for(server, realm, "ops", secret)
    assert "admin:users:write" in token.scope.split()
    base = f"{server.base}/admin/realms/{realm}"

    created = requests.post(f"{base}/clients", auth=token, timeout=TIMEOUT, json={
        "client_id": "reporting", "admin_scopes": ["users:read"], "scope": "reports",
    })
    assert created.status_code == 201, created.text
    assert created.json()["admin_scopes"] == ["users:read"]
    reporting = token_for(server, realm, "reporting", created.json()["client_secret"])

    provider = requests.post(f"{base}/providers", auth=token, timeout=TIMEOUT, json={
        "alias": "corp", "type": "oidc", "issuer": "https://login.corp.example", "client_id": "keyward", "client_secret": "s3cret-value",
    })
    assert provider.status_code == 201, provider.text
    assert provider.json()["has_client_secret"] is True and "client_secret" not in provider.json()
    assert provider.json()["redirect_uri"] == f"{issuer(server, realm)}/v1/auth/corp/callback"
    assert requests.get(f"{base}/providers/corp", auth=token, timeout=TIMEOUT).json()["issuer"] == "https://login.corp.example"
    assert requests.delete(f"{base}/providers/corp", auth=token, timeout=TIMEOUT).status_code == 204

    user = requests.post(f"{base}/users", auth=token, timeout=TIMEOUT, json={"username": "grace", "password": "a long passphrase"})
    assert user.status_code == 201, user.text
    user_url = f"{server.base}{user.headers['Location']}"
    first_etag = user.headers["ETag"]

    read = requests.get(user_url, auth=reporting, timeout=TIMEOUT)
    assert read.status_code == 200 and read.json()["username"] == "grace" and read.headers["ETag"] == first_etag, read.text

    updated = requests.patch(user_url, auth=token, timeout=TIMEOUT, json={"username": "grace.h"}, headers={"If-Match": first_etag})
    assert updated.status_code == 200, updated.text
    assert updated.headers["ETag"] != first_etag and updated.json()["username"] == "grace.h"

    # A second operator who read the user before the rename loses: nothing is written.
    lost = requests.patch(user_url, auth=token, timeout=TIMEOUT, json={"enabled": False}, headers={"If-Match": first_etag})
    problem(lost, 412, "precondition_failed")
    assert requests.get(user_url, auth=token, timeout=TIMEOUT).json()["enabled"] is True

    # users:read cannot write, nor make a client.
    problem(requests.post(f"{base}/users", auth=reporting, timeout=TIMEOUT, json={"username": "mallory"}), 403, "insufficient_scope")
    problem(requests.delete(user_url, auth=reporting, timeout=TIMEOUT), 403, "insufficient_scope")
    problem(requests.get(f"{base}/clients", auth=reporting, timeout=TIMEOUT), 403, "insufficient_scope")
    # A client that may make clients cannot make a stronger one than itself.
    stronger = requests.post(f"{base}/clients", auth=token, timeout=TIMEOUT, json={"client_id": "stronger", "admin_scopes": ["realms:write"]})
    problem(stronger, 403, "insufficient_scope")

    page = requests.get(f"{base}/users", params={"limit": 1, "username_prefix": "grace"}, auth=token, timeout=TIMEOUT)
    assert page.status_code == 200 and [u["username"] for u in page.json()["items"]] == ["grace.h"], page.text

    deleted = requests.delete(user_url, auth=token, timeout=TIMEOUT, headers={"If-Match": updated.headers["ETag"]})
    assert deleted.status_code == 204, deleted.text
    problem(requests.get(user_url, auth=token, timeout=TIMEOUT), 404, "not_found")

    # Deleting the reporting client ends what its token can do at once.
    assert requests.delete(f"{base}/clients/reporting", auth=token, timeout=TIMEOUT).status_code == 204
    problem(requests.get(f"{base}/users", headers=signed(reporting, f"{base}/users"), timeout=TIMEOUT), 401, "invalid_token")


def test_a_realms_client_cannot_touch_another_realm(server, realms):
    (realm_a, secret_a), (realm_b, _) = realms
    token = token_for(server, realm_a, "ops", secret_a)
    url = f"{server.base}/admin/realms/{realm_b}/users"
    crossing = requests.get(url, headers=signed(token, url), timeout=TIMEOUT)
    problem(crossing, 401, "invalid_token")
    assert crossing.headers["WWW-Authenticate"].startswith("DPoP")
    problem(requests.get(f"{server.base}/admin/realms", auth=token, timeout=TIMEOUT), 403, "realm_forbidden")


def test_replayed_and_foreign_proofs_are_refused(server, realms):
    (realm, secret), _ = realms
    token = token_for(server, realm, "ops", secret)
    url = f"{server.base}/admin/realms/{realm}/users"
    headers = signed(token, url)
    ath = base64.urlsafe_b64encode(hashlib.sha256(token.access_token.encode()).digest()).rstrip(b"=").decode()
    assert requests.get(url, headers=headers, timeout=TIMEOUT).status_code == 200
    problem(requests.get(url, headers=headers, timeout=TIMEOUT), 401, "invalid_dpop_proof")
    stranger = DPoPKey.generate(alg="ES256")
    foreign = {"Authorization": f"DPoP {token.access_token}", "DPoP": str(stranger.proof(htm="GET", htu=url, ath=ath))}
    problem(requests.get(url, headers=foreign, timeout=TIMEOUT), 401, "invalid_dpop_proof")
    bearer = requests.get(url, headers={"Authorization": f"Bearer {token.access_token}"}, timeout=TIMEOUT)
    problem(bearer, 401, "invalid_token")


def test_hostile_inputs_get_problems_never_5xx(server, realms):
    (realm, secret), _ = realms
    token = token_for(server, realm, "ops", secret)
    base = f"{server.base}/admin/realms/{realm}"
    cases = [
        ("post", f"{base}/users", {"data": "x" * (200 * 1024), "headers": {"Content-Type": "application/json"}}, 413, "payload_too_large"),
        ("post", f"{base}/users", {"json": {"username": "x", "roles": ["admin"]}}, 400, "invalid_request"),
        ("post", f"{base}/users", {"data": "[" * 10000, "headers": {"Content-Type": "application/json"}}, 400, "invalid_request"),
        ("post", f"{base}/users", {"data": "username=x"}, 415, "unsupported_media_type"),
        ("get", f"{base}/users?cursor=%00%00", {}, 400, "invalid_request"),
        ("get", f"{base}/users?limit=-1", {}, 400, "invalid_request"),
        ("patch", f"{base}/users/nobody", {"json": {"enabled": False}}, 404, "not_found"),
        ("patch", f"{base}/users/nobody", {"json": {"enabled": "no"}}, 400, "invalid_request"),
        ("get", f"{server.base}/admin/realms/no-such-realm/users", {}, 404, "realm_not_found"),
    ]
    for method, url, options, status, code in cases:
        response = getattr(requests, method)(url, auth=token, timeout=TIMEOUT, **options)
        problem(response, status, code)
