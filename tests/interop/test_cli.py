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


def test_cli_errors_are_one_clear_line(keyward_bin, tmp_path):
    data = tmp_path / "errors"
    cases = [
        (("serve",), {"KEYWARD_PORT": "eighty"}, "KEYWARD_PORT"),
        (("serve",), {"KEYWARD_MASTER_KEY": "short"}, "KEYWARD_MASTER_KEY"),
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
