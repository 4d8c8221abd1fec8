"""kill -9 under load: the server is killed with SIGKILL at random moments while phones enroll and answer logins,
apps take tokens and installations register; each time it is started again on the same port. Afterwards every write
the server acknowledged is checked.

    python tests/faults/kill9.py --engine sqlite|postgres [--kills 20] [--users 24] [--seed N]

KEYWARD_BIN (and keyward-device beside it) is the server; for PostgreSQL, KEYWARD_FAULTS_DATABASE_URL names an empty
database. The last line is `N passed, M failed`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import faultlib
from faultlib import FaultServer, Ledger, Load, Verdict, log


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=["sqlite", "postgres"], required=True)
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs in the run (20)")
    parser.add_argument("--users", type=int, default=24, help="people signing in at once, each with a phone (24)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the kill moments (random)")
    parser.add_argument("--max-interval", type=float, default=1.5, help="longest load between two kills, seconds (1.5)")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    chooser = random.Random(seed)
    binary, device_bin, backend = faultlib.binaries_and_backend(args.engine)
    workdir = Path(tempfile.mkdtemp(prefix=f"keyward-kill9-{args.engine}-"))
    log(f"kill -9 on {args.engine}: {args.kills} kills, {args.users} people, seed {seed}, in {workdir}")

    server = FaultServer(binary, backend, workdir / "server", faultlib.fault_settings()).start()
    ledger = Ledger()
    verdict = Verdict()
    recoveries: list[float] = []
    try:
        faultlib.prepare_realm(server, device_bin)
        users = faultlib.create_users(server, args.users, "kill9")
        with Load(server, device_bin, users, workdir, ledger, seed):
            for kill in range(1, args.kills + 1):
                time.sleep(chooser.uniform(0.2, args.max_interval))
                server.kill9()
                recoveries.append(server.restart())
                if kill % 5 == 0 or kill == args.kills:
                    log(f"{kill} kills, {ledger.size} acknowledged writes so far, {ledger.unanswered} requests unanswered")
            time.sleep(1.0)
        faultlib.check_ledger(server, device_bin, ledger, verdict)
    finally:
        server.terminate()
    lost = len(verdict.failed)
    log(f"kill -9 {args.engine}: {len(recoveries)} kills survived, acknowledged writes checked {ledger.size}, lost or wrong {lost}, "
        f"restart to ready median {statistics.median(recoveries):.2f} s, max {max(recoveries):.2f} s, seed {seed}")
    return faultlib.finish(verdict, workdir)


if __name__ == "__main__":
    sys.exit(main())
