"""Room: testing (beside the core). Owns the scripted server's prompt cache simulation; may
import data types.

Anthropic-style: a prefix cache keyed on the request prefix (tools, system, messages) up to each
`cache_control` breakpoint, reporting cache_read_input_tokens / cache_creation_input_tokens
(20-block lookback, a minimum cacheable prefix, 5 min or 1 h TTL); for the OpenAI wires, every
prefix cached automatically (prompt_tokens_details.cached_tokens)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from ..tokens import estimate_tokens


class PromptCache:
    """Anthropic-style prefix cache: entries are digests of the request prefix up to a
    breakpoint; a breakpoint reads the longest cached prefix within 20 blocks before it."""

    TTL = {"5m": 300.0, "1h": 3600.0}

    def __init__(self, min_tokens: int = 1024, lookback: int = 20,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.min_tokens = min_tokens
        self.lookback = lookback
        self.clock = clock
        self.entries: dict[bytes, float] = {}
        self.lock = threading.Lock()

    def usage(self, segments: list[tuple[Any, dict[str, Any] | None]]) -> dict[str, Any]:
        """Usage for one request given its segments (payload without cache_control, the
        segment's cache_control or None), in prefix order."""
        digests: list[bytes] = []
        cum: list[int] = []
        h, total = b"", 0
        for payload, _ in segments:
            s = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            h = hashlib.sha256(h + s.encode()).digest()
            total += estimate_tokens(s)
            digests.append(h)
            cum.append(total)
        bps = [i for i, (_, cc) in enumerate(segments) if cc is not None]
        now = self.clock()
        with self.lock:
            read_at = -1
            for b in bps:
                for j in range(b, max(-1, b - self.lookback), -1):
                    exp = self.entries.get(digests[j])
                    if exp is not None and exp > now:
                        read_at = max(read_at, j)
                        break
            read = cum[read_at] if read_at >= 0 else 0
            w5 = w1h = 0
            last = read_at
            for b in bps:
                cc = segments[b][1] or {}
                ttl = self.TTL.get(str(cc.get("ttl", "5m")), 300.0)
                if b <= read_at:
                    if b == read_at:
                        self.entries[digests[b]] = now + ttl  # a hit refreshes the entry
                    continue
                if cum[b] < self.min_tokens:
                    continue
                n = cum[b] - (cum[last] if last >= 0 else 0)
                if cc.get("ttl") == "1h":
                    w1h += n
                else:
                    w5 += n
                self.entries[digests[b]] = now + ttl
                last = b
        return {
            "input_tokens": total - read - w5 - w1h,
            "cache_creation_input_tokens": w5 + w1h,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1h},
        }

    def auto_usage(self, segments: list[Any]) -> tuple[int, int]:
        """OpenAI-style automatic caching: (prompt tokens, cached tokens). Every prefix is
        stored; hits count in 128-token steps from min_tokens up."""
        h, total = b"", 0
        read = 0
        now = self.clock()
        with self.lock:
            for payload in segments:
                s = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
                h = hashlib.sha256(b"oa" + h + s.encode()).digest()
                total += estimate_tokens(s)
                exp = self.entries.get(h)
                if exp is not None and exp > now and total >= self.min_tokens:
                    read = total
                self.entries[h] = now + 300.0
        if read:
            read = max(self.min_tokens, read - (read - self.min_tokens) % 128) if self.min_tokens else read
        return total, min(read, total)


def anthropic_segments(body: dict[str, Any]) -> list[tuple[Any, dict[str, Any] | None]]:
    """The cache prefix of a Messages request: tools, then system blocks, then every
    message block (tagged with its role and position)."""
    segs: list[tuple[Any, dict[str, Any] | None]] = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            segs.append(({k: v for k, v in t.items() if k != "cache_control"}, t.get("cache_control")))
    system = body.get("system")
    if isinstance(system, str) and system:
        segs.append(({"system": system}, None))
    elif isinstance(system, list):
        for b in system:
            if isinstance(b, dict):
                segs.append(({"system": {k: v for k, v in b.items() if k != "cache_control"}},
                             b.get("cache_control")))
    for i, m in enumerate(body.get("messages") or []):
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for b in blocks:
            if isinstance(b, dict):
                segs.append(({"m": i, "role": m.get("role"), "b": strip_cache_control(b)}, b.get("cache_control")))
    return segs


def strip_cache_control(obj: Any) -> Any:
    """A copy of a block / message / list without any cache_control keys."""
    if isinstance(obj, dict):
        return {k: strip_cache_control(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [strip_cache_control(v) for v in obj]
    return obj


def count_breakpoints(body: dict[str, Any]) -> int:
    n = 0

    def walk(o: Any) -> None:
        nonlocal n
        if isinstance(o, dict):
            if "cache_control" in o:
                n += 1
            for k, v in o.items():
                if k != "cache_control":
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(body.get("tools"))
    walk(body.get("system"))
    walk(body.get("messages"))
    return n
