"""The operator CLI against a real data directory: realms, clients, users, key rotation, bad settings."""

from __future__ import annotations

import os
import re
import subprocess

import requests

from keyward_peer import Backend, ProofMaker, jwt_parts


def run(keyward_bin: str, data_dir, *args: str, stdin: str | None = None, env: dict[str, str] | None = None):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KEYWARD_")}
    environment.update(env or {})
    return subprocess.run(
        [keyward_bin, *args, "--data-dir", str(data_dir)], input=stdin, capture_output=True, text=True,
        env=environment, timeout=120,
    )


def test_realm_client_and_rotation_commands_serve_real_tokens(keyward_bin, tmp_path, spawn_server):
    data = tmp_path / "cli" / "data"  # the data directory spawn_server(…, "cli") uses
    created = run(keyward_bin, data, "realms", "create", "acme", "--algorithm", "RS256")
    assert created.returncode == 0, created.stderr
    assert "created realm acme (RS256" in created.stdout

    client = run(keyward_bin, data, "clients", "create", "--realm", "acme", "mobile-app", "--scope", "read write")
    assert client.returncode == 0, client.stderr
    secret = re.search(r"^secret: (\S+)$", client.stdout, re.MULTILINE).group(1)
    assert len(secret) >= 43  # 32 random bytes, base64url

    user = run(keyward_bin, data, "users", "create", "--realm", "acme", "alice", stdin="correct horse\n")
    assert user.returncode == 0, user.stderr
    assert "alice" in run(keyward_bin, data, "users", "list", "--realm", "acme").stdout

    before = run(keyward_bin, data, "keys", "list", "--realm", "acme").stdout.split()[0]
    rotated = run(keyward_bin, data, "keys", "rotate", "--realm", "acme")
    assert rotated.returncode == 0, rotated.stderr
    listing = run(keyward_bin, data, "keys", "list", "--realm", "acme").stdout.splitlines()
    assert len(listing) == 2 and "active" in listing[0] and "retired until" in listing[1]
    assert listing[1].split()[0] == before

    # A server on that data directory issues RS256 tokens signed by the new key, and publishes both keys.
    srv = spawn_server(Backend("sqlite", None, None), "cli")
    token_endpoint = f"{srv.base}/realms/acme/protocol/openid-connect/token"
    maker = ProofMaker("ES256")
    answer = requests.post(
        token_endpoint, data={"grant_type": "client_credentials", "client_id": "mobile-app", "client_secret": secret, "scope": "read"},
        headers={"DPoP": maker.proof("POST", token_endpoint)}, timeout=30,
    )
    assert answer.status_code == 200, answer.text
    header, claims = jwt_parts(answer.json()["access_token"])
    assert header["alg"] == "RS256"
    assert header["kid"] == listing[0].split()[0]
    assert claims["scope"] == "read"
    kids = {key["kid"] for key in requests.get(f"{srv.base}/realms/acme/protocol/openid-connect/certs", timeout=30).json()["keys"]}
    assert kids == {listing[0].split()[0], before}

    deleted = run(keyward_bin, data, "clients", "delete", "--realm", "acme", "mobile-app")
    assert deleted.returncode == 0, deleted.stderr
    assert run(keyward_bin, data, "clients", "list", "--realm", "acme").stdout.strip() == ""


def test_clients_register_redirect_uris_checked_by_the_native_app_rules(keyward_bin, tmp_path):
    data = tmp_path / "redirects"
    assert run(keyward_bin, data, "realms", "create", "acme").returncode == 0
    created = run(
        keyward_bin, data, "clients", "create", "--realm", "acme", "ios-app", "--public", "--first-party",
        "--redirect-uri", "com.example.app:/oauth2redirect", "--redirect-uri", "http://127.0.0.1/callback",
        "--post-logout-redirect-uri", "com.example.app:/signed-out",
    )
    assert created.returncode == 0, created.stderr
    assert "RFC 8252 §8.6" in created.stderr and "com.example.app:/oauth2redirect" in created.stderr, created.stderr
    claimed = run(keyward_bin, data, "clients", "create", "--realm", "acme", "web-app", "--public", "--first-party",
                  "--redirect-uri", "https://app.example.com/cb")
    assert claimed.returncode == 0 and "warning" not in claimed.stderr, claimed.stderr
    listing = run(keyward_bin, data, "clients", "list", "--realm", "acme").stdout
    assert "redirect_uris=com.example.app:/oauth2redirect http://127.0.0.1/callback" in listing, listing
    assert "post_logout_redirect_uris=com.example.app:/signed-out" in listing and "first_party" in listing, listing
    for uri, needle in [
        ("http://localhost:8080/cb", "instead of localhost"),
        ("https://app.example.com/cb#frag", "must not have a fragment"),
        ("myapp:/cb", "reverse domain name"),
    ]:
        refused = run(keyward_bin, data, "clients", "create", "--realm", "acme", "bad-app", "--public", "--redirect-uri", uri)
        assert refused.returncode != 0, uri
        errors = [line for line in refused.stderr.splitlines() if line.strip()]
        assert len(errors) == 1 and errors[0].startswith("Error: --redirect-uri: ") and needle in errors[0], (uri, errors)
    assert "bad-app" not in run(keyward_bin, data, "clients", "list", "--realm", "acme").stdout


def test_cli_errors_are_one_clear_line(keyward_bin, tmp_path):
    data = tmp_path / "errors"
    cases = [
        (("serve",), {"KEYWARD_PORT": "eighty"}, "KEYWARD_PORT"),
        (("serve",), {"KEYWARD_MASTER_KEY": "short"}, "KEYWARD_MASTER_KEY"),
        (("serve", "--log-format", "pretty"), {}, "log.format (env KEYWARD_LOG_FORMAT): 'pretty' is not one of auto, json, text"),
        (("serve", "--database", "mysql://db"), {}, "KEYWARD_DATABASE_URL"),
        (("serve", "--database", "postgres://k@127.0.0.1:1/x"), {}, "KEYWARD_MASTER_KEY"),
        (("realms", "create", "Bad Name"), {}, "realm name"),
        (("clients", "list", "--realm", "ghost"), {}, "does not exist"),
    ]
    for args, env, needle in cases:
        result = run(keyward_bin, data, *args, env=env)
        assert result.returncode != 0, (args, result.stdout)
        errors = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(errors) == 1, (args, result.stderr)
        assert errors[0].startswith("Error: ") and needle in errors[0], (args, errors[0])


def _sign_in(base: str, realm: str, username: str, password: str) -> tuple[requests.Session, int]:
    """Signs in through the real login page; returns the browser and the status of the password post."""
    browser = requests.Session()
    page = browser.get(f"{base}/realms/{realm}/login", timeout=30)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    answer = browser.post(
        f"{base}/realms/{realm}/login", data={"csrf": csrf, "username": username, "password": password}, allow_redirects=False, timeout=30
    )
    return browser, answer.status_code


def test_user_commands_disable_enable_set_password_and_delete(keyward_bin, tmp_path, spawn_server):
    data = tmp_path / "users" / "data"
    assert run(keyward_bin, data, "realms", "create", "acme").returncode == 0
    assert run(keyward_bin, data, "users", "create", "--realm", "acme", "alice", stdin="first password\n").returncode == 0
    srv = spawn_server(Backend("sqlite", None, None), "users")

    browser, status = _sign_in(srv.base, "acme", "alice", "first password")
    assert status == 303
    assert browser.get(f"{srv.base}/realms/acme/account", allow_redirects=False, timeout=30).status_code == 200

    disabled = run(keyward_bin, data, "users", "disable", "--realm", "acme", "alice")
    assert disabled.returncode == 0, disabled.stderr
    assert "disabled user alice" in disabled.stdout
    # The running server sees it on the browser's next request: its session ended with the command.
    ended = browser.get(f"{srv.base}/realms/acme/account", allow_redirects=False, timeout=30)
    assert ended.status_code == 303 and "/realms/acme/login" in ended.headers["Location"]
    assert _sign_in(srv.base, "acme", "alice", "first password")[1] == 403
    assert "\tdisabled" in run(keyward_bin, data, "users", "list", "--realm", "acme").stdout

    assert run(keyward_bin, data, "users", "enable", "--realm", "acme", "alice").returncode == 0
    browser, status = _sign_in(srv.base, "acme", "alice", "first password")
    assert status == 303

    changed = run(keyward_bin, data, "users", "set-password", "--realm", "acme", "alice", env={"KEYWARD_NEW_PASSWORD": "second password"})
    assert changed.returncode == 0, changed.stderr
    assert browser.get(f"{srv.base}/realms/acme/account", allow_redirects=False, timeout=30).status_code == 303
    assert _sign_in(srv.base, "acme", "alice", "first password")[1] == 401
    assert _sign_in(srv.base, "acme", "alice", "second password")[1] == 303

    deleted = run(keyward_bin, data, "users", "delete", "--realm", "acme", "alice")
    assert deleted.returncode == 0, deleted.stderr
    assert "alice" not in run(keyward_bin, data, "users", "list", "--realm", "acme").stdout
    missing = run(keyward_bin, data, "users", "disable", "--realm", "acme", "alice")
    assert missing.returncode != 0
    assert "alice" in missing.stderr and "does not exist" in missing.stderr


def test_backup_and_restore_through_the_cli(keyward_bin, tmp_path):
    source, target = tmp_path / "source", tmp_path / "target"
    assert run(keyward_bin, source, "realms", "create", "acme").returncode == 0
    assert run(keyward_bin, source, "users", "create", "--realm", "acme", "alice", stdin="correct horse\n").returncode == 0

    backup = run(keyward_bin, source, "backup", "--to", str(tmp_path / "copy.db"))
    assert backup.returncode == 0, backup.stderr
    assert "integrity checked" in backup.stdout and "master key is not in the backup" in backup.stdout
    assert oct((tmp_path / "copy.db").stat().st_mode & 0o777) == "0o600"
    again = run(keyward_bin, source, "backup", "--to", str(tmp_path / "copy.db"))
    assert again.returncode != 0 and "exists already" in again.stderr

    no_key = run(keyward_bin, target, "restore", "--from", str(tmp_path / "copy.db"))
    assert no_key.returncode != 0 and "--master-key-file" in no_key.stderr
    restored = run(keyward_bin, target, "restore", "--from", str(tmp_path / "copy.db"), "--master-key-file", str(source / "master.key"))
    assert restored.returncode == 0, restored.stderr
    assert "1 realm whose keys open" in restored.stdout
    assert "alice" in run(keyward_bin, target, "users", "list", "--realm", "acme").stdout
    assert run(keyward_bin, target, "keys", "list", "--realm", "acme").returncode == 0

    # PostgreSQL is pointed at its own tools, and its URL (with the password) is not printed.
    postgres = run(keyward_bin, tmp_path / "pg", "backup", "--to", str(tmp_path / "pg.db"),
                   "--database", "postgres://keyward:hunter2-secret@127.0.0.1:1/keyward")
    assert postgres.returncode != 0 and "pg_dump" in postgres.stderr
    assert "hunter2-secret" not in postgres.stdout + postgres.stderr


def test_scim_tokens_are_printed_once_listed_without_the_secret_and_revoked(keyward_bin, tmp_path, spawn_server):
    data = tmp_path / "scim" / "data"
    assert run(keyward_bin, data, "realms", "create", "acme").returncode == 0
    created = run(keyward_bin, data, "scim-tokens", "create", "--realm", "acme", "--name", "entra")
    assert created.returncode == 0, created.stderr
    token = next(line for line in created.stdout.splitlines() if line.startswith("kwscim_"))
    assert "/scim/v2/realms/acme" in created.stdout
    listed = run(keyward_bin, data, "scim-tokens", "list", "--realm", "acme")
    assert "\tentra\t" in listed.stdout and token not in listed.stdout and token.split(".")[1] not in listed.stdout
    again = run(keyward_bin, data, "scim-tokens", "create", "--realm", "acme", "--name", "entra")
    assert again.returncode != 0 and "named 'entra' already" in again.stderr
    assert "does not exist" in run(keyward_bin, data, "scim-tokens", "list", "--realm", "ghost").stderr

    srv = spawn_server(Backend("sqlite", None, None), "scim")
    config = f"{srv.base}/scim/v2/realms/acme/ServiceProviderConfig"
    answer = requests.get(config, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 200 and answer.headers["Content-Type"] == "application/scim+json", answer.text
    assert answer.json()["authenticationSchemes"][0]["type"] == "oauthbearertoken"

    revoked = run(keyward_bin, data, "scim-tokens", "revoke", "--realm", "acme", "entra")
    assert revoked.returncode == 0, revoked.stderr
    refused = requests.get(config, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert refused.status_code == 401 and refused.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert refused.headers["WWW-Authenticate"].startswith("Bearer ")
    twice = run(keyward_bin, data, "scim-tokens", "revoke", "--realm", "acme", "entra")
    assert twice.returncode != 0 and "no SCIM token" in twice.stderr
