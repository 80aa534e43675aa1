"""Room: data types. Owns new random ids (a version 4 UUID's text); may import nothing of loopwright.

Not the uuid module: its import pulls `platform` (~2.5 ms here), and a session id is made on the
way to every run's first request (a CLI process per SDK or editor session)."""

from __future__ import annotations

import os
import re

# A session id names a file inside the sessions directory, never a path: a UUID or a safe name
# (letters, digits, '.', '_', '-'; no leading dot, no '..'), so that `<root>/<slug>/<id>.jsonl`
# cannot leave `<root>/<slug>/` however the id came (a flag, an SDK option, an editor's request).
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# A tool call's id as the Messages API takes it ('^[a-zA-Z0-9_-]+$'; bounded here, as file names
# and transcripts need it to be): a model's id of another shape is replaced at the model boundary
# (loop/model_call.sendable), else every later request of the session would be refused.
TOOL_USE_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def new_uuid() -> str:
    """A random (version 4, RFC 4122 variant) UUID, as str(uuid.uuid4()) writes it."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # variant 10xx
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_hex(n: int = 32) -> str:
    """`n` random hex digits (uuid.uuid4().hex[:n] without the fixed version and variant digits)."""
    return os.urandom((n + 1) // 2).hex()[:n]


def new_tool_use_id() -> str:
    """A fresh tool call id of the Messages API's shape (`toolu_` and 24 hex digits)."""
    return f"toolu_{new_hex(24)}"
