"""Room: bases (the gate). Owns the sandbox's network outside the box: the filtering HTTP proxy
each sandboxed command reaches through a socket pair, and the forwards to the host's loopback
servers (allowLocalBinding); the box's side is `bridge.py`. Imports only sandbox.config."""

from __future__ import annotations

import contextlib
import os
import re
import select
import socket
import threading
from collections.abc import Sequence
from pathlib import Path

from .config import domain_allowed


def loopback_servers() -> dict[int, str]:
    """TCP servers listening on the host's loopback (or on every address) now: port -> the
    address to reach it at. (/proc/net/tcp*: the network namespace of loopwright itself.)"""
    out: dict[int, str] = {}
    for name, loop, anyaddr, host in (("tcp6", "00000000000000000000000001000000", "0" * 32, "::1"),
                                      ("tcp", "", "00000000", "127.0.0.1")):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) < 4 or f[3] != "0A":  # TCP_LISTEN
                continue
            addr, _, port = f[1].partition(":")
            if name == "tcp" and addr.endswith("7F"):  # 127.x.y.z (little-endian hex)
                out[int(port, 16)] = socket.inet_ntoa(bytes.fromhex(addr)[::-1])
            elif addr in (loop, anyaddr):
                out[int(port, 16)] = host  # an IPv4 listener wins: tcp is read last
    return out



class _Proxy:
    """An HTTP proxy (CONNECT and absolute-URI requests) that lets only allowed hosts pass.
    Each sandboxed command gets a channel; each connection through it a fresh socket pair."""

    def __init__(self, allowed: Sequence[str]) -> None:
        self.allowed = list(allowed)

    def channel(self, forwards: dict[int, str] | None = None) -> tuple[socket.socket, int]:
        """A channel for one sandboxed command; `forwards`: the host's loopback ports it may
        reach (allowLocalBinding), port -> address."""
        mine, theirs = socket.socketpair()
        fd = os.dup(theirs.fileno())
        theirs.close()
        threading.Thread(target=self._serve_channel, args=(mine, dict(forwards or {})), daemon=True,
                         name="loopwright-sandbox-proxy").start()
        return mine, fd

    def _serve_channel(self, ch: socket.socket, forwards: dict[int, str]) -> None:
        with ch:
            while True:
                tag = b""
                try:
                    while len(tag) < 3 and (d := ch.recv(3 - len(tag))):
                        tag += d
                except OSError:
                    return
                if len(tag) < 3:
                    return
                port = int.from_bytes(tag[1:], "big")
                if tag[:1] == b"p" and port not in forwards:
                    return  # not a port it was given: the bridge does not ask for others
                a, b = socket.socketpair()
                try:
                    socket.send_fds(ch, [b"x"], [b.fileno()])
                except OSError:
                    a.close()
                    return
                finally:
                    b.close()
                target = ((self._serve_client, (a,)) if tag[:1] == b"n"
                          else (_forward, (a, forwards[port], port)))
                threading.Thread(target=target[0], args=target[1], daemon=True).start()

    def _serve_client(self, c: socket.socket) -> None:
        with c:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                try:
                    d = c.recv(65536)
                except OSError:
                    return
                if not d:
                    return
                head += d
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split()
            if len(parts) != 3:
                return self._refuse(c, 400, "Bad Request", "malformed request line")
            method, target, _ = parts
            if method == "CONNECT":
                host, _, port_s = target.rpartition(":")
                rest = head.split(b"\r\n\r\n", 1)[1]
            else:
                m = re.match(r"http://(\[[^\]]+\]|[^/:]+)(?::(\d+))?(/.*)?$", target)
                if m is None:
                    return self._refuse(c, 400, "Bad Request", "only http:// URLs and CONNECT are proxied")
                host, port_s = m.group(1), m.group(2) or "80"
                rest = head
            host = host.strip("[]")
            if not domain_allowed(host, self.allowed):
                return self._refuse(c, 403, "Forbidden", f"host {host} is not in sandbox.network.allowedDomains")
            try:
                up = socket.create_connection((host, int(port_s)), timeout=30)
            except (OSError, ValueError) as e:
                return self._refuse(c, 502, "Bad Gateway", f"cannot connect to {host}:{port_s}: {e}")
            with up:
                up.settimeout(None)
                if method == "CONNECT":
                    c.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                if rest:
                    up.sendall(rest)
                _relay(c, up)

    @staticmethod
    def _refuse(c: socket.socket, code: int, reason: str, msg: str) -> None:
        body = f"loopwright sandbox: {msg}\n".encode()
        with contextlib.suppress(OSError):
            c.sendall(f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                      f"Connection: close\r\n\r\n".encode() + body)



def _forward(c: socket.socket, host: str, port: int) -> None:
    """One connection of a sandboxed command to a loopback server of the host (allowLocalBinding)."""
    with c:
        try:
            up = socket.create_connection((host, port), timeout=30)
        except OSError:
            return  # the command sees the connection closed, as a refused one
        with up:
            up.settimeout(None)
            _relay(c, up)


def _relay(a: socket.socket, b: socket.socket) -> None:
    socks = [a, b]
    while socks:
        ready, _, _ = select.select(socks, [], [], 300)
        if not ready:
            return
        for s in ready:
            other = b if s is a else a
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            if not d:
                with contextlib.suppress(OSError):
                    other.shutdown(socket.SHUT_WR)
                socks.remove(s)
                continue
            try:
                other.sendall(d)
            except OSError:
                return
