#!/usr/bin/env python3
"""An independent JWE implementation (joserfc) for KeywardJOSE's JWE reader and the Play Integrity verifier.

    joserfc_jwe_peer.py random SEED COUNT
        COUNT seeded random A256KW + A256GCM tokens (random key, plaintext of random length, random extra header
        members), each followed by 6 mutations of its text: one flipped bit in each of the 5 parts and one
        anywhere. Every input is decrypted by joserfc with the token's key.
        One JSON object per line: {"kek": B64URL, "token": TEXT, "plaintext": B64URL} when joserfc decrypts the
        input, {"kek": B64URL, "token": TEXT, "error": TEXT} when it refuses it. The first line of each group of 7
        is the unmutated token.

    joserfc_jwe_peer.py others KEK_B64URL
        Tokens joserfc writes that are not A256KW + A256GCM, each named: {"name": NAME, "token": TEXT}.
        A256KW-with-zip and the others under KEK where their algorithm takes a 256-bit key.

    joserfc_jwe_peer.py play-integrity
        Reads {"decryption_key": B64, "signing_key_pem": PEM, "payloads": [OBJECT...]} from stdin and writes one
        Play Integrity token per payload, one per line: the payload signed ES256 (compact JWS), the JWS encrypted
        A256KW + A256GCM with the decryption key, as Google does.
Keys, plaintexts, headers and mutated positions follow the seed; joserfc draws each content key and IV itself."""
import base64
import json
import random
import sys

from joserfc import jwe, jws
from joserfc.jwk import ECKey, OctKey


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verdict(kek: bytes, token: str) -> dict:
    try:
        plaintext = jwe.decrypt_compact(token, OctKey.import_key(kek)).plaintext
        return {"kek": b64(kek), "token": token, "plaintext": b64(plaintext)}
    except Exception as error:  # joserfc refuses with several error types; the kind is all we report
        return {"kek": b64(kek), "token": token, "error": type(error).__name__}


def flip(token: str, rng: random.Random, part: int = None) -> str:
    """One bit flipped in one character of the given part (or anywhere), kept ASCII."""
    parts = token.split(".")
    if part is None:
        position = rng.randrange(len(token))
    else:
        start = sum(len(p) + 1 for p in parts[:part])
        if not parts[part]:
            return token + "A"
        position = start + rng.randrange(len(parts[part]))
    character = ord(token[position]) ^ (1 << rng.randrange(7))
    return token[:position] + chr(character) + token[position + 1:]


def random_tokens(seed: int, count: int) -> None:
    rng = random.Random(seed)
    extras = [{}, {"kid": "play-1"}, {"typ": "JWE"}, {"cty": "JWT"}, {"kid": "clé"}]
    for _ in range(count):
        kek = bytes(rng.getrandbits(8) for _ in range(32))
        plaintext = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 15, 16, 17, rng.randrange(0, 2048)])))
        header = {"alg": "A256KW", "enc": "A256GCM", **rng.choice(extras)}
        token = jwe.encrypt_compact(header, plaintext, OctKey.import_key(kek))
        print(json.dumps(verdict(kek, token)))
        for part in range(5):
            print(json.dumps(verdict(kek, flip(token, rng, part))))
        print(json.dumps(verdict(kek, flip(token, rng))))


def other_tokens(kek_text: str) -> None:
    kek = unb64(kek_text)
    plaintext = b"not for this reader" * 4
    specs = [
        ("A128KW+A256GCM", {"alg": "A128KW", "enc": "A256GCM"}, OctKey.import_key(kek[:16])),
        ("A192KW+A256GCM", {"alg": "A192KW", "enc": "A256GCM"}, OctKey.import_key(kek[:24])),
        ("A256KW+A128GCM", {"alg": "A256KW", "enc": "A128GCM"}, OctKey.import_key(kek)),
        ("A256KW+A256CBC-HS512", {"alg": "A256KW", "enc": "A256CBC-HS512"}, OctKey.import_key(kek)),
        ("A256GCMKW+A256GCM", {"alg": "A256GCMKW", "enc": "A256GCM"}, OctKey.import_key(kek)),
        ("dir+A256GCM", {"alg": "dir", "enc": "A256GCM"}, OctKey.import_key(kek)),
        ("A256KW+A256GCM+zip", {"alg": "A256KW", "enc": "A256GCM", "zip": "DEF"}, OctKey.import_key(kek)),
    ]
    for name, header, key in specs:
        print(json.dumps({"name": name, "token": jwe.encrypt_compact(header, plaintext, key, algorithms=[header["alg"], header["enc"]] + (["DEF"] if "zip" in header else []))}))


def play_integrity() -> None:
    request = json.load(sys.stdin)
    kek = OctKey.import_key(base64.b64decode(request["decryption_key"]))
    signing_key = ECKey.import_key(request["signing_key_pem"])
    for payload in request["payloads"]:
        inner = jws.serialize_compact({"alg": "ES256"}, json.dumps(payload).encode(), signing_key)
        print(jwe.encrypt_compact({"alg": "A256KW", "enc": "A256GCM"}, inner.encode(), kek))


def main() -> None:
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "random" and len(sys.argv) == 4:
        random_tokens(int(sys.argv[2]), int(sys.argv[3]))
    elif command == "others" and len(sys.argv) == 3:
        other_tokens(sys.argv[2])
    elif command == "play-integrity":
        play_integrity()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
