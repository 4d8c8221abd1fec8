"""Authorization codes as the Apple and Facebook doubles hand them out: random, single-use, short-lived, bound to
the client and redirect URI they were issued for, and to a PKCE S256 challenge when the client sent one.

`CodeBook.redeem` spends a code whatever the outcome of the checks after the lookup, like a provider that
burns a code on first presentation: a client that got it wrong cannot retry with the same code.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

Clock = Callable[[], float]


def random_token(prefix: str = "") -> str:
    return prefix + secrets.token_urlsafe(32)


def s256(verifier: str) -> str:
    """RFC 7636 §4.2: BASE64URL(SHA256(ASCII(code_verifier))), no padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode("ascii")


class CodeRefused(Exception):
    """`error` is the OAuth error code (RFC 6749 §5.2) to answer with; the message says why, for test logs."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error = error
        self.description = description


@dataclass
class IssuedCode:
    client_id: str
    redirect_uri: str
    issued_at: float
    code_challenge: str | None
    grant: dict[str, Any] = field(default_factory=dict)  # what the double needs at the token endpoint (sub, nonce…)


def check_challenge_request(challenge: str | None, method: str | None) -> None:
    """At authorization: a challenge is optional, but when sent it must be S256 (plain is refused)."""
    if challenge is None and method is None:
        return
    if not challenge:
        raise CodeRefused("invalid_request", "code_challenge_method without code_challenge")
    if method != "S256":
        raise CodeRefused("invalid_request", f"code_challenge_method must be S256, got {method!r}")
    if not 43 <= len(challenge) <= 128:
        raise CodeRefused("invalid_request", "code_challenge must be 43 to 128 characters")


class CodeBook:
    def __init__(self, lifetime_seconds: float, clock: Clock = time.time):
        self.lifetime = lifetime_seconds
        self.clock = clock
        self._codes: dict[str, IssuedCode] = {}
        self._lock = threading.Lock()

    def issue(self, client_id: str, redirect_uri: str, code_challenge: str | None, grant: dict[str, Any]) -> str:
        code = random_token("c.")
        with self._lock:
            self._codes[code] = IssuedCode(client_id, redirect_uri, self.clock(), code_challenge, grant)
        return code

    def redeem(self, code: str, client_id: str, redirect_uri: str | None, code_verifier: str | None) -> IssuedCode:
        with self._lock:
            issued = self._codes.pop(code, None)
        if issued is None:
            raise CodeRefused("invalid_grant", "unknown or already used code")
        if self.clock() - issued.issued_at > self.lifetime:
            raise CodeRefused("invalid_grant", "code expired")
        if issued.client_id != client_id:
            raise CodeRefused("invalid_grant", "code was issued to another client")
        if redirect_uri is not None and redirect_uri != issued.redirect_uri:
            raise CodeRefused("invalid_grant", "redirect_uri differs from the authorization request")
        if issued.code_challenge is not None:
            if not code_verifier:
                raise CodeRefused("invalid_grant", "code_verifier missing")
            if not hmac.compare_digest(s256(code_verifier), issued.code_challenge):
                raise CodeRefused("invalid_grant", "code_verifier does not match code_challenge")
        elif code_verifier:
            # RFC 9700 §4.8.2: a verifier without a challenge in the authorization request is refused.
            raise CodeRefused("invalid_grant", "code_verifier sent but the authorization request had no challenge")
        return issued
