"""Soak: a long mixed load at half of what this machine's load generator reaches, watching the server for growth.

    python tests/faults/soak.py --engine sqlite|postgres [--minutes 30] [--users 16] [--sample-seconds 10]

First the load runs unthrottled for --probe-seconds to measure its rate (the capacity as this generator sees it),
then at half that rate for --minutes. Every --sample-seconds: the server's resident memory, open file descriptors and
threads (from /proc), its PostgreSQL connections (pg_stat_activity), and the answers' p50 / p99 latency and errors in
that interval. Reported: the memory slope after a warm-up of a fifth of the run (least squares, MiB per hour), the
range of descriptors and connections, p99 per fifth of the run, and every error. Fails on any error, on descriptors
or connections that grow after warm-up, or (in runs of 10 minutes or more) on a memory slope above --max-slope
MiB/hour. Writes the samples as JSON
beside the log when --json is given. The last line is `N passed, M failed`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

import faultlib
from faultlib import REALM_PATH, FaultServer, Phone, ProofMaker, Verdict, log


# Each person signs in from an address of their own, through a trusted proxy (127.0.0.1): one address would reach
# accounts.loginAttemptsPerAddress (at most 100,000 per 15 minutes) within the run.
ADDRESS = threading.local()
_request = requests.Session.request


def _request_from_own_address(session, method, url, **kwargs):
    if getattr(ADDRESS, "value", None):
        kwargs["headers"] = {**(kwargs.get("headers") or {}), "X-Forwarded-For": ADDRESS.value}
    return _request(session, method, url, **kwargs)


requests.Session.request = _request_from_own_address


class Pace:
    """A shared token bucket: at most `rate` operations a second once throttled (unlimited while probing)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rate: float | None = None
        self.next = time.monotonic()

    def wait(self, stop: threading.Event) -> None:
        if self.rate is None:
            return
        with self.lock:
            now = time.monotonic()
            self.next = max(self.next + 1.0 / self.rate, now - 1.0)  # at most a second of catching up
            delay = self.next - now
        if delay > 0:
            stop.wait(delay)


class Answers:
    """Latency and outcome of every operation, drained at each sample."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.operations = 0

    def record(self, seconds: float) -> None:
        with self.lock:
            self.latencies.append(seconds)
            self.operations += 1

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)

    def drain(self) -> tuple[list[float], list[str]]:
        with self.lock:
            latencies, errors = self.latencies, self.errors
            self.latencies, self.errors = [], []
        return latencies, errors


def timed(answers: Answers, call, pace: "Pace | None" = None, stop: threading.Event | None = None):
    """Runs one operation, after waiting for its turn when `pace` is given; records how long it took."""
    if pace is not None:
        pace.wait(stop)
    started = time.monotonic()
    result = call()
    answers.record(time.monotonic() - started)
    return result


def person(server: FaultServer, user, index: int, pace: Pace, answers: Answers, stop: threading.Event) -> None:
    username, password, link = user
    ADDRESS.value = f"10.{index}.0.1"
    phone = Phone()
    try:
        enrolled = requests.post(f"{server.base}{REALM_PATH}/push-mfa/enroll/complete",
                                 json={"token": faultlib.enrollment_jwt(phone, link)}, timeout=faultlib.TIMEOUT)
        if enrolled.status_code != 200:
            answers.error(f"enrollment of {username}: {enrolled.status_code} {enrolled.text[:200]}")
            return
        timed(answers, lambda: faultlib.phone_token(server, phone))
    except Exception as error:  # noqa: BLE001
        answers.error(f"enrollment of {username}: {type(error).__name__}: {error}")
        return
    rounds = 0
    while not stop.is_set():
        try:
            cid, _ = timed(answers, lambda: faultlib.waiting_login(server, username, password), pace, stop)
            rounds += 1
            if rounds % 50 == 0:  # the phone's token lives 5 minutes
                timed(answers, lambda: faultlib.phone_token(server, phone))
            action = "approve" if rounds % 3 else "deny"
            answer = timed(answers, lambda: faultlib.respond(server, phone, cid, action), pace, stop)
            if answer.status_code != 200:
                answers.error(f"{action} by {username}: {answer.status_code} {answer.text[:200]}")
        except Exception as error:  # noqa: BLE001
            answers.error(f"{username}: {type(error).__name__}: {error}")


def tokens(server: FaultServer, pace: Pace, answers: Answers, stop: threading.Event) -> None:
    maker = ProofMaker("ES256")
    endpoint = f"{server.public}{REALM_PATH}/protocol/openid-connect/token"
    while not stop.is_set():
        try:
            answer = timed(answers, lambda: faultlib.token_request(server, maker.proof("POST", endpoint)), pace, stop)
            if answer.status_code != 200:
                answers.error(f"token: {answer.status_code} {answer.text[:200]}")
        except Exception as error:  # noqa: BLE001
            answers.error(f"token: {type(error).__name__}: {error}")


def registrations(server: FaultServer, device_bin: str, workdir: Path, answers: Answers, stop: threading.Event) -> None:
    """An installation registers every two seconds (each is a new process: its cost is the tool's, not the server's)."""
    number = 0
    while not stop.wait(2.0):
        number += 1
        directory = workdir / "devices" / str(number)
        done = faultlib.keyward_device(device_bin, server, directory, "register")
        if done.returncode != 0:
            answers.error(f"registration {number}: {done.stdout[:200]} {done.stderr[:200]}")
        else:
            answers.record(0.0)  # counted, not timed
        subprocess.run(["rm", "-rf", str(directory)])


def process_figures(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {"rssMiB": int(fields["VmRSS"].split()[0]) / 1024, "threads": int(fields["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def postgres_connections(url: str) -> int:
    psql = str(Path(os.environ["KW_PG_BIN"]) / "psql") if os.environ.get("KW_PG_BIN") else "psql"
    done = subprocess.run([psql, "-At", "-c", "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                              "AND pid <> pg_backend_pid()", url], capture_output=True, text=True, timeout=30)
    return int(done.stdout.strip()) if done.returncode == 0 else -1


def slope_per_hour(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value), per hour."""
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return 0.0 if spread == 0 else sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread * 3600


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=["sqlite", "postgres"], required=True)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--probe-seconds", type=float, default=60.0)
    parser.add_argument("--sample-seconds", type=float, default=10.0)
    parser.add_argument("--max-slope", type=float, default=20.0, help="largest memory slope after warm-up, MiB per hour (20)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    binary, device_bin, backend = faultlib.binaries_and_backend(args.engine)
    workdir = Path(tempfile.mkdtemp(prefix=f"keyward-soak-{args.engine}-"))
    log(f"soak on {args.engine}: {args.probe_seconds:.0f} s unthrottled, then {args.minutes:.0f} min at half that, {args.users} people, in {workdir}")
    server = FaultServer(binary, backend, workdir / "server", {**faultlib.fault_settings(), "KEYWARD_HTTP_TRUSTED_PROXIES": "127.0.0.1/32"})
    verdict = Verdict()
    pace, answers, stop = Pace(), Answers(), threading.Event()
    samples: list[dict] = []
    all_errors: list[str] = []
    try:
        server.start()
        faultlib.prepare_realm(server, device_bin)
        users = faultlib.create_users(server, args.users, "soak")
        threads = [threading.Thread(target=person, args=(server, user, index, pace, answers, stop), daemon=True)
                   for index, user in enumerate(users)]
        threads += [threading.Thread(target=tokens, args=(server, pace, answers, stop), daemon=True) for _ in range(2)]
        threads.append(threading.Thread(target=registrations, args=(server, device_bin, workdir, answers, stop), daemon=True))
        for thread in threads:
            thread.start()

        time.sleep(args.probe_seconds)
        latencies, errors = answers.drain()
        all_errors += errors
        capacity = len(latencies) / args.probe_seconds
        pace.rate = capacity / 2
        log(f"probe: {capacity:.0f} operations/s unthrottled (p99 {percentile(latencies, 0.99) * 1000:.0f} ms); "
            f"soaking at {pace.rate:.0f}/s")

        began = time.monotonic()
        while time.monotonic() - began < args.minutes * 60:
            time.sleep(args.sample_seconds)
            latencies, errors = answers.drain()
            all_errors += errors
            sample = {"t": round(time.monotonic() - began, 1), **process_figures(server.proc.pid),
                      "rate": round(len(latencies) / args.sample_seconds, 1),
                      "p50ms": round(percentile(latencies, 0.5) * 1000, 1), "p99ms": round(percentile(latencies, 0.99) * 1000, 1),
                      "errors": len(errors)}
            if backend.database_url:
                sample["dbConnections"] = postgres_connections(backend.database_url)
            samples.append(sample)
            if len(samples) % max(1, int(60 / args.sample_seconds)) == 0:
                log(f"{sample['t'] / 60:.0f} min: {sample['rate']:.0f}/s, p99 {sample['p99ms']:.0f} ms, RSS {sample['rssMiB']:.1f} MiB, "
                    f"{sample['fds']} fds, {sample['threads']} threads"
                    + (f", {sample['dbConnections']} database connections" if "dbConnections" in sample else "")
                    + f", {len(all_errors)} errors so far")
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        stop.set()
        server.terminate()

    warm = [sample for sample in samples if sample["t"] >= args.minutes * 60 / 5]
    slope = slope_per_hour([(sample["t"], sample["rssMiB"]) for sample in warm])
    fifths = [[sample for sample in samples if index * args.minutes * 12 <= sample["t"] < (index + 1) * args.minutes * 12] for index in range(5)]
    p99s = [max((sample["p99ms"] for sample in fifth), default=float("nan")) for fifth in fifths]
    verdict.check(not all_errors, f"{len(all_errors)} errors, e.g. {all_errors[:5]}")
    if args.minutes >= 10:
        verdict.check(slope <= args.max_slope, f"memory grows {slope:.1f} MiB/hour after warm-up (limit {args.max_slope})")
    else:
        log(f"memory slope {slope:+.1f} MiB/hour: too short a run to judge (caches still filling); 10 minutes or more are judged")
    # Descriptors come and go with the clients' connections (each request of this load opens one): a leak shows as
    # a median that climbs, not as the spread of one interval.
    for key, margin in (("fds", 10), ("dbConnections", 2), ("threads", 2)):
        values = [sample[key] for sample in warm if key in sample]
        if values:
            early = statistics.median([sample[key] for sample in fifths[1] if key in sample] or values)
            late = statistics.median(values[-max(1, len(values) // 4):])
            verdict.check(late <= early + margin, f"{key} grow: median {early} early after warm-up, {late} at the end")
    rss = [sample["rssMiB"] for sample in warm]
    log(f"soak {args.engine}: {args.minutes:.0f} min at {pace.rate or 0:.0f} operations/s (half of {2 * (pace.rate or 0):.0f}), "
        f"{sum(sample['rate'] * args.sample_seconds for sample in samples):.0f} operations, {len(all_errors)} errors; RSS after warm-up "
        f"{min(rss, default=0):.1f}-{max(rss, default=0):.1f} MiB, slope {slope:+.1f} MiB/hour; fds "
        f"{min((s['fds'] for s in warm), default=0)}-{max((s['fds'] for s in warm), default=0)}; p99 per fifth (ms) "
        f"{', '.join(f'{value:.0f}' for value in p99s)}"
        + (f"; database connections {min(s['dbConnections'] for s in warm)}-{max(s['dbConnections'] for s in warm)}"
           if warm and "dbConnections" in warm[0] else ""))
    if args.json:
        args.json.write_text(json.dumps({"engine": args.engine, "minutes": args.minutes, "rate": pace.rate, "slopeMiBPerHour": slope,
                                         "samples": samples}, indent=1) + "\n")
    return faultlib.finish(verdict, workdir)


if __name__ == "__main__":
    sys.exit(main())
