"""Sign-in with an OpenID Connect provider, against a real one: oidc-provider-mock behind tests/idp's strict wrapper
(PKCE S256 and nonce required) plays the provider, `keyward providers add` registers it, and a requests session plays
the browser — Keyward's start route, the provider's approval, the callback, the account page — then the refusals
each with its stable code: a replayed callback, a missing or tampered transaction cookie, a state from another flow,
a provider error, an unknown provider."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "idp"))
from strict_oidc_provider import StrictOIDCProvider, User  # noqa: E402

from test_host_tokens import admin  # noqa: E402


# Addresses unique to this run: accounts are found by e-mail address, so a database reused between runs must not
# hold this run's addresses already.
RUN = uuid.uuid4().hex[:8]
ALICE = f"alice-{RUN}@example.test"


@pytest.fixture(scope="module")
def idp():
    users = [User(sub="alice", claims={"email": ALICE, "email_verified": True, "name": "Alice"}),
             User(sub="bob", claims={"email": f"bob-{RUN}@example.test", "email_verified": False})]
    with StrictOIDCProvider(users=users).serve() as provider:
        yield provider


@pytest.fixture(scope="module")
def provider_alias(server, keyward_bin, idp, tmp_path_factory):
    alias = f"corp-{uuid.uuid4().hex[:6]}"
    secret = tmp_path_factory.mktemp("secret") / "client-secret"
    secret.write_text("a-client-secret\n")
    added = admin(server, keyward_bin, "providers", "add", "--realm", "demo", alias, "--type", "oidc", "--issuer", idp.base_url,
                  "--client-id", "keyward", "--client-secret-file", str(secret), "--display-name", "Corporate SSO")
    # The admin command knows the public URL from the configuration it reads; the test server got it as a flag.
    assert f"/realms/demo/v1/auth/{alias}/callback" in added.stdout, added.stdout
    listed = admin(server, keyward_bin, "providers", "list", "--realm", "demo")
    assert alias in listed.stdout and "(secret stored sealed)" in listed.stdout, listed.stdout
    return alias


def begin(server, browser: requests.Session, alias: str, path: str = "/realms/demo/account") -> str:
    """Keyward's start route; returns the provider's authorization URL it redirected to."""
    started = browser.get(f"{server.base}/realms/demo/v1/auth/{alias}", params={"return": path}, allow_redirects=False, timeout=30)
    assert started.status_code == 302, started.text
    query = parse_qs(urlparse(started.headers["Location"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["response_type"] == ["code"], query
    assert "nonce" in query and "state" in query, query
    cookies = [c for c in browser.cookies if c.name.startswith("keyward-signin-")]
    assert cookies and all(c.has_nonstandard_attr("HttpOnly") for c in cookies), browser.cookies
    return started.headers["Location"]


def approve(authorization_url: str, sub: str) -> str:
    """The person signs in at the provider; returns the callback URL the provider sends the browser to."""
    approved = requests.post(authorization_url, data={"sub": sub}, allow_redirects=False, timeout=30)
    assert approved.status_code in (302, 303), approved.text
    return approved.headers["Location"]


def sign_in(server, alias: str, sub: str) -> tuple[requests.Session, requests.Response]:
    browser = requests.Session()
    callback = approve(begin(server, browser, alias), sub)
    return browser, browser.get(callback, allow_redirects=False, timeout=30)


def test_a_new_person_signs_up_through_the_provider_and_signs_in_again_as_the_same_user(server, provider_alias):
    browser, landed = sign_in(server, provider_alias, "alice")
    assert landed.status_code == 303, landed.text
    assert landed.headers["Location"] == "/realms/demo/account"
    account = browser.get(f"{server.base}/realms/demo/account", allow_redirects=False, timeout=30)
    assert account.status_code == 200, account.status_code
    username = account.text.split(f"{provider_alias}-", 1)[1].split("<", 1)[0] if f"{provider_alias}-" in account.text else None
    assert username, "the account page names the generated user"
    assert not [c for c in browser.cookies if c.name.startswith("keyward-signin-")], "the transaction cookie is cleared"

    again, second = sign_in(server, provider_alias, "alice")
    assert second.status_code == 303, second.text
    page = again.get(f"{server.base}/realms/demo/account", timeout=30)
    assert f"{provider_alias}-{username}" in page.text, "the second sign-in is the same user"


def test_a_callback_is_good_once_and_only_in_the_browser_that_began_it(server, provider_alias):
    browser = requests.Session()
    callback = approve(begin(server, browser, provider_alias), "bob")
    saved = {c.name: c.value for c in browser.cookies if c.name.startswith("keyward-signin-")}
    first = browser.get(callback, allow_redirects=False, timeout=30)
    assert first.status_code == 303, first.text

    replayed = requests.get(callback, cookies=saved, allow_redirects=False, timeout=30)
    assert replayed.status_code == 400 and "transaction_invalid" in replayed.text, replayed.text

    elsewhere = requests.get(callback, allow_redirects=False, timeout=30)
    assert elsewhere.status_code == 400 and "transaction_missing" in elsewhere.text, elsewhere.text


def test_a_tampered_cookie_a_foreign_state_and_a_provider_error_are_refused(server, provider_alias):
    browser = requests.Session()
    callback = approve(begin(server, browser, provider_alias), "alice")
    (name, value), = [(c.name, c.value) for c in browser.cookies if c.name.startswith("keyward-signin-")]
    tampered = value[:-4] + ("AAAA" if not value.endswith("AAAA") else "BBBB")
    refused = requests.get(callback, cookies={name: tampered}, allow_redirects=False, timeout=30)
    assert refused.status_code == 400 and "transaction_invalid" in refused.text, refused.text

    # Another flow's cookie under this flow's name: the cookie is bound to its name, so it does not open.
    other = requests.Session()
    begin(server, other, provider_alias)
    (_, other_value), = [(c.name, c.value) for c in other.cookies if c.name.startswith("keyward-signin-")]
    swapped = requests.get(callback, cookies={name: other_value}, allow_redirects=False, timeout=30)
    assert swapped.status_code == 400 and "transaction_invalid" in swapped.text, swapped.text

    state = parse_qs(urlparse(callback).query)["state"][0]
    denied = browser.get(f"{server.base}/realms/demo/v1/auth/{provider_alias}/callback",
                         params={"state": state, "error": "access_denied"}, allow_redirects=False, timeout=30)
    assert denied.status_code == 303 and denied.headers["Location"] == "/realms/demo/login?notice=provider-refused", denied.text


def test_the_sign_in_page_offers_the_provider(server, provider_alias):
    page = requests.get(f"{server.base}/realms/demo/login", params={"return_to": "/realms/demo/account"}, timeout=30)
    assert page.status_code == 200
    assert f'id="provider-{provider_alias}"' in page.text and "Corporate SSO" in page.text, page.text
    assert f"/realms/demo/v1/auth/{provider_alias}?return=%2Frealms%2Fdemo%2Faccount" in page.text, page.text


def test_an_unknown_provider_and_a_callback_without_state_have_their_codes(server):
    unknown = requests.get(f"{server.base}/realms/demo/v1/auth/nobody", allow_redirects=False, timeout=30)
    assert unknown.status_code == 404 and "unknown_provider" in unknown.text, unknown.text
    stateless = requests.get(f"{server.base}/realms/demo/v1/auth/nobody/callback", params={"code": "x"}, allow_redirects=False, timeout=30)
    assert stateless.status_code == 400 and "invalid_request" in stateless.text, stateless.text


def add_provider(server, keyward_bin, idp, tmp_path) -> str:
    alias = f"p-{uuid.uuid4().hex[:8]}"
    secret = tmp_path / f"{alias}.secret"
    secret.write_text("another-secret")
    admin(server, keyward_bin, "providers", "add", "--realm", "demo", alias, "--type", "oidc", "--issuer", idp.base_url,
          "--client-id", "keyward", "--client-secret-file", str(secret))
    return alias


def test_a_callback_for_another_provider_and_a_reused_code_are_refused(server, keyward_bin, idp, provider_alias, tmp_path):
    other_users = [User(sub="alice", claims={"email": f"other-alice-{RUN}@example.test"})]
    with StrictOIDCProvider(users=other_users).serve() as other_idp:
        other = add_provider(server, keyward_bin, other_idp, tmp_path)
        # Mix-up: the browser began with provider A; a callback arrives at provider B's endpoint with A's state.
        browser = requests.Session()
        callback = approve(begin(server, browser, provider_alias), "alice")
        query = parse_qs(urlparse(callback).query)
        mixed = browser.get(f"{server.base}/realms/demo/v1/auth/{other}/callback",
                            params={"state": query["state"][0], "code": query["code"][0]}, allow_redirects=False, timeout=30)
        assert mixed.status_code == 400 and "state_mismatch" in mixed.text, mixed.text

    # A code used once, brought to a new flow of the same browser: the provider refuses it (used, and another verifier).
    browser = requests.Session()
    first = approve(begin(server, browser, provider_alias), "alice")
    assert browser.get(first, allow_redirects=False, timeout=30).status_code == 303
    old_code = parse_qs(urlparse(first).query)["code"][0]
    fresh = approve(begin(server, browser, provider_alias), "alice")
    fresh_state = parse_qs(urlparse(fresh).query)["state"][0]
    reused = browser.get(f"{server.base}/realms/demo/v1/auth/{provider_alias}/callback",
                         params={"state": fresh_state, "code": old_code}, allow_redirects=False, timeout=30)
    assert reused.status_code == 400 and "code_exchange_failed" in reused.text, reused.text


def test_a_rotated_provider_key_is_fetched_and_keys_that_cannot_be_fetched_are_a_clear_503(server, keyward_bin, tmp_path):
    users = [User(sub="carol", claims={"email": f"carol-{RUN}@example.test"})]
    with StrictOIDCProvider(users=users).serve() as rotating:
        alias = add_provider(server, keyward_bin, rotating, tmp_path)
        _, first = sign_in(server, alias, "carol")
        assert first.status_code == 303, first.text
        rotating.rotate_key()
        # Keyward refetches a JWKS at most every 10 s; a token under the new kid after that is verified at once.
        time.sleep(10.5)
        _, second = sign_in(server, alias, "carol")
        assert second.status_code == 303, second.text

    with StrictOIDCProvider(users=users).serve() as down:
        down.jwks_down = True
        alias = add_provider(server, keyward_bin, down, tmp_path)
        _, refused = sign_in(server, alias, "carol")
        assert refused.status_code == 503 and "provider_unavailable" in refused.text, refused.text


def test_a_new_identity_with_a_known_email_is_sent_to_sign_in_first(server, keyward_bin, tmp_path):
    address = f"dana-{uuid.uuid4().hex[:8]}@example.test"
    holder = [User(sub="dana", claims={"email": address, "email_verified": True})]
    lookalike = [User(sub="someone-else", claims={"email": address.upper(), "email_verified": True})]
    with StrictOIDCProvider(users=holder).serve() as trusted_idp, StrictOIDCProvider(users=lookalike).serve() as other_idp:
        alias = f"t-{uuid.uuid4().hex[:8]}"
        secret = tmp_path / f"{alias}.secret"
        secret.write_text("trusted-secret")
        admin(server, keyward_bin, "providers", "add", "--realm", "demo", alias, "--type", "oidc", "--issuer", trusted_idp.base_url,
              "--client-id", "keyward", "--client-secret-file", str(secret), "--trust-verified-email")
        _, first = sign_in(server, alias, "dana")  # the address is now held, verified by a trusted provider
        assert first.status_code == 303, first.text
        other = add_provider(server, keyward_bin, other_idp, tmp_path)
        _, refused = sign_in(server, other, "someone-else")
        assert refused.status_code == 409 and "account_exists" in refused.text, refused.text
        assert alias in refused.text, "the page names the way in the person already has"


def test_an_address_an_untrusted_provider_called_verified_does_not_pull_a_trusted_sign_in_into_that_account(
        server, keyward_bin, tmp_path):
    """Security review H1 (pre-hijack): an attacker signs in first through a provider that is not trusted for e-mail
    but says the victim's address is verified; the victim's later sign-in through a trusted provider must not land
    in the attacker's account."""
    victim = f"victim-{uuid.uuid4().hex[:8]}@example.test"
    attacker_users = [User(sub="attacker", claims={"email": victim, "email_verified": True})]
    victim_users = [User(sub="victim", claims={"email": victim, "email_verified": True})]
    with StrictOIDCProvider(users=attacker_users).serve() as untrusted, StrictOIDCProvider(users=victim_users).serve() as trusted:
        evil = add_provider(server, keyward_bin, untrusted, tmp_path)
        alias = f"t-{uuid.uuid4().hex[:8]}"
        secret = tmp_path / f"{alias}.secret"
        secret.write_text("trusted-secret")
        admin(server, keyward_bin, "providers", "add", "--realm", "demo", alias, "--type", "oidc", "--issuer", trusted.base_url,
              "--client-id", "keyward", "--client-secret-file", str(secret), "--trust-verified-email")

        attacker, first = sign_in(server, evil, "attacker")
        assert first.status_code == 303, first.text
        attacker_id = attacker.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]["id"]

        browser, landed = sign_in(server, alias, "victim")
        assert landed.status_code == 303, landed.text
        victim_id = browser.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]["id"]
        assert victim_id != attacker_id, "the victim's trusted sign-in was linked into the attacker's account"


def test_a_provider_answering_from_its_own_session_does_not_count_as_signing_in_again(server, idp, provider_alias):
    """Security review M1: deleting the account asks for a sign-in within the last minutes. A provider that still
    has a session answers without asking for a credential, so anyone at a browser left signed in could pass that
    check through it. Only an id_token whose auth_time falls within this sign-in counts; the sign-in page's
    re-authentication buttons ask the provider to prompt (prompt=login, max_age=0)."""
    idp.remember("alice", int(time.time()) - 3600)
    try:
        browser, landed = sign_in(server, provider_alias, "alice")
        assert landed.status_code == 303 and landed.headers["Location"] == "/realms/demo/account", landed.text
        gate = browser.get(f"{server.base}/realms/demo/account/delete", allow_redirects=False, timeout=30)
        assert gate.status_code == 303, "a sign-in the provider answered from its session let the account be deleted"
        assert gate.headers["Location"] == "/realms/demo/login?reauth=1&return_to=/realms/demo/account/delete", gate.headers

        again = browser.get(f"{server.base}{gate.headers['Location']}", timeout=30)
        button = f"/realms/demo/v1/auth/{provider_alias}?return=%2Frealms%2Fdemo%2Faccount%2Fdelete&amp;reauth=1"
        assert button in again.text, again.text
        started = browser.get(f"{server.base}{button.replace('&amp;', '&')}", allow_redirects=False, timeout=30)
        query = parse_qs(urlparse(started.headers["Location"]).query)
        assert query["prompt"] == ["login"] and query["max_age"] == ["0"], query
        callback = approve(started.headers["Location"], "alice")
        back = browser.get(callback, allow_redirects=False, timeout=30)
        assert back.status_code == 303 and back.headers["Location"] == "/realms/demo/account/delete", back.text
        confirm = browser.get(f"{server.base}/realms/demo/account/delete", allow_redirects=False, timeout=30)
        assert confirm.status_code == 200 and "Delete my account" in confirm.text, "a credential given just now counts"
    finally:
        idp.remember("alice", None)


@pytest.mark.parametrize("target", ["//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "/\t/evil.example"])
def test_a_return_path_off_site_is_dropped(server, provider_alias, target):
    browser = requests.Session()
    started = browser.get(f"{server.base}/realms/demo/v1/auth/{provider_alias}", params={"return": target},
                          allow_redirects=False, timeout=30)
    assert started.status_code == 302, started.text
    landed = browser.get(approve(started.headers["Location"], "bob"), allow_redirects=False, timeout=30)
    assert landed.status_code == 303 and landed.headers["Location"] == "/realms/demo/account", landed.headers


def test_a_disabled_user_cannot_sign_in_through_a_provider(server, keyward_bin, provider_alias):
    browser, landed = sign_in(server, provider_alias, "bob")
    assert landed.status_code == 303, landed.text
    username = browser.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]["username"]
    admin(server, keyward_bin, "users", "disable", "--realm", "demo", username)
    try:
        ended = browser.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30)
        assert ended.status_code == 401, "disabling ends the user's sessions"
        _, refused = sign_in(server, provider_alias, "bob")
        assert refused.status_code == 403 and "account_refused" in refused.text, refused.text
    finally:
        admin(server, keyward_bin, "users", "enable", "--realm", "demo", username)


def test_a_provider_that_cannot_be_reached_is_a_503_whose_page_keeps_the_network_error_to_the_log(server, keyward_bin, tmp_path):
    """Security review L2: the page says what to do and gives the request id; the network library's own words (the
    provider's address, the connection error) go to the log only."""
    users = [User(sub="gone", claims={"email": f"gone-{RUN}@example.test"})]
    with StrictOIDCProvider(users=users).serve() as leaving:
        alias = add_provider(server, keyward_bin, leaving, tmp_path)
        browser = requests.Session()
        callback = approve(begin(server, browser, alias), "gone")
        address = urlparse(leaving.base_url).netloc
    refused = browser.get(callback, allow_redirects=False, timeout=30)
    assert refused.status_code == 503 and "provider_unavailable" in refused.text, refused.text
    # Refused at once or never answered (the stopped double may leave its socket listening): either way a sentence.
    assert ("could not be reached; try again later" in refused.text or "did not answer in time; try again later" in refused.text) \
        and "Request id" in refused.text, refused.text
    assert address not in refused.text and "reached:" not in refused.text, refused.text


def test_a_browser_keeps_at_most_three_unfinished_sign_ins(server, provider_alias):
    """Security review L1: every start sets a cookie of its own flow; a page sending the browser to the start route
    again and again must not pile them up until the browser's requests are too large for the proxy."""
    browser = requests.Session()
    started = [begin(server, browser, provider_alias, path="/realms/demo/account?" + "x" * 400) for _ in range(8)]
    held = [c.name for c in browser.cookies if c.name.startswith("keyward-signin-")]
    assert len(held) == 3, held
    landed = browser.get(approve(started[-1], "bob"), allow_redirects=False, timeout=30)
    assert landed.status_code == 303, "the newest flow is one of those kept: " + landed.text


def local_user(server, keyward_bin, username: str, password: str) -> None:
    env = {**server.environment(), "KEYWARD_NEW_PASSWORD": password}
    cmd = [keyward_bin, "users", "create", "--realm", "demo", username, "--data-dir", str(server.data_dir)]
    if server.backend.database_url:
        cmd += ["--database", server.backend.database_url]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def password_sign_in(server, username: str, password: str) -> requests.Session:
    browser = requests.Session()
    page = browser.get(f"{server.base}/realms/demo/login", timeout=30)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    signed_in = browser.post(f"{server.base}/realms/demo/login", data={"csrf": csrf, "username": username, "password": password},
                             allow_redirects=False, timeout=30)
    assert signed_in.status_code == 303 and signed_in.headers["Location"] == "/realms/demo/account", signed_in.text
    return browser


def link_form(server, browser: requests.Session, alias: str) -> tuple[str, str]:
    """The account page's link button for the provider: its action and CSRF token."""
    page = browser.get(f"{server.base}/realms/demo/account", timeout=30)
    form = re.search(rf'<form method="post" action="([^"]+/link/{re.escape(alias)})" class="inline"><input type="hidden" name="csrf" value="([^"]+)">',
                     page.text)
    assert form, page.text
    return form.group(1), form.group(2)


def test_a_signed_in_user_links_a_provider_then_signs_in_with_it_and_unlinks_it(server, keyward_bin, provider_alias):
    username, subject = f"linker-{uuid.uuid4().hex[:8]}", f"linkee-{uuid.uuid4().hex[:8]}"
    local_user(server, keyward_bin, username, "linker-password-1")
    browser = password_sign_in(server, username, "linker-password-1")
    user_id = browser.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]["id"]

    action, csrf = link_form(server, browser, provider_alias)
    forged = browser.post(f"{server.base}{action}", data={"csrf": "not-it"}, allow_redirects=False, timeout=30)
    assert forged.status_code == 403, "linking needs the page's CSRF token"
    started = browser.post(f"{server.base}{action}", data={"csrf": csrf}, allow_redirects=False, timeout=30)
    assert started.status_code == 302, started.text
    linked = browser.get(approve(started.headers["Location"], subject), allow_redirects=False, timeout=30)
    assert linked.status_code == 303 and linked.headers["Location"] == "/realms/demo/account?notice=linked", linked.text
    page = browser.get(f"{server.base}/realms/demo/account", timeout=30)
    assert "Corporate SSO" in page.text and 'aria-label="Unlink Corporate SSO"' in page.text, page.text
    assert f'id="link-{provider_alias}"' not in page.text, "a linked provider is not offered again"

    other, landed = sign_in(server, provider_alias, subject)
    assert landed.status_code == 303, landed.text
    assert other.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]["id"] == user_id, \
        "the provider now signs in the user who linked it"

    # Another user cannot take the identity over by linking it too.
    thief = f"thief-{uuid.uuid4().hex[:8]}"
    local_user(server, keyward_bin, thief, "thief-password-1")
    thief_browser = password_sign_in(server, thief, "thief-password-1")
    action, csrf = link_form(server, thief_browser, provider_alias)
    started = thief_browser.post(f"{server.base}{action}", data={"csrf": csrf}, allow_redirects=False, timeout=30)
    refused = thief_browser.get(approve(started.headers["Location"], subject), allow_redirects=False, timeout=30)
    assert refused.status_code == 409 and "identity_in_use" in refused.text, refused.text

    # Unlinked, the provider no longer signs this user in.
    page = browser.get(f"{server.base}/realms/demo/account", timeout=30)
    fields = dict(re.findall(r'<input type="hidden" name="(issuer|subject|csrf)" value="([^"]+)">', page.text.split('aria-label="Unlink')[0].rsplit("<form", 1)[1]))
    unlinked = browser.post(f"{server.base}/realms/demo/account/identities/unlink", data=fields, allow_redirects=False, timeout=30)
    assert unlinked.status_code == 303 and unlinked.headers["Location"] == "/realms/demo/account?notice=unlinked", unlinked.text
    after, _ = sign_in(server, provider_alias, subject)
    assert after.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]["id"] != user_id


def test_a_link_finishes_only_in_a_browser_still_signed_in_as_the_user_who_began_it(server, keyward_bin, provider_alias):
    first, second = f"first-{uuid.uuid4().hex[:8]}", f"second-{uuid.uuid4().hex[:8]}"
    local_user(server, keyward_bin, first, "first-password-1")
    local_user(server, keyward_bin, second, "second-password-1")
    browser = password_sign_in(server, first, "first-password-1")
    action, csrf = link_form(server, browser, provider_alias)
    started = browser.post(f"{server.base}{action}", data={"csrf": csrf}, allow_redirects=False, timeout=30)
    callback = approve(started.headers["Location"], f"switch-{uuid.uuid4().hex[:8]}")
    # The same browser signs in as someone else before the provider answers.
    page = browser.get(f"{server.base}/realms/demo/login?reauth=1", timeout=30)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    browser.post(f"{server.base}/realms/demo/login", data={"csrf": csrf, "username": second, "password": "second-password-1"}, timeout=30)
    refused = browser.get(callback, allow_redirects=False, timeout=30)
    assert refused.status_code == 400 and "transaction_invalid" in refused.text, refused.text


def test_linking_asks_for_a_recent_sign_in(server, idp, provider_alias):
    """A provider that answered from its own session is no recent sign-in (security review M1), so linking from such
    a session sends the person to sign in again first."""
    subject = f"stale-{uuid.uuid4().hex[:8]}"
    idp.remember(subject, int(time.time()) - 3600)
    try:
        browser, landed = sign_in(server, provider_alias, subject)
        assert landed.status_code == 303, landed.text
        page = browser.get(f"{server.base}/realms/demo/account", timeout=30)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        started = browser.post(f"{server.base}/realms/demo/account/link/{provider_alias}", data={"csrf": csrf}, allow_redirects=False,
                               timeout=30)
        assert started.status_code == 303, started.text
        assert started.headers["Location"].startswith("/realms/demo/login?reauth=1&return_to=/realms/demo/account"), started.headers
    finally:
        idp.remember(subject, None)


def test_a_provider_can_name_new_users_by_a_claim(server, keyward_bin, tmp_path):
    handle = f"ada-{uuid.uuid4().hex[:8]}"
    users = [User(sub="ada", claims={"preferred_username": handle}), User(sub="imposter", claims={"preferred_username": "test"})]
    with StrictOIDCProvider(users=users).serve() as named_idp:
        alias = f"n-{uuid.uuid4().hex[:8]}"
        secret = tmp_path / f"{alias}.secret"
        secret.write_text("named-secret")
        added = admin(server, keyward_bin, "providers", "add", "--realm", "demo", alias, "--type", "oidc", "--issuer", named_idp.base_url,
                      "--client-id", "keyward", "--client-secret-file", str(secret), "--username-claim", "preferred_username")
        listed = admin(server, keyward_bin, "providers", "list", "--realm", "demo")
        assert "named by the preferred_username claim when free" in listed.stdout, listed.stdout
        browser, landed = sign_in(server, alias, "ada")
        assert landed.status_code == 303, landed.text
        assert browser.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]["username"] == handle
        # The demo realm's local user "test" keeps its name: the newcomer gets a generated one, not that account.
        other, _ = sign_in(server, alias, "imposter")
        taken = other.get(f"{server.base}/realms/demo/v1/auth/session", timeout=30).json()["user"]
        assert taken["username"].startswith(f"{alias}-"), taken
    bad = admin(server, keyward_bin, "providers", "add", "--realm", "demo", f"x-{uuid.uuid4().hex[:6]}", "--type", "google",
                "--client-id", "c", "--client-secret-file", str(secret), "--username-claim", "sub", check=False)
    assert bad.returncode != 0 and "username-claim" in bad.stderr, bad.stderr


def test_callbacks_from_an_address_whose_exchanges_keep_failing_are_refused_unsent(spawn_server, keyward_bin, tmp_path):
    """Security review L4: a loop of starts and callbacks with made-up codes would have Keyward send a token request
    under its client credentials each time. After accounts.providerCallbackFailuresPerAddress refused exchanges from
    one address (per 10 minutes), that address's callbacks are refused before the provider is called."""
    from keyward_peer import Backend
    srv = spawn_server(Backend("sqlite", None, None), "callback-limit", {
        "KEYWARD_HTTP_TRUSTED_PROXIES": "127.0.0.1/32", "KEYWARD_ACCOUNTS_PROVIDER_CALLBACK_FAILURES_PER_ADDRESS": "2",
    })
    with StrictOIDCProvider(users=[User(sub="limited", claims={})]).serve() as limited_idp:
        alias = add_provider(srv, keyward_bin, limited_idp, tmp_path)

        def made_up_callback(address: str) -> requests.Response:
            browser = requests.Session()
            started = browser.get(f"{srv.base}/realms/demo/v1/auth/{alias}", headers={"X-Forwarded-For": address},
                                  allow_redirects=False, timeout=30)
            state = parse_qs(urlparse(started.headers["Location"]).query)["state"][0]
            return browser.get(f"{srv.base}/realms/demo/v1/auth/{alias}/callback", params={"state": state, "code": "made-up"},
                               headers={"X-Forwarded-For": address}, allow_redirects=False, timeout=30)

        assert [made_up_callback("198.51.100.7").status_code for _ in range(2)] == [400, 400]
        held = made_up_callback("198.51.100.7")
        assert held.status_code == 429 and "too_many_attempts" in held.text and int(held.headers["Retry-After"]) > 0, held.text
        assert made_up_callback("198.51.100.8").status_code == 400, "another client is not held back"
