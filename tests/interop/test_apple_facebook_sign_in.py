"""Sign in with Apple and Facebook Login, end to end, against tests/idp's doubles: the real `keyward` binary,
`keyward providers add --type apple|facebook` pointed at the doubles with the endpoint flags, and a requests session
as the browser.

Apple: the answer is a cross-site form_post, which a browser sends without the SameSite=Lax transaction cookie;
Keyward answers it with its own page re-posting the same fields, and that same-site POST carries the cookie. The
person's name arrives in the `user` field of the first authorization only and is stored then; a second sign-in is
the same user and keeps the name; a client secret signed with another key or under another key id is refused by
the double (code_exchange_failed). Facebook: sign-up through the code exchange, debug_token and /me with
appsecret_proof; a wrong app secret and a user token of another app are refused, each with its code."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import requests
from joserfc.jwk import ECKey

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "idp"))
from apple_double import AppleDouble  # noqa: E402
from facebook_double import FacebookDouble  # noqa: E402
from relying_party import read_form_post  # noqa: E402

from test_host_tokens import admin  # noqa: E402

CLIENT_ID = "test.keyward.web"
TEAM_ID = "TEAM123456"
KEY_ID = "KEY1234567"
APPLE_KEY = ECKey.generate_key("P-256")
APP_ID, APP_SECRET = "1111", "facebook-app-secret"
OTHER_APP_ID, OTHER_APP_SECRET = "2222", "other-app-secret"


def stored_identity(server, issuer: str, subject: str) -> tuple[str, str | None, str | None]:
    """(user id, display name, email) of the identity as stored: nothing else shows the stored name yet."""
    query = ("SELECT user_id, display_name, email FROM external_identities "
             f"WHERE issuer = '{issuer}' AND subject = '{subject}'")
    if server.backend.database_url:
        done = subprocess.run(["psql", server.backend.database_url, "-At", "-F", "\t", "-c", query],
                              capture_output=True, text=True, timeout=30, check=True)
        rows = [line.split("\t") for line in done.stdout.splitlines() if line]
        rows = [tuple(None if value == "" else value for value in row) for row in rows]
    else:
        with sqlite3.connect(server.data_dir / "keyward.db") as db:
            rows = db.execute(query).fetchall()
    assert len(rows) == 1, rows
    return rows[0]


def signin_cookies(browser: requests.Session) -> dict[str, str]:
    return {c.name: c.value for c in browser.cookies if c.name.startswith("keyward-signin-")}


def start(server, browser: requests.Session, alias: str) -> str:
    started = browser.get(f"{server.base}/realms/demo/v1/auth/{alias}", params={"return": "/realms/demo/account"},
                          allow_redirects=False, timeout=30)
    assert started.status_code == 302, started.text
    return started.headers["Location"]


# ------------------------------------------------------------------------------------------------------ Apple
@pytest.fixture(scope="module")
def apple():
    double = AppleDouble(client_id=CLIENT_ID, team_id=TEAM_ID, key_id=KEY_ID,
                         client_public_key=APPLE_KEY.as_pem(private=False))
    with double.serve() as served:
        yield served


def add_apple(server, keyward_bin, apple, tmp_path, key: ECKey = APPLE_KEY, key_id: str = KEY_ID) -> str:
    alias = f"apple-{uuid.uuid4().hex[:6]}"
    p8 = tmp_path / f"{alias}.p8"
    p8.write_bytes(key.as_pem(private=True))
    endpoints = apple.endpoints()
    added = admin(server, keyward_bin, "providers", "add", "--realm", "demo", alias, "--type", "apple",
                  "--client-id", CLIENT_ID, "--team-id", TEAM_ID, "--key-id", key_id, "--private-key-file", str(p8),
                  "--authorization-endpoint", endpoints["authorization_endpoint"],
                  "--token-endpoint", endpoints["token_endpoint"], "--jwks-uri", endpoints["jwks_uri"])
    assert "(secret signed with the apple key)" in added.stdout and f"/v1/auth/{alias}/callback" in added.stdout, added.stdout
    return alias


@pytest.fixture(scope="module")
def apple_alias(server, keyward_bin, apple, tmp_path_factory):
    return add_apple(server, keyward_bin, apple, tmp_path_factory.mktemp("apple"))


def apple_sign_in(server, alias: str, sub: str, **consent: str) -> tuple[requests.Session, requests.Response, dict]:
    """The whole Apple round trip as a browser makes it; returns the browser, Keyward's last answer and the fields
    Apple posted."""
    browser = requests.Session()
    authorization = start(server, browser, alias)
    query = parse_qs(urlparse(authorization).query)
    assert query["response_mode"] == ["form_post"] and query["code_challenge_method"] == ["S256"], query
    assert "nonce" in query and query["scope"] == ["name email"], query
    # The person approves at Apple; Apple's page auto-submits a form to Keyward's callback.
    approved = requests.post(authorization, data={"sub": sub, **consent}, timeout=30)
    assert approved.status_code == 200, approved.text
    action, method, fields = read_form_post(approved.text)
    assert method == "post" and action == f"{server.base}/realms/demo/v1/auth/{alias}/callback", (action, method)

    # That POST is cross-site: the browser does not send the Lax transaction cookie with it.
    first = requests.post(action, data=fields, allow_redirects=False, timeout=30)
    assert first.status_code == 200, first.text
    assert "script-src 'nonce-" in first.headers["Content-Security-Policy"], first.headers
    repost_action, repost_method, repost_fields = read_form_post(first.text)
    assert repost_method == "post" and repost_action == f"/realms/demo/v1/auth/{alias}/callback", first.text
    assert repost_fields.pop("keyward_reposted") == "1"
    assert repost_fields == fields, "the re-post page carries the same fields"
    nonce = first.headers["Content-Security-Policy"].split("'nonce-", 1)[1].split("'", 1)[0]
    assert f'<script nonce="{nonce}">' in first.text and "<button" in first.text, first.text

    # The page's own POST is same-site: now the cookie goes along.
    landed = browser.post(server.base + repost_action, data={**repost_fields, "keyward_reposted": "1"},
                          allow_redirects=False, timeout=30)
    return browser, landed, fields


def account_username(browser: requests.Session, server, alias: str) -> str:
    page = browser.get(f"{server.base}/realms/demo/account", allow_redirects=False, timeout=30)
    assert page.status_code == 200, page.status_code
    assert f"{alias}-" in page.text, page.text
    return page.text.split(f"{alias}-", 1)[1].split("<", 1)[0]


def test_apple_sign_up_stores_the_first_callbacks_name_and_a_second_sign_in_is_the_same_user(server, apple_alias):
    sub = f"001234.{uuid.uuid4().hex}.0001"
    browser, landed, fields = apple_sign_in(server, apple_alias, sub, first_name="Ada", last_name="Lovelace")
    assert "user" in fields, "Apple sends the name on the first authorization"
    assert landed.status_code == 303 and landed.headers["Location"] == "/realms/demo/account", landed.text
    assert not signin_cookies(browser), "the transaction cookie is cleared"
    username = account_username(browser, server, apple_alias)
    user_id, name, email = stored_identity(server, "https://appleid.apple.com", sub)
    assert name == "Ada Lovelace" and email == f"{sub}@example.test", (name, email)

    again, second, fields = apple_sign_in(server, apple_alias, sub)
    assert "user" not in fields, "Apple sends no name after the first authorization"
    assert second.status_code == 303, second.text
    assert account_username(again, server, apple_alias) == username, "the same user"
    assert stored_identity(server, "https://appleid.apple.com", sub) == (user_id, "Ada Lovelace", email), \
        "the name from the first callback is kept"


def test_a_callback_post_that_carries_its_cookie_is_handled_at_once_and_a_re_post_never_loops(server, apple_alias):
    browser = requests.Session()
    authorization = start(server, browser, apple_alias)
    approved = requests.post(authorization, data={"sub": f"direct-{uuid.uuid4().hex[:8]}"}, timeout=30)
    action, _, fields = read_form_post(approved.text)
    # A browser that does send the cookie (a same-site deployment) needs no hop.
    direct = browser.post(action, data=fields, allow_redirects=False, timeout=30)
    assert direct.status_code == 303 and direct.headers["Location"] == "/realms/demo/account", direct.text

    # A re-posted callback without the cookie (another browser, or the cookie gone) is not re-posted again.
    elsewhere = requests.post(action, data={**fields, "keyward_reposted": "1"}, allow_redirects=False, timeout=30)
    assert elsewhere.status_code == 400 and "transaction_missing" in elsewhere.text, elsewhere.text


def test_apple_cancel_lands_on_the_sign_in_page(server, apple_alias):
    browser = requests.Session()
    authorization = start(server, browser, apple_alias)
    cancelled = requests.post(authorization, data={"action": "deny"}, timeout=30)
    action, _, fields = read_form_post(cancelled.text)
    assert fields["error"] == "user_cancelled_authorize", fields
    landed = browser.post(action, data={**fields, "keyward_reposted": "1"}, allow_redirects=False, timeout=30)
    assert landed.status_code == 303 and landed.headers["Location"] == "/realms/demo/login?notice=provider-refused", landed.text


@pytest.mark.parametrize("wrong", ["key", "key-id"])
def test_a_client_secret_with_the_wrong_key_or_key_id_is_refused_by_apple(server, keyward_bin, apple, tmp_path, wrong):
    if wrong == "key":
        alias = add_apple(server, keyward_bin, apple, tmp_path, key=ECKey.generate_key("P-256"))
    else:
        alias = add_apple(server, keyward_bin, apple, tmp_path, key_id="KEY7654321")
    _, refused, _ = apple_sign_in(server, alias, f"wrong-{wrong}")
    assert refused.status_code == 400 and "code_exchange_failed" in refused.text, refused.text
    assert "invalid_client" in refused.text, refused.text


# ------------------------------------------------------------------------------------------------------ Facebook
@pytest.fixture(scope="module")
def facebook():
    with FacebookDouble(apps={APP_ID: APP_SECRET, OTHER_APP_ID: OTHER_APP_SECRET}).serve() as served:
        yield served


def add_facebook(server, keyward_bin, tmp_path, *, authorization: str, token: str, me: str,
                 secret: str = APP_SECRET) -> str:
    alias = f"fb-{uuid.uuid4().hex[:6]}"
    secret_file = tmp_path / f"{alias}.secret"
    secret_file.write_text(secret + "\n")
    admin(server, keyward_bin, "providers", "add", "--realm", "demo", alias, "--type", "facebook",
          "--client-id", APP_ID, "--client-secret-file", str(secret_file), "--authorization-endpoint", authorization,
          "--token-endpoint", token, "--userinfo-endpoint", me)
    return alias


def graph(facebook, path: str) -> str:
    return f"{facebook.base_url}/v19.0{path}"


@pytest.fixture(scope="module")
def facebook_alias(server, keyward_bin, facebook, tmp_path_factory):
    return add_facebook(server, keyward_bin, tmp_path_factory.mktemp("facebook"), authorization=graph(facebook, "/dialog/oauth"),
                        token=graph(facebook, "/oauth/access_token"), me=graph(facebook, "/me"))


def facebook_sign_in(server, alias: str, sub: str, **consent: str) -> tuple[requests.Session, requests.Response]:
    browser = requests.Session()
    authorization = start(server, browser, alias)
    query = parse_qs(urlparse(authorization).query)
    assert query["code_challenge_method"] == ["S256"] and "state" in query and "nonce" not in query, query
    assert query["scope"] == ["public_profile,email"], query
    approved = requests.post(authorization, data={"sub": sub, **consent}, allow_redirects=False, timeout=30)
    assert approved.status_code == 302, approved.text
    return browser, browser.get(approved.headers["Location"], allow_redirects=False, timeout=30)


def test_facebook_sign_up_and_a_second_sign_in_is_the_same_user(server, facebook_alias):
    sub = f"10{uuid.uuid4().int % 10**14}"
    browser, landed = facebook_sign_in(server, facebook_alias, sub, name="Grace Hopper", email="grace@example.test")
    assert landed.status_code == 303 and landed.headers["Location"] == "/realms/demo/account", landed.text
    username = account_username(browser, server, facebook_alias)
    user_id, name, email = stored_identity(server, "https://www.facebook.com", sub)
    assert (name, email) == ("Grace Hopper", "grace@example.test")

    again, second = facebook_sign_in(server, facebook_alias, sub, name="Grace Hopper", email="grace@example.test")
    assert second.status_code == 303, second.text
    assert account_username(again, server, facebook_alias) == username
    assert stored_identity(server, "https://www.facebook.com", sub)[0] == user_id


def test_facebook_with_a_wrong_app_secret_is_refused_at_the_code_exchange(server, keyward_bin, facebook, tmp_path):
    alias = add_facebook(server, keyward_bin, tmp_path, authorization=graph(facebook, "/dialog/oauth"),
                         token=graph(facebook, "/oauth/access_token"), me=graph(facebook, "/me"), secret="not-the-secret")
    _, refused = facebook_sign_in(server, alias, "3141592")
    assert refused.status_code == 400 and "code_exchange_failed" in refused.text, refused.text


def test_a_user_token_of_another_facebook_app_is_refused(server, keyward_bin, facebook, tmp_path):
    """Token substitution: the token endpoint Keyward is pointed at hands back a user token Facebook issued to
    another app (here a small endpoint in front of the double); debug_token names that app and Keyward refuses."""
    import flask
    from idp_serving import serve_in_thread

    # A genuine user token of the other app, got the way that app would get it.
    dialog = requests.post(graph(facebook, "/dialog/oauth"), params={"client_id": OTHER_APP_ID, "redirect_uri": "https://other.example/cb"},
                           data={"sub": "2718281"}, allow_redirects=False, timeout=30)
    code = parse_qs(urlparse(dialog.headers["Location"]).query)["code"][0]
    other_token = requests.post(graph(facebook, "/oauth/access_token"), data={
        "client_id": OTHER_APP_ID, "client_secret": OTHER_APP_SECRET, "redirect_uri": "https://other.example/cb", "code": code,
    }, timeout=30).json()["access_token"]

    substitute = flask.Flask("substituting_token_endpoint")

    @substitute.post("/v19.0/oauth/access_token")
    def exchange():
        return {"access_token": other_token, "token_type": "bearer", "expires_in": 3600}

    # Keyward finds debug_token beside the token endpoint: passed through to Facebook unchanged.
    @substitute.get("/v19.0/debug_token")
    def debug_token():
        answer = requests.get(graph(facebook, "/debug_token"), params=flask.request.args, timeout=30)
        return answer.json(), answer.status_code

    with serve_in_thread(substitute, "127.0.0.1", 0) as listening:
        alias = add_facebook(server, keyward_bin, tmp_path, authorization=graph(facebook, "/dialog/oauth"),
                             token=f"{listening.base_url}/v19.0/oauth/access_token", me=graph(facebook, "/me"))
        _, refused = facebook_sign_in(server, alias, "2718281")
    assert refused.status_code == 400 and "access_token_wrong_app" in refused.text, refused.text
    assert OTHER_APP_ID in refused.text, refused.text


def test_deleting_an_account_revokes_its_apple_token_at_apple(server, apple, apple_alias):
    """App Store rule 5.1.1(v): the person's Apple authorization ends with their account. Keyward kept the refresh
    token from the code exchange (sealed) and sends it to Apple's /auth/revoke when the account is deleted."""
    sub = f"001234.{uuid.uuid4().hex}.0002"
    browser, landed, _ = apple_sign_in(server, apple_alias, sub, first_name="Grace", last_name="Hopper")
    assert landed.status_code == 303, landed.text
    deleted_user = browser.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]["id"]
    confirm = browser.get(f"{server.base}/realms/demo/account/delete", allow_redirects=False, timeout=30)
    assert confirm.status_code == 200, "Apple's auth_time shows a credential given during this sign-in"
    csrf = re.search(r'name="csrf" value="([^"]+)"', confirm.text).group(1)
    deleted = browser.post(f"{server.base}/realms/demo/account/delete", data={"csrf": csrf}, allow_redirects=False, timeout=30)
    assert deleted.status_code == 303 and deleted.headers["Location"] == "/realms/demo/login?notice=account-deleted", deleted.text
    revoked = [r for r in apple.revocations if r["sub"] == sub]
    assert len(revoked) == 1, apple.revocations
    assert revoked[0]["kind"] == "refresh_token" and revoked[0]["token_type_hint"] == "refresh_token", revoked
    # The identity went with the account: the same Apple ID signing in again is a new user.
    again, landed_again, _ = apple_sign_in(server, apple_alias, sub, first_name="Grace", last_name="Hopper")
    assert landed_again.status_code == 303, landed_again.text
    assert again.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]["id"] != deleted_user


def test_a_facebook_sign_in_never_counts_as_signing_in_again(server, facebook_alias):
    """Security review (session 22) M: Graph says nothing about when the person last gave Facebook their password, and
    the re-authentication request (auth_type=reauthenticate) is a URL parameter the person at the browser can drop.
    So no Facebook sign-in unlocks what asks for a recent sign-in: not deletion, not linking another provider."""
    browser = requests.Session()
    started = browser.get(f"{server.base}/realms/demo/v1/auth/{facebook_alias}", params={"return": "/realms/demo/account", "reauth": "1"},
                          allow_redirects=False, timeout=30)
    authorization = started.headers["Location"]
    assert parse_qs(urlparse(authorization).query)["auth_type"] == ["reauthenticate"]
    stripped = authorization.replace("auth_type=reauthenticate", "")
    approved = requests.post(stripped, data={"sub": f"10{uuid.uuid4().int % 10**14}"}, allow_redirects=False, timeout=30)
    landed = browser.get(approved.headers["Location"], allow_redirects=False, timeout=30)
    assert landed.status_code == 303, landed.text
    gate = browser.get(f"{server.base}/realms/demo/account/delete", allow_redirects=False, timeout=30)
    assert gate.status_code == 303 and "reauth=1" in gate.headers["Location"], "a Facebook sign-in let the account be deleted"
