"""Keyward's HTTP contract, checked against a running server by schemathesis.

    KEYWARD_BIN=.build/debug/keyward .venv/bin/python tests/contract/run_contract.py --engine sqlite
    KEYWARD_BIN=... KEYWARD_CONTRACT_DATABASE_URL=postgres://... .venv/bin/python tests/contract/run_contract.py --engine postgres

Starts `keyward serve --demo` on a free loopback port, checks /openapi.json with openapi-spec-validator, creates the
users the hooks (contract_hooks.py) sign in with, runs schemathesis over every operation with the five conformance
checks, and then reads the hooks' record of statuses: the run fails unless every operation in the document
succeeded at least once (a 2xx; a 303 for the form posts whose success is a redirect), so a run that only ever
saw 401s cannot pass. Reports go to --artifacts.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import requests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "interop"))
sys.path.insert(0, str(HERE.parent / "idp"))
from keyward_peer import DEVICE_APP, REALM, Backend, KeywardServer  # noqa: E402
from strict_oidc_provider import StrictOIDCProvider, User  # noqa: E402

# The identity provider the sign-in operations use: the strict oidc-provider-mock of tests/idp, and the person in it.
PROVIDER_ALIAS = "contract-sso"
PROVIDER_PERSON = "contract-person"

CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance,"
          # Beyond the five the contract asks for: a served path under another method answers 405 with Allow.
          "unsupported_method")
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
# The hooks' users (contract_hooks.py names them c<run>-<role>); a run id keeps reruns on one database apart.
ROLES = ["device", "lockout", "pages", "push-page", "remover", "oidc", "one-key"]
# Settings that keep the run about the contract, not about the limits that protect a production realm: thousands of
# sign-ins from one loopback address, many pending pushes, cheap password hashes.
SERVER_SETTINGS = {
    "KEYWARD_ACCOUNTS_LOGIN_ATTEMPTS_PER_ADDRESS": "100000",
    "KEYWARD_ACCOUNTS_BCRYPT_COST": "4",
    "KEYWARD_LOG_FORMAT": "json",
}
APP_CLIENT = "contract-app"
RELAY_CLIENT = "contract-relay"
BROKER_APP = "contract-broker-app"
BROKER_RETURN = "https://app.contract.test/broker"
APP_REDIRECT = "https://app.contract.test/cb"
APP_SIGNED_OUT = "https://app.contract.test/signed-out"
REALM_SETTINGS = ["userVerification=none", "maxPendingChallenges=100", "enrollmentUseRequestUri=true", "waitChallengeEnabled=false"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--examples", type=int, default=int(os.environ.get("KEYWARD_CONTRACT_EXAMPLES", "100")),
                        help="schemathesis examples per operation and phase (default 100)")
    parser.add_argument("--artifacts", type=Path, default=Path(os.environ.get("KEYWARD_CONTRACT_ARTIFACTS", ".ci-artifacts/contract")))
    parser.add_argument("--seed", type=int, default=None, help="schemathesis seed, to replay a run")
    options = parser.parse_args()

    binary = os.environ.get("KEYWARD_BIN")
    if not binary or not os.access(binary, os.X_OK):
        print("KEYWARD_BIN must name the keyward binary to test", file=sys.stderr)
        return 2
    database_url = os.environ.get("KEYWARD_CONTRACT_DATABASE_URL") if options.engine == "postgres" else None
    if options.engine == "postgres" and not database_url:
        print("--engine postgres needs KEYWARD_CONTRACT_DATABASE_URL (an empty database)", file=sys.stderr)
        return 2
    master_key = base64.b64encode(secrets.token_bytes(32)).decode()
    artifacts = options.artifacts / options.engine
    artifacts.mkdir(parents=True, exist_ok=True)
    workdir = artifacts / "server"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir()

    server = KeywardServer(binary, Backend(options.engine, database_url, master_key), workdir, artifacts, "contract",
                           settings=SERVER_SETTINGS).start()
    person = User(sub=PROVIDER_PERSON, claims={"email": f"{PROVIDER_PERSON}@example.test", "email_verified": True})
    try:
        with StrictOIDCProvider(users=[person]).serve() as provider:
            return run(server, binary, options, artifacts, provider)
    finally:
        server.terminate()


def run(server: KeywardServer, binary: str, options, artifacts: Path, provider: StrictOIDCProvider) -> int:
    document_path = artifacts / "openapi.json"
    document_path.write_bytes(requests.get(f"{server.base}/openapi.json", timeout=30).content)
    validated = subprocess.run([sys.executable, "-m", "openapi_spec_validator", str(document_path)], capture_output=True, text=True)
    print(validated.stdout.strip() or validated.stderr.strip())
    if validated.returncode != 0:
        print("openapi-spec-validator refused /openapi.json", file=sys.stderr)
        return 1
    document = json.loads(document_path.read_text())

    password = secrets.token_urlsafe(12)
    run_id = secrets.token_hex(3)
    admin_arguments = ["--data-dir", str(server.data_dir)] + (["--database", server.backend.database_url] if server.backend.database_url else [])
    admin_environment = {**server.environment(), "KEYWARD_PUBLIC_URL": server.base, "KEYWARD_NEW_PASSWORD": password}
    def admin(*args: str) -> str:
        done = subprocess.run([binary, *args, *admin_arguments], env=admin_environment, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"keyward {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout
    admin("push-mfa", "settings", "--realm", REALM, *REALM_SETTINGS)
    admin("apps", "add", "--realm", REALM, DEVICE_APP, "--platform", "ios", "--environment", "production", "--team-id", "ABCDE12345",
          "--bundle-id", "com.example.contract", "--missing-attestation", "accept")
    # Passkeys on, with an Android app and a related origin: the association files then have something to list.
    admin("apps", "add", "--realm", REALM, "contract-android", "--platform", "android", "--environment", "production",
          "--package", "com.example.contract", "--signing-cert-digest", "ab" * 32, "--missing-attestation", "accept")
    admin("realms", "update", REALM, "--passkeys", "optional", "--webauthn-origin", "https://shop.contract.test")
    for role in ROLES:
        admin("users", "create", "--realm", REALM, f"c{run_id}-{role}")
    # An app of the realm's that is not first-party (its authorization requests show the consent page), with Bearer
    # tokens allowed so that the hooks' userinfo calls need no proof.
    admin("clients", "create", "--realm", REALM, APP_CLIENT, "--public", "--allow-bearer", "--scope", "profile",
          "--redirect-uri", APP_REDIRECT, "--post-logout-redirect-uri", APP_SIGNED_OUT)
    # An app of the broker's relay, and a relay client of its own, which stores hand-offs for the take to find.
    admin("clients", "create", "--realm", REALM, BROKER_APP, "--public", "--broker", "--redirect-uri", BROKER_RETURN)
    created = admin("clients", "create", "--realm", REALM, RELAY_CLIENT, "--broker")
    relay_secret = next(line.split(": ", 1)[1] for line in created.splitlines() if line.startswith("secret: "))
    # The admin API's caller: a client of the master realm holding every admin scope.
    if "master" not in admin("realms", "list").split():
        admin("realms", "create", "master")
    created = admin("clients", "create", "--realm", "master", f"contract-admin-{run_id}", "--admin-scope", "all")
    admin_secret = next(line.split(": ", 1)[1] for line in created.splitlines() if line.startswith("secret: "))
    secret = artifacts / "provider-secret"
    secret.write_text(secrets.token_urlsafe(16))
    admin("providers", "add", "--realm", REALM, PROVIDER_ALIAS, "--type", "oidc", "--issuer", provider.base_url, "--client-id", "keyward",
          "--client-secret-file", str(secret))

    record = artifacts / "statuses.ndjson"
    record.unlink(missing_ok=True)
    environment = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "contract_hooks",
        "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent / "interop"), os.environ.get("PYTHONPATH", "")]),
        "KEYWARD_CONTRACT_BASE": server.base,
        "KEYWARD_CONTRACT_RECORD": str(record),
        "KEYWARD_CONTRACT_PASSWORD": password,
        "KEYWARD_CONTRACT_RUN": run_id,
        "KEYWARD_CONTRACT_RELAY_SECRET": relay_secret,
        "KEYWARD_CONTRACT_ADMIN_SECRET": admin_secret,
        "KEYWARD_CONTRACT_PROVIDER": PROVIDER_ALIAS,
        "KEYWARD_CONTRACT_PROVIDER_PERSON": PROVIDER_PERSON,
        "KEYWARD_CONTRACT_ADMIN": json.dumps({"binary": binary, "arguments": admin_arguments, "environment": admin_environment}),
    }
    command = [
        str(Path(sys.executable).with_name("schemathesis")), "run", str(document_path), "--url", server.base,
        "--checks", CHECKS, "--max-examples", str(options.examples),
        # Redirects are answers to check (the pages' 303s), not something to follow.
        "--max-redirects", "0",
        # Event streams follow a challenge for up to a minute; the generated ones end at once, and none may hold the run.
        "--request-timeout", "10",
        "--workers", "1", "--generation-database", "none", "--no-color",
        "--report", "junit,ndjson", "--report-dir", str(artifacts / "report"),
    ]
    if options.seed is not None:
        command += ["--seed", str(options.seed)]
    started = time.monotonic()
    print("$ " + " ".join(command), flush=True)
    schemathesis = subprocess.run(command, env=environment)
    print(f"schemathesis exited {schemathesis.returncode} after {time.monotonic() - started:.0f}s")

    missing = unexercised(document, record)
    if missing:
        print("operations that never succeeded (a run that only saw refusals proves nothing):", file=sys.stderr)
        for operation in missing:
            print(f"  {operation}", file=sys.stderr)
    return 1 if schemathesis.returncode != 0 or missing else 0


def unexercised(document: dict, record: Path) -> list[str]:
    """The operations with no success in the record, after printing every operation's statuses."""
    seen: dict[str, Counter] = defaultdict(Counter)
    if record.exists():
        for line in record.read_text().splitlines():
            entry = json.loads(line)
            seen[entry["operation"]][entry["status"]] += 1
    missing = []
    print(f"{'operation':32} {'calls':>6}  statuses")
    for path, item in sorted(document["paths"].items()):
        for method, operation in sorted(item.items()):
            if method not in METHODS:
                continue
            name = operation["operationId"]
            documented = [int(code) for code in operation["responses"]]
            successes = [code for code in documented if 200 <= code < 300] or [code for code in documented if 300 <= code < 400]
            statuses = seen.get(name, Counter())
            print(f"{name:32} {sum(statuses.values()):6}  " + ", ".join(f"{code}x{count}" for code, count in sorted(statuses.items())))
            if not any(statuses[code] for code in successes):
                missing.append(f"{name} ({method.upper()} {path}): needs one of {successes}, saw {dict(statuses) or 'no call'}")
    return missing


if __name__ == "__main__":
    sys.exit(main())
