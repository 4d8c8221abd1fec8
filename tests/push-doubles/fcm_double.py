"""FCM HTTP v1 test double: a Google OAuth token endpoint plus the messages:send endpoint, over plain HTTP/1.1.

    python fcm_double.py --records FILE [--rule JSON]... [--expires-in SECONDS] [--token-delay SECONDS]

POST /token          form grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=…
                     → {"access_token": "fcm-at-<n>", "expires_in": <--expires-in>, "token_type": "Bearer"},
                       after --token-delay seconds (lets tests overlap concurrent refreshes)
POST /v1/projects/<project>/messages:send
                     → 200 {"name": "projects/<project>/messages/<n>"} when the bearer token is one this double
                       issued, else 401 UNAUTHENTICATED (as FCM answers a revoked or foreign token)
See push_double.py for records and rules.
"""

import asyncio
import itertools
from urllib.parse import parse_qs

import push_double


def main() -> None:
    arguments = push_double.parse_arguments(
        "FCM HTTP v1 test double",
        lambda parser: (parser.add_argument("--expires-in", type=int, default=3600),
                        parser.add_argument("--token-delay", type=float, default=0.0)),
    )
    issued: set[str] = set()
    token_numbers = itertools.count(1)
    message_numbers = itertools.count(1)

    async def handle(scope: dict, body: bytes):
        method, path = scope["method"], scope["path"]
        if method == "POST" and path == "/token":
            form = parse_qs(body.decode())
            if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"] or not form.get("assertion"):
                return push_double.json_response(400, {"error": "invalid_request"})
            if arguments.token_delay:
                await asyncio.sleep(arguments.token_delay)
            token = f"fcm-at-{next(token_numbers)}"
            issued.add(token)
            return push_double.json_response(
                200, {"access_token": token, "expires_in": arguments.expires_in, "token_type": "Bearer"})
        if method == "POST" and path.startswith("/v1/projects/") and path.endswith("/messages:send"):
            headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
            authorization = headers.get("authorization", "")
            if not authorization.startswith("Bearer ") or authorization[len("Bearer "):] not in issued:
                return push_double.json_response(
                    401, {"error": {"code": 401, "message": "Request had invalid authentication credentials.",
                                    "status": "UNAUTHENTICATED"}})
            project = path[len("/v1/projects/"):-len("/messages:send")]
            return push_double.json_response(200, {"name": f"projects/{project}/messages/{next(message_numbers)}"})
        return push_double.json_response(404, {"error": {"code": 404, "status": "NOT_FOUND"}})

    app = push_double.make_app(push_double.Recorder(arguments.records), push_double.Rules(arguments.rule), handle)
    push_double.run(app, max_seconds=arguments.max_seconds)


if __name__ == "__main__":
    main()
