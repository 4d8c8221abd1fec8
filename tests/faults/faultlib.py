"""What the fault scenarios share: a `keyward serve` that can be killed and started again on its own port, a ledger of
every write the server acknowledged, a mixed load of real clients that fills it, and the checks that every
acknowledged write is still there, in its final state, once.

The clients are the interop suite's independent peers (tests/interop): the Python push-MFA phone (joserfc), a
`requests` browser on the sign-in pages, DPoP proofs made by joserfc, and `keyward-device` registering installations.
A request whose answer never arrived (the server died under it) is not acknowledged: it is counted, never checked.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import requests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "interop"))

from keyward_peer import CLIENT_ID, CLIENT_SECRET, Backend, ProofMaker  # noqa: E402
from test_push_mfa_nodes import Node, Phone, admin  # noqa: E402

REALM_PATH = "/realms/demo"
DEVICE_APP = "com.example.faults"
# Short answers: a request the server never answers must fail fast, so the load notices the kill.
TIMEOUT = 10


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# --------------------------------------------------------------------------------------------- the server
class FaultServer(Node):
    """One `keyward serve --demo` whose port stays the same across kills, so clients' URLs and DPoP `htu` stay valid."""

    def __init__(self, binary: str, backend: Backend, workdir: Path, settings: dict[str, str] | None = None):
        super().__init__(binary, backend, workdir, None, "faults", settings=settings)
        workdir.mkdir(parents=True, exist_ok=True)

    def start(self) -> "FaultServer":
        if self.port is None:
            super().start()
            return self
        self._log_file = open(self.log_path, "ab")
        self._log_file.write(f"### restart on port {self.port}\n".encode())
        self._log_file.flush()
        self.proc = subprocess.Popen(
            self.command(self.port), stdin=subprocess.DEVNULL, stdout=self._log_file, stderr=subprocess.STDOUT,
            env=self.environment(), cwd=self.workdir, start_new_session=True,
        )
        outcome = self._wait_ready()
        if outcome != "ready":
            raise RuntimeError(f"keyward ({self.backend.name}) did not come back: {outcome}\n{self.log_tail()}")
        return self

    def kill9(self) -> None:
        """SIGKILL, as the kernel's OOM killer or a pulled plug does it: no handler runs."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._close()

    def restart(self) -> float:
        """Starts the server again; returns the seconds until /readyz answered 200."""
        started = time.monotonic()
        self.start()
        return time.monotonic() - started

    def cli(self, *args: str) -> str:
        return admin(self.binary, self, *args, password=None)


def fault_settings() -> dict[str, str]:
    """Server settings for the fault runs: proofs accepted at the token endpoint for 10 minutes, so a replayed proof
    is refused by the replay memory that survived the kill, not merely by its age; every sign-in of the load comes
    from one address."""
    return {"KEYWARD_DPOP_TOKEN_ENDPOINT_MAX_AGE": "600", "KEYWARD_ACCOUNTS_LOGIN_ATTEMPTS_PER_ADDRESS": "100000",
            "KEYWARD_LOG_LEVEL": os.environ.get("KEYWARD_FAULTS_LOG_LEVEL", "warning")}


def prepare_realm(server: FaultServer, device_bin: str) -> None:
    """Push-MFA settings that let every login of the load be answered (no number to type, no waiting after a
    denial, several challenges pending while a kill leaves some unanswered), and a device app that accepts
    installations without a platform attestation (this is Linux)."""
    server.cli("push-mfa", "settings", "--realm", "demo", "userVerification=none", "waitChallengeEnabled=false",
               "maxPendingChallenges=100", "loginChallengeTtlSeconds=3600", "enrollmentChallengeTtlSeconds=3600")
    server.cli("apps", "add", "--realm", "demo", DEVICE_APP, "--platform", "ios", "--environment", "production",
               "--team-id", "ABCDE12345", "--bundle-id", DEVICE_APP, "--missing-attestation", "accept")


def create_users(server: FaultServer, count: int, prefix: str) -> list[tuple[str, str, str]]:
    """`count` users with a cheap password hash, each with an enrollment link: (username, password, link)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEYWARD_")}
    env.update({"KEYWARD_PUBLIC_URL": server.public, "KEYWARD_ACCOUNTS_BCRYPT_COST": "4"})
    if server.backend.master_key:
        env["KEYWARD_MASTER_KEY"] = server.backend.master_key

    def keyward(*args: str, password: str | None = None) -> str:
        command = [server.binary, *args, "--data-dir", str(server.data_dir)]
        if server.backend.database_url:
            command += ["--database", server.backend.database_url]
        done = subprocess.run(command, env={**env, **({"KEYWARD_NEW_PASSWORD": password} if password else {})},
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"keyward {' '.join(args[:2])}: {done.stderr.strip()}")
        return done.stdout.strip()

    users: list[tuple[str, str, str]] = []
    lock = threading.Lock()

    def make(index: int) -> None:
        username, password = f"{prefix}-{index}", f"pw-{uuid.uuid4().hex[:12]}"
        keyward("users", "create", "--realm", "demo", username, password=password)
        link = keyward("enrollment-link", "--realm", "demo", "--username", username)
        with lock:
            users.append((username, password, link))

    # A few at a time: each is two processes opening the database, and a thousand at once would outwait SQLite's
    # busy timeout at start-up.
    with ThreadPoolExecutor(max_workers=8) as pool:
        for done in [pool.submit(make, index) for index in range(count)]:
            done.result()
    if len(users) != count:
        raise RuntimeError(f"created {len(users)} of {count} users")
    return users


# --------------------------------------------------------------------------------------------- the ledger
@dataclass
class Ledger:
    """Every acknowledged write, by kind, and the requests whose answer never came."""

    enrollments: list[tuple[Phone, str, str]] = field(default_factory=list)      # phone, username, device JWT
    answers: list[tuple[Phone, str, str, str]] = field(default_factory=list)     # phone, cid, events URL, APPROVED|DENIED
    token_proofs: list[str] = field(default_factory=list)                        # DPoP proofs the token endpoint accepted
    registrations: list[tuple[Path, str]] = field(default_factory=list)          # keyward-device state dir, device id
    unanswered: int = 0
    errors: list[str] = field(default_factory=list)  # answers no client should ever get: a refusal of a valid request

    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, entry) -> None:
        with self.lock:
            getattr(self, kind).append(entry)

    def lost_answer(self) -> None:
        with self.lock:
            self.unanswered += 1

    def wrong_answer(self, error: Exception) -> None:
        request = getattr(error, "request", None)
        where = f" ({request.method} {request.path_url})" if request is not None else ""
        with self.lock:
            self.errors.append(f"{type(error).__name__}{where}: {error}")

    @property
    def size(self) -> int:
        return len(self.enrollments) + len(self.answers) + len(self.token_proofs) + len(self.registrations)


# --------------------------------------------------------------------------------------------- the load
class Load:
    """Threads that keep the server busy with writes people and phones are told succeeded."""

    def __init__(self, server: FaultServer, device_bin: str, users: list[tuple[str, str, str]], workdir: Path,
                 ledger: Ledger, seed: int):
        self.server, self.device_bin, self.users, self.workdir, self.ledger = server, device_bin, users, workdir, ledger
        self.stop = threading.Event()
        self.random = random.Random(seed)
        self.threads = [threading.Thread(target=self._person, args=(user,), daemon=True) for user in users]
        self.threads += [threading.Thread(target=self._tokens, daemon=True) for _ in range(2)]
        self.threads.append(threading.Thread(target=self._registrations, daemon=True))

    def __enter__(self) -> "Load":
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def _pause(self) -> None:
        """After a refused connection: the server is starting again."""
        self.stop.wait(0.1)

    def _person(self, user: tuple[str, str, str]) -> None:
        """Enrolls a phone, then signs in again and again; the phone approves or denies each login."""
        username, password, link = user
        phone = Phone()
        device_jwt = None
        enrolled = False
        decide = random.Random(username)
        while not self.stop.is_set():
            try:
                if not enrolled:
                    device_jwt = device_jwt or enrollment_jwt(phone, link)
                    answer = requests.post(f"{self.server.base}{REALM_PATH}/push-mfa/enroll/complete",
                                           json={"token": device_jwt}, timeout=TIMEOUT)
                    unavailable(answer)
                    if answer.status_code == 200 and answer.json() == {"status": "enrolled"}:
                        self.ledger.add("enrollments", (phone, username, device_jwt))
                    elif not phone_is_enrolled(self.server, phone):  # else an earlier attempt's answer was lost, not its write
                        raise AssertionError(f"enrollment of {username} refused: {answer.status_code} {answer.text[:200]}")
                    enrolled = True
                    continue
                cid, events = waiting_login(self.server, username, password)
                action = "approve" if decide.random() < 0.7 else "deny"
                phone_token(self.server, phone)
                answer = respond(self.server, phone, cid, action)
                if answer.status_code == 200:
                    status = answer.json().get("status")
                    expected = {"approve": "approved", "deny": "denied"}[action]
                    if status != expected:
                        raise AssertionError(f"{action} answered {answer.text}")
                    self.ledger.add("answers", (phone, cid, events, status.upper()))
            except requests.Timeout as error:
                self.ledger.wrong_answer(error)
            except (requests.RequestException, ServerUnavailable):
                self.ledger.lost_answer()
                self._pause()
            except Exception as error:  # noqa: BLE001 - every other answer is a finding, and the person keeps going
                self.ledger.wrong_answer(error)
                self._pause()

    def _tokens(self) -> None:
        maker = ProofMaker("ES256")
        endpoint = f"{self.server.public}{REALM_PATH}/protocol/openid-connect/token"
        while not self.stop.is_set():
            proof = maker.proof("POST", endpoint)
            try:
                answer = token_request(self.server, proof)
                unavailable(answer)
                if answer.status_code != 200:
                    raise AssertionError(f"token request refused: {answer.status_code} {answer.text}")
                self.ledger.add("token_proofs", proof)
            except requests.Timeout as error:
                self.ledger.wrong_answer(error)
            except (requests.RequestException, ServerUnavailable):
                self.ledger.lost_answer()
                self._pause()
            except Exception as error:  # noqa: BLE001
                self.ledger.wrong_answer(error)
                self._pause()

    def _registrations(self) -> None:
        while not self.stop.is_set():
            directory = self.workdir / "devices" / uuid.uuid4().hex
            done = keyward_device(self.device_bin, self.server, directory, "register")
            match = re.fullmatch(r"registered device (\S+) for app \S+ \(status registered\)\n", done.stdout)
            if done.returncode == 0 and match:
                self.ledger.add("registrations", (directory, match.group(1)))
            else:
                self.ledger.lost_answer()
                self._pause()


class ServerUnavailable(Exception):
    """A 5xx: the request may or may not have been written, and nobody was told it was."""


def enrollment_jwt(phone: Phone, link: str) -> str:
    """The device-signed enrollment JWT for `link` (Phone.enroll's first half, kept so it can be replayed)."""
    import urllib.parse

    from keyward_peer import b64u_decode

    token = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["token"][0]
    claims = json.loads(b64u_decode(token.split(".")[1]))
    phone.user_id = claims["sub"]
    jwk = {**phone.maker.public_jwk, "alg": "ES256", "use": "sig"}
    return phone.maker.sign({"alg": "ES256", "typ": "JWT"}, {
        "enrollmentId": claims["enrollmentId"], "nonce": claims["nonce"], "sub": phone.user_id,
        "deviceType": "android", "pushProviderId": "faults", "pushProviderType": "log",
        "credentialId": phone.credential_id, "deviceId": phone.device_id, "deviceLabel": "fault phone",
        "exp": int(time.time()) + 3600, "cnf": {"jwk": jwk},
    })


def phone_token(server: FaultServer, phone: Phone) -> None:
    """The phone's DPoP-bound access token (client_credentials, proof naming its user and device)."""
    path = f"{REALM_PATH}/protocol/openid-connect/token"
    answer = requests.post(server.base + path, headers={"DPoP": phone.proof(server, "POST", path)},
                           data={"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET},
                           timeout=TIMEOUT)
    unavailable(answer)
    if answer.status_code != 200:
        raise AssertionError(f"the phone's token request was refused: {answer.status_code} {answer.text[:200]}")
    phone.token = answer.json()["access_token"]


def phone_is_enrolled(server: FaultServer, phone: Phone) -> bool:
    """The device API answers the phone: its credential is stored."""
    phone_token(server, phone)
    pending = phone.call(server, "GET", f"{REALM_PATH}/push-mfa/login/pending", query=f"?userId={phone.user_id}")
    return pending.status_code == 200


def waiting_login(server: FaultServer, username: str, password: str) -> tuple[str, str]:
    """A browser signs in with the password and reaches the waiting page: the challenge is stored (acknowledged)."""
    session = requests.Session()
    login = session.get(f"{server.base}{REALM_PATH}/login", timeout=TIMEOUT)
    unavailable(login)
    csrf = re.search(r'name="csrf" value="([^"]+)"', login.text).group(1)
    signed_in = session.post(f"{server.base}{REALM_PATH}/login", data={"csrf": csrf, "username": username, "password": password},
                             allow_redirects=False, timeout=TIMEOUT)
    unavailable(signed_in)
    if signed_in.status_code != 303 or not signed_in.headers["Location"].endswith("/login/push"):
        raise AssertionError(f"sign-in of {username}: {signed_in.status_code} {signed_in.text[:300]}")
    waiting = session.get(f"{server.base}{REALM_PATH}/login/push", timeout=TIMEOUT)
    unavailable(waiting)
    cid = re.search(r'name="challengeId" value="([^"]+)"', waiting.text).group(1)
    events = re.search(r'data-events-url="([^"]+)"', waiting.text).group(1).replace("&amp;", "&")
    return cid, events


class Observed:
    """Every 5xx any client got, for the check that each is a 503 with a stable code (never a 500, never a stack)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.failures: list[tuple[int, str, str]] = []  # status, request, body

    def add(self, response: requests.Response) -> None:
        with self.lock:
            self.failures.append((response.status_code, f"{response.request.method} {response.request.path_url}", response.text[:400]))


OBSERVED = Observed()


def unavailable(response: requests.Response) -> None:
    if response.status_code >= 500:
        OBSERVED.add(response)
        raise ServerUnavailable(f"{response.status_code} {response.text[:200]}")


def stable_unavailability(status: int, body: str) -> bool:
    """A 503 whose body names a stable code: `{"error": "..."}` for APIs, or a page carrying the code."""
    if status != 503:
        return False
    try:
        return bool(json.loads(body).get("error"))
    except ValueError:
        return "temporarily_unavailable" in body or "unavailable" in body.lower()


def respond(server: FaultServer, phone: Phone, cid: str, action: str) -> requests.Response:
    login_jwt = phone.maker.sign({"alg": "ES256", "typ": "JWT"}, {
        "cid": cid, "credId": phone.credential_id, "deviceId": phone.device_id, "action": action, "exp": int(time.time()) + 3600,
    })
    answer = phone.call(server, "POST", f"{REALM_PATH}/push-mfa/login/challenges/{cid}/respond", body={"token": login_jwt})
    unavailable(answer)
    return answer


def token_request(server: FaultServer, proof: str) -> requests.Response:
    return requests.post(f"{server.base}{REALM_PATH}/protocol/openid-connect/token", headers={"DPoP": proof},
                         data={"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET},
                         timeout=TIMEOUT)


def keyward_device(binary: str, server: FaultServer, directory: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEYWARD_")}
    try:
        return subprocess.run([binary, args[0], "--issuer", f"{server.base}{REALM_PATH}", "--app-id", DEVICE_APP,
                               "--state-dir", str(directory), *args[1:]], capture_output=True, text=True, env=env, timeout=60)
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, 124, "", "timed out")


# --------------------------------------------------------------------------------------------- the checks
@dataclass
class Verdict:
    passed: int = 0
    failed: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        if ok:
            self.passed += 1
        else:
            self.failed.append(what)


def verify(server: FaultServer, device_bin: str, ledger: Ledger) -> Verdict:
    """Every acknowledged write, after the last restart: present, in its final state, not there twice."""
    verdict = Verdict()
    for error in ledger.errors:
        verdict.check(False, f"during the load: {error}")
    for status, request, body in OBSERVED.failures:
        verdict.check(stable_unavailability(status, body), f"{request} answered {status} without a stable code: {body[:300]}")
    enrolled_users: dict[str, int] = {}
    for phone, username, device_jwt in ledger.enrollments:
        verdict.check(phone_is_enrolled(server, phone), f"enrollment of {username}: the phone is not enrolled")
        replay = requests.post(f"{server.base}{REALM_PATH}/push-mfa/enroll/complete", json={"token": device_jwt}, timeout=TIMEOUT)
        verdict.check(replay.status_code != 200, f"enrollment of {username}: the enrollment token was accepted twice")
        enrolled_users[username] = enrolled_users.get(username, 0) + 1
    for username, phones in enrolled_users.items():
        devices = server.cli("push-mfa", "devices", "--realm", "demo", "--username", username)
        listed = [line for line in devices.splitlines() if "fault phone" in line]
        verdict.check(len(listed) == phones, f"{username} has {len(listed)} devices listed for {phones} enrollments:\n{devices}")

    for phone, cid, events, status in ledger.answers:
        seen = first_status(server, events)
        verdict.check(seen == status, f"challenge {cid}: answered {status}, now {seen}")
        phone_token(server, phone)
        again = respond(server, phone, cid, "approve")
        verdict.check(again.status_code != 200, f"challenge {cid}: answered a second time ({again.text})")

    for proof in ledger.token_proofs:
        replay = token_request(server, proof)
        verdict.check(replay.status_code == 400 and replay.json().get("error") == "invalid_dpop_proof",
                      f"a DPoP proof the token endpoint accepted was accepted again after the kills: {replay.status_code} {replay.text[:200]}")

    listing = server.cli("apps", "list", "--realm", "demo", "--devices")
    for directory, device_id in ledger.registrations:
        call = keyward_device(device_bin, server, directory, "signed-call")
        verdict.check(call.returncode == 0 and call.stdout.startswith("HTTP 200\n")
                      and json.loads(call.stdout.split("\n", 1)[1]).get("status") == "registered",
                      f"registered device {device_id} is not answered as registered: {call.stdout[:200]} {call.stderr[:200]}")
        verdict.check(listing.count(device_id) == 1, f"registered device {device_id} listed {listing.count(device_id)} times")
    return verdict


def check_ledger(server: FaultServer, device_bin: str, ledger: Ledger, verdict: Verdict) -> None:
    """Says what is about to be checked, then adds `verify`'s checks to `verdict`."""
    log(f"checking {ledger.size} acknowledged writes: {len(ledger.enrollments)} enrollments, {len(ledger.answers)} approvals and denials, "
        f"{len(ledger.token_proofs)} token requests (their proofs' replay memory), {len(ledger.registrations)} device registrations; "
        f"{len(OBSERVED.failures)} answers were 5xx")
    checked = verify(server, device_bin, ledger)
    verdict.passed += checked.passed
    verdict.failed += checked.failed


def signing_key_ids(server: FaultServer) -> list[str]:
    """The demo realm's published signing key ids, sorted."""
    answer = requests.get(f"{server.base}{REALM_PATH}/protocol/openid-connect/certs", timeout=TIMEOUT)
    answer.raise_for_status()
    return sorted(key["kid"] for key in answer.json()["keys"])


def first_status(server: FaultServer, events: str) -> str | None:
    """The challenge's status as its event stream gives it first."""
    with requests.get(server.base + events, stream=True, timeout=TIMEOUT, headers={"Accept": "text/event-stream"}) as response:
        if response.status_code != 200:
            return f"HTTP {response.status_code}"
        for line in response.iter_lines(decode_unicode=True):
            if line and line.startswith("data: "):
                return json.loads(line[6:])["status"]
    return None


# --------------------------------------------------------------------------------------------- reporting
def closing_line(verdict: Verdict) -> int:
    """Prints the failures, then `N passed, M failed`; the exit code for the scenario."""
    for failure in verdict.failed[:20]:
        print(f"FAILED {failure}")
    if len(verdict.failed) > 20:
        print(f"... and {len(verdict.failed) - 20} more")
    print(f"{verdict.passed} passed, {len(verdict.failed)} failed", flush=True)
    return 0 if not verdict.failed else 1


def finish(verdict: Verdict, workdir: Path, before_cleaning=None) -> int:
    """The closing line; a passed run's files are removed, a failed run's kept (server logs, phones, disk image)."""
    code = closing_line(verdict)
    if code == 0:
        if before_cleaning is not None:
            before_cleaning()
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"server logs and client state kept in {workdir}")
    return code


def binaries_and_backend(engine: str) -> tuple[str, str, Backend]:
    """KEYWARD_BIN, keyward-device beside it, and the database: the embedded default, or KEYWARD_FAULTS_DATABASE_URL."""
    import base64
    import hashlib

    binary = os.environ.get("KEYWARD_BIN")
    if not binary or not os.access(binary, os.X_OK):
        raise SystemExit(f"KEYWARD_BIN={binary!r} is not an executable keyward binary (swift build --show-bin-path)")
    device_bin = str(Path(binary).with_name("keyward-device"))
    if not os.access(device_bin, os.X_OK):
        raise SystemExit(f"no keyward-device beside {binary}")
    if engine == "sqlite":
        return binary, device_bin, Backend("sqlite", None, None)
    url = os.environ.get("KEYWARD_FAULTS_DATABASE_URL")
    if not url:
        raise SystemExit("KEYWARD_FAULTS_DATABASE_URL is not set (an empty PostgreSQL database for the PostgreSQL run)")
    key = base64.b64encode(hashlib.sha256(b"keyward-faults-master-key:" + url.encode()).digest()).decode()
    return binary, device_bin, Backend("postgres", url, key)


# --------------------------------------------------------------------------------------------- power loss
class LoopDisk:
    """An ext4 filesystem in an image file, loop-mounted. `power_loss` keeps only what the filesystem had handed to its
    block device: the image is copied while the page cache still holds every write nobody synced, and the copy is
    mounted in its place (ext4 replays its journal, as after a real power cut)."""

    def __init__(self, directory: Path, megabytes: int = 256):
        self.directory = directory
        self.image = directory / "disk.img"
        self.mountpoint = directory / "mnt"
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        with open(self.image, "wb") as image:
            image.truncate(megabytes * 1024 * 1024)
        sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", str(self.image))
        self.mount()

    def mount(self) -> None:
        sh("mount", "-o", "loop", str(self.image), str(self.mountpoint))

    def unmount(self) -> None:
        sh("umount", str(self.mountpoint))

    def power_loss(self) -> None:
        """Call with every writer stopped (SIGKILL): what they wrote and did not sync is still only in memory."""
        frozen = self.directory / "disk-at-loss.img"
        sh("cp", "--sparse=always", str(self.image), str(frozen))
        self.unmount()  # flushes the lost writes into the old image, which is thrown away
        frozen.replace(self.image)
        self.mount()


def sh(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: exit {done.returncode}: {done.stderr.strip()}")


# --------------------------------------------------------------------------------------------- PostgreSQL's own cluster
class PostgresCluster:
    """The private cluster tests/faults/run started (KW_PG_DIR, KW_PG_BIN, KW_PG_PORT), stopped and started again
    here the way an operator's restart or a crash of PostgreSQL does it."""

    def __init__(self):
        try:
            self.directory, self.bin, self.port = os.environ["KW_PG_DIR"], os.environ["KW_PG_BIN"], os.environ["KW_PG_PORT"]
        except KeyError as missing:
            raise SystemExit(f"{missing} is not set: run this scenario through tests/faults/run, which starts the cluster")

    def pg_ctl(self, *args: str) -> None:
        owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        sh(*owner, f"{self.bin}/pg_ctl", "-D", f"{self.directory}/data", *args)

    def stop(self, mode: str) -> None:
        """`fast`: clients are disconnected and the cluster shuts down cleanly; `immediate`: every process quits at
        once and the next start recovers from the log, as after a crash."""
        self.pg_ctl("-m", mode, "-w", "-t", "60", "stop")

    def start(self) -> None:
        self.pg_ctl("-l", f"{self.directory}/postgres.log", "-w", "-t", "60", "start",
                    "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory}/sock -c max_connections=200")
