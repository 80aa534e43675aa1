"""The request body encoder (models.http.BodyEncoder) reuses each message's JSON from turn to
turn: its bytes must be json.dumps's bytes for the whole body, every turn, whatever changed. The
OpenAI shapes convert each message once the same way (PerMessage): what they send must be a fresh
conversion of the whole history, every turn."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.blocks import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, message_to_wire
from loopwright.history import History, frozen_message, thawed
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
    rest = {**rest, "system": "sys", "tools": [{"name": "Read"}]}  # (a drawn "system": None must not take its place)
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


def _change(h: History, change: str | None) -> None:
    """One step of a run's history: a turn appended, or one of History's named rewrites."""
    if change == "turn":
        k = len(h)
        h.append({"role": "assistant", "content": [{"type": "text", "text": f"t{k}"},
                                                   {"type": "tool_use", "id": f"u{k}", "name": "Read", "input": {"k": k}}]})
        h.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"u{k}", "content": "x" * k}]})
    elif change == "replace_last" and h:  # (hooks' context, @-mentions: the last message gains blocks)
        last = h[-1]
        content = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
        h.replace_last({**last, "content": [*content, {"type": "text", "text": "added"}]})
    elif change == "replace_all" and h:  # (compaction: a new first message, the rest kept)
        h.replace_all([{**h[0], "content": "replaced"}, *h[1:]])
    elif change == "drop" and len(h) > 1:  # (a paused turn's partial answer, sent back and dropped)
        h.drop_last()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["turn", "replace_last", "replace_all", "drop"]), max_size=10))
def test_the_openai_shapes_send_a_fresh_conversion_turn_after_turn(changes: list[str]) -> None:
    chat, items = PerMessage(chat_messages), PerMessage(responses_items)
    h = History([{"role": "user", "content": "go"}])
    for change in [None, *changes]:
        _change(h, change)
        assert to_openai_messages("sys", h, chat) == to_openai_messages("sys", h)
        assert to_responses_input(h, items) == to_responses_input(h)


def test_a_message_is_converted_once_and_again_when_it_changed() -> None:
    """Chat completions and Responses through their models' build_params: an unchanged message's
    items are the very objects of the last call (so BodyEncoder reuses their JSON too); a message
    a rewrite replaced is converted again."""
    h = History([{"role": "user", "content": [{"type": "text", "text": "go"}]}])
    _change(h, "turn")
    for model, key in ((OpenAICompatModel("m", base_url="http://127.0.0.1:1/v1", api_key="k"), "messages"),
                       (OpenAIResponsesModel("m", base_url="http://127.0.0.1:1/v1", api_key="k"), "input")):
        first = model.build_params(ModelRequest(messages=h, system="sys", tools=[]))[key]
        again = model.build_params(ModelRequest(messages=h, system="sys", tools=[]))[key]
        assert again == first and all(a is b for a, b in zip(again, first, strict=True) if a.get("role") != "system")
        before = list(h)
        h.replace_all([{**h[0], "content": [*h[0]["content"], {"type": "text", "text": "more"}]}, *h[1:]])
        changed = model.build_params(ModelRequest(messages=h, system="sys", tools=[]))[key]
        user = next(i for i, m in enumerate(changed) if m.get("role") == "user")
        assert changed[user] is not first[user] and "more" in json.dumps(changed[user])
        assert changed[user + 1:] == first[user + 1:] and all(a is b for a, b in zip(changed[user + 1:], first[user + 1:], strict=True))
        h.replace_all(before)


# --- the precondition is the type's: History (loopwright/history.py) --------------------------

rewrites = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(["user", "assistant"]), st.lists(st.one_of(
        st.dictionaries(st.text(max_size=3), json_values, max_size=3),
        st.just({"cache_control": {"type": "ephemeral"}}),  # an inherited breakpoint (the provider strips it)
        st.just({"type": "openai_reasoning", "id": "r"})), max_size=3)),  # another provider's block (not sent)
    st.tuples(st.just("extend"), st.integers(1, 3), st.text(max_size=4)),
    st.tuples(st.just("replace_last"), st.text(max_size=4)),
    st.tuples(st.just("drop_last")),
    st.tuples(st.just("replace_all"), st.integers(-1, 4), st.text(max_size=4)),
)


def _apply(h: History, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "append":
        h.append({"role": op[1], "content": [{"type": "text", "text": "b", **blk} for blk in op[2]]})
    elif kind == "extend":
        h.extend({"role": "user", "content": f"{op[2]}{k}"} for k in range(op[1]))
    elif kind == "replace_last" and h:
        h.replace_last({**h[-1], "content": [{"type": "text", "text": op[1]}]})
    elif kind == "replace_all" and op[1] < 0:  # the first message rewritten, the rest kept (same length)
        h.replace_all([{"role": "user", "content": op[2]}, *h[1:]])
    elif kind == "drop_last" and h:
        h.drop_last()
    elif kind == "replace_all":  # a summary first, then the last turns kept (compaction's shape)
        kept = h[len(h) - op[1]:] if op[1] else []
        h.replace_all([{"role": "user", "content": f"summary {op[2]}"}, *kept])


def _fresh_body(h: list[Any], system: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """What a provider made of a copy of h that nothing has seen: the body from scratch."""
    plain = thawed(list(h))
    return AnthropicModel("claude-sonnet-4-5", api_key="k").build_params(ModelRequest(messages=plain, system=system,
                                                                                       tools=tools))


# Edits in place: of a message already in the History (each must be refused: the type's rule), and
# of the caller's own tool definitions (a plain list the provider must not take as unchanged while
# it is the same object of the same length, issue 41).
mutations = st.one_of(
    st.tuples(st.just("mutate"), st.sampled_from(["set", "update", "pop", "append", "block", "input", "nested",
                                                    "setdefault", "extend", "sort", "iadd", "ior"]), st.integers(0, 9)),
    st.tuples(st.just("tools"), st.sampled_from(["replace", "edit", "add", "new"]), st.text(max_size=3)),
)


def _attempt(h: History, how: str, k: int) -> None:
    """One in-place edit of a message already in h: refused with a TypeError, h unchanged."""
    m = h[k % len(h)]
    content = m["content"]
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    tool_inputs = [b["input"] for b in blocks if isinstance(b.get("input"), dict)]
    edits: dict[str, Any] = {
        "set": lambda: m.__setitem__("content", "x"), "update": lambda: m.update(role="user"),
        "pop": lambda: m.pop("content"), "setdefault": lambda: m.setdefault("extra", 1),
        "ior": lambda: m.__ior__({"role": "user"}),
        "append": lambda: content.append({"type": "text", "text": "x"}) if isinstance(content, list) else m.clear(),
        "extend": lambda: content.extend([]) if isinstance(content, list) else m.popitem(),
        "sort": lambda: content.sort() if isinstance(content, list) else m.clear(),
        "iadd": lambda: content.__iadd__([]) if isinstance(content, list) else m.clear(),
        "block": lambda: blocks[0].__setitem__("text", "x") if blocks else m.clear(),
        "input": lambda: tool_inputs[0].__setitem__("k", -1) if tool_inputs else m.clear(),
        "nested": lambda: (blocks[0].get("cache_control") or blocks[0]).update(x=1) if blocks else m.clear(),
    }
    before = json.dumps(h)
    with pytest.raises(TypeError, match="append-only"):
        edits[how]()
    assert json.dumps(h) == before


def _edit_tools(tools: list[dict[str, Any]], how: str, word: str) -> list[dict[str, Any]]:
    """The caller's tool definitions edited in place (the same list, mostly of the same length)."""
    if how == "replace":  # an item replaced: the same list, the same length
        tools[0] = {**tools[0], "description": f"read {word}"}
    elif how == "edit":  # a definition's schema edited: the same list, the same length, the same dicts
        tools[-1]["input_schema"]["properties"] = {"p": {"type": "string", "description": word}}
    elif how == "add":
        tools.append({"name": f"T{len(tools)}", "description": word, "input_schema": {"type": "object"}})
    else:  # a new list
        tools = [{**t, "description": f"new {word}"} for t in tools]
    return tools


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(rewrites, mutations), max_size=16))
def test_appends_and_rewrites_in_any_order_send_the_body_encoded_from_scratch(ops: list[tuple[Any, ...]]) -> None:
    """A run's History through one Anthropic model and its body encoder, and through the OpenAI
    chat model, call after call, with appends, every named rewrite, attempted in-place edits of
    the history and in-place edits of the caller's tool definitions interleaved: each request's
    bytes are the bytes of the same history and tools encoded from scratch (a fresh model,
    json.dumps of the whole body), and the OpenAI shapes' cached conversions equal a fresh
    conversion."""
    model = AnthropicModel("claude-sonnet-4-5", api_key="k")
    chat_model = OpenAICompatModel("m", base_url="http://127.0.0.1:1/v1", api_key="k")
    chat, items = PerMessage(chat_messages), PerMessage(responses_items)
    tools = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]
    h = History([{"role": "user", "content": [{"type": "text", "text": "go"}]}])
    for op in [None, *ops]:
        if op is not None and op[0] == "mutate":
            if h:
                _attempt(h, op[1], op[2])
        elif op is not None and op[0] == "tools":
            tools = _edit_tools(tools, op[1], op[2])
        elif op is not None:
            _apply(h, op)
        if not h:
            continue
        body = {**model.build_params(ModelRequest(messages=h, system="sys", tools=tools)), "stream": True}
        fresh = {**_fresh_body(h, "sys", copy.deepcopy(tools)), "stream": True}
        assert model._encoder.encode(body) == _plain(fresh)
        sent = chat_model.build_params(ModelRequest(messages=h, system="sys", tools=tools))
        anew = OpenAICompatModel("m", base_url="http://127.0.0.1:1/v1", api_key="k").build_params(
            ModelRequest(messages=thawed(list(h)), system="sys", tools=copy.deepcopy(tools)))
        assert chat_model._encoder.encode(sent) == _plain(anew)
        assert to_openai_messages("sys", h, chat) == to_openai_messages("sys", thawed(list(h)))
        assert to_responses_input(h, items) == to_responses_input(thawed(list(h)))


def test_a_history_refuses_every_in_place_change() -> None:
    """Nothing already in a History changes except through its named rewrites: the list, a
    message, its content, a block and a tool's input all refuse, so no cache can be stale."""
    h = History([{"role": "user", "content": [{"type": "text", "text": "go"}]},
                 {"role": "assistant", "content": [{"type": "tool_use", "id": "u", "name": "T", "input": {"a": [1]}}]}])
    enc = BodyEncoder()
    before = enc.encode({"messages": h})
    attempts = [
        lambda: h.__setitem__(0, {"role": "user", "content": "x"}), lambda: h.__delitem__(0), lambda: h.pop(),
        lambda: h.insert(0, {}), lambda: h.remove(h[0]), lambda: h.clear(), lambda: h.sort(), lambda: h.reverse(),
        lambda: h[0].__setitem__("content", "x"), lambda: h[0].update(content="x"), lambda: h[0].pop("content"),
        lambda: h[0]["content"].append({"type": "text", "text": "x"}), lambda: h[0]["content"].__setitem__(0, {}),
        lambda: h[0]["content"][0].__setitem__("text", "x"), lambda: h[1]["content"][0]["input"].__setitem__("a", 2),
        lambda: h[1]["content"][0]["input"]["a"].append(2),
    ]
    for attempt in attempts:
        with pytest.raises(TypeError, match="append-only"):
            attempt()
    assert enc.encode({"messages": h}) == before == _plain({"messages": h})
    # a message given to append is copied: the caller's dict stays the caller's
    mine = {"role": "user", "content": [{"type": "text", "text": "mine"}]}
    h.append(mine)
    mine["content"].append({"type": "text", "text": "later"})
    assert h[-1]["content"] == [{"type": "text", "text": "mine"}]
    # copies are the caller's to edit; reading is a list's and a dict's
    copied = copy.deepcopy(h)
    copied[0]["content"].append({"type": "text", "text": "x"})
    assert type(copied) is list and len(h[0]["content"]) == 1 and isinstance(h, list) and isinstance(h[0], dict)
    assert json.loads(json.dumps(h)) == thawed(list(h))
    generation = h.generation
    h.replace_last({"role": "user", "content": "y"})
    h.drop_last()
    h.replace_all(list(h))
    assert h.generation == generation + 3


def test_a_message_of_blocks_is_kept_read_only_to_its_last_input() -> None:
    """frozen_message (the loop's two appends a turn) is the blocks' wire message, read-only to a
    tool's nested input, and shares nothing with the blocks: editing them afterwards (a handler
    given its input) changes neither the message nor the body encoded from it."""
    nested = {"path": "a", "opts": {"flags": ["x"]}}
    blocks: list[Any] = [TextBlock("t", {"citations": [{"n": 1}]}), ToolUseBlock("u", "Read", nested),
                         ToolResultBlock("u", [TextBlock("r"), ImageBlock({"type": "url", "url": "http://x"})], True)]
    m = frozen_message("assistant", blocks)
    assert m == message_to_wire("assistant", blocks)
    h = History([{"role": "user", "content": "go"}, m])
    assert h[-1] is m  # (already read-only: appended as it is, not copied again)
    enc = BodyEncoder()
    before = enc.encode({"messages": h})
    nested["opts"]["flags"].append("y")
    blocks[0].extra["citations"].append({"n": 2})
    assert enc.encode({"messages": h}) == before == _plain({"messages": thawed(list(h))})
    for attempt in (lambda: m["content"][1]["input"]["opts"]["flags"].append("z"),
                    lambda: m["content"][0]["citations"][0].__setitem__("n", 3),
                    lambda: m["content"][2]["content"][1]["source"].__setitem__("url", "y"),
                    lambda: m["content"].append({})):
        with pytest.raises(TypeError, match="append-only"):
            attempt()


def test_a_plain_list_is_never_remembered() -> None:
    """Only frozen messages are cached: a plain list edited in place between calls is encoded anew."""
    enc = BodyEncoder()
    h: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    enc.encode({"messages": h})
    h[0]["content"][0]["text"] = "changed"
    assert enc.encode({"messages": h}) == _plain({"messages": h})
    assert not enc._json._known
