"""Room: testing (beside the core). Owns server-sent events as the scripted server writes them for
the three wires; imports nothing of loopwright."""

from __future__ import annotations

import json
from typing import Any


def sse(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "").encode() + f"data: {payload}\n\n".encode()


def chunks(s: str, n: int = 24) -> list[str]:
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]
