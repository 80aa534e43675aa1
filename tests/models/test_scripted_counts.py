"""The scripted model's input token counts (n_k, seed Def 5.1) are those of the request it was
sent, call after call: it counts a history incrementally and the tools once, and neither may be
taken as unchanged when a History was rewritten (replace_last, drop_last, replace_all: the same
list, maybe of the same length) or a caller's plain tool list was edited in place (issue 41)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.history import History
from loopwright.models.base import ModelRequest, ModelResponse
from loopwright.models.scripted import ScriptedModel
from loopwright.tokens import estimate_tokens
from tests.models.test_body_encoder import _apply, _edit_tools, rewrites

tool_edits = st.tuples(st.just("tools"), st.sampled_from(["replace", "edit", "add", "new"]), st.text(max_size=3))


def _input_tokens(model: ScriptedModel, request: ModelRequest) -> int:
    async def call() -> int:
        async for ev in model.stream(request):
            if isinstance(ev, ModelResponse):
                return ev.usage.input_tokens
        raise AssertionError("no response")

    return asyncio.run(call())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(rewrites, tool_edits), max_size=14))
def test_each_call_counts_the_request_it_was_sent(ops: list[tuple[Any, ...]]) -> None:
    model = ScriptedModel(lambda h: [{"type": "text", "text": "ok"}])
    tools = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]
    h = History([{"role": "user", "content": [{"type": "text", "text": "go"}]}])
    for op in [None, *ops]:
        if op is not None and op[0] == "tools":
            tools = _edit_tools(tools, op[1], op[2])
        elif op is not None:
            _apply(h, op)
        if not h:
            continue
        expected = estimate_tokens("sys") + estimate_tokens(copy.deepcopy(tools)) + sum(estimate_tokens(m) for m in h)
        assert _input_tokens(model, ModelRequest("sys", tools, h)) == expected


def test_a_paused_turn_dropped_and_answered_again_is_counted_as_sent() -> None:
    """A pause_turn's partial answer is sent back, dropped, and the whole answer appended: the
    history is as long as when the partial was counted, and the whole answer is what is sent."""
    model = ScriptedModel(lambda h: [{"type": "text", "text": "ok"}])
    h = History([{"role": "user", "content": "go"}])
    _input_tokens(model, ModelRequest(None, [], h))
    h.append({"role": "assistant", "content": [{"type": "text", "text": "part"}]})
    _input_tokens(model, ModelRequest(None, [], h))
    h.drop_last()
    h.append({"role": "assistant", "content": [{"type": "text", "text": "the whole answer, much longer " * 20}]})
    assert _input_tokens(model, ModelRequest(None, [], h)) == sum(estimate_tokens(m) for m in h)


def test_one_turns_blocks_given_as_the_list_of_turns_is_a_type_error_saying_what_to_write() -> None:
    """`ScriptedModel([{"type": "text", ...}])` (the README writes `[[...]]`) played an empty answer,
    then ended the run "scripted model has no turn 2": a block where a turn goes is refused at once."""
    import loopwright as lw

    with pytest.raises(TypeError, match=r"turn 1 is a content block \(type 'text'\), not a turn: "
                                        r"write ScriptedModel\(\[\[\{\.\.\.\}\]\]\)"):
        lw.ScriptedModel([{"type": "text", "text": "ok"}])
    lw.ScriptedModel([{"content": [{"type": "text", "text": "ok"}]}, [{"type": "text", "text": "ok"}]])  # turns
