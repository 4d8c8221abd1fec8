"""Sign-in limits per client address, with the address a real socket gives and a trusted proxy's headers."""

from __future__ import annotations

import re

import requests

from keyward_peer import Backend


def _attempt(base: str, username: str, forwarded_for: str | None = None) -> int:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    browser = requests.Session()
    page = browser.get(f"{base}/realms/demo/login", headers=headers, timeout=30)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    answer = browser.post(
        f"{base}/realms/demo/login", data={"csrf": csrf, "username": username, "password": "wrong"},
        headers=headers, allow_redirects=False, timeout=30,
    )
    return answer.status_code


def test_attempts_are_limited_per_address_behind_a_trusted_proxy(spawn_server):
    srv = spawn_server(Backend("sqlite", None, None), "proxied", {
        "KEYWARD_HTTP_TRUSTED_PROXIES": "127.0.0.1/32", "KEYWARD_ACCOUNTS_LOGIN_ATTEMPTS_PER_ADDRESS": "3",
    })
    # Three different usernames from one client: each under the per-username limit, the address is not.
    assert [_attempt(srv.base, f"user-{n}", "198.51.100.1") for n in range(3)] == [401, 401, 401]
    assert _attempt(srv.base, "user-3", "198.51.100.1") == 429
    # Another client behind the same proxy is not held back, and a client cannot hide behind a forged hop.
    assert _attempt(srv.base, "user-4", "198.51.100.2") == 401
    assert _attempt(srv.base, "user-5", "198.51.100.77, 198.51.100.1") == 429


def test_forwarded_headers_from_an_untrusted_peer_are_ignored(spawn_server):
    srv = spawn_server(Backend("sqlite", None, None), "direct", {"KEYWARD_ACCOUNTS_LOGIN_ATTEMPTS_PER_ADDRESS": "3"})
    # Without trusted proxies the socket peer is the client: changing X-Forwarded-For does not reset the count.
    statuses = [_attempt(srv.base, f"user-{n}", f"203.0.113.{n}") for n in range(4)]
    assert statuses == [401, 401, 401, 429]


def test_ipv6_addresses_of_one_slash_64_share_the_limit(spawn_server):
    """Security review L1: one host gets a whole IPv6 /64, so counting each address apart let it make the per-address
    limit's worth of attempts from each of 2^64 addresses. Addresses are counted per /64 by default
    (http.clientPrefixV6), per address for IPv4 (http.clientPrefixV4)."""
    srv = spawn_server(Backend("sqlite", None, None), "ipv6-prefix", {
        "KEYWARD_HTTP_TRUSTED_PROXIES": "127.0.0.1/32", "KEYWARD_ACCOUNTS_LOGIN_ATTEMPTS_PER_ADDRESS": "3",
    })
    one_host = ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:fffe"]
    assert [_attempt(srv.base, f"user-{n}", address) for n, address in enumerate(one_host)] == [401, 401, 401]
    assert _attempt(srv.base, "user-3", "2001:db8:1:2:abcd::9") == 429, "a fourth address of the same /64 is held back"
    assert _attempt(srv.base, "user-4", "2001:db8:1:3::1") == 401, "the next /64 is another client"
    assert _attempt(srv.base, "user-5", "198.51.100.1") == 401


def test_the_prefix_lengths_are_settings(spawn_server):
    srv = spawn_server(Backend("sqlite", None, None), "ipv4-prefix", {
        "KEYWARD_HTTP_TRUSTED_PROXIES": "127.0.0.1/32", "KEYWARD_ACCOUNTS_LOGIN_ATTEMPTS_PER_ADDRESS": "2",
        "KEYWARD_HTTP_CLIENT_PREFIX_V4": "24", "KEYWARD_HTTP_CLIENT_PREFIX_V6": "128",
    })
    assert [_attempt(srv.base, f"user-{n}", f"198.51.100.{n + 1}") for n in range(3)] == [401, 401, 429]
    assert [_attempt(srv.base, f"v6-{n}", f"2001:db8::{n + 1}") for n in range(3)] == [401, 401, 401]
