"""The RSA key a provider double signs id_tokens with (RS256, `kid` = RFC 7638 thumbprint), the keys it retired but
still publishes, and the JWKS document that lists them."""

from __future__ import annotations

import threading
from typing import Any

from joserfc.jwk import RSAKey

SIGNING_ALG = "RS256"


class SigningKeys:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.current = self._new_key()
        self.retired: list[RSAKey] = []

    @staticmethod
    def _new_key() -> RSAKey:
        return RSAKey.generate_key(2048, parameters={"use": "sig", "alg": SIGNING_ALG}, auto_kid=True)

    def rotate(self, keep_old: bool) -> str:
        """Sign with a new key from now on and return its kid; `keep_old` keeps publishing the previous keys."""
        with self._lock:
            self.retired = [self.current, *self.retired] if keep_old else []
            self.current = self._new_key()
            return self.current.kid

    def jwks(self) -> dict[str, Any]:
        with self._lock:
            return {"keys": [key.as_dict(private=False) for key in (self.current, *self.retired)]}
