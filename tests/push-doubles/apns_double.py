"""APNs provider API test double: HTTP/2 over TLS (hypercorn + h2), certificate from a trustme CA.

    python apns_double.py --records FILE --ca-out CA.pem [--rule JSON]...

Writes the CA certificate (PEM) to --ca-out before printing the port; the server certificate is for 127.0.0.1.
ALPN offers only h2, as Apple does, so a client that cannot speak HTTP/2 fails the handshake instead of quietly
falling back to HTTP/1.1.

POST /3/device/<token>  → 200 with an apns-id header when an authorization header is present,
                          else 403 {"reason": "MissingProviderToken"}
See push_double.py for records and rules (e.g. {"match": "/3/device/dead", "status": 410,
"body": {"reason": "Unregistered", "timestamp": 1700000000000}}).
"""

import os
import uuid

import trustme

import push_double


def main() -> None:
    arguments = push_double.parse_arguments(
        "APNs HTTP/2 test double",
        lambda parser: parser.add_argument("--ca-out", required=True, help="where to write the CA certificate"),
    )
    authority = trustme.CA()
    authority.cert_pem.write_to_path(arguments.ca_out)
    server_certificate = authority.issue_cert("127.0.0.1")
    # The server key goes next to the CA file: the test owns (and removes) that directory.
    key_and_chain = os.path.join(os.path.dirname(os.path.abspath(arguments.ca_out)), "apns-double-server.pem")
    server_certificate.private_key_and_cert_chain_pem.write_to_path(key_and_chain)

    async def handle(scope: dict, body: bytes):
        method, path = scope["method"], scope["path"]
        if method == "POST" and path.startswith("/3/device/"):
            headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
            if "authorization" not in headers:
                return push_double.json_response(403, {"reason": "MissingProviderToken"})
            return 200, {"apns-id": str(uuid.uuid4()).upper()}, b""
        return push_double.json_response(404, {"reason": "BadPath"})

    app = push_double.make_app(push_double.Recorder(arguments.records), push_double.Rules(arguments.rule), handle)
    push_double.run(app, certfile=key_and_chain, keyfile=key_and_chain, max_seconds=arguments.max_seconds,
                    alpn_protocols=["h2"])


if __name__ == "__main__":
    main()
