"""PostgreSQL restarts under load: the cluster is stopped (fast and immediate shutdown in turn), left down a moment and
started again while phones, apps and installations keep writing through two Keyward nodes. Keyward must keep running,
report unready while the database is gone and ready again after, answer requests in the gap with a 503 and a stable
code (never a 500, never a hang past the client's 10 s), replace its pooled connections, listen for challenge changes
again (a browser's event stream on one node sees an approval made through the other after a restart), and lose no
acknowledged write.

    python tests/faults/pgrestart.py [--restarts 6] [--users 16] [--down 2.0]

Run through tests/faults/run, which provides the PostgreSQL cluster and the database. The last line is
`N passed, M failed`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

import faultlib
from faultlib import FaultServer, Ledger, Load, PostgresCluster, Verdict, log

PUBLIC_URL = "http://keyward.test"


class Readiness(threading.Thread):
    """Asks /readyz of a node every 100 ms and keeps every probe: when it was sent, when answered, and the answer."""

    def __init__(self, server: FaultServer):
        super().__init__(daemon=True)
        self.server = server
        self.stop = threading.Event()
        self.probes: list[tuple[float, float, str]] = []

    def run(self) -> None:
        while not self.stop.is_set():
            sent = time.monotonic()
            try:
                answer = requests.get(f"{self.server.base}/readyz", timeout=faultlib.TIMEOUT)
                state = "ready" if answer.status_code == 200 else f"{answer.status_code} {error_code(answer)}"
            except requests.Timeout:
                state = "no answer"
            except requests.RequestException as error:
                state = type(error).__name__
            self.probes.append((sent, time.monotonic(), state))
            self.stop.wait(0.1)

    def ready_after(self, moment: float) -> float | None:
        """When the first probe sent after `moment` that found the node ready was answered."""
        return next((answered for sent, answered, state in list(self.probes) if sent >= moment and state == "ready"), None)

    def answers_between(self, start: float, end: float) -> set[str]:
        """What probes under way while the database was down were told."""
        return {state for sent, answered, state in list(self.probes) if sent <= end and answered >= start}

    def slowest(self) -> float:
        return max((answered - sent for sent, answered, _ in self.probes), default=0.0)


def error_code(answer: requests.Response) -> str:
    try:
        return str(answer.json().get("error"))
    except ValueError:
        return f"not JSON: {answer.text[:80]!r}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restarts", type=int, default=6, help="restarts, fast and immediate in turn (6)")
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--down", type=float, default=2.0, help="seconds the cluster stays down each time (2)")
    args = parser.parse_args()
    binary, device_bin, backend = faultlib.binaries_and_backend("postgres")
    cluster = PostgresCluster()
    workdir = Path(tempfile.mkdtemp(prefix="keyward-pgrestart-"))
    log(f"PostgreSQL restarts: {args.restarts}, down {args.down} s each, {args.users} people, in {workdir}")
    # Streams re-read their challenge only every 10 s: an approval seen sooner came through LISTEN/NOTIFY.
    settings = {**faultlib.fault_settings(), "KEYWARD_SSE_POLL_MILLIS": "10000"}
    node_a = FaultServer(binary, backend, workdir / "a", settings)
    node_a.public_url = PUBLIC_URL
    node_b = FaultServer(binary, backend, workdir / "b", settings)
    node_b.public_url = PUBLIC_URL
    verdict = Verdict()
    ledger = Ledger()
    recoveries: list[float] = []
    readiness = Readiness(node_a)
    try:
        node_a.start()
        node_b.start()
        faultlib.prepare_realm(node_a, device_bin)
        users = faultlib.create_users(node_a, args.users + 1, "pg")
        watched_user, users = users[0], users[1:]
        readiness.start()
        with Load(node_a, device_bin, users, workdir, ledger, seed=1):
            for number in range(1, args.restarts + 1):
                mode = "fast" if number % 2 else "immediate"
                time.sleep(1.5)
                stopped = time.monotonic()
                cluster.stop(mode)
                time.sleep(args.down)
                started = time.monotonic()
                cluster.start()
                ready = wait_ready(readiness, started)
                gap = readiness.answers_between(stopped, started)
                verdict.check(any(state != "ready" for state in gap),
                              f"restart {number} ({mode}): /readyz never reported the database gone ({sorted(gap)})")
                if ready is None:
                    verdict.check(False, f"restart {number} ({mode}): /readyz not ready 60 s after PostgreSQL started")
                    break
                recoveries.append(ready - started)
                log(f"restart {number} ({mode}): unready states {sorted(s for s in gap if s != 'ready')}, "
                    f"ready {ready - started:.2f} s after PostgreSQL started; {ledger.size} acknowledged writes so far")
            time.sleep(1.0)
        stream_survives_restart(node_a, node_b, cluster, watched_user, verdict)
        faultlib.check_ledger(node_a, device_bin, ledger, verdict)
    finally:
        readiness.stop.set()
        node_b.terminate()
        node_a.terminate()
    if recoveries:
        log(f"PostgreSQL restarts: {len(recoveries)} survived, acknowledged writes checked {ledger.size}, lost or wrong {len(verdict.failed)}, "
            f"ready again median {statistics.median(recoveries):.2f} s (max {max(recoveries):.2f} s) after PostgreSQL was back; "
            f"slowest /readyz answer {readiness.slowest():.2f} s")
    return faultlib.finish(verdict, workdir)


def wait_ready(readiness: Readiness, since: float) -> float | None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready = readiness.ready_after(since)
        if ready is not None:
            return ready
        time.sleep(0.05)
    return None


def stream_survives_restart(node_a: FaultServer, node_b: FaultServer, cluster: PostgresCluster,
                            user: tuple[str, str, str], verdict: Verdict) -> None:
    """A browser waits on node A through an immediate restart; the phone approves through node B; A's stream must
    report it, reconnecting as a browser's EventSource does when a stream ends."""
    username, password, link = user
    phone = faultlib.Phone()
    answer = requests.post(f"{node_a.base}/realms/demo/push-mfa/enroll/complete",
                           json={"token": faultlib.enrollment_jwt(phone, link)}, timeout=faultlib.TIMEOUT)
    verdict.check(answer.status_code == 200, f"enrollment for the stream check: {answer.status_code} {answer.text[:200]}")
    cid, events = faultlib.waiting_login(node_a, username, password)
    statuses: list[tuple[float, str]] = []
    done = threading.Event()

    def follow() -> None:
        while not done.is_set():
            try:
                with requests.get(node_a.base + events, stream=True, timeout=faultlib.TIMEOUT * 3,
                                  headers={"Accept": "text/event-stream"}) as response:
                    if response.status_code != 200:
                        statuses.append((time.monotonic(), f"HTTP {response.status_code}"))
                    else:
                        for line in response.iter_lines(decode_unicode=True):
                            if line and line.startswith("data: "):
                                status = json.loads(line[6:])["status"]
                                statuses.append((time.monotonic(), status))
                                if status != "PENDING":
                                    done.set()
                                    return
            except requests.RequestException:
                pass
            done.wait(0.5)  # EventSource's reconnection delay is the server's retry: hint; half a second is kinder to the test

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    time.sleep(1.0)
    cluster.stop("immediate")
    time.sleep(1.0)
    cluster.start()
    time.sleep(3.0)  # the listener reconnects within a second of a failed attempt
    faultlib.phone_token(node_b, phone)
    approved = faultlib.respond(node_b, phone, cid, "approve")
    answered = time.monotonic()
    verdict.check(approved.status_code == 200, f"approval through node B after the restart: {approved.status_code} {approved.text[:200]}")
    follower.join(timeout=30)
    done.set()
    final = statuses[-1] if statuses else None
    verdict.check(final is not None and final[1] == "APPROVED", f"node A's stream after the restart saw {[s for _, s in statuses]}")
    if final is not None and final[1] == "APPROVED":
        delay = final[0] - answered
        # The poll alone would take up to 10 s; a notification arrives within milliseconds.
        verdict.check(delay < 5.0, f"node A's stream saw the approval {delay:.2f} s after node B answered: not through LISTEN")
        log(f"event stream across an immediate restart: {[s for _, s in statuses]}, APPROVED {delay * 1000:.0f} ms after node B answered")


if __name__ == "__main__":
    sys.exit(main())
