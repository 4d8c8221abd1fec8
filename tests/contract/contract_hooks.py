"""schemathesis hooks: real credentials for Keyward's authenticated operations, so that the run explores them past
their front door, and a record of every status seen, so that run_contract.py can prove each operation succeeded.

Loaded by schemathesis through SCHEMATHESIS_HOOKS=contract_hooks; run_contract.py sets the environment:
  KEYWARD_CONTRACT_BASE      the server's base URL (also its public URL: DPoP `htu` values are built on it)
  KEYWARD_CONTRACT_RECORD    a file that receives one JSON line per call: {"operation", "status"}
  KEYWARD_CONTRACT_ADMIN     JSON: the keyward binary and the arguments/environment its admin commands need
  KEYWARD_CONTRACT_PASSWORD  the password of every user run_contract.py created
  KEYWARD_CONTRACT_RUN       the run id in those users' names: c<run>-<role>
  KEYWARD_CONTRACT_RELAY_SECRET  the secret of contract-relay, the broker's relay client
  KEYWARD_CONTRACT_ADMIN_SECRET  the secret of contract-admin, the master realm's client with every admin scope

Per operation, calls take turns: most carry valid credentials (a DPoP-bound token and a fresh proof for the
device API, a signed-in session and its CSRF token for pages) around the generated input, and every other one of
those also replaces the generated input with a valid one (a fresh challenge to answer, a fresh enrollment, a
device to remove), which is what a 2xx needs. The rest stay as generated, realm and all.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import threading
import time
import uuid
from collections import defaultdict
from typing import Any
from urllib.parse import parse_qs, urlparse

import cbor2
import requests
import schemathesis
from schemathesis.core import deserialization
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc.jwk import ECKey
from keyward_peer import CLIENT_ID, CLIENT_SECRET, DEVICE_APP, REALM, ProofMaker, b64u_decode

BASE = os.environ["KEYWARD_CONTRACT_BASE"]
RECORD = os.environ["KEYWARD_CONTRACT_RECORD"]
ADMIN = json.loads(os.environ["KEYWARD_CONTRACT_ADMIN"])
PASSWORD = os.environ["KEYWARD_CONTRACT_PASSWORD"]
RUN = os.environ["KEYWARD_CONTRACT_RUN"]
RELAY_SECRET = os.environ["KEYWARD_CONTRACT_RELAY_SECRET"]
ISSUER = f"{BASE}/realms/{REALM}"
COOKIE = "keyward-session"
TIMEOUT = 30

_lock = threading.RLock()
_turns: dict[str, int] = defaultdict(int)
# Rotations in flight, by case: the phone adopts the new key only when the server answers "rotated".
_rotations: dict[int, tuple["Phone", ProofMaker]] = {}


# ------------------------------------------------------------------------------------------------- the actors
def user(role: str) -> str:
    return f"c{RUN}-{role}"


def admin(*args: str) -> str:
    """The keyward CLI on the server's database, as an operator runs it."""
    done = subprocess.run([ADMIN["binary"], *args, *ADMIN["arguments"]], env=ADMIN["environment"], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"keyward {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return done.stdout


def claims_of(token: str) -> dict[str, Any]:
    return json.loads(b64u_decode(token.split(".")[1]))


class Phone:
    """An enrolled push-MFA device: its own ES256 key, ids, and a DPoP-bound access token for that key."""

    def __init__(self, username: str):
        self.username = username
        self.key = ProofMaker("ES256")
        self.device_id = str(uuid.uuid4())
        self.credential_id = str(uuid.uuid4())
        self.user_id = ""
        self._token: tuple[str, float] | None = None

    def enrolled(self) -> "Phone":
        answer = requests.post(f"{ISSUER}/push-mfa/enroll/complete", json={"token": self.enrollment_token()}, timeout=TIMEOUT)
        if answer.status_code != 200:
            raise RuntimeError(f"enrollment of {self.username} failed: {answer.status_code} {answer.text}")
        return self

    def enrollment_token(self) -> str:
        """The device's answer to a fresh enrollment link for its user (the link's token behind its request_uri)."""
        link = admin("enrollment-link", "--realm", REALM, "--username", self.username).split()[0]
        request_uri = parse_qs(urlparse(link).query)["request_uri"][0]
        answer = requests.get(request_uri, timeout=TIMEOUT)
        answer.raise_for_status()
        realm_claims = claims_of(answer.text.strip())
        self.user_id = realm_claims["sub"]

        now = int(time.time())
        return self.device_jwt({
            "enrollmentId": realm_claims["enrollmentId"], "nonce": realm_claims["nonce"], "sub": realm_claims["sub"],
            "deviceType": "ios", "pushProviderId": f"contract-{self.device_id}", "pushProviderType": "log",
            "credentialId": self.credential_id, "deviceId": self.device_id, "deviceLabel": "schemathesis",
            "iat": now, "exp": now + 300, "cnf": {"jwk": self.key.public_jwk | {"alg": "ES256"}},
        })

    def device_jwt(self, claims: dict[str, Any]) -> str:
        return self.key.sign({"alg": "ES256", "typ": "JWT", "kid": self.key.thumbprint}, claims)

    def access_token(self) -> str:
        if self._token is None or self._token[1] - time.time() < 30:
            proof = self.key.proof("POST", f"{ISSUER}/protocol/openid-connect/token", sub=self.user_id, deviceId=self.device_id)
            answer = requests.post(f"{ISSUER}/protocol/openid-connect/token", headers={"DPoP": proof}, timeout=TIMEOUT, data={
                "grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
            })
            answer.raise_for_status()
            body = answer.json()
            self._token = (body["access_token"], time.time() + body["expires_in"])
        return self._token[0]

    def authorize(self, case, url: str) -> None:
        token = self.access_token()
        case.headers["Authorization"] = f"DPoP {token}"
        case.headers["DPoP"] = self.key.proof(case.method.upper(), url, token, sub=self.user_id, deviceId=self.device_id)

    def respond_token(self, cid: str, action: str = "approve") -> str:
        now = int(time.time())
        return self.device_jwt({"cid": cid, "credId": self.credential_id, "deviceId": self.device_id, "action": action,
                                "iat": now, "exp": now + 120})

    def rotation(self) -> tuple[ProofMaker, dict[str, Any]]:
        new_key = ProofMaker("ES256")
        proof = new_key.sign({"alg": "ES256", "typ": "keyward-rotation+jwt"}, {
            "sub": self.user_id, "deviceId": self.device_id, "previousJkt": self.key.thumbprint, "iat": int(time.time()),
            "jti": str(uuid.uuid4()),
        })
        return new_key, {"publicKeyJwk": new_key.public_jwk | {"alg": "ES256"}, "proofOfPossession": proof}

    def pending(self) -> list[dict[str, Any]]:
        url = f"{ISSUER}/push-mfa/login/pending"
        token = self.access_token()
        proof = self.key.proof("GET", url, token, sub=self.user_id, deviceId=self.device_id)
        answer = requests.get(url, params={"userId": self.user_id}, headers={"Authorization": f"DPoP {token}", "DPoP": proof},
                              timeout=TIMEOUT)
        answer.raise_for_status()
        return answer.json()["challenges"]


class Browser:
    """A person's browser on the sign-in pages: its session cookie and the page's CSRF token."""

    def __init__(self, username: str | None = None):
        self.http = requests.Session()
        page = self.http.get(f"{ISSUER}/login", timeout=TIMEOUT)
        page.raise_for_status()
        self.csrf = self._csrf(page.text)
        if username is not None:
            answer = self.http.post(f"{ISSUER}/login", data={"csrf": self.csrf, "username": username, "password": PASSWORD},
                                    allow_redirects=False, timeout=TIMEOUT)
            if answer.status_code != 303:
                raise RuntimeError(f"sign-in of {username} failed: {answer.status_code}")
            self.next = answer.headers["Location"]
            # The session is rotated at sign-in: its new CSRF token is on the next page.
            self.csrf = self._csrf(self.http.get(BASE + self.next if self.next.startswith("/") else self.next, timeout=TIMEOUT).text,
                                   required=False) or self.csrf

    @staticmethod
    def _csrf(html: str, required: bool = True) -> str | None:
        found = re.search(r'name="csrf" value="([^"]+)"', html)
        if found is None and required:
            raise RuntimeError("no CSRF token on the page")
        return found.group(1) if found else None

    def removable_device(self) -> str:
        """The id of a device on the account page, as its remove button names it."""
        page = self.http.get(f"{ISSUER}/account", timeout=TIMEOUT).text
        found = re.search(r'/account/devices/([^/"]+)/remove', page)
        if found is None:
            raise RuntimeError("the account page lists no device to remove")
        return found.group(1)

    @property
    def cookie(self) -> str:
        return self.http.cookies.get(COOKIE, "")

    def attach(self, case, body: dict[str, Any] | None = None) -> None:
        case.cookies = {**(case.cookies or {}), COOKIE: self.cookie}
        if isinstance(case.body, dict) or body is not None:
            fields = dict(case.body) if isinstance(case.body, dict) else {}
            fields.update(body or {})
            fields["csrf"] = self.csrf
            case.body = fields


class Fixtures:
    """The phones and users the hooks hand out, made on first use."""

    def __init__(self):
        self._phones: dict[str, Phone] = {}

    def phone(self, role: str) -> Phone:
        if role not in self._phones:
            self._phones[role] = Phone(user(role)).enrolled()
        return self._phones[role]

    def pending_challenge(self, role: str) -> str:
        """A login challenge waiting for `role`'s phone: one already pending, or a new one from a sign-in."""
        phone = self.phone(role)
        waiting = phone.pending()
        if not waiting:
            browser = Browser(phone.username)
            browser.http.get(f"{ISSUER}/login/push", timeout=TIMEOUT)
            waiting = phone.pending()
        if not waiting:
            raise RuntimeError("a sign-in with a phone enrolled made no push challenge")
        return waiting[0]["cid"]


FIXTURES = Fixtures()


# ---------------------------------------------------------------------------------------- per-operation setup
def _url(case) -> str:
    path = case.path
    for name, value in (case.path_parameters or {}).items():
        path = path.replace("{" + name + "}", str(value))
    return BASE + path


def _device_operation(case, valid: bool, role: str = "device") -> None:
    phone = FIXTURES.phone(role)
    operation = case.operation.definition.raw.get("operationId")
    if valid:
        if operation == "postChallengeResponse":
            case.path_parameters["cid"] = FIXTURES.pending_challenge(role)
            case.body = {"token": phone.respond_token(case.path_parameters["cid"])}
        elif operation == "getPendingChallenges":
            case.query = {"userId": phone.user_id}
        elif operation == "putPushProvider":
            case.body = {"pushProviderId": f"contract-{uuid.uuid4()}", "pushProviderType": "log"}
        elif operation == "putRotateKey":
            new_key, body = phone.rotation()
            case.body = body
            _rotations[id(case)] = (phone, new_key)
    phone.authorize(case, _url(case))


def _enrollment(case, valid: bool) -> None:
    if valid:
        # A user of its own each time: the realm caps the devices per user.
        username = user(f"enroll-{uuid.uuid4().hex[:12]}")
        admin("users", "create", "--realm", REALM, username)
        case.body = {"token": Phone(username).enrollment_token()}


def _request_token(case, valid: bool) -> None:
    if valid:
        link = admin("enrollment-link", "--realm", REALM, "--username", user("pages")).split()[0]
        case.path_parameters["handle"] = parse_qs(urlparse(link).query)["request_uri"][0].rsplit("/", 1)[-1]


def _page(case, valid: bool) -> None:
    operation = case.operation.definition.raw.get("operationId")
    if operation == "postLogin":
        browser = Browser()
        browser.attach(case, {"username": user("pages"), "password": PASSWORD} if valid else None)
    elif operation in ("getPushWaitingPage", "postPushWaitingPage"):
        FIXTURES.phone("push-page")
        Browser(user("push-page")).attach(case, {} if valid else None)
    elif operation == "postRemoveDevice":
        if valid:
            # A user of its own, signed in before its phone is enrolled, so the session is past the push step.
            username = user(f"remover-{uuid.uuid4().hex[:12]}")
            admin("users", "create", "--realm", REALM, username)
            browser = Browser(username)
            Phone(username).enrolled()
            case.path_parameters["id"] = browser.removable_device()
            browser.attach(case, {})
        else:
            Browser(user("remover")).attach(case)
    elif operation in ("postLogout", "getAccountPage", "getEnrollPage", "postEnroll"):
        Browser(user("pages")).attach(case, {} if valid else None)


PROVIDER = os.environ.get("KEYWARD_CONTRACT_PROVIDER", "")
PROVIDER_PERSON = os.environ.get("KEYWARD_CONTRACT_PROVIDER_PERSON", "")


def _provider_flow() -> tuple[requests.Session, dict[str, str]]:
    """A browser that began a sign-in with the contract's identity provider and was sent back: its transaction
    cookie, and the callback's state and code."""
    browser = requests.Session()
    started = browser.get(f"{ISSUER}/v1/auth/{PROVIDER}", allow_redirects=False, timeout=TIMEOUT)
    if started.status_code != 302:
        raise RuntimeError(f"the provider sign-in did not start: {started.status_code}")
    approved = requests.post(started.headers["Location"], data={"sub": PROVIDER_PERSON}, allow_redirects=False, timeout=TIMEOUT)
    query = parse_qs(urlparse(approved.headers["Location"]).query)
    return browser, {"state": query["state"][0], "code": query["code"][0]}


def _provider_sign_in(case, valid: bool) -> None:
    case.path_parameters["alias"] = PROVIDER
    if valid:
        case.query = {"return": f"/realms/{REALM}/account"}


def _provider_callback(case, valid: bool) -> None:
    case.path_parameters["alias"] = PROVIDER
    if not valid:
        return
    browser, parameters = _provider_flow()
    if case.operation.definition.raw.get("operationId") == "postProviderCallback":
        # Without its cookie, as a cross-site form_post arrives: Keyward answers the same-site re-post page.
        case.body = parameters
    else:
        case.query = parameters
        case.cookies = {**(case.cookies or {}), **browser.cookies.get_dict()}


def _session_json(case, valid: bool) -> None:
    browser = Browser(user("pages"))
    case.cookies = {**(case.cookies or {}), COOKIE: browser.cookie}
    if case.operation.definition.raw.get("operationId") == "postBrowserLogout" and valid:
        case.headers["X-CSRF-Token"] = browser.csrf


def _account_sessions(case, valid: bool) -> None:
    operation = case.operation.definition.raw.get("operationId")
    # A user of its own each time: ending sessions or the account must not sign out the other operations' browsers.
    username = user(f"account-{uuid.uuid4().hex[:12]}")
    admin("users", "create", "--realm", REALM, username)
    browser = Browser(username)
    if operation == "postEndSession" and valid:
        Browser(username)
        page = browser.http.get(f"{ISSUER}/account", timeout=TIMEOUT).text
        found = re.search(r'/account/sessions/([^/"]+)/end', page)
        if found is None:
            raise RuntimeError("the account page lists no other session to end")
        case.path_parameters["id"] = found.group(1)
    browser.attach(case, {} if valid else None)


def _account_identities(case, valid: bool) -> None:
    # A user of its own, just signed in with a password: linking asks for a recent first factor.
    username = user(f"linker-{uuid.uuid4().hex[:12]}")
    admin("users", "create", "--realm", REALM, username)
    browser = Browser(username)
    if case.operation.definition.raw.get("operationId") == "postLinkProvider":
        case.path_parameters["alias"] = PROVIDER
        browser.attach(case, {} if valid else None)
    else:
        # An identity the user does not have: answered like one unlinked already (303).
        browser.attach(case, {"issuer": "https://nobody.example", "subject": "nobody"} if valid else None)


def _device_challenge(case, valid: bool) -> None:
    if valid:
        case.body = {"app_id": DEVICE_APP}


class Installation:
    """An app installation of DEVICE_APP (or another realm's app): a P-256 key, registered through the API, that signs
    its requests."""

    def __init__(self, realm: str = REALM, app: str = DEVICE_APP):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.device_id: str | None = None
        self.issuer, self.app = f"{BASE}/realms/{realm}", app

    def challenge(self) -> str:
        answer = requests.post(f"{self.issuer}/v1/device/challenge", json={"app_id": self.app}, timeout=TIMEOUT)
        answer.raise_for_status()
        return answer.json()["challenge"]

    @staticmethod
    def point(key) -> str:
        return base64.b64encode(key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)).decode()

    @staticmethod
    def sign(key, data: bytes) -> str:
        return base64.b64encode(key.sign(data, ec.ECDSA(hashes.SHA256()))).decode()

    def registration(self) -> dict[str, Any]:
        challenge = self.challenge()
        return {"app_id": self.app, "challenge": challenge, "platform": "ios", "public_key": self.point(self.key),
                "proof": self.sign(self.key, challenge.encode())}

    def registered(self) -> "Installation":
        answer = requests.post(f"{self.issuer}/v1/device/register", json=self.registration(), timeout=TIMEOUT)
        answer.raise_for_status()
        self.device_id = answer.json()["device_id"]
        return self

    def sign_request(self, case, method: str, target: str, body: bytes) -> None:
        """The signing headers over METHOD, target, time, nonce and the body's digest (README, "Signed device requests")."""
        timestamp, nonce = str(int(time.time())), str(uuid.uuid4())
        message = "\n".join([method, target, timestamp, nonce, hashlib.sha256(body).hexdigest()]).encode()
        case.headers.update({"X-App-ID": DEVICE_APP, "X-Device-ID": self.device_id, "X-Keyward-Timestamp": timestamp,
                             "X-Keyward-Nonce": nonce, "X-Keyward-Sig-Version": "1", "X-Keyward-Signature": self.sign(self.key, message)})


def _device_registration(case, valid: bool) -> None:
    if valid:
        case.headers.pop("X-Keyward-Dev-Mode", None)
        case.body = Installation().registration()


def _device_status(case, valid: bool) -> None:
    if valid:
        installation = Installation().registered()
        case.path_parameters["realm"] = REALM
        installation.sign_request(case, "GET", f"/realms/{REALM}/v1/device/status", b"")


def _device_rotation(case, valid: bool) -> None:
    if valid:
        installation = Installation().registered()
        new_key = ec.generate_private_key(ec.SECP256R1())
        challenge = installation.challenge()
        case.path_parameters["realm"] = REALM
        case.body = {"challenge": challenge, "new_public_key": Installation.point(new_key), "proof": Installation.sign(new_key, challenge.encode())}
        # The signature covers the body's bytes: signed as schemathesis serializes a JSON body (json.dumps defaults).
        installation.sign_request(case, "POST", f"/realms/{REALM}/v1/device/rotate-key", json.dumps(case.body).encode())


SETUP = {
    "postDeviceChallenge": _device_challenge,
    "postDeviceRegistration": _device_registration,
    "getDeviceStatus": _device_status,
    "postDeviceKeyRotation": _device_rotation,
    "getWhoAmI": lambda case, valid: _whoami(case),
    "postToken": lambda case, valid: _token(case, valid),
    "postChallengeResponse": _device_operation,
    "getPendingChallenges": _device_operation,
    "putPushProvider": _device_operation,
    "putRotateKey": _device_operation,
    "postLockout": lambda case, valid: _device_operation(case, valid, role="lockout"),
    "postEnrollmentComplete": _enrollment,
    "getEnrollmentToken": _request_token,
    "postLogin": _page,
    "postLogout": _page,
    "getAccountPage": _page,
    "postRemoveDevice": _page,
    "getEnrollPage": _page,
    "postEnroll": _page,
    "getPushWaitingPage": _page,
    "postPushWaitingPage": _page,
    "getProviderSignIn": _provider_sign_in,
    "getProviderCallback": _provider_callback,
    "postProviderCallback": _provider_callback,
    "getBrowserSession": _session_json,
    "postBrowserLogout": _session_json,
    "postEndSession": _account_sessions,
    "postEndAllSessions": _account_sessions,
    "getDeleteAccount": _account_sessions,
    "postDeleteAccount": _account_sessions,
    "postLinkProvider": _account_identities,
    "postUnlinkProvider": _account_identities,
}

# ------------------------------------------------------------------------------------- sign-in for apps (issue 28)
APP = "contract-app"  # created by run_contract.py: public, not first-party, Bearer allowed, scope profile
APP_REDIRECT = "https://app.contract.test/cb"


def _authorization_query() -> dict[str, str]:
    verifier = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return {"response_type": "code", "client_id": APP, "redirect_uri": APP_REDIRECT, "scope": "openid profile", "state": uuid.uuid4().hex,
            "nonce": uuid.uuid4().hex, "code_challenge": challenge, "code_challenge_method": "S256", "_verifier": verifier}


def _consent_page() -> tuple[Browser, dict[str, str], str]:
    """A signed-in browser shown the app's consent page: the browser (holding the pending request's cookie), the
    request's parameters and the page."""
    browser = Browser(user("oidc"))
    query = _authorization_query()
    page = browser.http.get(f"{ISSUER}/protocol/openid-connect/auth", params={k: v for k, v in query.items() if k != "_verifier"},
                            allow_redirects=False, timeout=TIMEOUT)
    if page.status_code != 200:
        raise RuntimeError(f"the consent page did not show: {page.status_code} {page.headers.get('Location')}")
    return browser, query, page.text


def _pending_id(html: str) -> str:
    found = re.search(r'name="id" value="([^"]+)"', html)
    if found is None:
        raise RuntimeError("no pending request id on the consent page")
    return found.group(1)


_app_token: dict[str, Any] = {}


def _app_access_token() -> str:
    """An access token of a live app session (scope openid), from a whole code flow; kept for a minute."""
    if _app_token.get("at", 0) > time.monotonic() - 60:
        return _app_token["token"]
    browser, query, page = _consent_page()
    allowed = browser.http.post(f"{ISSUER}/protocol/openid-connect/auth/consent",
                                data={"csrf": Browser._csrf(page), "id": _pending_id(page), "decision": "allow"},
                                allow_redirects=False, timeout=TIMEOUT)
    code = parse_qs(urlparse(allowed.headers["Location"]).query)["code"][0]
    issued = requests.post(f"{ISSUER}/protocol/openid-connect/token", timeout=TIMEOUT, data={
        "grant_type": "authorization_code", "code": code, "code_verifier": query["_verifier"], "redirect_uri": APP_REDIRECT, "client_id": APP,
    })
    issued.raise_for_status()
    _app_token.update(token=issued.json()["access_token"], at=time.monotonic())
    return _app_token["token"]


def _sign_in_for_apps(case, valid: bool) -> None:
    operation = case.operation.definition.raw.get("operationId")
    if not valid:
        return
    if operation == "getAuthorization":
        browser = Browser(user("oidc"))
        case.query = {k: v for k, v in _authorization_query().items() if k != "_verifier"}
        case.cookies = {**(case.cookies or {}), COOKIE: browser.cookie}
    elif operation in ("getAuthorizationResume", "postAuthorizationConsent", "postAuthorizationStepUp"):
        browser, _, page = _consent_page()
        case.cookies = {**(case.cookies or {}), **browser.http.cookies.get_dict()}
        if operation == "getAuthorizationResume":
            case.query = {"id": _pending_id(page)}
        else:
            # The step-up form answers a cancel like any pending request's: back to the app with access_denied.
            decision = "deny" if operation == "postAuthorizationConsent" else "cancel"
            case.body = {"csrf": Browser._csrf(page), "id": _pending_id(page), "decision": decision}
    elif operation == "postPushedAuthorizationRequest":
        case.headers.pop("Authorization", None)
        case.body = {k: v for k, v in _authorization_query().items() if k != "_verifier"}
    elif operation == "postRevoke":
        case.headers.pop("Authorization", None)
        case.body = {"token": uuid.uuid4().hex, "client_id": APP}
    elif operation in ("getUserInfo", "postUserInfo"):
        case.headers.pop("DPoP", None)
        case.headers["Authorization"] = f"Bearer {_app_access_token()}"
    elif operation == "getRPInitiatedLogout":
        browser = Browser(user("oidc"))
        case.query = {"client_id": APP}
        case.cookies = {**(case.cookies or {}), COOKIE: browser.cookie}


SETUP.update({
    operation: _sign_in_for_apps
    for operation in ("getAuthorization", "getAuthorizationResume", "postAuthorizationConsent", "postAuthorizationStepUp",
                      "postPushedAuthorizationRequest", "postRevoke", "getUserInfo", "postUserInfo", "getRPInitiatedLogout")
})


_client_key = ProofMaker("ES256")


def _whoami(case) -> None:
    proof = _client_key.proof("POST", f"{ISSUER}/protocol/openid-connect/token")
    answer = requests.post(f"{ISSUER}/protocol/openid-connect/token", headers={"DPoP": proof}, timeout=TIMEOUT, data={
        "grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
    })
    answer.raise_for_status()
    token = answer.json()["access_token"]
    case.headers["Authorization"] = f"DPoP {token}"
    case.headers["DPoP"] = _client_key.proof("GET", _url(case), token)


def _token(case, valid: bool) -> None:
    case.headers["DPoP"] = _client_key.proof("POST", _url(case))
    if valid:
        case.headers.pop("Authorization", None)
        case.body = {"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}


_relay_key = ProofMaker("ES256")
_session_key = ProofMaker("ES256")


def _relay_token() -> str:
    proof = _relay_key.proof("POST", f"{ISSUER}/protocol/openid-connect/token")
    answer = requests.post(f"{ISSUER}/protocol/openid-connect/token", headers={"DPoP": proof}, timeout=TIMEOUT, data={
        "grant_type": "client_credentials", "client_id": "contract-relay", "client_secret": RELAY_SECRET,
    })
    answer.raise_for_status()
    return answer.json()["access_token"]


def _handoff_put(case, valid: bool) -> None:
    """The relay client's token and proof; every other call also a valid body, a blob for the session key."""
    token = _relay_token()
    case.headers["Authorization"] = f"DPoP {token}"
    case.headers["DPoP"] = _relay_key.proof("POST", _url(case), token)
    if valid:
        case.body = {"nonce": "contract-nonce", "jkt": _session_key.thumbprint, "blob": "contract-blob"}


def _handoff_take(case, valid: bool) -> None:
    """A proof by the session key; every other call also a fresh hand-off's code and nonce to take."""
    case.headers["DPoP"] = _session_key.proof("POST", _url(case))
    if valid:
        token = _relay_token()
        url = f"{ISSUER}/v1/broker/handoff"
        answer = requests.post(url, json={"nonce": "contract-nonce", "jkt": _session_key.thumbprint, "blob": "contract-blob"},
                               headers={"Authorization": f"DPoP {token}", "DPoP": _relay_key.proof("POST", url, token)}, timeout=TIMEOUT)
        answer.raise_for_status()
        case.body = {"code": answer.json()["code"], "nonce": "contract-nonce"}


def _relay(case, valid: bool) -> None:
    """A signed-in browser and a well-formed relay request of the broker's app; every other call without the session."""
    jwk = json.dumps(_session_key.public_jwk, separators=(",", ":")).encode()
    case.query = {"client_id": "contract-broker-app", "nonce": uuid.uuid4().hex, "return": "https://app.contract.test/broker",
                  "publicKey": base64.urlsafe_b64encode(jwk).rstrip(b"=").decode()}
    if valid:
        case.cookies = {**(case.cookies or {}), COOKIE: Browser(user("oidc")).cookie}


SETUP.update({"postHandoff": _handoff_put, "postHandoffTake": _handoff_take, "getRelay": _relay})


# ------------------------------------------------------------------------------------------------- passkeys
def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Passkey:
    """A passkey the hooks make: a P-256 key with no counter (as synced passkeys send), answering the realm's options
    as a browser's authenticator would, for the origin of BASE."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.id = os.urandom(16)
        self.user_handle: str | None = None

    def _client_data(self, kind: str, challenge: str) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": BASE, "crossOrigin": False}, separators=(",", ":")).encode()

    def registration(self, options: dict[str, Any]) -> dict[str, Any]:
        self.user_handle = options["user"]["id"]
        numbers = self.key.public_key().public_numbers()
        cose = cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
        auth_data = (hashlib.sha256(options["rp"]["id"].encode()).digest() + bytes([0x45]) + bytes(4) + bytes(16)
                     + len(self.id).to_bytes(2, "big") + self.id + cose)
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        return {"id": _b64(self.id), "rawId": _b64(self.id), "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": _b64(self._client_data("webauthn.create", options["challenge"])),
                             "attestationObject": _b64(attestation)}}

    def assertion(self, options: dict[str, Any]) -> dict[str, Any]:
        client_data = self._client_data("webauthn.get", options["challenge"])
        auth_data = hashlib.sha256(options["rpId"].encode()).digest() + bytes([0x05]) + bytes(4)
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {"id": _b64(self.id), "rawId": _b64(self.id), "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": _b64(client_data), "authenticatorData": _b64(auth_data), "signature": _b64(signature),
                             "userHandle": self.user_handle}}


def _session_csrf(browser: Browser) -> str:
    return browser.http.get(f"{ISSUER}/v1/auth/session", timeout=TIMEOUT).json()["csrf_token"]


def _passkey_account() -> tuple[str, Browser, Passkey]:
    """A user of its own, signed in with a password just now, with a passkey registered through the API."""
    username = user(f"passkey-{uuid.uuid4().hex[:12]}")
    admin("users", "create", "--realm", REALM, username)
    browser = Browser(username)
    csrf = _session_csrf(browser)
    options = browser.http.post(f"{ISSUER}/webauthn/registration/options", json={}, headers={"X-CSRF-Token": csrf}, timeout=TIMEOUT)
    options.raise_for_status()
    passkey = Passkey()
    answer = browser.http.post(f"{ISSUER}/webauthn/registration", json=passkey.registration(options.json()),
                               headers={"X-CSRF-Token": csrf}, timeout=TIMEOUT)
    if answer.status_code != 201:
        raise RuntimeError(f"the hooks' passkey was not registered: {answer.status_code} {answer.text[:200]}")
    return username, browser, passkey


_passkey_owner: tuple[str, Browser, Passkey] | None = None


def _owner() -> tuple[str, Browser, Passkey]:
    global _passkey_owner
    if _passkey_owner is None:
        _passkey_owner = _passkey_account()
    return _passkey_owner


def _passkey_registration(case, valid: bool) -> None:
    """A signed-in session (its cookie; its token on the valid turns); the valid registrations answer fresh options."""
    username = user(f"passkey-new-{uuid.uuid4().hex[:12]}")
    admin("users", "create", "--realm", REALM, username)
    browser = Browser(username)
    case.cookies = {**(case.cookies or {}), COOKIE: browser.cookie}
    if not valid:
        return
    csrf = _session_csrf(browser)
    case.headers["X-CSRF-Token"] = csrf
    if case.operation.definition.raw.get("operationId") == "postPasskeyRegistration":
        options = browser.http.post(f"{ISSUER}/webauthn/registration/options", json={}, headers={"X-CSRF-Token": csrf}, timeout=TIMEOUT)
        options.raise_for_status()
        case.body = {**Passkey().registration(options.json()), "name": "contract"}


def _passkey_sign_in(case, valid: bool) -> None:
    """The valid turns: options asked with no cookie (a sign-in state of its own), then the owner's passkey's answer
    with that state's cookie and token."""
    if not valid:
        return
    if case.operation.definition.raw.get("operationId") == "postPasskeyAuthenticationOptions":
        case.cookies = {}
        return
    _, _, passkey = _owner()
    state = requests.Session()
    options = state.post(f"{ISSUER}/webauthn/authentication/options", json={}, timeout=TIMEOUT)
    options.raise_for_status()
    case.cookies = {COOKIE: state.cookies.get(COOKIE, "")}
    case.headers["X-CSRF-Token"] = options.headers["X-CSRF-Token"]
    case.body = passkey.assertion(options.json())


def _passkey_pages(case, valid: bool) -> None:
    operation = case.operation.definition.raw.get("operationId")
    if operation in ("getPasskeyStepPage", "postPasskeyStepPage"):
        # The owner's password alone: the session waits at the passkey step.
        browser = Browser(_owner()[0])
        browser.attach(case, {} if valid else None)
        return
    _, browser, passkey = _passkey_account()
    case.path_parameters["id"] = _b64(passkey.id)
    browser.attach(case, ({"name": "renamed"} if operation == "postRenamePasskey" else {}) if valid else None)


SETUP.update({
    "postPasskeyRegistrationOptions": _passkey_registration,
    "postPasskeyRegistration": _passkey_registration,
    "postPasskeyAuthenticationOptions": _passkey_sign_in,
    "postPasskeyAuthentication": _passkey_sign_in,
    "getPasskeyStepPage": _passkey_pages,
    "postPasskeyStepPage": _passkey_pages,
    "postRenamePasskey": _passkey_pages,
    "postRemovePasskey": _passkey_pages,
})


# ------------------------------------------------------------------------------------- one device, one key (issue 32)
_one_key: dict[str, Any] = {}


def _one_key_device() -> tuple[ProofMaker, str]:
    """One installation of DEVICE_APP, registered once, whose key is also its person's DPoP key: the proof maker and
    an access token of user one-key from one code flow (dpop_jkt = the key), refreshed with the key every two
    minutes. Push may be turned on within ten minutes of that sign-in, longer than a run takes; the person has push
    on from the first success, so a second sign-in would meet the push step."""
    token_url = f"{ISSUER}/protocol/openid-connect/token"
    if "maker" not in _one_key:
        installation = Installation()
        installation.registered()
        pem = installation.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        maker = ProofMaker("ES256", key=ECKey.import_key(pem))
        browser = Browser(user("one-key"))
        query = _authorization_query()
        params = {k: v for k, v in query.items() if k != "_verifier"} | {"dpop_jkt": maker.thumbprint}
        page = browser.http.get(f"{ISSUER}/protocol/openid-connect/auth", params=params, allow_redirects=False, timeout=TIMEOUT)
        if page.status_code != 200:
            raise RuntimeError(f"the consent page did not show: {page.status_code} {page.headers.get('Location')}")
        allowed = browser.http.post(f"{ISSUER}/protocol/openid-connect/auth/consent",
                                    data={"csrf": Browser._csrf(page.text), "id": _pending_id(page.text), "decision": "allow"},
                                    allow_redirects=False, timeout=TIMEOUT)
        code = parse_qs(urlparse(allowed.headers["Location"]).query)["code"][0]
        issued = requests.post(token_url, headers={"DPoP": maker.proof("POST", token_url)}, timeout=TIMEOUT, data={
            "grant_type": "authorization_code", "code": code, "code_verifier": query["_verifier"], "redirect_uri": APP_REDIRECT, "client_id": APP,
        })
        issued.raise_for_status()
        _one_key.update(maker=maker, token=issued.json()["access_token"], refresh=issued.json()["refresh_token"], at=time.monotonic())
    elif _one_key["at"] < time.monotonic() - 120:
        refreshed = requests.post(token_url, headers={"DPoP": _one_key["maker"].proof("POST", token_url)}, timeout=TIMEOUT, data={
            "grant_type": "refresh_token", "refresh_token": _one_key["refresh"], "client_id": APP,
        })
        refreshed.raise_for_status()
        _one_key.update(token=refreshed.json()["access_token"], refresh=refreshed.json()["refresh_token"], at=time.monotonic())
    return _one_key["maker"], _one_key["token"]


def _registered_device_push(case, valid: bool) -> None:
    """The person's token bound to the device key and a fresh proof by it; every other call also a valid body."""
    maker, token = _one_key_device()
    case.headers["Authorization"] = f"DPoP {token}"
    case.headers["DPoP"] = maker.proof("POST", _url(case), token)
    if valid:
        case.body = {"push_provider_type": "log", "push_provider_id": "contract-push-token", "device_label": "Contract phone"}


SETUP.update({"postRegisteredDevicePush": _registered_device_push})


# ------------------------------------------------------------------------------------------------------ admin
ADMIN_SECRET = os.environ["KEYWARD_CONTRACT_ADMIN_SECRET"]
# Every admin call goes to a realm of its own: schemathesis follows the Location of what a call made to the calls that
# delete it, and generated ids may name anything; the other operations' fixtures in the demo realm stay out of reach.
ADMIN_REALM = f"c{RUN}-admin"
_admin_fixtures: dict[str, str] = {}
_admin_key = ProofMaker("ES256")
_admin_token: dict[str, Any] = {}


def _admin_access_token() -> str:
    """The master realm's contract-admin client's token (every admin scope), renewed a minute before it expires."""
    if _admin_token.get("expires", 0) > time.time():
        return _admin_token["token"]
    url = f"{BASE}/realms/master/protocol/openid-connect/token"
    answer = requests.post(url, headers={"DPoP": _admin_key.proof("POST", url)}, timeout=TIMEOUT, data={
        "grant_type": "client_credentials", "client_id": f"contract-admin-{RUN}", "client_secret": ADMIN_SECRET,
    })
    answer.raise_for_status()
    _admin_token.update(token=answer.json()["access_token"], expires=time.time() + answer.json()["expires_in"] - 60)
    return _admin_token["token"]


def _admin_call(method: str, path: str, body: dict[str, Any] | None = None) -> requests.Response:
    token = _admin_access_token()
    answer = requests.request(method, BASE + path, json=body, timeout=TIMEOUT,
                              headers={"Authorization": f"DPoP {token}", "DPoP": _admin_key.proof(method, BASE + path, token)})
    answer.raise_for_status()
    return answer


def _admin_realm() -> None:
    """ADMIN_REALM with a client, a provider and an app that accepts devices without attestation, made once."""
    base = f"/admin/realms/{ADMIN_REALM}"
    # Each made once; a step that failed is tried again at the next call.
    if "realm" not in _admin_fixtures:
        _admin_fixtures["realm"] = _admin_call("POST", "/admin/realms", {"name": ADMIN_REALM}).json()["name"]
    if "client" not in _admin_fixtures:
        _admin_fixtures["client"] = _admin_call("POST", f"{base}/clients", {"client_id": _fresh("client")}).json()["client_id"]
    if "provider" not in _admin_fixtures:
        _admin_fixtures["provider"] = _admin_call("POST", f"{base}/providers", _admin_provider()).json()["alias"]
    if "app" not in _admin_fixtures:
        app = {**_admin_app(_fresh("app")), "missing_attestation": "accept"}
        _admin_fixtures["app"] = _admin_call("POST", f"{base}/apps", app).json()["app_id"]


def _admin_user() -> str:
    """A fresh user made over the admin API, for a call that reads, changes or deletes one."""
    return _admin_call("POST", f"/admin/realms/{ADMIN_REALM}/users", {"username": _fresh("user")}).json()["id"]


def _fresh(kind: str) -> str:
    return f"c{RUN}-{kind}-{uuid.uuid4().hex[:8]}"


def _admin_provider() -> dict[str, Any]:
    """A provider at the run's own OpenID provider (tests/idp): schemathesis finds its sign-in route from the alias, and
    a provider that cannot be reached would answer that route 503."""
    if "issuer" not in _admin_fixtures:
        _admin_fixtures["issuer"] = _admin_call("GET", f"/admin/realms/{REALM}/providers/{PROVIDER}").json()["issuer"]
    return {"alias": _fresh("p"), "type": "oidc", "issuer": _admin_fixtures["issuer"], "client_id": "keyward"}


def _admin_issuer() -> dict[str, Any]:
    return {"issuer": f"https://{_fresh('host')}.contract.test", "jwks_url": "https://host.contract.test/jwks.json"}


def _admin_app(app_id: str | None = None) -> dict[str, Any]:
    body = {"platform": "ios", "environment": "production", "team_id": "ABCDE12345", "bundle_id": "com.example.contract"}
    return {**body, "app_id": app_id} if app_id else body


def _admin_paths(operation: str, parameters: dict[str, Any]) -> None:
    """Path parameters that name something that exists: made fresh where the call deletes or changes it."""
    if "id" in parameters:
        parameters["id"] = _admin_user()
    base = f"/admin/realms/{ADMIN_REALM}"
    if "clientId" in parameters:
        parameters["clientId"] = _admin_fixtures["client"]
        if operation == "adminDeleteClient":
            parameters["clientId"] = _admin_call("POST", f"{base}/clients", {"client_id": _fresh("client")}).json()["client_id"]
    if "alias" in parameters:
        parameters["alias"] = _admin_fixtures["provider"]
        if operation == "adminDeleteProvider":
            parameters["alias"] = _admin_call("POST", f"{base}/providers", _admin_provider()).json()["alias"]
    if "issuerId" in parameters:
        parameters["issuerId"] = _admin_call("POST", f"{base}/issuers", _admin_issuer()).json()["id"]
    if "appId" in parameters:
        parameters["appId"] = _admin_fixtures["app"]
        if operation in ("adminDeleteApp", "adminPutApp"):
            parameters["appId"] = _fresh("app")
            if operation == "adminDeleteApp":
                _admin_call("POST", f"{base}/apps", _admin_app(parameters["appId"]))
    if "deviceId" in parameters:
        parameters["deviceId"] = Installation(ADMIN_REALM, _admin_fixtures["app"]).registered().device_id


def _demo_user_id(username: str) -> str:
    found = _admin_call("GET", f"/admin/realms/{REALM}/users?username_prefix={username}").json()["items"]
    return next(item["id"] for item in found if item["username"] == username)


def _admin_holdings(operation: str, parameters: dict[str, Any]) -> None:
    """What a user holds in the demo realm's push MFA and passkeys, made fresh for the one call that removes it (only
    the demo realm has the push and passkey set-up; these users are the call's own)."""
    parameters["realm"] = REALM
    if operation == "adminRemoveUserPushDevice":
        username = user(f"held-{uuid.uuid4().hex[:10]}")
        admin("users", "create", "--realm", REALM, username)
        Phone(username).enrolled()
        parameters["id"] = _demo_user_id(username)
        parameters["credentialId"] = _admin_call("GET", f"/admin/realms/{REALM}/users/{parameters['id']}/push-devices").json()["items"][0]["id"]
    else:
        username, _, _ = _passkey_account()
        parameters["id"] = _demo_user_id(username)
        parameters["credentialId"] = _admin_call("GET", f"/admin/realms/{REALM}/users/{parameters['id']}/passkeys").json()["items"][0]["credential_id"]


def _admin(case, valid: bool) -> None:
    """The admin token and a proof for this call; every other call also inputs that name what exists."""
    operation = case.operation.definition.raw.get("operationId")
    _admin_realm()
    if "realm" in (case.path_parameters or {}):
        case.path_parameters["realm"] = ADMIN_REALM
    if valid:
        case.query = {}
        case.headers.pop("If-Match", None)
        if operation in ("adminRemoveUserPushDevice", "adminRemoveUserPasskey"):
            _admin_holdings(operation, case.path_parameters)
        else:
            _admin_paths(operation, case.path_parameters or {})
        bodies = {
            "adminCreateRealm": lambda: {"name": _fresh("realm")},
            "adminCreateClient": lambda: {"client_id": _fresh("client"), "scope": "profile"},
            "adminCreateUser": lambda: {"username": _fresh("user"), "password": PASSWORD},
            "adminUpdateUser": lambda: {"enabled": True},
            "adminSetUserPassword": lambda: {"password": PASSWORD},
            "adminCreateProvider": _admin_provider,
            "adminCreateIssuer": _admin_issuer,
            "adminUpdateIssuer": lambda: {"leeway": 10},
            "adminEnrollIssuerUsers": lambda: {"subjects": [_fresh("e")]},
            "adminCreateApp": lambda: _admin_app(_fresh("app")),
            "adminPutApp": _admin_app,
            "adminUpdatePushMFASettings": lambda: {"maxDevicesPerUser": 5, "waitChallengeEnabled": True},
            "adminUpdatePasskeySettings": lambda: {"mode": "optional", "secondStep": False},
        }
        if operation in bodies:
            case.body = bodies[operation]()
    token = _admin_access_token()
    case.headers["Authorization"] = f"DPoP {token}"
    case.headers["DPoP"] = _admin_key.proof(case.method.upper(), _url(case), token)


SETUP.update({
    name: _admin for name in (
        "adminListRealms", "adminCreateRealm", "adminGetRealm", "adminListSigningKeys", "adminRotateSigningKey", "adminListClients",
        "adminCreateClient", "adminGetClient", "adminDeleteClient", "adminListUsers", "adminCreateUser", "adminGetUser", "adminUpdateUser",
        "adminDeleteUser", "adminSetUserPassword", "adminListUserSessions", "adminEndUserSessions", "adminListUserIdentities",
        "adminListProviders", "adminCreateProvider", "adminGetProvider", "adminDeleteProvider", "adminListIssuers", "adminCreateIssuer",
        "adminGetIssuer", "adminUpdateIssuer", "adminDeleteIssuer", "adminEnrollIssuerUsers", "adminListApps", "adminCreateApp", "adminGetApp",
        "adminPutApp", "adminDeleteApp", "adminListAppDevices", "adminApproveDevice", "adminRejectDevice", "adminRemoveDevice",
        "adminListUserPushDevices", "adminRemoveUserPushDevice", "adminListUserDevices", "adminListUserPasskeys", "adminRemoveUserPasskey",
        "adminListAuditEvents", "adminGetPushMFASettings", "adminUpdatePushMFASettings", "adminGetPasskeySettings", "adminUpdatePasskeySettings",
    )
})


# ------------------------------------------------------------------------------------------------------- scim
_scim_token: dict[str, str] = {}


SCIM_CORE = "urn:ietf:params:scim:schemas:core:2.0:User"
SCIM_GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"


def _scim_bearer() -> str:
    """A SCIM token of the realm, made once with `keyward scim-tokens create` (the line it prints once)."""
    if "token" not in _scim_token:
        created = admin("scim-tokens", "create", "--realm", REALM, "--name", f"contract-{RUN}")
        _scim_token["token"] = next(line for line in created.splitlines() if line.startswith("kwscim_"))
    return _scim_token["token"]


def _scim_user(user_name: str | None = None) -> dict[str, Any]:
    """A user made through SCIM itself: (id, userName)."""
    user_name = user_name or _fresh("scim")
    answer = requests.post(f"{BASE}/scim/v2/realms/{REALM}/Users", timeout=TIMEOUT, json={"schemas": [SCIM_CORE], "userName": user_name},
                           headers={"Authorization": f"Bearer {_scim_bearer()}", "Content-Type": "application/scim+json"})
    answer.raise_for_status()
    return {"id": answer.json()["id"], "userName": user_name}


def _scim_group() -> dict[str, Any]:
    """A group made through SCIM itself: (id, displayName)."""
    name = _fresh("group")
    answer = requests.post(f"{BASE}/scim/v2/realms/{REALM}/Groups", timeout=TIMEOUT, json={"schemas": [SCIM_GROUP], "displayName": name},
                           headers={"Authorization": f"Bearer {_scim_bearer()}", "Content-Type": "application/scim+json"})
    answer.raise_for_status()
    return {"id": answer.json()["id"], "displayName": name}


def _scim(case, valid: bool) -> None:
    """The directory's token; every other call also a request that names what exists."""
    operation = case.operation.definition.raw.get("operationId")
    if valid:
        case.query = {}
        case.headers.pop("If-Match", None)
        if operation == "scimResourceType":
            case.path_parameters["id"] = "User"
        elif operation == "scimSchema":
            case.path_parameters["id"] = SCIM_CORE
        elif operation in ("scimSearchUsers", "scimSearch"):
            case.body = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], "filter": 'userName sw "c"', "count": 5}
        elif operation == "scimCreateUser":
            case.body = {"schemas": [SCIM_CORE], "userName": _fresh("scim")}
        elif operation in ("scimSearchGroups",):
            case.body = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], "filter": 'displayName sw "c"', "count": 5}
        elif operation == "scimCreateGroup":
            case.body = {"schemas": [SCIM_GROUP], "displayName": _fresh("group"), "members": [{"value": _scim_user()["id"]}]}
        elif operation in ("scimGetGroup", "scimReplaceGroup", "scimPatchGroup", "scimDeleteGroup"):
            group = _scim_group()
            case.path_parameters["id"] = group["id"]
            if operation == "scimReplaceGroup":
                case.body = {"schemas": [SCIM_GROUP], "displayName": group["displayName"] + "-renamed"}
            elif operation == "scimPatchGroup":
                case.body = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                             "Operations": [{"op": "Add", "path": "members", "value": [{"value": _scim_user()["id"]}]}]}
        elif operation in ("scimGetUser", "scimReplaceUser", "scimPatchUser", "scimDeleteUser"):
            user = _scim_user()
            case.path_parameters["id"] = user["id"]
            if operation == "scimReplaceUser":
                case.body = {"schemas": [SCIM_CORE], "userName": user["userName"], "displayName": "Replaced"}
            elif operation == "scimPatchUser":
                case.body = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                             "Operations": [{"op": "Replace", "path": "displayName", "value": "Patched"}]}
    case.headers["Authorization"] = f"Bearer {_scim_bearer()}"


SETUP.update({name: _scim for name in (
    "scimServiceProviderConfig", "scimResourceTypes", "scimResourceType", "scimSchemas", "scimSchema", "scimListUsers", "scimCreateUser",
    "scimGetUser", "scimReplaceUser", "scimPatchUser", "scimDeleteUser", "scimSearchUsers", "scimSearch",
    "scimListGroups", "scimCreateGroup", "scimSearchGroups", "scimGetGroup", "scimReplaceGroup", "scimPatchGroup", "scimDeleteGroup",
)})


# ------------------------------------------------------------------------------------------------------ hooks
@schemathesis.hook
def before_call(context, case, kwargs) -> None:
    operation = case.operation.definition.raw.get("operationId")
    if case.headers is None:
        case.headers = {}
    with _lock:
        turn = _turns[operation]
        _turns[operation] += 1
        # One call in four keeps what was generated for every part of the request; the rest target the demo realm.
        if turn % 4 == 3:
            return
        if "realm" in (case.path_parameters or {}):
            case.path_parameters["realm"] = REALM
        setup = SETUP.get(operation)
        if setup is not None:
            setup(case, turn % 2 == 0)


@schemathesis.hook
def after_call(context, case, response) -> None:
    operation = case.operation.definition.raw.get("operationId")
    with _lock:
        rotation = _rotations.pop(id(case), None)
        if rotation is not None and response.status_code == 200:
            phone, new_key = rotation
            phone.key = new_key
            phone._token = None
        if operation == "postLockout" and response.status_code == 200:
            # The panic button disabled the user: enable it again so the next lockout is judged on its input.
            admin("users", "enable", "--realm", REALM, FIXTURES.phone("lockout").username)
        with open(RECORD, "a", encoding="utf-8") as record:
            record.write(json.dumps({"operation": operation, "status": response.status_code, "method": case.method,
                                     "url": response.request.url[:300]}) + "\n")


# schemathesis counts application/jwt as a JSON type, and its JSON reader, registered first, would read the enrollment
# token. A compact JWT (RFC 7519 §10.3.1) is read as the string it is; every other JSON type still goes to JSON.
_json_reader = deserialization._DESERIALIZERS.pop("application/json")


@schemathesis.deserializer("application/json")
def json_or_compact_jwt(context, response):
    content_type = response.headers.get("content-type") or [""]
    content_type = content_type[0] if isinstance(content_type, list) else content_type
    if content_type.split(";")[0].strip().lower() == "application/jwt":
        return response.content.decode("ascii")
    return _json_reader(context, response)
