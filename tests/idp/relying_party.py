"""What the tests of the doubles do in Keyward's place: PKCE pairs, reading redirects and form_post pages, checking
id_tokens with joserfc against a JWKS, and (for Apple) minting the ES256 client secret."""

from __future__ import annotations

import secrets
import time
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

from oauth_codes import s256

REDIRECT_URI = "http://127.0.0.1:9/callback"  # never contacted: the tests read the redirect or the form


class FakeClock:
    """A clock the doubles read (their `clock` option) and a test moves, to expire codes and tokens without waiting."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, s256(verifier)


def redirect_params(response: requests.Response) -> dict[str, str]:
    assert response.status_code in (302, 303), (response.status_code, response.text[:500])
    query = urlsplit(response.headers["Location"]).query
    return {name: values[0] for name, values in parse_qs(query, keep_blank_values=True).items()}


class _FormReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.method: str | None = None
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "form" and self.action is None:
            self.action, self.method = values.get("action"), values.get("method")
        elif tag == "input" and values.get("type") == "hidden" and values.get("name"):
            self.fields[values["name"]] = values.get("value") or ""


def read_form_post(page: str) -> tuple[str | None, str | None, dict[str, str]]:
    """(action, method, hidden fields) of the first form on an auto-submitting page."""
    reader = _FormReader()
    reader.feed(page)
    return reader.action, reader.method, reader.fields


def verified_claims(token: str, jwks_url: str, algorithms: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Header and claims of `token` after joserfc checked its signature with the key of its kid in the JWKS."""
    keys = KeySet.import_key_set(requests.get(jwks_url, timeout=10).json())
    decoded = jwt.decode(token, keys, algorithms=algorithms)
    return decoded.header, decoded.claims


def apple_client_secret(key: ECKey, *, team_id: str, client_id: str, key_id: str, iat: int | None = None,
                        lifetime: int = 3600, audience: Any = "https://appleid.apple.com") -> str:
    issued = int(time.time()) if iat is None else iat
    claims = {"iss": team_id, "iat": issued, "exp": issued + lifetime, "aud": audience, "sub": client_id}
    return jwt.encode({"alg": "ES256", "kid": key_id}, claims, key, algorithms=["ES256"])
