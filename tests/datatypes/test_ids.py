"""loopwright.ids: the random ids a run makes (session ids, message and request ids) are what
the uuid module would write, without importing it."""

from __future__ import annotations

import re
import uuid

from loopwright.ids import new_hex, new_uuid


def test_new_uuid_is_a_version_4_rfc_4122_uuid_in_canonical_text() -> None:
    seen = {new_uuid() for _ in range(2000)}
    assert len(seen) == 2000  # random, not a counter or a clock
    for text in list(seen)[:200]:
        u = uuid.UUID(text)
        assert str(u) == text  # lower-case, 8-4-4-4-12
        assert u.version == 4 and u.variant == uuid.RFC_4122


def test_new_hex_gives_n_random_hex_digits() -> None:
    for n in (1, 12, 20, 24, 32):
        h = new_hex(n)
        assert re.fullmatch(f"[0-9a-f]{{{n}}}", h)
    assert len({new_hex(24) for _ in range(500)}) == 500


def test_transcript_timestamps_are_utc_iso_with_milliseconds_as_datetime_writes_them() -> None:
    import datetime
    import re

    from loopwright.sessions.store import _now

    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    stamp = _now()
    after = datetime.datetime.now(datetime.UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
    parsed = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert before <= parsed <= after
