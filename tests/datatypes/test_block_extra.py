"""A known block's fields beyond its known ones (blocks._extra) are kept verbatim, whether it has
none (most blocks: no walk over its fields) or some, and a known field is never taken as extra."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from loopwright.blocks import _KNOWN_KEYS, block_from_wire

BASE: dict[str, dict[str, Any]] = {
    "text": {"type": "text", "text": "hi"},
    "tool_use": {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"v": 1}},
    "tool_result": {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
    "thinking": {"type": "thinking", "thinking": "hmm", "signature": "s"},
    "redacted_thinking": {"type": "redacted_thinking", "data": "opaque"},
    "image": {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}},
}
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                          max_size=3), max_leaves=6)


@given(st.sampled_from(sorted(BASE)), st.dictionaries(st.text(max_size=8), json_values, max_size=4))
def test_extra_fields_are_exactly_the_unknown_ones(kind: str, more: dict[str, Any]) -> None:
    wire = {**BASE[kind], **{k: v for k, v in more.items() if k not in _KNOWN_KEYS[kind]}}
    block = block_from_wire(wire)
    assert block.extra == {k: v for k, v in wire.items() if k not in _KNOWN_KEYS[kind]}  # type: ignore[union-attr]
    assert block.to_wire() == wire
