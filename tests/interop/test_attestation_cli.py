"""`keyward attestation verify` and `keyward assertion verify` on the real device vectors of Tests/Fixtures: every
vector verifies at its own time with what was read equal to the vector's own record, policies refuse with their
stable reason, and truncated or bit-flipped inputs are a JSON verdict with exit 1 — never a crash."""

from __future__ import annotations

import base64
import json
import random
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.x509 import load_pem_x509_certificates

FIXTURES = Path(__file__).resolve().parents[2] / "Tests" / "Fixtures"
APP_ATTEST = sorted((FIXTURES / "app-attest").glob("veehaitch-*.yaml"))
ANDROID = sorted(p for p in (FIXTURES / "android-key-attestation").glob("*/sdk*/*.pem") if p.parts[-3] != "blueline")


def verdict(keyward_bin: str, *args: str) -> tuple[int, dict]:
    done = subprocess.run([keyward_bin, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), f"exit {done.returncode}: {done.stderr}"
    answer = json.loads(done.stdout)
    assert answer["valid"] is (done.returncode == 0)
    return done.returncode, answer


def ios_vector(path: Path) -> tuple[dict, dict]:
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return next(d for d in documents if d["type"] == "attestation"), next(d for d in documents if d["type"] == "assertion")


def write(tmp_path: Path, name: str, data: bytes | str) -> str:
    target = tmp_path / name
    target.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(target)


def ios_args(tmp_path: Path, attestation: dict, environment: str = "development") -> list[str]:
    return ["--platform", "ios", "--app-id", f"{attestation['teamIdentifier']}.{attestation['bundleIdentifier']}",
            "--environment", environment, "--client-data-file", write(tmp_path, "client-data", base64.b64decode(attestation["clientDataBase64"])),
            "--at", attestation["timestamp"]]


@pytest.mark.parametrize("path", APP_ATTEST, ids=lambda p: p.stem)
def test_every_app_attest_vector_verifies_at_its_time_with_its_assertion(keyward_bin, tmp_path, path):
    attestation, assertion = ios_vector(path)
    code, answer = verdict(keyward_bin, "attestation", "verify", *ios_args(tmp_path, attestation),
                           write(tmp_path, "attestation.b64", attestation["attestationBase64"]))
    assert code == 0, answer
    assert answer["keyId"] == attestation["keyIdBase64"]
    assert answer["counter"] == 0 and answer["environment"] == "development"
    key = serialization.load_pem_public_key(attestation["publicKey"].encode()).public_numbers()
    assert base64.urlsafe_b64decode(answer["publicKey"]["x"] + "==") == key.x.to_bytes(32, "big")
    assert base64.urlsafe_b64decode(answer["publicKey"]["y"] + "==") == key.y.to_bytes(32, "big")

    raw = base64.b64decode(attestation["attestationBase64"])
    code, answer = verdict(keyward_bin, "attestation", "verify", *ios_args(tmp_path, attestation), write(tmp_path, "attestation.cbor", raw))
    assert code == 0, "raw CBOR is read as well as base64"
    code, answer = verdict(keyward_bin, "attestation", "verify", *ios_args(tmp_path, attestation, "production"),
                           write(tmp_path, "attestation.b64", attestation["attestationBase64"]))
    assert answer["reason"] == "AAGUID_MISMATCH"

    args = ["assertion", "verify", "--app-id", f"{assertion['teamIdentifier']}.{assertion['bundleIdentifier']}",
            "--public-key", write(tmp_path, "key.pem", assertion["publicKey"]), "--environment", "development",
            "--client-data-file", write(tmp_path, "assertion-data", base64.b64decode(assertion["clientDataBase64"])),
            write(tmp_path, "assertion.b64", assertion["assertionBase64"])]
    code, answer = verdict(keyward_bin, *args, "--previous-counter", str(assertion["counter"] - 1))
    assert code == 0 and answer["counter"] == assertion["counter"], answer
    code, answer = verdict(keyward_bin, *args, "--previous-counter", str(assertion["counter"]))
    assert answer["reason"] == "COUNTER_NOT_INCREASING"


def android_expectation(pem: Path) -> dict:
    text = pem.with_suffix(".json").read_text()
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


def android_time(expected: dict) -> str:
    millis = int(expected["softwareEnforced"]["creationDateTime"])
    return datetime.fromtimestamp(millis / 1000, tz=timezone.utc).isoformat()


@pytest.mark.parametrize("pem", ANDROID, ids=lambda p: f"{p.parts[-3]}-{p.stem}")
def test_every_android_chain_verifies_at_its_creation_time_and_reports_its_key_description(keyward_bin, pem):
    expected = android_expectation(pem)
    code, answer = verdict(keyward_bin, "attestation", "verify", "--platform", "android", "--challenge", expected["attestationChallenge"],
                           "--at", android_time(expected), str(pem))
    assert code == 0, answer
    assert answer["attestationVersion"] == int(expected["attestationVersion"])
    assert answer["attestationSecurityLevel"] == expected["attestationSecurityLevel"]
    assert answer["keymasterSecurityLevel"] == expected["keyMintSecurityLevel"]
    assert answer["attestationChallenge"] == expected["attestationChallenge"]
    packages = expected["softwareEnforced"].get("attestationApplicationId", {}).get("packages", [])
    assert answer["packageNames"] == [p["name"] for p in packages]
    signatures = expected["softwareEnforced"].get("attestationApplicationId", {}).get("signatures", [])
    assert answer["signingCertDigests"] == signatures
    leaf = load_pem_x509_certificates(pem.read_bytes())[0].public_key()
    if answer["publicKey"]["kty"] == "EC":
        assert base64.urlsafe_b64decode(answer["publicKey"]["x"] + "==") == leaf.public_numbers().x.to_bytes(32, "big")

    code, answer = verdict(keyward_bin, "attestation", "verify", "--platform", "android", "--challenge", "AAAA", "--at", android_time(expected), str(pem))
    assert answer["reason"] == "CHALLENGE_MISMATCH"


def test_the_registration_policy_refuses_akitas_unverified_boot_and_blueline_needs_the_2016_root(keyward_bin, tmp_path):
    pem = FIXTURES / "android-key-attestation/akita/sdk34/TEE_EC_NONE.pem"
    expected = android_expectation(pem)
    base = ["attestation", "verify", "--platform", "android", "--challenge", expected["attestationChallenge"], "--at", android_time(expected)]
    code, answer = verdict(keyward_bin, *base, "--require-verified-boot", "--key-algorithm", "EC-P256", str(pem))
    assert answer["reason"] == "BOOT_STATE_REFUSED", answer
    rsa = FIXTURES / "android-key-attestation/akita/sdk34/TEE_RSA_NONE.pem"
    rsa_expected = android_expectation(rsa)
    code, answer = verdict(keyward_bin, "attestation", "verify", "--platform", "android", "--challenge", rsa_expected["attestationChallenge"],
                           "--at", android_time(rsa_expected), "--key-algorithm", "EC-P256", str(rsa))
    assert answer["reason"] == "KEY_PROPERTIES_REFUSED", answer

    blueline = FIXTURES / "android-key-attestation/blueline/sdk28/TEE_EC_NONE.pem"
    expected = android_expectation(blueline)
    args = ["attestation", "verify", "--platform", "android", "--challenge", expected["attestationChallenge"], "--at", android_time(expected)]
    code, answer = verdict(keyward_bin, *args, str(blueline))
    assert answer["reason"] == "CHAIN_INVALID", answer
    root = load_pem_x509_certificates(blueline.read_bytes())[-1].public_bytes(serialization.Encoding.PEM)
    code, answer = verdict(keyward_bin, *args, "--extra-root", write(tmp_path, "root-2016.pem", root), str(blueline))
    assert code == 0, answer

    ders = [write(tmp_path, f"{i}.der", c.public_bytes(serialization.Encoding.DER))
            for i, c in enumerate(load_pem_x509_certificates((FIXTURES / "android-key-attestation/tegu/sdk36/TEE_EC_2026_ROOT.pem").read_bytes()))]
    tegu = android_expectation(FIXTURES / "android-key-attestation/tegu/sdk36/TEE_EC_2026_ROOT.pem")
    code, answer = verdict(keyward_bin, "attestation", "verify", "--platform", "android", "--challenge", tegu["attestationChallenge"],
                           "--at", android_time(tegu), *ders)
    assert code == 0, "DER files in order are read as well as one PEM file"


def test_invalid_vectors_are_refused(keyward_bin):
    for pem in sorted((FIXTURES / "android-key-attestation/invalid").glob("*.pem")):
        code, answer = verdict(keyward_bin, "attestation", "verify", "--platform", "android", "--challenge", "AAAA", str(pem))
        assert code == 1 and answer["reason"] in ("MALFORMED", "CHAIN_INVALID"), (pem.name, answer)


def test_truncated_and_bit_flipped_inputs_are_a_verdict_never_a_crash(keyward_bin, tmp_path):
    rng = random.Random(20261125)
    attestation, _ = ios_vector(APP_ATTEST[0])
    raw = base64.b64decode(attestation["attestationBase64"])
    tegu = FIXTURES / "android-key-attestation/tegu/sdk36/TEE_EC_2026_ROOT.pem"
    leaf, *rest = [c.public_bytes(serialization.Encoding.DER) for c in load_pem_x509_certificates(tegu.read_bytes())]
    expected = android_expectation(tegu)
    mutants = [raw[:n] for n in rng.sample(range(len(raw)), 20)]
    mutants += [bytes(b ^ (1 << rng.randrange(8)) if i == at else b for i, b in enumerate(raw)) for at in rng.sample(range(len(raw)), 20)]
    for index, mutant in enumerate(mutants):
        code, answer = verdict(keyward_bin, "attestation", "verify", *ios_args(tmp_path, attestation), write(tmp_path, f"m{index}.cbor", mutant))
        assert code == 1 or answer["counter"] == 0, answer
    leaves = [leaf[:n] for n in rng.sample(range(len(leaf)), 15)]
    leaves += [bytes(b ^ (1 << rng.randrange(8)) if i == at else b for i, b in enumerate(leaf)) for at in rng.sample(range(len(leaf)), 15)]
    for index, mutant in enumerate(leaves):
        files = [write(tmp_path, f"leaf{index}.der", mutant)] + [write(tmp_path, f"rest{index}-{i}.der", c) for i, c in enumerate(rest)]
        code, answer = verdict(keyward_bin, "attestation", "verify", "--platform", "android", "--challenge", expected["attestationChallenge"],
                               "--at", android_time(expected), *files)
        assert code == 1, f"a damaged leaf verified: {answer}"
