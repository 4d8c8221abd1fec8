"""Fixtures: one real Keyward server per storage backend, shared by the whole session.

Environment:
  KEYWARD_BIN                    path of the `keyward` binary (required; CI uses the release build)
  KEYWARD_INTEROP_DATABASE_URL   postgres://... database for the PostgreSQL variant (skipped without it, except CI=true)
  KEYWARD_INTEROP_MASTER_KEY     master key for the PostgreSQL variant (default: derived from the URL, so reruns
                                 against the same database can still open its sealed keys)
  KEYWARD_INTEROP_ARTIFACTS      directory to copy the server logs into (CI: .ci-artifacts/interop)
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import pytest
import requests

from keyward_peer import Backend, KeywardServer

IN_CI = os.environ.get("CI", "").lower() == "true"


def _artifacts() -> Path | None:
    value = os.environ.get("KEYWARD_INTEROP_ARTIFACTS")
    return Path(value) if value else None


@pytest.fixture(scope="session")
def keyward_bin() -> str:
    binary = os.environ.get("KEYWARD_BIN")
    if not binary:
        message = "KEYWARD_BIN is not set (path of the keyward binary: swift build --show-bin-path)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        pytest.fail(f"KEYWARD_BIN={binary} is not an executable file")
    return binary


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def backend(request) -> Backend:
    if request.param == "sqlite":
        # Embedded default: SQLite under the data dir, generated master-key file.
        return Backend("sqlite", None, None)
    url = os.environ.get("KEYWARD_INTEROP_DATABASE_URL")
    if not url:
        message = "KEYWARD_INTEROP_DATABASE_URL is not set: PostgreSQL variant not run"
        if IN_CI:
            pytest.fail(message + " (CI=true requires it)")
        pytest.skip(message)
    key = os.environ.get("KEYWARD_INTEROP_MASTER_KEY") or base64.b64encode(
        hashlib.sha256(b"keyward-interop-master-key:" + url.encode()).digest()
    ).decode()
    return Backend("postgres", url, key)


@pytest.fixture(scope="session")
def server(backend, keyward_bin, tmp_path_factory):
    """The shared server. Its teardown asserts the graceful-shutdown requirement (SIGTERM → exit 0 within 10 s)."""
    srv = KeywardServer(keyward_bin, backend, tmp_path_factory.mktemp(f"keyward-{backend.name}"), _artifacts(), "session")
    try:
        srv.start()
    except Exception as exc:  # noqa: BLE001 - report the log with any start failure
        srv.terminate()
        pytest.fail(str(exc), pytrace=False)
    yield srv
    was_running = srv.running()
    code = srv.terminate()
    if not was_running:
        pytest.fail(f"keyward ({backend.name}) died during the tests (exit {code})\n{srv.log_tail()}", pytrace=False)
    if code != 0:
        pytest.fail(f"keyward ({backend.name}) did not exit 0 within 10 s of SIGTERM (exit {code})\n{srv.log_tail()}",
                    pytrace=False)


class Spawner:
    """Starts extra servers inside one test; anything left running is killed at teardown."""

    def __init__(self, keyward_bin: str, tmp_path: Path):
        self.keyward_bin = keyward_bin
        self.tmp_path = tmp_path
        self.servers: list[KeywardServer] = []

    def __call__(self, backend: Backend, label: str, settings: dict[str, str] | None = None) -> KeywardServer:
        """`settings`: extra KEYWARD_* environment variables for this server only."""
        srv = KeywardServer(self.keyward_bin, backend, self.tmp_path / label, _artifacts(), label, settings)
        self.servers.append(srv)
        return srv.start()


@pytest.fixture
def spawn_server(keyward_bin, tmp_path):
    spawner = Spawner(keyward_bin, tmp_path)
    yield spawner
    for srv in spawner.servers:
        srv.terminate()


@pytest.fixture(scope="session")
def discovery(server) -> dict:
    response = requests.get(server.discovery_url, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="session")
def jwks(server) -> dict:
    response = requests.get(server.jwks_uri, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def pytest_collection_modifyitems(config, items):
    """Marks each test with the engine it runs on (`engine_sqlite`, `engine_postgres`), or `engine_none` when it
    starts no shared server of either; CI runs `-m engine_postgres` and `-m "not engine_postgres"` side by side."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        engine = callspec.params.get("backend") if callspec else None
        item.add_marker(f"engine_{engine or 'none'}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, append the tail of the involved server logs to the report."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    funcargs = getattr(item, "funcargs", {}) or {}
    servers = []
    if isinstance(funcargs.get("server"), KeywardServer):
        servers.append(funcargs["server"])
    if isinstance(funcargs.get("spawn_server"), Spawner):
        servers.extend(funcargs["spawn_server"].servers)
    for srv in servers:
        report.sections.append((f"keyward log ({srv.backend.name}, {srv.label})", srv.log_tail(80)))


@pytest.fixture(scope="session")
def passkey_server(backend, keyward_bin, tmp_path_factory):
    """A server whose public URL names a host (browsers refuse an IP address as a WebAuthn RP ID), with passkeys
    offered in the demo realm; shared by the passkey tests of one engine."""
    from test_host_tokens import admin

    server = KeywardServer(keyward_bin, backend, tmp_path_factory.mktemp(f"passkeys-{backend.name}"), _artifacts(), "passkeys",
                           public_host="localhost").start()
    try:
        admin(server, keyward_bin, "realms", "update", "demo", "--passkeys", "optional")
        yield server
    finally:
        server.terminate()

