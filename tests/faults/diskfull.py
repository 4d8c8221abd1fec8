"""Disk full on the embedded database: the data directory is a small ext4 filesystem in a loop-mounted image. Under
load a filler file takes every free block; writes must then fail with 503 and a stable code while the server stays up,
and once the filler is removed they must succeed again without a restart. Afterwards every acknowledged write is
checked and the stopped database passes `PRAGMA integrity_check`.

    python tests/faults/diskfull.py [--fills 3] [--users 12] [--full-seconds 3]

Needs root (mount). The last line is `N passed, M failed`.
"""

from __future__ import annotations

import argparse
import errno
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import faultlib
from faultlib import OBSERVED, FaultServer, Ledger, Load, LoopDisk, Verdict, log


def fill(path: Path) -> int:
    """Writes zeros into `path` until the filesystem says it is full; returns the bytes written."""
    written = 0
    chunk = b"\0" * (1 << 20)
    with open(path, "wb", buffering=0) as filler:
        while True:
            try:
                written += filler.write(chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 4096:
                    break
                chunk = chunk[: max(4096, len(chunk) // 16)]
        os.fsync(filler.fileno())
    return written


def free_bytes(path: Path) -> int:
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fills", type=int, default=3, help="times the disk is filled under load (3)")
    parser.add_argument("--users", type=int, default=12)
    parser.add_argument("--full-seconds", type=float, default=3.0, help="how long the disk stays full each time (3)")
    args = parser.parse_args()
    binary, device_bin, backend = faultlib.binaries_and_backend("sqlite")
    workdir = Path(tempfile.mkdtemp(prefix="keyward-diskfull-"))
    log(f"disk full on sqlite: {args.fills} fills under load, {args.users} people, in {workdir}")
    disk = LoopDisk(workdir / "disk", megabytes=192)  # room for the log to reach its reuse size (SQLiteCheckpointer.fallbackPages)
    server = FaultServer(binary, backend, workdir / "server", faultlib.fault_settings())
    server.data_dir = disk.mountpoint / "data"
    filler = disk.mountpoint / "filler"
    verdict = Verdict()
    ledger = Ledger()
    recoveries: list[float] = []
    refused_while_full = 0
    try:
        server.start()
        faultlib.prepare_realm(server, device_bin)
        users = faultlib.create_users(server, args.users, "full")
        with Load(server, device_bin, users, workdir, ledger, seed=4):
            for number in range(1, args.fills + 1):
                time.sleep(2.0)
                sizes = ", ".join(f"{entry.name} {entry.stat().st_size // 1024} KiB" for entry in sorted(server.data_dir.iterdir()) if entry.is_file())
                written = fill(filler)
                failures_before = len(OBSERVED.failures)
                time.sleep(args.full_seconds)
                refused = len(OBSERVED.failures) - failures_before
                refused_while_full += refused
                verdict.check(server.running(), f"fill {number}: the server exited while the disk was full")
                filler.unlink()
                freed = time.monotonic()
                recovered = wait_for_a_write(ledger, freed)
                verdict.check(recovered is not None, f"fill {number}: no write succeeded within 30 s of freeing the disk")
                if recovered is not None:
                    recoveries.append(recovered)
                log(f"fill {number}: {written // 1024} KiB filled the disk for {args.full_seconds:.0f} s, {refused} answers 503 meanwhile; "
                    f"writes succeed again {recovered if recovered is None else f'{recovered:.2f} s'} after freeing it, "
                    f"{free_bytes(disk.mountpoint) // 1024} KiB free; before the fill: {sizes}")
            time.sleep(1.0)
        verdict.check(server.running(), "the server exited")
        faultlib.check_ledger(server, device_bin, ledger, verdict)
        server.terminate()
        database = sqlite3.connect(server.data_dir / "keyward.db")
        result = [row[0] for row in database.execute("PRAGMA integrity_check")]
        database.close()
        verdict.check(result == ["ok"], f"integrity_check after the fills: {result[:5]}")
    finally:
        if server.running():
            server.terminate()
        filler.unlink(missing_ok=True)
    log(f"disk full sqlite: {args.fills} fills survived, {refused_while_full} answers 503 while full, writes back within "
        f"{max(recoveries, default=float('nan')):.2f} s of freeing space, acknowledged writes checked {ledger.size}, lost or wrong {len(verdict.failed)}")
    if verdict.failed:
        print(f"the disk image stays mounted at {disk.mountpoint}")
    return faultlib.finish(verdict, workdir, before_cleaning=disk.unmount)


def wait_for_a_write(ledger: Ledger, since: float) -> float | None:
    """Seconds from `since` until the load's next acknowledged write (None after 30 s)."""
    size = ledger.size
    while time.monotonic() - since < 30:
        if ledger.size > size:
            return time.monotonic() - since
        time.sleep(0.02)
    return None


if __name__ == "__main__":
    sys.exit(main())
