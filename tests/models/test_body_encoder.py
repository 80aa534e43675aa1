"""The request body encoder (models.http.BodyEncoder) reuses each message's JSON from turn to
turn: its bytes must be json.dumps's bytes for the whole body, every turn, whatever changed."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.models.anthropic import AnthropicModel
from loopwright.models.base import ModelRequest
from loopwright.models.http import BodyEncoder


def _plain(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                           lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(), kids, max_size=3),
                           max_leaves=10)
messages = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                  "content": st.text() | st.lists(st.dictionaries(st.text(), json_values, max_size=3),
                                                                  max_size=3)})


@settings(max_examples=150, deadline=None)
@given(st.lists(messages, max_size=6), st.dictionaries(st.text(), json_values, max_size=3),
       st.lists(st.sampled_from(["append", "mutate", "replace", "drop"]), max_size=8))
def test_the_bytes_are_json_dumps_bytes_turn_after_turn(h: list[dict[str, Any]], rest: dict[str, Any],
                                                        changes: list[str]) -> None:
    enc = BodyEncoder()
    for change in [None, *changes]:
        if change == "append":
            h.append({"role": "user", "content": [{"type": "text", "text": str(len(h))}]})
        elif change == "mutate" and h:  # in place: the content list grows, or is replaced
            m = h[len(h) // 2]
            if isinstance(m["content"], list):
                m["content"].append({"type": "text", "text": "added"})
            else:
                m["content"] = m["content"] + " changed"
        elif change == "replace" and h:
            h[0] = {**h[0], "content": "replaced"}
        elif change == "drop" and h:
            del h[-1]
        body = {**rest, "messages": h, "stream": True}
        assert enc.encode(body) == _plain(body)


def test_an_anthropic_run_of_turns_sends_what_json_dumps_would() -> None:
    model = AnthropicModel("claude-sonnet-4-5", api_key="k")
    enc = BodyEncoder()
    h: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    tools = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]
    for k in range(12):
        body = model.build_params(ModelRequest(messages=h, system="sys", tools=tools))
        assert enc.encode(body) == _plain(body)
        h.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {}}]})
        h.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "x" * k}]})
    assert len(enc._known) == len(h) - 2  # the messages of the last request, no more
