"""Process lifecycle: graceful shutdown on SIGTERM, restart on the same data."""

from __future__ import annotations

import requests

from keyward_peer import SHUTDOWN_LIMIT_SECONDS, ProofMaker, get_token, jwt_parts, whoami


def test_sigterm_exits_zero(backend, spawn_server):
    """A node that served traffic exits with code 0 within 10 s of SIGTERM (server-side graceful shutdown)."""
    srv = spawn_server(backend, "sigterm")
    maker = ProofMaker("ES256")
    access_token = get_token(srv, maker)
    assert whoami(srv, access_token, maker.proof("GET", srv.whoami_url, access_token)).status_code == 200
    code = srv.terminate()
    assert code is not None, f"still running {SHUTDOWN_LIMIT_SECONDS:.0f}s after SIGTERM (killed)"
    assert code == 0, f"exit code {code} after SIGTERM"


def test_restart_keeps_realm_keys(backend, spawn_server):
    """Same data (dir or database) after a restart: the realm signing key survives (its kid is still in the JWKS)."""
    first = spawn_server(backend, "restart-a")
    maker = ProofMaker("ES256")
    access_token = get_token(first, maker)
    kid = jwt_parts(access_token)[0]["kid"]
    assert first.terminate() == 0

    # start() again: same data dir (SQLite file and key file) or same database and master key; new port.
    first.start()
    keys = requests.get(first.jwks_uri, timeout=30).json()["keys"]
    assert kid in {k["kid"] for k in keys}
    assert first.terminate() == 0
