"""Sign in with Apple, as a local double (Flask + joserfc), with the rules Apple's servers enforce on a web client.

GET  /auth/authorize    client_id, redirect_uri, response_type=code | "code id_token", scope, response_mode, state,
                        nonce, code_challenge (+ code_challenge_method=S256). Shows a consent form (fields sub,
                        email, first_name, last_name, private_email; button id "approve" / "deny").
                        Refused with 400: unknown client_id, redirect_uri not allowed, another response_type,
                        a scope with `name` or `email` without response_mode=form_post, a non-S256 challenge.
POST /auth/authorize    same query string; form sub=… approves (action=deny cancels). The answer is an auto-submitting
                        HTML form POSTing to redirect_uri: code, state, id_token (only when response_type asked for
                        it), and `user` = {"name": {"firstName", "lastName"}, "email"} on the FIRST authorization of
                        that subject for that client only (again after a revocation). A denial posts
                        error=user_cancelled_authorize. response_mode=query redirects instead (scope without
                        name/email only).
POST /auth/token        client_secret must be an ES256 JWT verified with the configured P-256 public key: header kid =
                        key id; iss = team id; sub = client_id; aud = "https://appleid.apple.com"; iat not in the
                        future; exp in the future and ≤ iat + 15777000. Else 400 invalid_client.
                        grant_type=authorization_code: code single-use, 5 minutes, same client and redirect_uri,
                        PKCE S256 when the authorization sent a challenge → access_token, refresh_token, id_token.
                        grant_type=refresh_token → access_token, id_token.
GET  /auth/keys         RSA JWKS (Cache-Control max-age optional).
POST /auth/revoke       client authentication as above; token, token_type_hint. Recorded (read `revocations`, or
                        GET /_double/revocations); the token stops working and the subject's consent is forgotten.
GET  /.well-known/openid-configuration
id_token: RS256, iss (default https://appleid.apple.com), aud = client_id (a string), sub, iat, exp, auth_time,
at_hash (token endpoint) or c_hash (authorization response), nonce (when sent) and nonce_supported, and with the
email scope email, email_verified and is_private_email as STRINGS "true"/"false" (booleans with
`boolean_claims=True`: Apple has sent both).

Python:
    with AppleDouble(client_id=…, team_id=…, key_id=…, client_public_key=ec_key_or_pem).serve() as apple: …
CLI:
    python tests/idp/apple_double.py --port 0 --client-id ID --team-id T --key-id K
        (--client-key-file PEM | --write-p8 PATH) [--issuer URL] [--boolean-claims] [--jwks-max-age N]
        [--redirect-uri URI]...
    --write-p8 generates the client's P-256 key and writes it as a PKCS#8 PEM (what Apple's .p8 download is) for
    Keyward's --private-key-file. Prints {"base_url", "issuer", "authorization_endpoint", "token_endpoint",
    "jwks_uri", "revocation_endpoint", ...} as one JSON line, then serves.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlencode

import flask
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

sys.path.insert(0, str(Path(__file__).resolve().parent))
from idp_serving import add_serving_arguments, serve_cli, serve_in_thread  # noqa: E402
from oauth_codes import Clock, CodeBook, CodeRefused, check_challenge_request, random_token  # noqa: E402
from signing_keys import SIGNING_ALG, SigningKeys  # noqa: E402

APPLE_ISSUER = "https://appleid.apple.com"
CLIENT_SECRET_AUDIENCE = "https://appleid.apple.com"
CLIENT_SECRET_MAX_LIFETIME = 15_777_000  # six months, Apple's limit on exp - iat
CLOCK_SKEW = 60


def half_hash(value: str) -> str:
    """OIDC at_hash / c_hash for RS256: base64url of the left half of SHA-256."""
    digest = hashlib.sha256(value.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest[:16]).rstrip(b"=").decode("ascii")


class AppleDouble:
    def __init__(self, *, client_id: str, team_id: str, key_id: str, client_public_key: ECKey | str | bytes,
                 issuer: str = APPLE_ISSUER, boolean_claims: bool = False, redirect_uris: list[str] | None = None,
                 jwks_max_age: int | None = None, code_lifetime: float = 300, id_token_lifetime: int = 600,
                 clock: Clock = time.time):
        self.client_id = client_id
        self.team_id = team_id
        self.key_id = key_id
        key = client_public_key if isinstance(client_public_key, ECKey) else ECKey.import_key(client_public_key)
        if key.curve_name != "P-256":
            raise ValueError("Apple client keys are P-256")
        self.client_key = key
        self.issuer = issuer
        self.boolean_claims = boolean_claims
        self.redirect_uris = redirect_uris
        self.jwks_max_age = jwks_max_age
        self.id_token_lifetime = id_token_lifetime
        self.clock = clock
        self.keys = SigningKeys()
        self.codes = CodeBook(code_lifetime, clock)
        self.base_url: str | None = None
        self._lock = threading.Lock()
        self._consented: set[tuple[str, str]] = set()
        self._refresh_tokens: dict[str, dict[str, Any]] = {}  # token → grant (sub, scope, profile)
        self._access_tokens: dict[str, dict[str, Any]] = {}
        self._revocations: list[dict[str, Any]] = []
        self.app = self._make_app()

    # ------------------------------------------------------------------------------------------- for tests
    @property
    def revocations(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._revocations)

    @contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Iterator["AppleDouble"]:
        with serve_in_thread(self.app, host, port) as listening:
            self.base_url = listening.base_url
            yield self

    def endpoints(self) -> dict[str, str]:
        base = self.base_url
        return {
            "base_url": base, "issuer": self.issuer, "client_id": self.client_id, "team_id": self.team_id,
            "key_id": self.key_id, "authorization_endpoint": f"{base}/auth/authorize",
            "token_endpoint": f"{base}/auth/token", "jwks_uri": f"{base}/auth/keys",
            "revocation_endpoint": f"{base}/auth/revoke",
            "discovery_url": f"{base}/.well-known/openid-configuration",
        }

    # ------------------------------------------------------------------------------------------- checks
    def check_client_secret(self, client_id: str | None, secret: str | None) -> None:
        """Raises CodeRefused("invalid_client") unless `secret` is a client secret JWT Apple would accept."""
        def refuse(why: str):
            raise CodeRefused("invalid_client", why)

        if client_id != self.client_id:
            refuse(f"unknown client_id {client_id!r}")
        if not secret:
            refuse("client_secret missing")
        try:
            token = jwt.decode(secret, self.client_key, algorithms=["ES256"])
        except (JoseError, ValueError) as error:
            refuse(f"client_secret is not an ES256 JWT signed with the registered key: {error}")
        if token.header.get("kid") != self.key_id:
            refuse(f"client_secret kid {token.header.get('kid')!r} is not the registered key id")
        claims = token.claims
        if claims.get("iss") != self.team_id:
            refuse("client_secret iss is not the team id")
        if claims.get("sub") != client_id:
            refuse("client_secret sub is not the client_id")
        if claims.get("aud") not in (CLIENT_SECRET_AUDIENCE, [CLIENT_SECRET_AUDIENCE]):
            refuse(f"client_secret aud must be {CLIENT_SECRET_AUDIENCE}")
        iat, exp, now = claims.get("iat"), claims.get("exp"), self.clock()
        if not isinstance(iat, int) or not isinstance(exp, int):
            refuse("client_secret iat and exp must be integers")
        if iat > now + CLOCK_SKEW:
            refuse("client_secret iat is in the future")
        if exp <= now:
            refuse("client_secret expired")
        if exp - iat > CLIENT_SECRET_MAX_LIFETIME:
            refuse("client_secret lives longer than 15777000 seconds")

    def _authorization_request(self, args) -> dict[str, Any]:
        """The validated parameters of an authorization request; CodeRefused when Apple would show an error page."""
        client_id, redirect_uri = args.get("client_id"), args.get("redirect_uri")
        if client_id != self.client_id:
            raise CodeRefused("invalid_client", f"unknown client_id {client_id!r}")
        if not redirect_uri or (self.redirect_uris is not None and redirect_uri not in self.redirect_uris):
            raise CodeRefused("invalid_request", "redirect_uri missing or not registered")
        response_type = set(args.get("response_type", "").split())
        if response_type not in ({"code"}, {"code", "id_token"}):
            raise CodeRefused("unsupported_response_type", "response_type must be code or 'code id_token'")
        scopes = set(args.get("scope", "").split())
        response_mode = args.get("response_mode", "query")
        if response_mode not in ("query", "form_post"):
            raise CodeRefused("invalid_request", f"response_mode {response_mode!r} is not supported by this double")
        if scopes & {"name", "email"} and response_mode != "form_post":
            raise CodeRefused("invalid_request", "response_mode must be form_post when name or email is requested")
        if "id_token" in response_type and response_mode == "query":
            raise CodeRefused("invalid_request", "an id_token cannot be returned in the query")
        check_challenge_request(args.get("code_challenge"), args.get("code_challenge_method"))
        return {"client_id": client_id, "redirect_uri": redirect_uri, "response_type": response_type,
                "scopes": scopes, "response_mode": response_mode, "state": args.get("state"),
                "nonce": args.get("nonce"), "code_challenge": args.get("code_challenge")}

    # ------------------------------------------------------------------------------------------- tokens
    def id_token(self, grant: dict[str, Any], *, access_token: str | None = None, code: str | None = None) -> str:
        now = int(self.clock())
        claims: dict[str, Any] = {
            "iss": self.issuer, "aud": self.client_id, "sub": grant["sub"], "iat": now,
            "exp": now + self.id_token_lifetime, "auth_time": grant["auth_time"], "nonce_supported": True,
        }
        if grant.get("nonce"):
            claims["nonce"] = grant["nonce"]
        if access_token:
            claims["at_hash"] = half_hash(access_token)
        if code:
            claims["c_hash"] = half_hash(code)
        if "email" in grant["scopes"]:
            claims["email"] = grant["profile"]["email"]
            claims["email_verified"] = self._flag(True)
            claims["is_private_email"] = self._flag(grant["profile"]["private_email"])
        key = self.keys.current
        return jwt.encode({"alg": SIGNING_ALG, "kid": key.kid}, claims, key, algorithms=[SIGNING_ALG])

    def _flag(self, value: bool):
        if self.boolean_claims:
            return value
        return "true" if value else "false"

    def _issue_tokens(self, grant: dict[str, Any], with_refresh: bool) -> dict[str, Any]:
        access_token = random_token("a.")
        body = {"access_token": access_token, "token_type": "Bearer", "expires_in": 3600}
        with self._lock:
            self._access_tokens[access_token] = grant
            if with_refresh:
                refresh_token = random_token("r.")
                self._refresh_tokens[refresh_token] = grant
                body["refresh_token"] = refresh_token
        body["id_token"] = self.id_token(grant, access_token=access_token)
        return body

    # ------------------------------------------------------------------------------------------- HTTP
    def _make_app(self) -> flask.Flask:
        app = flask.Flask("apple_double")

        def oauth_error(refusal: CodeRefused, status: int = 400):
            return {"error": refusal.error, "error_description": refusal.description}, status

        @app.route("/auth/authorize", methods=["GET", "POST"])
        def authorize():
            try:
                request = self._authorization_request(flask.request.args)
            except CodeRefused as refusal:
                return flask.render_template_string(ERROR_PAGE, error=refusal.error,
                                                    description=refusal.description), 400
            if flask.request.method == "GET":
                return flask.render_template_string(CONSENT_PAGE, action=flask.request.full_path)
            form = flask.request.form
            if form.get("action") == "deny":
                return self._respond(request, {"error": "user_cancelled_authorize"})
            sub = form.get("sub")
            if not sub:
                return flask.render_template_string(CONSENT_PAGE, action=flask.request.full_path,
                                                    missing=True), 400
            return self._respond(request, self._approve(request, sub, form))

        @app.post("/auth/token")
        def token():
            form = flask.request.form
            try:
                self.check_client_secret(form.get("client_id"), form.get("client_secret"))
            except CodeRefused as refusal:
                return oauth_error(refusal)
            grant_type = form.get("grant_type")
            if grant_type == "authorization_code":
                if not form.get("redirect_uri"):
                    return oauth_error(CodeRefused("invalid_request", "redirect_uri missing"))
                try:
                    issued = self.codes.redeem(form.get("code", ""), form["client_id"], form["redirect_uri"],
                                               form.get("code_verifier"))
                except CodeRefused as refusal:
                    return oauth_error(refusal)
                return self._issue_tokens(issued.grant, with_refresh=True)
            if grant_type == "refresh_token":
                with self._lock:
                    grant = self._refresh_tokens.get(form.get("refresh_token", ""))
                if grant is None:
                    return oauth_error(CodeRefused("invalid_grant", "unknown or revoked refresh token"))
                return self._issue_tokens(grant, with_refresh=False)
            return oauth_error(CodeRefused("unsupported_grant_type", f"grant_type {grant_type!r}"))

        @app.post("/auth/revoke")
        def revoke():
            form = flask.request.form
            try:
                self.check_client_secret(form.get("client_id"), form.get("client_secret"))
            except CodeRefused as refusal:
                return oauth_error(refusal)
            token_value = form.get("token")
            if not token_value:
                return oauth_error(CodeRefused("invalid_request", "token missing"))
            self._revoke(token_value, form.get("token_type_hint"))
            return "", 200

        @app.get("/auth/keys")
        def keys():
            response = flask.jsonify(self.keys.jwks())
            if self.jwks_max_age is not None:
                response.headers["Cache-Control"] = f"public, max-age={self.jwks_max_age}"
            return response

        @app.get("/.well-known/openid-configuration")
        def discovery():
            base = flask.request.host_url.rstrip("/")
            return {
                "issuer": self.issuer, "authorization_endpoint": f"{base}/auth/authorize",
                "token_endpoint": f"{base}/auth/token", "revocation_endpoint": f"{base}/auth/revoke",
                "jwks_uri": f"{base}/auth/keys", "response_types_supported": ["code", "code id_token"],
                "response_modes_supported": ["query", "form_post"], "subject_types_supported": ["pairwise"],
                "id_token_signing_alg_values_supported": [SIGNING_ALG], "scopes_supported": ["openid", "email", "name"],
                "token_endpoint_auth_methods_supported": ["client_secret_post"],
                "claims_supported": ["aud", "email", "email_verified", "exp", "iat", "is_private_email", "iss",
                                     "nonce", "nonce_supported", "sub"],
            }

        @app.get("/_double/revocations")
        def revocations():
            return flask.jsonify(self.revocations)

        @app.post("/_double/rotate-key")
        def rotate_key():
            return {"kid": self.keys.rotate(flask.request.form.get("keep_old") == "1")}

        return app

    def _approve(self, request: dict[str, Any], sub: str, form) -> dict[str, str]:
        private = form.get("private_email") in ("1", "true", "on")
        profile = {
            "email": form.get("email") or (f"{sub}@privaterelay.appleid.com" if private else f"{sub}@example.test"),
            "private_email": private,
            "first_name": form.get("first_name", "Test"), "last_name": form.get("last_name", sub),
        }
        grant = {"sub": sub, "scopes": request["scopes"], "nonce": request["nonce"], "profile": profile,
                 "auth_time": int(self.clock())}
        code = self.codes.issue(request["client_id"], request["redirect_uri"], request["code_challenge"], grant)
        params = {"code": code}
        if request["state"] is not None:
            params["state"] = request["state"]
        if "id_token" in request["response_type"]:
            params["id_token"] = self.id_token(grant, code=code)
        with self._lock:
            first = (request["client_id"], sub) not in self._consented
            self._consented.add((request["client_id"], sub))
        shared = request["scopes"] & {"name", "email"}
        if first and shared:
            user: dict[str, Any] = {}
            if "name" in shared:
                user["name"] = {"firstName": profile["first_name"], "lastName": profile["last_name"]}
            if "email" in shared:
                user["email"] = profile["email"]
            params["user"] = json.dumps(user)
        return params

    def _respond(self, request: dict[str, Any], params: dict[str, str]):
        if request["state"] is not None:
            params.setdefault("state", request["state"])
        if request["response_mode"] == "form_post":
            return flask.render_template_string(FORM_POST_PAGE, action=request["redirect_uri"], params=params)
        separator = "&" if "?" in request["redirect_uri"] else "?"
        return flask.redirect(request["redirect_uri"] + separator + urlencode(params), 302)

    def _revoke(self, token_value: str, hint: str | None) -> None:
        with self._lock:
            grant = self._refresh_tokens.pop(token_value, None)
            kind = "refresh_token" if grant is not None else None
            if grant is None:
                grant = self._access_tokens.pop(token_value, None)
                kind = "access_token" if grant is not None else None
            else:
                # Revoking the refresh token ends the app's authorization: its access tokens go too, and the next
                # sign-in is a first one again (Apple then sends `user` once more).
                for access_token in [t for t, g in self._access_tokens.items() if g is grant]:
                    del self._access_tokens[access_token]
                self._consented.discard((self.client_id, grant["sub"]))
            self._revocations.append({
                "token": token_value, "token_type_hint": hint, "client_id": self.client_id, "known": kind is not None,
                "kind": kind, "sub": grant["sub"] if grant else None, "at": self.clock(),
            })


CONSENT_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in with Apple (test double)</title></head>
<body><main><h1>Sign in with Apple (test double)</h1>
{% if missing %}<p role="alert">Enter a subject.</p>{% endif %}
<form method="post" action="{{ action }}">
<label>Subject <input id="sub" name="sub" required></label>
<label>Email <input id="email" name="email" type="email"></label>
<label>First name <input id="first_name" name="first_name"></label>
<label>Last name <input id="last_name" name="last_name"></label>
<label><input id="private_email" name="private_email" type="checkbox" value="1"> Hide my email</label>
<button id="approve" name="action" value="approve" type="submit">Continue</button>
<button id="deny" name="action" value="deny" type="submit" formnovalidate>Cancel</button>
</form></main></body></html>
"""

FORM_POST_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Returning to the app</title></head>
<body onload="document.forms[0].submit()">
<form method="post" action="{{ action }}">
{% for name, value in params.items() %}<input type="hidden" name="{{ name }}" value="{{ value }}">
{% endfor %}<noscript><button type="submit">Continue</button></noscript>
</form></body></html>
"""

ERROR_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ error }}</title></head>
<body><h1 id="error">{{ error }}</h1><p>{{ description }}</p></body></html>
"""


def main() -> None:
    parser = argparse.ArgumentParser(description="Sign in with Apple test double")
    add_serving_arguments(parser)
    parser.add_argument("--client-id", required=True, help="the Services ID (web) or bundle id (native)")
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--key-id", required=True)
    key = parser.add_mutually_exclusive_group(required=True)
    key.add_argument("--client-key-file", help="PEM with the client's P-256 public key (or its .p8 private key)")
    key.add_argument("--write-p8", help="generate the client key and write its PKCS#8 PEM private key here")
    parser.add_argument("--issuer", default=APPLE_ISSUER, help=f"iss of id_tokens (default {APPLE_ISSUER})")
    parser.add_argument("--boolean-claims", action="store_true", help="email_verified/is_private_email as booleans")
    parser.add_argument("--jwks-max-age", type=int, help="Cache-Control max-age of /auth/keys (default: none)")
    parser.add_argument("--redirect-uri", action="append", help="allowed redirect URI (default: any)")
    options = parser.parse_args()
    if options.write_p8:
        client_key = ECKey.generate_key("P-256")
        Path(options.write_p8).write_bytes(client_key.as_pem(private=True))
    else:
        client_key = ECKey.import_key(Path(options.client_key_file).read_bytes())
    apple = AppleDouble(client_id=options.client_id, team_id=options.team_id, key_id=options.key_id,
                        client_public_key=client_key, issuer=options.issuer, boolean_claims=options.boolean_claims,
                        redirect_uris=options.redirect_uri, jwks_max_age=options.jwks_max_age)

    def announce(base_url: str) -> dict:
        apple.base_url = base_url
        return {**apple.endpoints(), "p8_file": options.write_p8}

    serve_cli(apple.app, options, announce, on_exit=lambda: print(json.dumps({"revocations": apple.revocations})))


if __name__ == "__main__":
    main()
