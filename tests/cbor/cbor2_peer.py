#!/usr/bin/env python3
"""An independent CBOR decoder and encoder (cbor2) for KeywardCBOR's cross-check (Tests/KeywardCBORTests).

    cbor2_peer.py random SEED COUNT
        COUNT seeded random nested values, each encoded by cbor2, then byte-level mutations of each encoding
        (bit flips, truncations, insertions, longer heads), every input decoded by cbor2 as one whole item.

Writes one JSON object per line: {"cbor": HEX, "tree": TREE} when cbor2 reads the input as exactly one item,
{"cbor": HEX, "error": TEXT} when it refuses it or finds bytes after the item. TREE says what cbor2 read, with
integers as decimal text so that no JSON reader rounds them:
    ["u", "N"] unsigned N, ["n", "N"] negative (the value -1 - N, as CBOR stores it), ["b", HEX] bytes,
    ["t", TEXT] text, ["a", [TREE...]] array, ["m", [[KEY, VALUE]...]] map in wire order, ["bool", true|false],
    ["null"], and ["other", REPR] for anything else cbor2 reads (floats, tags, undefined...).
Deterministic for a given seed.
"""
import io
import json
import random
import sys

import cbor2

BOUNDARIES = [0, 1, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1]
ALPHABET = ["a", "Z", "0", " ", "\u00e9", "e\u0301", "\u00fc", "\u20ac", "\u4e2d", "\U0001F600", "\U00010151", "\u0000", "\"", "\\", "\n"]


def random_integer(rng: random.Random) -> int:
    if rng.random() < 0.5:
        value = rng.choice(BOUNDARIES) + rng.choice([0, 0, 1, -1])
        value = min(max(value, 0), 2**64 - 1)
    else:
        value = rng.getrandbits(rng.choice([5, 8, 16, 32, 64]))
    return value if rng.random() < 0.6 else -1 - value


def random_bytes(rng: random.Random) -> bytes:
    size = rng.choice([0, 1, 23, 24, 31, 255, 256, rng.randrange(0, 64), rng.randrange(0, 1024)])
    return bytes(rng.getrandbits(8) for _ in range(size))


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.choice([0, 1, 5, 24, rng.randrange(0, 120)])))


def random_key(rng: random.Random):
    kind = rng.randrange(3)
    if kind == 0:
        return random_integer(rng)
    if kind == 1:
        return random_text(rng)[:8]
    return random_bytes(rng)[:4]


def random_value(rng: random.Random, depth: int, budget: list):
    """A value of at most budget[0] more nodes (containers stop growing when it is spent), nested at most 6 deep."""
    budget[0] -= 1
    kind = rng.randrange(9 if depth < 6 and budget[0] > 0 else 6)
    if kind == 0:
        return random_integer(rng)
    if kind == 1:
        return random_bytes(rng)
    if kind == 2:
        return random_text(rng)
    if kind == 3:
        return rng.choice([True, False])
    if kind == 4:
        return None
    if kind == 5:
        return random_integer(rng)
    if kind in (6, 7):
        return [random_value(rng, depth + 1, budget) for _ in range(rng.choice([0, 1, 2, 5, 24, 25])) if budget[0] > 0]
    entries = {}
    for _ in range(rng.choice([0, 1, 3, 6, 24])):
        if budget[0] > 0:
            entries[random_key(rng)] = random_value(rng, depth + 1, budget)
    return entries


def longer_head(data: bytes, rng: random.Random) -> bytes:
    """The first item's head rewritten with a longer argument form than needed (cbor2 reads it as the same value)."""
    initial = data[0]
    major, info = initial >> 5, initial & 0x1F
    if major > 5 or info > 27:
        return data
    if info < 24:
        argument, rest = info, data[1:]
    else:
        size = 1 << (info - 24)
        argument, rest = int.from_bytes(data[1:1 + size], "big"), data[1 + size:]
    form = rng.choice([i for i in (24, 25, 26, 27) if argument < 1 << (8 << (i - 24))])
    return bytes([major << 5 | form]) + argument.to_bytes(1 << (form - 24), "big") + rest


def mutations(data: bytes, rng: random.Random):
    yield longer_head(data, rng)
    for _ in range(6):
        buffer = bytearray(data)
        choice = rng.randrange(4)
        if choice == 0 and buffer:
            position = rng.randrange(len(buffer))
            buffer[position] ^= 1 << rng.randrange(8)
        elif choice == 1 and buffer:
            del buffer[rng.randrange(len(buffer)):]
        elif choice == 2:
            buffer.insert(rng.randrange(len(buffer) + 1), rng.choice([0x00, 0x18, 0x5F, 0x9F, 0xBF, 0xC1, 0xF7, 0xF9, 0xFF, rng.getrandbits(8)]))
        elif buffer:
            buffer[rng.randrange(len(buffer))] = rng.getrandbits(8)
        yield bytes(buffer)


def tree(value):
    if isinstance(value, bool):
        return ["bool", value]
    if value is None:
        return ["null"]
    if isinstance(value, int):
        return ["u", str(value)] if value >= 0 else ["n", str(-1 - value)]
    if isinstance(value, bytes):
        return ["b", value.hex()]
    if isinstance(value, str):
        return ["t", value]
    if isinstance(value, list):
        return ["a", [tree(item) for item in value]]
    if isinstance(value, dict):
        return ["m", [[tree(key), tree(item)] for key, item in value.items()]]
    return ["other", repr(value)[:80]]


def verdict(data: bytes) -> dict:
    stream = io.BytesIO(data)
    try:
        value = cbor2.CBORDecoder(stream).decode()
    except Exception as error:  # noqa: BLE001 - any refusal is a verdict
        return {"cbor": data.hex(), "error": f"{type(error).__name__}: {error}"[:200]}
    if stream.tell() != len(data):
        return {"cbor": data.hex(), "error": "bytes after the item"}
    return {"cbor": data.hex(), "tree": tree(value)}


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] != "random":
        print(__doc__, file=sys.stderr)
        return 2
    rng = random.Random(int(sys.argv[2]))
    for _ in range(int(sys.argv[3])):
        encoded = cbor2.dumps(random_value(rng, 0, [rng.choice([1, 8, 40, 150])]))
        print(json.dumps(verdict(encoded)))
        for mutated in mutations(encoded, rng):
            print(json.dumps(verdict(mutated)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
