"""Races at scale: the same single-use thing claimed by several racers at the same moment, many times over. Exactly one
racer may win each race, every other racer must be told no with a 4xx, and what the winner did must be what is stored.

    python tests/faults/races.py --engine sqlite|postgres [--races 500] [--racers 3] [--workers 8]

Three kinds of race, each `--races` times:
- a login challenge answered by its phone from several racers at once, some approving and some denying;
- one DPoP proof presented to the token endpoint by several racers at once (its jti is single-use);
- one enrollment token completed by several racers at once (a tenth as many: each needs a new user).
On PostgreSQL two servers share the database and the racers of each race are split between them. The last line is
`N passed, M failed`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

import faultlib
from faultlib import REALM_PATH, FaultServer, Phone, ProofMaker, Verdict, log

PUBLIC_URL = "http://keyward.test"


def race(calls: list) -> list:
    """Runs every call at once (released together by a barrier); their results, or the exceptions they raised."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = calls[index]()
        except Exception as error:  # noqa: BLE001 - a racer's failure is reported, not raised
            results[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def outcome(result) -> str:
    return str(result.status_code) if isinstance(result, requests.Response) else type(result).__name__


class Tally:
    """Every race's outcome, by kind."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict
        self.lock = threading.Lock()
        self.races: Counter = Counter()
        self.losers: Counter = Counter()
        self.sample: dict[tuple[str, str], str] = {}  # one answer a loser got, per kind and status

    def judge(self, kind: str, number: int, results: list, won) -> int | None:
        """Checks one race: exactly one result for which `won` holds, every other a 4xx. Returns the winner's index."""
        winners = [index for index, result in enumerate(results) if isinstance(result, requests.Response) and won(result)]
        losers = [result for index, result in enumerate(results) if index not in winners]
        with self.lock:
            self.races[kind] += 1
            for loser in losers:
                self.losers[(kind, outcome(loser))] += 1
                if isinstance(loser, requests.Response):
                    self.sample.setdefault((kind, outcome(loser)), loser.text[:120])
            self.verdict.check(len(winners) == 1, f"{kind} race {number}: {len(winners)} winners ({[outcome(r) for r in results]})")
            for loser in losers:
                ok = isinstance(loser, requests.Response) and 400 <= loser.status_code < 500
                self.verdict.check(ok, f"{kind} race {number}: a racer got {outcome(loser)} "
                                       f"{loser.text[:200] if isinstance(loser, requests.Response) else loser}")
        return winners[0] if len(winners) == 1 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=["sqlite", "postgres"], required=True)
    parser.add_argument("--races", type=int, default=500, help="races of each kind (500; enrollments a tenth)")
    parser.add_argument("--racers", type=int, default=3)
    parser.add_argument("--workers", type=int, default=8, help="races run at once (8)")
    args = parser.parse_args()
    binary, device_bin, backend = faultlib.binaries_and_backend(args.engine)
    workdir = Path(tempfile.mkdtemp(prefix=f"keyward-races-{args.engine}-"))
    log(f"races on {args.engine}: {args.races} of each kind, {args.racers} racers each, {args.workers} at once, in {workdir}")
    nodes = [FaultServer(binary, backend, workdir / "a", faultlib.fault_settings())]
    if args.engine == "postgres":
        nodes.append(FaultServer(binary, backend, workdir / "b", faultlib.fault_settings()))
    for node in nodes:
        node.public_url = PUBLIC_URL
    verdict = Verdict()
    tally = Tally(verdict)
    started = time.monotonic()
    try:
        for node in nodes:
            node.start()
        first = nodes[0]
        faultlib.prepare_realm(first, device_bin)
        spare_phones = enrolled_phones(first, args.workers)
        owned = threading.local()

        def my_phone() -> tuple[str, str, Phone]:
            """Each worker answers with a phone of its own: its access token is renewed by no one else."""
            if not hasattr(owned, "phone"):
                owned.phone = spare_phones.pop()
            return owned.phone

        def node_for(racer: int) -> FaultServer:
            return nodes[racer % len(nodes)]

        def answer_race(number: int) -> None:
            username, password, phone = my_phone()
            faultlib.phone_token(first, phone)
            cid, events = faultlib.waiting_login(first, username, password)
            actions = ["approve" if racer % 2 == 0 else "deny" for racer in range(args.racers)]
            results = race([lambda racer=racer: faultlib.respond(node_for(racer), phone, cid, actions[racer]) for racer in range(args.racers)])
            winner = tally.judge("answer", number, results, lambda r: r.status_code == 200)
            if winner is not None:
                expected = {"approve": "APPROVED", "deny": "DENIED"}[actions[winner]]
                seen = faultlib.first_status(node_for(number + 1), events)
                verdict.check(seen == expected, f"answer race {number}: the winner's {actions[winner]} was answered 200, the challenge is {seen}")

        def proof_race(number: int) -> None:
            proof = ProofMaker("ES256").proof("POST", f"{PUBLIC_URL}{REALM_PATH}/protocol/openid-connect/token")
            results = race([lambda racer=racer: faultlib.token_request(node_for(racer), proof) for racer in range(args.racers)])
            tally.judge("proof", number, results, lambda r: r.status_code == 200)

        enrollments = max(1, args.races // 10)
        users = faultlib.create_users(first, enrollments, "race")

        def enrollment_race(number: int) -> None:
            username, _, link = users[number]
            phone = Phone()
            token = faultlib.enrollment_jwt(phone, link)
            results = race([lambda racer=racer: requests.post(f"{node_for(racer).base}{REALM_PATH}/push-mfa/enroll/complete",
                                                              json={"token": token}, timeout=faultlib.TIMEOUT)
                            for racer in range(args.racers)])
            tally.judge("enrollment", number, results, lambda r: r.status_code == 200 and r.json() == {"status": "enrolled"})
            verdict.check(faultlib.phone_is_enrolled(first, phone), f"enrollment race {number}: the winner's phone is not enrolled")

        for kind, body, count in (("answer", answer_race, args.races), ("proof", proof_race, args.races),
                                  ("enrollment", enrollment_race, enrollments)):
            began = time.monotonic()
            with ThreadPoolExecutor(max_workers=args.workers) as pool:
                for future in [pool.submit(body, number) for number in range(count)]:
                    try:
                        future.result()
                    except Exception as error:  # noqa: BLE001 - a race that could not be set up is a finding
                        verdict.check(False, f"{kind}: setting up a race failed: {type(error).__name__}: {error}")
            losers = {key[1]: value for key, value in tally.losers.items() if key[0] == kind}
            log(f"{kind}: {tally.races[kind]} races in {time.monotonic() - began:.1f} s; losers were told {losers}")
            for (sampled, status), text in sorted(tally.sample.items()):
                if sampled == kind:
                    log(f"  e.g. {status}: {text}")
        devices = first.cli("push-mfa", "devices", "--realm", "demo", "--username", users[0][0])
        verdict.check(devices.count("fault phone") == 1, f"enrollment race 0 left {devices.count('fault phone')} devices:\n{devices}")
        for status, request, body in faultlib.OBSERVED.failures:
            verdict.check(False, f"{request} answered {status}: {body[:200]}")
    finally:
        for node in nodes:
            node.terminate()
    log(f"races {args.engine}: {sum(tally.races.values())} races of {args.racers} racers on {len(nodes)} node(s) in "
        f"{time.monotonic() - started:.0f} s, wrong outcomes {len(verdict.failed)}")
    return faultlib.finish(verdict, workdir)


def enrolled_phones(server: FaultServer, count: int) -> list[tuple[str, str, Phone]]:
    """One enrolled phone per worker."""
    phones = []
    for username, password, link in faultlib.create_users(server, count, "racer"):
        phone = Phone()
        answer = requests.post(f"{server.base}{REALM_PATH}/push-mfa/enroll/complete", json={"token": faultlib.enrollment_jwt(phone, link)},
                               timeout=faultlib.TIMEOUT)
        if answer.status_code != 200:
            raise SystemExit(f"enrollment of {username} failed: {answer.status_code} {answer.text}")
        phones.append((username, password, phone))
    return phones


if __name__ == "__main__":
    sys.exit(main())
