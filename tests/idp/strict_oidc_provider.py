"""oidc-provider-mock 0.3.4 made strict enough to play Google (or any OIDC provider) against Keyward.

The mock is a real authlib authorization server, but lenient where Keyward must be tested strictly. This wrapper:
  * makes PKCE mandatory and S256-only: an authorization request without `code_challenge`, or with a method other
    than S256 (plain, or none, which means plain), is answered with a redirect carrying error=invalid_request; a token
    request without `code_verifier` gets 400 invalid_request, a wrong one 400 invalid_grant ("Code challenge failed.");
  * requires `nonce` on every authorization request (redirect with error=invalid_request otherwise);
  * turns Flask debug and the Werkzeug debugger off (the mock ships with both on);
  * signs id_tokens with its own RSA key, with a `kid` (RFC 7638 thumbprint) in the header, and can rotate that
    key at runtime (`rotate_key()`), optionally publishing the old key beside the new one;
  * answers /jwks with `Cache-Control: public, max-age=N`, or with no such header (`jwks_max_age=None`), and can
    make /jwks fail with 503 (`jwks_down = True`);
  * uses a configurable issuer in the id_token and discovery (default: its own base URL), and can add the RFC 9207
    `iss` parameter to authorization responses (`send_iss=True`);
  * puts `auth_time` in id_tokens as a provider with sessions does: the time of the approval, unless the user has
    a remembered sign-in (`remember(sub, auth_time)`, or POST /_double/remember) and the request did not insist on
    a fresh credential (`prompt=login` or `max_age=0`), in which case the remembered time — the provider answered
    from its session without asking for a password.
What stays the mock's: the endpoints (/oauth2/authorize, /oauth2/token, /userinfo, /jwks, PUT /users/{sub},
POST /oauth2/clients, /oauth2/end_session), approval by POSTing `sub=<user>` to the authorize URL (`action=deny`
denies), single-use codes, `aud` as an array [client_id], any client id and secret unless registration is required.

Python:
    with StrictOIDCProvider(jwks_max_age=300).serve() as idp:
        idp.base_url, idp.issuer, idp.rotate_key(), idp.jwks_down = True
CLI:
    python tests/idp/strict_oidc_provider.py --port 0 [--issuer URL] [--jwks-max-age N | --no-jwks-cache-header]
        [--user-claims JSON]... [--token-max-age S] [--send-iss] [--require-registration]
    prints {"base_url", "issuer", "discovery_url", "jwks_uri", "authorization_endpoint", "token_endpoint"} as
    one JSON line, then serves. Runtime switches for a double in another process:
        POST /_double/rotate-key   form keep_old=1 to keep publishing the previous key   → {"kid": new kid}
        POST /_double/jwks         form mode=up|down, max_age=N|none                      → the JWKS settings
        POST /_double/remember     form sub=…, auth_time=unix seconds (empty: forget)     → the remembered sign-ins
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import flask
from authlib.deprecate import AuthlibDeprecationWarning
from authlib.oauth2.rfc6749.errors import InvalidRequestError
from authlib.oauth2.rfc7636 import CodeChallenge

with warnings.catch_warnings():
    # The mock imports authlib.jose, which authlib 1.9 marks deprecated; nothing here uses it.
    warnings.simplefilter("ignore", AuthlibDeprecationWarning)
    import oidc_provider_mock
    from oidc_provider_mock import _app as mock_app  # its grant and OpenIDCode classes; pinned to 0.3.4 in .ci/run

User = oidc_provider_mock.User
unwrapped_mock_app = oidc_provider_mock.app  # the lenient original, for tests that show what the wrapper changes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from idp_serving import add_serving_arguments, serve_cli, serve_in_thread  # noqa: E402
from signing_keys import SIGNING_ALG, SigningKeys  # noqa: E402

class RememberedSignIns:
    """The provider's sessions: when each user last gave a credential, and the `auth_time` each code carries.

    An authorization approved for a user with a remembered sign-in carries that sign-in's time, unless the request
    insisted on a fresh credential (OpenID Connect Core §3.1.2.1: `prompt=login`, `max_age=0`); every other approval
    is a credential given now. The mock's stored codes have no room for it, so it is kept here, keyed by the code.
    """

    def __init__(self) -> None:
        self._sign_ins: dict[str, int] = {}
        self._by_code: dict[str, int] = {}
        self._lock = threading.Lock()

    def remember(self, sub: str, auth_time: int | None) -> None:
        with self._lock:
            if auth_time is None:
                self._sign_ins.pop(sub, None)
            else:
                self._sign_ins[sub] = auth_time

    def remembered(self) -> dict[str, int]:
        with self._lock:
            return dict(self._sign_ins)

    def __call__(self, grant) -> None:
        generate = grant.generate_authorization_code

        def generate_and_note():
            code = generate()
            data = grant.request.payload.data
            fresh = data.get("prompt") == "login" or data.get("max_age") == "0"
            sub = getattr(grant.request.user, "sub", None)
            now = int(time.time())
            with self._lock:
                remembered = self._sign_ins.get(sub)
                self._by_code[code] = now if fresh or remembered is None else remembered
            return code

        grant.generate_authorization_code = generate_and_note

    def auth_time(self, code: str) -> int | None:
        with self._lock:
            return self._by_code.get(code)


class StrictOpenIDCode(mock_app.OpenIDCode):
    """The mock's id_token maker, with our key, our `kid` header, our issuer and `auth_time`."""

    def __init__(self, provider: "StrictOIDCProvider", token_max_age: timedelta):
        super().__init__(require_nonce=True, token_max_age=token_max_age)
        self.provider = provider
        self.lifetime = int(token_max_age.total_seconds())

    def get_authorization_code_claims(self, authorization_code):
        claims = super().get_authorization_code_claims(authorization_code)
        auth_time = self.provider.sign_ins.auth_time(authorization_code.code)
        if auth_time is not None:
            claims["auth_time"] = auth_time
        return claims

    # authlib's current hooks; defining them keeps it off the mock's deprecated get_jwt_config.
    def resolve_client_private_key(self, client):
        return self.provider.keys.current.as_dict(private=True)

    def get_client_algorithm(self, client):
        return SIGNING_ALG

    def get_client_claims(self, client):
        # `aud` is left to authlib: [client_id], an array, as the mock has always sent it.
        return {"iss": self.provider.current_issuer(), "exp": int(time.time()) + self.lifetime}

    def get_encode_header(self, client):
        return {"typ": "JWT", "alg": SIGNING_ALG, "kid": self.provider.keys.current.kid}


class StrictS256Challenge(CodeChallenge):
    """authlib's PKCE extension, S256 only and required from every client, public or confidential.

    The mock's stored codes have no room for a challenge, so the challenge is kept here, keyed by the code.
    """

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def __init__(self) -> None:
        super().__init__(required=True)
        self._challenges: dict[str, str] = {}
        self._lock = threading.Lock()

    def __call__(self, grant) -> None:
        super().__call__(grant)
        generate = grant.generate_authorization_code

        def generate_and_remember():
            code = generate()
            with self._lock:
                self._challenges[code] = grant.request.payload.data["code_challenge"]
            return code

        grant.generate_authorization_code = generate_and_remember

    def validate_code_challenge(self, grant, redirect_uri):
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("Missing 'code_challenge' (PKCE is required)")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("'code_challenge_method' must be S256")
        if not data.get("nonce"):
            raise InvalidRequestError("Missing 'nonce' in request.")
        super().validate_code_challenge(grant, redirect_uri)

    def validate_code_verifier(self, grant, result):
        if not grant.request.form.get("code_verifier"):
            raise InvalidRequestError("Missing 'code_verifier'")
        super().validate_code_verifier(grant, result)

    def get_authorization_code_challenge(self, authorization_code):
        with self._lock:
            return self._challenges.get(authorization_code.code)

    def get_authorization_code_challenge_method(self, authorization_code):
        return "S256"


class StrictOIDCProvider:
    def __init__(self, *, issuer: str | None = None, jwks_max_age: int | None = 300,
                 users: list[User] | tuple = (), token_max_age: int = 3600,
                 send_iss: bool = False, require_registration: bool = False):
        self.issuer = issuer
        self.jwks_max_age = jwks_max_age
        self.jwks_down = False
        self.send_iss = send_iss
        self.base_url: str | None = None
        self.keys = SigningKeys()
        self.sign_ins = RememberedSignIns()
        self.app = oidc_provider_mock.app(
            require_client_registration=require_registration, require_nonce=True,
            access_token_max_age=timedelta(seconds=token_max_age), user_claims=list(users))
        self._debug_off()
        self._install_strict_extensions(timedelta(seconds=token_max_age))
        self._install_views()

    # ------------------------------------------------------------------------------------------- runtime switches
    def rotate_key(self, keep_old: bool = False) -> str:
        """A new signing key from now on; returns its kid. `keep_old` keeps the previous key in the JWKS."""
        return self.keys.rotate(keep_old)

    def remember(self, sub: str, auth_time: int | None) -> None:
        """`sub` has a session here since `auth_time`: approvals not insisting on a fresh credential carry it."""
        self.sign_ins.remember(sub, auth_time)

    @property
    def kid(self) -> str:
        return self.keys.current.kid

    def current_issuer(self) -> str:
        return self.issuer or self.base_url or flask.request.host_url.rstrip("/")

    # ------------------------------------------------------------------------------------------- serving
    @contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Iterator["StrictOIDCProvider"]:
        with serve_in_thread(self.app, host, port) as listening:
            self.base_url = listening.base_url
            yield self

    def endpoints(self) -> dict[str, str]:
        base = self.base_url
        return {
            "base_url": base,
            "issuer": self.issuer or base,
            "discovery_url": f"{base}/.well-known/openid-configuration",
            "jwks_uri": f"{base}/jwks",
            "authorization_endpoint": f"{base}/oauth2/authorize",
            "token_endpoint": f"{base}/oauth2/token",
        }

    # ------------------------------------------------------------------------------------------- wrapping the mock
    def _debug_off(self) -> None:
        self.app.debug = False
        # The mock wraps its WSGI app in Werkzeug's DebuggedApplication (an interactive console on a 500).
        debugged = self.app.wsgi_app
        self.app.wsgi_app = getattr(debugged, "app", debugged)

    def _install_strict_extensions(self, token_max_age: timedelta) -> None:
        # The mock builds its authlib AuthorizationServer inside a blueprint hook and only exposes it on flask.g
        # during a request; the grant registry is authlib's private list of (grant class, extensions).
        with self.app.test_request_context("/"):
            self.app.preprocess_request()
            server = flask.g._authlib_authorization_server
        extension_lists = [extensions for grant, extensions in (*server._authorization_grants, *server._token_grants)
                           if grant is mock_app.AuthorizationCodeGrant]
        if not extension_lists or not all(isinstance(ext, list) for ext in extension_lists):
            raise RuntimeError("oidc-provider-mock changed: no authorization-code grant with an extension list")
        challenge = StrictS256Challenge()
        id_tokens = StrictOpenIDCode(self, token_max_age)
        for extensions in {id(e): e for e in extension_lists}.values():
            extensions[:] = [ext for ext in extensions if not isinstance(ext, mock_app.OpenIDCode)]
            extensions.extend([id_tokens, challenge, self.sign_ins])

    def _install_views(self) -> None:
        views = self.app.view_functions
        mock_discovery = views["oidc-provider-mock.openid_config"]

        def discovery():
            document = mock_discovery().get_json()
            document["issuer"] = self.current_issuer()
            document["code_challenge_methods_supported"] = ["S256"]
            document["authorization_response_iss_parameter_supported"] = self.send_iss
            return flask.jsonify(document)

        def jwks():
            if self.jwks_down:
                return flask.jsonify({"error": "temporarily_unavailable"}), 503
            response = flask.jsonify(self.keys.jwks())
            if self.jwks_max_age is not None:
                response.headers["Cache-Control"] = f"public, max-age={self.jwks_max_age}"
            return response

        views["oidc-provider-mock.openid_config"] = discovery
        views["oidc-provider-mock.jwks"] = jwks

        @self.app.after_request
        def add_iss_to_authorization_response(response: flask.Response):
            location = response.headers.get("Location")
            if (self.send_iss and flask.request.path == "/oauth2/authorize" and response.status_code in (302, 303)
                    and location):
                parts = urlsplit(location)
                query = parse_qsl(parts.query, keep_blank_values=True)
                if any(name in ("code", "error") for name, _ in query):
                    query.append(("iss", self.current_issuer()))
                    response.headers["Location"] = urlunsplit(parts._replace(query=urlencode(query)))
            return response

        @self.app.post("/_double/rotate-key")
        def rotate_key_view():
            return {"kid": self.rotate_key(flask.request.form.get("keep_old") == "1")}

        @self.app.post("/_double/remember")
        def remember_view():
            form = flask.request.form
            self.remember(form["sub"], int(form["auth_time"]) if form.get("auth_time") else None)
            return {"remembered": self.sign_ins.remembered()}

        @self.app.post("/_double/jwks")
        def jwks_settings_view():
            form = flask.request.form
            if "mode" in form:
                self.jwks_down = form["mode"] == "down"
            if "max_age" in form:
                self.jwks_max_age = None if form["max_age"] == "none" else int(form["max_age"])
            return {"down": self.jwks_down, "max_age": self.jwks_max_age}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_serving_arguments(parser)
    parser.add_argument("--issuer", help="issuer in id_tokens and discovery (default: the base URL)")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--jwks-max-age", type=int, default=300, help="Cache-Control max-age of /jwks (default 300)")
    cache.add_argument("--no-jwks-cache-header", action="store_true", help="answer /jwks without Cache-Control")
    parser.add_argument("--user-claims", action="append", default=[],
                        help='predefined user, JSON with "sub" and claims, e.g. {"sub":"alice","email":"a@x"}')
    parser.add_argument("--token-max-age", type=int, default=3600, help="lifetime of access and id tokens")
    parser.add_argument("--send-iss", action="store_true", help="add the RFC 9207 iss parameter to redirects")
    parser.add_argument("--require-registration", action="store_true", help="only registered clients (RFC 7591)")
    options = parser.parse_args()
    users = []
    for text in options.user_claims:
        claims = json.loads(text)
        users.append(User(sub=claims.pop("sub"), claims=claims))
    provider = StrictOIDCProvider(
        issuer=options.issuer, jwks_max_age=None if options.no_jwks_cache_header else options.jwks_max_age,
        users=users, token_max_age=options.token_max_age, send_iss=options.send_iss,
        require_registration=options.require_registration)

    def announce(base_url: str) -> dict:
        provider.base_url = base_url
        return provider.endpoints()

    serve_cli(provider.app, options, announce)


if __name__ == "__main__":
    main()
