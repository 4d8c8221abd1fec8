"""Upgrade: a database written by an earlier Keyward opens under this one, is migrated, and keeps what it held.

    python tests/faults/upgrade.py make --out DIR [--users 6] [--seconds 3]     (KEYWARD_BIN: the earlier build)
    python tests/faults/upgrade.py check --fixture DIR --engine sqlite|postgres (KEYWARD_BIN: this build)

`make` runs the earlier build under load on both engines and keeps, in DIR: the SQLite database and its master key,
a plain `pg_dump` of the PostgreSQL database and its master key, and `facts.json` (the people with their passwords and
phone keys, the installations with their keyward-device state, the realm's signing key ids and the schema version).
The fixtures under tests/faults/fixtures/ were made this way; their README says by which commit.

`check` loads a fixture into a fresh data directory or database, starts this build on it (which applies the newer
migrations) and checks: every migration applied; the same signing keys published, and new tokens signed; every person
signs in with their password, their phone (its credential) sees the challenge and approves it; every installation's
signed call is answered as registered. The last line is `N passed, M failed`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from joserfc.jwk import ECKey

import faultlib
from faultlib import REALM_PATH, FaultServer, Ledger, Load, Phone, ProofMaker, Verdict, log

PUBLIC_URL = "http://keyward.test"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("make", help="write a fixture with the build in KEYWARD_BIN")
    make.add_argument("--out", type=Path, required=True)
    make.add_argument("--users", type=int, default=6)
    make.add_argument("--seconds", type=float, default=3.0)
    check = commands.add_parser("check", help="upgrade a fixture with the build in KEYWARD_BIN and check it")
    check.add_argument("--fixture", type=Path, required=True)
    check.add_argument("--engine", choices=["sqlite", "postgres"], required=True)
    args = parser.parse_args()
    return make_fixture(args) if args.command == "make" else check_fixture(args)


# --------------------------------------------------------------------------------------------- make
def make_fixture(args) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    for engine in ("sqlite", "postgres"):
        binary, device_bin, backend = faultlib.binaries_and_backend(engine)
        workdir = Path(tempfile.mkdtemp(prefix=f"keyward-upgrade-make-{engine}-"))
        server = FaultServer(binary, backend, workdir / "server", faultlib.fault_settings())
        server.public_url = PUBLIC_URL
        ledger = Ledger()
        server.start()
        try:
            faultlib.prepare_realm(server, device_bin)
            users = faultlib.create_users(server, args.users, f"upgrade-{engine}")
            with Load(server, device_bin, users, workdir, ledger, seed=5):
                time.sleep(args.seconds)
            kids = faultlib.signing_key_ids(server)
        finally:
            server.terminate()
        target = args.out / engine
        if target.exists():
            shutil.rmtree(target)
        target.mkdir()
        if engine == "sqlite":
            shutil.copy(server.data_dir / "keyward.db", target / "keyward.db")
            shutil.copy(server.data_dir / "master.key", target / "master.key")
            schema = schema_version_sqlite(target / "keyward.db")
        else:
            dump = subprocess.run([pg_tool("pg_dump"), "--no-owner", "--no-privileges", "--format=plain", backend.database_url],
                                  capture_output=True, text=True, check=True)
            (target / "postgres.sql").write_text(dump.stdout)
            (target / "master.key").write_text(backend.master_key + "\n")
            schema = schema_version_postgres(backend.database_url)
        passwords = {username: password for username, password, _ in users}
        devices = target / "devices"
        registrations = []
        for directory, device_id in ledger.registrations[:8]:  # the rest stay in the database, unchecked: a small fixture
            shutil.copytree(directory, devices / directory.name)
            registrations.append({"state": directory.name, "deviceId": device_id})
        facts = {
            "schemaVersion": schema,
            "port": server.port,  # the installations' state names the server by its address: the check serves there again
            "signingKeyIds": kids,
            "people": [{"username": username, "password": passwords[username], "userId": phone.user_id, "deviceId": phone.device_id,
                        "credentialId": phone.credential_id, "key": dict(phone.maker.key.as_dict(private=True))}
                       for phone, username, _ in ledger.enrollments],
            "registrations": registrations,
            "acknowledgedWrites": ledger.size,
        }
        (target / "facts.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
        log(f"{engine}: schema version {schema}, {len(facts['people'])} people with phones, {len(registrations)} installations, "
            f"{ledger.size} acknowledged writes, in {target}")
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


# --------------------------------------------------------------------------------------------- check
def check_fixture(args) -> int:
    source = args.fixture / args.engine
    facts = json.loads((source / "facts.json").read_text())
    binary, device_bin, backend = faultlib.binaries_and_backend(args.engine)
    key = (source / "master.key").read_text().strip()
    workdir = Path(tempfile.mkdtemp(prefix=f"keyward-upgrade-{args.engine}-"))
    log(f"upgrade on {args.engine}: a schema-version-{facts['schemaVersion']} database with {len(facts['people'])} people and "
        f"{len(facts['registrations'])} installations, in {workdir}")
    verdict = Verdict()
    if args.engine == "sqlite":
        server = FaultServer(binary, backend, workdir / "server", faultlib.fault_settings())
        server.data_dir.mkdir(parents=True)
        shutil.copy(source / "keyward.db", server.data_dir / "keyward.db")
        (server.data_dir / "master.key").write_text(key + "\n")
        os.chmod(server.data_dir / "master.key", 0o600)
    else:
        load = subprocess.run([pg_tool("psql"), "-v", "ON_ERROR_STOP=1", "-q", "-f", str(source / "postgres.sql"), backend.database_url],
                              capture_output=True, text=True)
        if load.returncode != 0:
            verdict.check(False, f"the fixture's dump did not load: {load.stderr[:500]}")
            return faultlib.finish(verdict, workdir)
        server = FaultServer(binary, faultlib.Backend("postgres", backend.database_url, key), workdir / "server", faultlib.fault_settings())
    server.public_url = PUBLIC_URL
    server.port = facts["port"]
    devices = workdir / "devices"
    shutil.copytree(source / "devices", devices) if (source / "devices").exists() else devices.mkdir()
    newest = facts["schemaVersion"]
    try:
        server.start()
        newest = schema_version_sqlite(server.data_dir / "keyward.db") if args.engine == "sqlite" else schema_version_postgres(backend.database_url)
        verdict.check(newest >= facts["schemaVersion"], f"schema version {newest} after starting on version {facts['schemaVersion']}")
        verdict.check("database is up to date" in server.cli("migrate"), "`keyward migrate` finds migrations left to apply")
        log(f"started on it: schema version {facts['schemaVersion']} -> {newest}")
        verdict.check(faultlib.signing_key_ids(server) == facts["signingKeyIds"], f"signing keys changed: {faultlib.signing_key_ids(server)} != {facts['signingKeyIds']}")
        proof = ProofMaker("ES256").proof("POST", f"{PUBLIC_URL}{REALM_PATH}/protocol/openid-connect/token")
        token = faultlib.token_request(server, proof)
        verdict.check(token.status_code == 200, f"a new token was refused: {token.status_code} {token.text[:200]}")

        for person in facts["people"]:
            phone = Phone()
            phone.maker = ProofMaker("ES256", ECKey.import_key(person["key"]))
            phone.user_id, phone.device_id, phone.credential_id = person["userId"], person["deviceId"], person["credentialId"]
            try:
                cid, events = faultlib.waiting_login(server, person["username"], person["password"])
                faultlib.phone_token(server, phone)
                pending = phone.call(server, "GET", f"{REALM_PATH}/push-mfa/login/pending", query=f"?userId={phone.user_id}")
                listed = [challenge.get("cid") for challenge in pending.json().get("challenges", [])] if pending.status_code == 200 else []
                verdict.check(cid in listed, f"{person['username']}'s phone does not see the challenge: {pending.status_code} {pending.text[:200]}")
                approved = faultlib.respond(server, phone, cid, "approve")
                verdict.check(approved.status_code == 200, f"{person['username']}'s phone could not approve: {approved.status_code} {approved.text[:200]}")
                verdict.check(faultlib.first_status(server, events) == "APPROVED", f"{person['username']}'s approval is not seen")
            except Exception as error:  # noqa: BLE001 - each person is checked on their own
                verdict.check(False, f"{person['username']}: {type(error).__name__}: {error}")

        listing = server.cli("apps", "list", "--realm", "demo", "--devices")
        for registration in facts["registrations"]:
            call = faultlib.keyward_device(device_bin, server, devices / registration["state"], "signed-call")
            verdict.check(call.returncode == 0 and call.stdout.startswith("HTTP 200\n")
                          and json.loads(call.stdout.split("\n", 1)[1]).get("status") == "registered",
                          f"installation {registration['deviceId']} is not answered as registered: {call.stdout[:200]} {call.stderr[:200]}")
            verdict.check(listing.count(registration["deviceId"]) == 1, f"installation {registration['deviceId']} is not listed once")
        for status, request, body in faultlib.OBSERVED.failures:
            verdict.check(False, f"{request} answered {status}: {body[:200]}")
    finally:
        server.terminate()
    log(f"upgrade {args.engine}: schema {facts['schemaVersion']} -> {newest}, {len(facts['people'])} people and "
        f"{len(facts['registrations'])} installations checked, wrong {len(verdict.failed)}")
    return faultlib.finish(verdict, workdir)


# --------------------------------------------------------------------------------------------- helpers
def schema_version_sqlite(path: Path) -> int:
    database = sqlite3.connect(path)
    try:
        return database.execute("SELECT max(version) FROM keyward_schema_migrations").fetchone()[0]
    finally:
        database.close()


def schema_version_postgres(url: str) -> int:
    done = subprocess.run([pg_tool("psql"), "-At", "-c", "SELECT max(version) FROM keyward_schema_migrations", url],
                          capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


def pg_tool(name: str) -> str:
    directory = os.environ.get("KW_PG_BIN")
    return str(Path(directory) / name) if directory else name


if __name__ == "__main__":
    sys.exit(main())
