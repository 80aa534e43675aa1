"""Room: web tools (on tools.base). Owns the address policy of the web tools (SSRF); may import
nothing of loopwright.

Which addresses WebFetch (and the search backend) may connect to. A URL the model writes may
name a host that resolves to the machine itself, the local network or a cloud's metadata
service (169.254.169.254): those are refused unless the user's settings allow them.

The check is made on the resolved address, inside the connection itself (`GuardedConnect`,
the transport's connector): the name is resolved once, every address is checked, and the
TCP connection goes to the checked address literally. So each redirect hop is checked (each
opens its own connection), and a name that resolves to a public address for the check and
to 127.0.0.1 for the connection (DNS rebinding) cannot get through: there is no second
resolution. TLS still verifies the certificate against the host name (the transport does the
handshake with the URL's host as server name, whatever address the socket reached).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]


class AddressRefused(Exception):
    """A connection the policy refuses: the message names the host, the address and why."""


def _kind(ip: Address) -> str | None:
    """What makes `ip` non-public (None: a public address)."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local (cloud metadata services live here)"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_multicast:
        return "multicast"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "reserved"
    return None


@dataclass(frozen=True)
class AddressPolicy:
    """`allow_private`: True lets every address through; else only public ones and those in
    `allowed` (networks such as 127.0.0.1/32 or 10.0.0.0/8)."""

    allow_private: bool = False
    allowed: tuple[Network, ...] = field(default_factory=tuple)

    @classmethod
    def from_setting(cls, value: Any, where: str = "webFetch.allowPrivateNetwork") -> AddressPolicy:
        """The setting's value: true / false, or a list of addresses and networks."""
        if value is None or value is False:
            return cls()
        if value is True:
            return cls(allow_private=True)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{where} must be true, false or a list of addresses/networks such as "
                             "[\"127.0.0.1\", \"10.0.0.0/8\"]")
        try:
            return cls(allowed=tuple(ipaddress.ip_network(v, strict=False) for v in value))
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None

    def problem(self, ip: Address) -> str | None:
        """Why a connection to `ip` is refused (None: allowed)."""
        if self.allow_private:
            return None
        kind = _kind(ip)
        if kind is None or any(ip in n for n in self.allowed):
            return None
        return kind

    def check(self, host: str, addresses: Sequence[str]) -> None:
        """AddressRefused unless every one of `addresses` is allowed (a name that also resolves
        to 127.0.0.1 is not fetched, whichever address a connection would have picked)."""
        if not addresses:
            raise AddressRefused(f"{host} does not resolve to any address")
        for a in addresses:
            kind = self.problem(ipaddress.ip_address(a.split("%", 1)[0]))
            if kind is not None:
                shown = host if host == a else f"{host} ({a})"
                raise AddressRefused(
                    f"refused to connect to {shown}: a {kind} address. The web tools reach public addresses only "
                    "(so that a URL cannot reach this machine, the local network or a cloud metadata service); "
                    "to allow it, set webFetch.allowPrivateNetwork in your user settings (true, or a list such "
                    "as [\"10.0.0.0/8\"])")


async def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to, in the system's order (an address literal: itself)."""
    try:
        ipaddress.ip_address(host)
        return [host]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise AddressRefused(f"cannot resolve {host}: {e.strerror or e}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class GuardedConnect:
    """How the web tools' connections are made, only where `policy` allows (see the module): a
    TCP connector (models/wire.py's `Connector`) that resolves the name once, checks every
    address, and connects to a checked address literally: the first that answers (::1, then
    127.0.0.1). The pool bounds it by its connect timeout. `connected`: the addresses connected
    to (tests read it)."""

    def __init__(self, policy: AddressPolicy, resolver: Resolver | None = None) -> None:
        self.policy, self.resolver = policy, resolver or resolve
        self.connected: list[str] = []

    async def __call__(self, host: str, port: int, timeout: float | None
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        addresses = await self.resolver(host, port)
        self.policy.check(host, addresses)
        error: OSError | None = None
        for address in addresses:
            try:
                streams = await asyncio.open_connection(address, port)
            except OSError as e:  # refused, unreachable: try the next address
                error = e
                continue
            self.connected.append(address)
            return streams
        raise error or OSError(f"{host} resolved to no address")
