"""Facebook Login (OAuth 2, not OIDC) and the three Graph calls Keyward makes, as a local double (Flask).

Paths work bare or behind a Graph version, e.g. /dialog/oauth and /v19.0/dialog/oauth.
GET  /dialog/oauth          client_id (a configured app id), redirect_uri, state, scope, optional PKCE (S256 only).
                            Shows a consent form (fields sub, name, email — empty: no email; button id "approve" / "deny").
POST /dialog/oauth          same query string; form sub=… approves (action=deny denies) → 302 to redirect_uri with
                            code and state (error=access_denied&error_reason=user_denied on denial).
GET  /oauth/access_token    client_id, client_secret, redirect_uri, code [, code_verifier] → {"access_token",
                            "token_type": "bearer", "expires_in"}; code single-use, 10 minutes, same app and
                            redirect_uri. grant_type=client_credentials gives an app access token.
GET  /debug_token           input_token, access_token = an app access token ("{app-id}|{app-secret}" or one from
                            client_credentials), else 400 OAuthException 190 → {"data": {"app_id", "type": "USER",
                            "is_valid", "user_id", "scopes", "expires_at", "issued_at", ...}}. A token of another
                            configured app reports THAT app's id (what Keyward must check).
GET  /me?fields=id,name,email   access_token (query or Bearer) and appsecret_proof = hex HMAC-SHA256(access token,
                            secret of the token's app). Missing or wrong proof: 400 GraphMethodException 100.
                            email only when the `email` permission was granted and the user has one.
Errors are Graph-shaped: 400 {"error": {"message", "type", "code", "fbtrace_id"}}.

Python:
    with FacebookDouble(apps={"1111": "secret"}).serve() as facebook: …   (several apps: tokens of another app)
CLI:
    python tests/idp/facebook_double.py --port 0 --app 1111:secret [--app 2222:other]... [--token-lifetime S]
    prints {"base_url", "authorization_endpoint", "token_endpoint", "debug_token_endpoint", "me_endpoint",
    "apps"} as one JSON line, then serves.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import re
import secrets
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlencode

import flask

sys.path.insert(0, str(Path(__file__).resolve().parent))
from idp_serving import add_serving_arguments, serve_cli, serve_in_thread  # noqa: E402
from oauth_codes import Clock, CodeBook, CodeRefused, check_challenge_request, random_token  # noqa: E402

GRAPH_VERSION = re.compile(r"v\d+\.\d+")
PROFILE_FIELDS = {"id", "name", "email", "first_name", "last_name"}


def appsecret_proof(access_token: str, app_secret: str) -> str:
    return hmac.new(app_secret.encode(), access_token.encode(), hashlib.sha256).hexdigest()


class GraphError(Exception):
    def __init__(self, message: str, code: int, kind: str = "OAuthException", status: int = 400):
        super().__init__(message)
        self.body = {"error": {"message": message, "type": kind, "code": code, "fbtrace_id": secrets.token_hex(8)}}
        self.status = status


class FacebookDouble:
    def __init__(self, *, apps: dict[str, str], token_lifetime: int = 5_183_944, code_lifetime: float = 600,
                 clock: Clock = time.time):
        if not apps:
            raise ValueError("at least one app id → secret")
        self.apps = dict(apps)
        self.token_lifetime = token_lifetime
        self.clock = clock
        self.codes = CodeBook(code_lifetime, clock)
        self.base_url: str | None = None
        self._lock = threading.Lock()
        self._user_tokens: dict[str, dict[str, Any]] = {}   # token → {app_id, user, scopes, issued_at, expires_at}
        self._app_tokens: dict[str, str] = {}               # client_credentials token → app id
        self.app = self._make_app()

    @contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Iterator["FacebookDouble"]:
        with serve_in_thread(self.app, host, port) as listening:
            self.base_url = listening.base_url
            yield self

    def endpoints(self) -> dict[str, Any]:
        base = self.base_url
        return {
            "base_url": base, "authorization_endpoint": f"{base}/dialog/oauth",
            "token_endpoint": f"{base}/oauth/access_token", "debug_token_endpoint": f"{base}/debug_token",
            "me_endpoint": f"{base}/me", "apps": sorted(self.apps),
        }

    def revoke_user_token(self, token: str) -> None:
        """What a user removing the app from their settings does: the token stops being valid."""
        with self._lock:
            self._user_tokens.pop(token, None)

    # ------------------------------------------------------------------------------------------- checks
    def _app_of_app_token(self, token: str | None) -> str:
        if token and "|" in token:
            app_id, _, secret = token.partition("|")
            if app_id in self.apps and hmac.compare_digest(secret, self.apps[app_id]):
                return app_id
        with self._lock:
            app_id = self._app_tokens.get(token or "")
        if app_id is None:
            raise GraphError("Invalid OAuth access token - Cannot parse access token", 190)
        return app_id

    def _check_client(self, client_id: str | None, client_secret: str | None) -> str:
        if client_id not in self.apps:
            raise GraphError("Error validating application. Invalid application ID.", 101)
        if not client_secret or not hmac.compare_digest(client_secret, self.apps[client_id]):
            raise GraphError("Error validating client secret.", 1)
        return client_id

    def _user_token(self, token: str | None) -> tuple[str, dict[str, Any]]:
        with self._lock:
            record = self._user_tokens.get(token or "")
        if record is None or record["expires_at"] <= self.clock():
            raise GraphError("Invalid OAuth access token - Cannot parse access token", 190)
        return token, record

    # ------------------------------------------------------------------------------------------- HTTP
    def _make_app(self) -> flask.Flask:
        app = flask.Flask("facebook_double")

        def versioned(path: str, view, methods: tuple[str, ...] = ("GET",)) -> None:
            def with_version(version: str, **kwargs):
                if not GRAPH_VERSION.fullmatch(version):
                    flask.abort(404)
                return view()

            app.add_url_rule(path, view.__name__, view, methods=methods)
            app.add_url_rule(f"/<version>{path}", f"{view.__name__}_versioned", with_version, methods=methods)

        @app.errorhandler(GraphError)
        def graph_error(error: GraphError):
            return error.body, error.status

        def dialog():
            args = flask.request.args
            app_id, redirect_uri = args.get("client_id"), args.get("redirect_uri")
            if app_id not in self.apps or not redirect_uri:
                return flask.render_template_string(ERROR_PAGE, description="Invalid app ID or redirect_uri"), 400
            try:
                check_challenge_request(args.get("code_challenge"), args.get("code_challenge_method"))
            except CodeRefused as refusal:
                return flask.render_template_string(ERROR_PAGE, description=refusal.description), 400
            if flask.request.method == "GET":
                return flask.render_template_string(CONSENT_PAGE, action=flask.request.full_path)
            form = flask.request.form
            params: dict[str, str]
            if form.get("action") == "deny":
                params = {"error": "access_denied", "error_code": "200", "error_description": "Permissions error",
                          "error_reason": "user_denied"}
            elif not form.get("sub"):
                return flask.render_template_string(CONSENT_PAGE, action=flask.request.full_path, missing=True), 400
            else:
                sub = form["sub"]
                user = {"id": sub, "name": form.get("name") or f"Test {sub}",
                        "email": form.get("email", f"{sub}@example.test") or None}
                scopes = [s for s in re.split(r"[,\s]+", args.get("scope", "")) if s] or ["public_profile"]
                params = {"code": self.codes.issue(app_id, redirect_uri, args.get("code_challenge"),
                                                   {"user": user, "scopes": scopes})}
            if args.get("state") is not None:
                params["state"] = args["state"]
            separator = "&" if "?" in redirect_uri else "?"
            # Facebook appends an empty fragment to its redirects; browsers keep it, servers never see it.
            return flask.redirect(f"{redirect_uri}{separator}{urlencode(params)}#_=_", 302)

        def access_token():
            values = flask.request.values
            client_id = self._check_client(values.get("client_id"), values.get("client_secret"))
            if values.get("grant_type") == "client_credentials":
                token = f"{client_id}|{random_token()}"
                with self._lock:
                    self._app_tokens[token] = client_id
                return {"access_token": token, "token_type": "bearer"}
            if not values.get("redirect_uri"):
                raise GraphError("Missing redirect_uri parameter.", 191)
            try:
                issued = self.codes.redeem(values.get("code", ""), client_id, values["redirect_uri"],
                                           values.get("code_verifier"))
            except CodeRefused as refusal:
                raise GraphError(f"Invalid verification code: {refusal.description}", 100) from refusal
            token = random_token("EAA")
            now = int(self.clock())
            with self._lock:
                self._user_tokens[token] = {"app_id": client_id, "user": issued.grant["user"],
                                            "scopes": issued.grant["scopes"], "issued_at": now,
                                            "expires_at": now + self.token_lifetime}
            return {"access_token": token, "token_type": "bearer", "expires_in": self.token_lifetime}

        def debug_token():
            self._app_of_app_token(flask.request.args.get("access_token"))
            try:
                _, record = self._user_token(flask.request.args.get("input_token"))
            except GraphError:
                return {"data": {"error": {"code": 190, "message": "Invalid OAuth access token."},
                                 "is_valid": False, "scopes": []}}
            return {"data": {
                "app_id": record["app_id"], "type": "USER", "application": f"App {record['app_id']}",
                "data_access_expires_at": record["expires_at"], "expires_at": record["expires_at"],
                "is_valid": True, "issued_at": record["issued_at"], "scopes": record["scopes"],
                "user_id": record["user"]["id"],
            }}

        def me():
            token = flask.request.args.get("access_token")
            authorization = flask.request.headers.get("Authorization", "")
            if authorization.lower().startswith("bearer "):
                token = authorization[7:].strip()
            token, record = self._user_token(token)
            proof = flask.request.args.get("appsecret_proof")
            if not proof:
                raise GraphError("API calls from the server require an appsecret_proof argument", 100,
                                 "GraphMethodException")
            if not hmac.compare_digest(proof, appsecret_proof(token, self.apps[record["app_id"]])):
                raise GraphError("Invalid appsecret_proof provided in the API argument", 100, "GraphMethodException")
            fields = [f for f in flask.request.args.get("fields", "id,name").split(",") if f]
            unknown = [f for f in fields if f not in PROFILE_FIELDS]
            if unknown:
                raise GraphError(f"(#100) Tried accessing nonexisting field ({unknown[0]})", 100)
            user = record["user"]
            first, _, last = user["name"].partition(" ")
            available = {"id": user["id"], "name": user["name"], "first_name": first, "last_name": last}
            if "email" in record["scopes"] and user["email"]:
                available["email"] = user["email"]
            return {field: available[field] for field in ["id", *fields] if field in available}

        versioned("/dialog/oauth", dialog, ("GET", "POST"))
        versioned("/oauth/access_token", access_token, ("GET", "POST"))
        versioned("/debug_token", debug_token)
        versioned("/me", me)
        return app


CONSENT_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Log in with Facebook (test double)</title></head>
<body><main><h1>Log in with Facebook (test double)</h1>
{% if missing %}<p role="alert">Enter a subject.</p>{% endif %}
<form method="post" action="{{ action }}">
<label>User id <input id="sub" name="sub" required></label>
<label>Name <input id="name" name="name"></label>
<label>Email <input id="email" name="email" type="email"></label>
<button id="approve" name="action" value="approve" type="submit">Continue</button>
<button id="deny" name="action" value="deny" type="submit" formnovalidate>Cancel</button>
</form></main></body></html>
"""

ERROR_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Error</title></head>
<body><h1 id="error">Error</h1><p>{{ description }}</p></body></html>
"""


def main() -> None:
    parser = argparse.ArgumentParser(description="Facebook Login and Graph test double")
    add_serving_arguments(parser)
    parser.add_argument("--app", action="append", required=True, help="APP_ID:APP_SECRET (repeatable)")
    parser.add_argument("--token-lifetime", type=int, default=5_183_944, help="user access token lifetime (s)")
    options = parser.parse_args()
    apps = dict(entry.split(":", 1) for entry in options.app)
    facebook = FacebookDouble(apps=apps, token_lifetime=options.token_lifetime)

    def announce(base_url: str) -> dict:
        facebook.base_url = base_url
        return facebook.endpoints()

    serve_cli(facebook.app, options, announce)


if __name__ == "__main__":
    main()
