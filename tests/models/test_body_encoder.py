"""The request body encoder (models.http.BodyEncoder) reuses each message's JSON from turn to
turn: its bytes must be json.dumps's bytes for the whole body, every turn, whatever changed. The
OpenAI shapes convert each message once the same way (PerMessage): what they send must be a fresh
conversion of the whole history, every turn."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.models.anthropic import AnthropicModel
from loopwright.models.base import ModelRequest
from loopwright.models.http import BodyEncoder, PerMessage
from loopwright.models.openai_compat import OpenAICompatModel, chat_messages, to_openai_messages
from loopwright.models.openai_responses import (
    OpenAIResponsesModel,
    responses_items,
    to_responses_input,
)


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
       st.lists(st.sampled_from(["append", "mutate", "replace", "drop", "tool", "tools", "system"]), max_size=8))
def test_the_bytes_are_json_dumps_bytes_turn_after_turn(h: list[dict[str, Any]], rest: dict[str, Any],
                                                        changes: list[str]) -> None:
    enc = BodyEncoder()
    rest = {"system": "sys", **rest, "tools": [{"name": "Read"}]}
    for change in [None, *changes]:
        if change == "tool":  # in place: a tool added to the list sent before
            rest["tools"].append({"name": f"T{len(rest['tools'])}"})
        elif change == "tools":  # a new list, of the same length
            rest["tools"] = [{**t, "description": "new"} for t in rest["tools"]]
        elif change == "system":
            rest["system"] = rest["system"] + " more"
        elif change == "append":
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
    assert len(enc._json._known) <= 2 * len(h) + 64  # what it keeps is bounded by the history


def test_messages_no_longer_sent_are_let_go() -> None:
    """A history cut short (compaction, rewind) is not kept alive by the encoder's memory of it."""
    enc = BodyEncoder()
    h = [{"role": "user", "content": [{"type": "text", "text": str(k)}]} for k in range(300)]
    enc.encode({"messages": h})
    short = [{"role": "user", "content": "summary"}]
    for _ in range(3):
        body = {"messages": short, "stream": True}
        assert enc.encode(body) == _plain(body)
    assert len(enc._json._known) <= 2 * len(short) + 64


def _change(h: list[dict[str, Any]], change: str | None) -> None:
    if change == "turn":
        k = len(h)
        h.append({"role": "assistant", "content": [{"type": "text", "text": f"t{k}"},
                                                   {"type": "tool_use", "id": f"u{k}", "name": "Read", "input": {"k": k}}]})
        h.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"u{k}", "content": "x" * k}]})
    elif change == "mutate" and h:  # in place: a user message's content list grows, or a string changes
        m = h[len(h) // 2]
        if isinstance(m["content"], list):
            m["content"].append({"type": "text", "text": "added"})
        else:
            m["content"] = m["content"] + " changed"
    elif change == "replace" and h:  # (compaction, rewind: a new first message)
        h[0] = {**h[0], "content": "replaced"}
    elif change == "drop" and len(h) > 1:
        del h[-2:]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["turn", "mutate", "replace", "drop"]), max_size=10))
def test_the_openai_shapes_send_a_fresh_conversion_turn_after_turn(changes: list[str]) -> None:
    chat, items = PerMessage(chat_messages), PerMessage(responses_items)
    h: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for change in [None, *changes]:
        _change(h, change)
        assert to_openai_messages("sys", h, chat) == to_openai_messages("sys", h)
        assert to_responses_input(h, items) == to_responses_input(h)


def test_a_message_is_converted_once_and_again_when_it_changed() -> None:
    """Chat completions and Responses through their models' build_params: an unchanged message's
    items are the very objects of the last call (so BodyEncoder reuses their JSON too); a message
    whose content grew in place is converted again."""
    h: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    _change(h, "turn")
    for model, key in ((OpenAICompatModel("m", base_url="http://127.0.0.1:1/v1", api_key="k"), "messages"),
                       (OpenAIResponsesModel("m", base_url="http://127.0.0.1:1/v1", api_key="k"), "input")):
        first = model.build_params(ModelRequest(messages=h, system="sys", tools=[]))[key]
        again = model.build_params(ModelRequest(messages=h, system="sys", tools=[]))[key]
        assert again == first and all(a is b for a, b in zip(again, first, strict=True) if a.get("role") != "system")
        h[0]["content"].append({"type": "text", "text": "more"})
        changed = model.build_params(ModelRequest(messages=h, system="sys", tools=[]))[key]
        user = next(i for i, m in enumerate(changed) if m.get("role") == "user")
        assert changed[user] is not first[user] and "more" in json.dumps(changed[user])
        assert changed[user + 1:] == first[user + 1:] and all(a is b for a, b in zip(changed[user + 1:], first[user + 1:], strict=True))
        del h[0]["content"][-1]
