"""The address guard (warchive.capture.addresses): which resolved addresses capture may connect to.

Expected kinds come from the registries that define the ranges (RFC 1918, RFC 3927, RFC 4193,
RFC 6598, RFC 5771/4291 multicast, RFC 6052 NAT64, RFC 3056 6to4, RFC 4380 Teredo), not from the
module's own output. How a URL's host becomes one of these addresses (2130706433, 127.1, names)
is the fetcher's and is tested in test_crawl_addresses.py."""

from __future__ import annotations

import ipaddress

import pytest

from warchive.capture.addresses import KINDS, networks, refusal

REFUSED = [
    ("169.254.169.254", "link-local"),       # the cloud metadata service (AWS, GCP, Azure)
    ("169.254.0.1", "link-local"),
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),          # with a zone, as getaddrinfo gives link-local v6
    ("10.0.0.1", "private"),
    ("10.255.255.255", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.168.1.1", "private"),
    ("fd00::1", "private"),                  # unique local (fc00::/7)
    ("fc00::1", "private"),
    ("100.64.0.1", "shared"),                # carrier-grade NAT
    ("100.127.255.254", "shared"),
    ("0.0.0.0", "unspecified"),              # connecting to it reaches this host on Linux
    ("::", "unspecified"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("::1", "loopback"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("fec0::1", "site-local"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("192.0.2.1", "private"),                # documentation (TEST-NET-1): special-purpose, not global
    ("198.18.0.1", "private"),               # benchmarking
]


@pytest.mark.parametrize("ip,kind", REFUSED)
def test_each_class_of_non_public_address_is_refused(ip, kind):
    why = refusal(ip)
    assert why is not None and why.kind == kind and why.address == ip and why.inner is None
    assert ip in str(why) and KINDS[kind] in str(why)


# (address, the IPv4 address it carries, its kind)
CARRIERS = [
    ("::ffff:127.0.0.1", "127.0.0.1", "loopback"),              # v4-mapped
    ("::ffff:7f00:1", "127.0.0.1", "loopback"),                 # the same, in hex
    ("::ffff:169.254.169.254", "169.254.169.254", "link-local"),
    ("::ffff:10.1.2.3", "10.1.2.3", "private"),
    ("2002:7f00:1::1", "127.0.0.1", "loopback"),                # 6to4 of 127.0.0.1
    ("2002:a9fe:a9fe::1", "169.254.169.254", "link-local"),     # 6to4 of the metadata service
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1", "loopback"),   # Teredo, client 127.0.0.1
    ("2001:0:a00:1:8000:63bf:f7f7:f7f7", "10.0.0.1", "private"),         # Teredo, server 10.0.0.1
    ("64:ff9b::a9fe:a9fe", "169.254.169.254", "link-local"),    # NAT64 well-known prefix
    ("64:ff9b::c0a8:101", "192.168.1.1", "private"),
]


@pytest.mark.parametrize("ip,inner,kind", CARRIERS)
def test_an_ipv6_address_carrying_ipv4_is_judged_by_the_ipv4_inside(ip, inner, kind):
    why = refusal(ip)
    assert why is not None and (why.kind, why.inner, why.address) == (kind, inner, ip)
    assert inner in str(why)


@pytest.mark.parametrize("ip", [
    "8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::1",
    "::ffff:8.8.8.8",                            # v4-mapped public: judged by 8.8.8.8, not by ::ffff:0:0/96
    "2002:808:808::1",                           # 6to4 of 8.8.8.8
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",      # Teredo: server 65.54.227.120, client 8.8.8.8
    "64:ff9b::808:808",                          # NAT64 of 8.8.8.8: what DNS64 answers on an IPv6-only network
])
def test_public_addresses_pass(ip):
    assert refusal(ip) is None


def test_the_teredo_fixtures_carry_what_they_say():
    """The Teredo addresses above are built right (server, client as ipaddress decodes them)."""
    t = ipaddress.IPv6Address
    assert t("2001:0:4136:e378:8000:63bf:80ff:fffe").teredo == (ipaddress.IPv4Address("65.54.227.120"),
                                                                ipaddress.IPv4Address("127.0.0.1"))
    assert t("2001:0:a00:1:8000:63bf:f7f7:f7f7").teredo == (ipaddress.IPv4Address("10.0.0.1"),
                                                            ipaddress.IPv4Address("8.8.8.8"))


def test_allowed_networks_admit_what_they_hold_and_nothing_else():
    lo = networks(["127.0.0.0/8"])
    assert refusal("127.0.0.1", lo) is None and refusal("127.9.9.9", lo) is None
    assert refusal("::ffff:127.0.0.1", lo) is None          # the v4 inside is in the network
    assert refusal("::1", lo).kind == "loopback"              # an IPv4 network admits no IPv6 address
    assert refusal("10.0.0.1", lo).kind == "private"
    one = networks(["127.0.0.1"])                             # a bare address: that host only
    assert refusal("127.0.0.1", one) is None and refusal("127.0.0.2", one).kind == "loopback"
    both = networks(["10.0.0.0/8", "fd00::/8"])
    assert refusal("10.20.30.40", both) is None and refusal("fd12::1", both) is None
    assert refusal("169.254.169.254", both).kind == "link-local"
    assert refusal("2002:a00:1::1", both) is None             # 6to4 of 10.0.0.1: the v4 inside is admitted
    assert networks(["192.168.1.7/24"]) == (ipaddress.IPv4Network("192.168.1.0/24"),)   # host bits: the network


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "localhost", "", "10.0.0.0/8,fd00::/8", "::1/200"])
def test_a_value_that_is_no_network_is_refused_by_name(bad):
    with pytest.raises(ValueError) as e:
        networks([bad])
    assert repr(bad) in str(e.value)


def test_what_is_no_address_is_refused():
    """The guard is given resolved addresses; a name or junk reaching it is refused, not connected to."""
    assert refusal("metadata.google.internal").kind == "non-global"
    assert refusal("").kind == "non-global"
