"""Backup and restore under load: `keyward backup` copies the embedded database while phones enroll and answer logins,
apps take tokens and installations register. Each copy is then restored into an empty data directory with the master
key kept apart, a server is started on it, and every write acknowledged before that backup began must be there.

    python tests/faults/backup.py [--backups 3] [--users 16]

Also checked: a restore against the data directory of a live server is refused and changes nothing; the load sees
no error while a backup runs. The last line is `N passed, M failed`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import faultlib
from faultlib import OBSERVED, FaultServer, Ledger, Load, Verdict, log


def snapshot(ledger: Ledger) -> Ledger:
    """The writes acknowledged so far: each entry is added once its answer has arrived."""
    with ledger.lock:
        return Ledger(enrollments=list(ledger.enrollments), answers=list(ledger.answers),
                      token_proofs=list(ledger.token_proofs), registrations=list(ledger.registrations))


def keyward(binary: str, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin"}
    return subprocess.run([binary, *args], env=env, capture_output=True, text=True, timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backups", type=int, default=3, help="backups taken under load, each restored and checked (3)")
    parser.add_argument("--users", type=int, default=16)
    args = parser.parse_args()
    binary, device_bin, backend = faultlib.binaries_and_backend("sqlite")
    workdir = Path(tempfile.mkdtemp(prefix="keyward-backup-"))
    log(f"backup and restore on sqlite: {args.backups} backups under load, {args.users} people, in {workdir}")
    server = FaultServer(binary, backend, workdir / "server", faultlib.fault_settings()).start()
    original = server.data_dir
    key_file = workdir / "master.key"  # kept apart from the backups, as an operator keeps it
    verdict = Verdict()
    ledger = Ledger()
    taken: list[tuple[Path, Ledger, float]] = []
    try:
        faultlib.prepare_realm(server, device_bin)
        users = faultlib.create_users(server, args.users, "backup")
        shutil.copy(original / "master.key", key_file)
        with Load(server, device_bin, users, workdir, ledger, seed=3):
            for number in range(1, args.backups + 1):
                time.sleep(2.0)
                before = snapshot(ledger)
                copy = workdir / f"backup-{number}.db"
                started = time.monotonic()
                done = keyward(binary, "backup", "--to", str(copy), "--data-dir", str(original))
                took = time.monotonic() - started
                verdict.check(done.returncode == 0, f"backup {number} failed: {done.stderr.strip()}")
                taken.append((copy, before, took))
                log(f"backup {number}: {took:.2f} s under load, {before.size} writes acknowledged before it")
            refused = keyward(binary, "restore", "--from", str(taken[-1][0]), "--data-dir", str(original))
            verdict.check(refused.returncode != 0 and "is in use" in refused.stderr,
                          f"a restore under a live server was not refused: exit {refused.returncode}, {refused.stderr.strip()}")
            time.sleep(1.0)
        verdict.check(not ledger.errors, f"the load saw errors: {ledger.errors[:3]}")
        server.terminate()

        moved = workdir / "server-original"
        original.rename(moved)
        for number, (copy, before, _) in enumerate(taken, start=1):
            if original.exists():
                shutil.rmtree(original)
            original.mkdir(mode=0o700)
            started = time.monotonic()
            done = keyward(binary, "restore", "--from", str(copy), "--master-key-file", str(key_file), "--data-dir", str(original))
            verdict.check(done.returncode == 0, f"restore of backup {number} failed: {done.stderr.strip()}")
            if done.returncode != 0:
                continue
            restored_in = time.monotonic() - started
            server.restart()
            log(f"restore {number}: {restored_in:.2f} s; {done.stdout.strip().splitlines()[-1]}")
            failures_before = len(OBSERVED.failures)
            faultlib.check_ledger(server, device_bin, before, verdict)
            verdict.check(len(OBSERVED.failures) == failures_before, f"restore {number}: 5xx answers while checking")
            server.terminate()
    finally:
        server.terminate()
    durations = [took for _, _, took in taken]
    log(f"backup sqlite: {len(taken)} backups under load (longest {max(durations):.2f} s), each restored into an empty directory; "
        f"acknowledged writes checked {sum(before.size for _, before, _ in taken)}, lost or wrong {len(verdict.failed)}")
    return faultlib.finish(verdict, workdir)


if __name__ == "__main__":
    sys.exit(main())
