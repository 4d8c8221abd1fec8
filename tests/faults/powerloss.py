"""Power loss on the embedded database: the data directory is an ext4 filesystem in a loop-mounted image; at each
"power cut" the server is killed and the image is replaced by a copy taken while every unsynced write was still only
in the page cache (faultlib.LoopDisk). The first cut comes right after the first start; then phones, apps and
installations write under load between cuts. Afterwards every acknowledged write is checked.

    python tests/faults/powerloss.py [--losses 10] [--users 16] [--synchronous full|normal] [--seed N]

Needs root (mount). With --synchronous normal the run measures what that setting loses instead: it reports the lost
writes and exits 0. The last line is `N passed, M failed`.
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
from faultlib import FaultServer, Ledger, Load, LoopDisk, Verdict, log


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--losses", type=int, default=10, help="power cuts under load (10), after the one right after the first start")
    parser.add_argument("--users", type=int, default=16, help="people signing in at once, each with a phone (16)")
    parser.add_argument("--synchronous", choices=["full", "normal"], default="full", help="sqlite.synchronous (full)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    chooser = random.Random(seed)
    binary, device_bin, backend = faultlib.binaries_and_backend("sqlite")
    workdir = Path(tempfile.mkdtemp(prefix="keyward-powerloss-"))
    log(f"power loss, sqlite.synchronous={args.synchronous}: {args.losses} cuts under load, {args.users} people, seed {seed}, in {workdir}")

    disk = LoopDisk(workdir / "disk")
    settings = {**faultlib.fault_settings(), "KEYWARD_SQLITE_SYNCHRONOUS": args.synchronous}
    server = FaultServer(binary, backend, workdir / "server", settings)
    server.data_dir = disk.mountpoint / "data"
    verdict = Verdict()
    ledger = Ledger()
    recoveries: list[float] = []

    def cut() -> None:
        server.kill9()
        disk.power_loss()
        recoveries.append(server.restart())

    try:
        server.start()
        # The first start wrote the master key file and sealed the demo realm's signing key with it.
        keys = faultlib.signing_key_ids(server)
        try:
            cut()
            verdict.check(faultlib.signing_key_ids(server) == keys, "the realm's signing keys changed across a power cut right after the first start")
        except RuntimeError as error:
            verdict.check(False, f"a power cut right after the first start: the server does not start again: {error}")
            return report(verdict, workdir, server, disk)
        faultlib.prepare_realm(server, device_bin)
        users = faultlib.create_users(server, args.users, "power")
        with Load(server, device_bin, users, workdir, ledger, seed):
            for number in range(1, args.losses + 1):
                time.sleep(chooser.uniform(0.3, 1.5))
                cut()
                if number % 5 == 0 or number == args.losses:
                    log(f"{number} power cuts, {ledger.size} acknowledged writes so far")
            time.sleep(1.0)
        faultlib.check_ledger(server, device_bin, ledger, verdict)
    finally:
        server.terminate()
    log(f"power loss (sqlite.synchronous={args.synchronous}): {len(recoveries)} cuts survived, acknowledged writes checked {ledger.size}, "
        f"lost or wrong {len(verdict.failed)}, restart to ready median {statistics.median(recoveries):.2f} s, seed {seed}")
    if args.synchronous == "normal":
        print(f"measured: with sqlite.synchronous=normal, {len(verdict.failed)} of {verdict.passed + len(verdict.failed)} checks failed "
              f"across {len(recoveries)} power cuts (expected: commits since the last sync are gone); for example:")
        for failure in verdict.failed[:5]:
            print(f"  {failure[:300]}")
        verdict = Verdict(passed=verdict.passed + len(verdict.failed))
    return report(verdict, workdir, server, disk)


def report(verdict: Verdict, workdir: Path, server: FaultServer, disk: LoopDisk) -> int:
    if server.running():
        server.terminate()
    if verdict.failed:
        print(f"the disk image stays mounted at {disk.mountpoint}")
    return faultlib.finish(verdict, workdir, before_cleaning=disk.unmount)


if __name__ == "__main__":
    sys.exit(main())
