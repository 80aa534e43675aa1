"""A server's usage object as an attacker or a broken proxy writes it: a negative count made the
run's cost negative, so --max-budget-usd (Budget) never tripped for the rest of the run, and a
count that is no number ended the run with a bare ValueError / TypeError, its answer lost. A
count is a non-negative integer: anything else counts as 0 (never lowering what was spent)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import loopwright as lw
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.openai_compat import OpenAICompatModel
from loopwright.testing import Fault, ScriptedServer
from tests.helpers import text

ODD = [-100_000_000, "abc", [1], float("inf"), -1.5]


def anthropic_body(count: Any) -> str:
    return json.dumps({"id": "m1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                       "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn",
                       "usage": {"input_tokens": count, "output_tokens": 10, "cache_read_input_tokens": count}})


def chat_body(count: Any) -> str:
    return json.dumps({"id": "c1", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": count, "completion_tokens": count, "prompt_tokens_details": {"cached_tokens": count}}})


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("count", ODD, ids=["negative", "text", "list", "inf", "negative-float"])
def test_an_odd_usage_count_is_zero_and_the_answer_kept(provider: str, count: Any) -> None:
    with ScriptedServer([[text("x")]]) as srv:
        body = anthropic_body(count) if provider == "anthropic" else chat_body(count)
        srv.inject(Fault(raw_body=body.replace("Infinity", "1e999"), content_type="application/json"))
        model: lw.Model = (AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="k") if provider == "anthropic"
                           else OpenAICompatModel("m", base_url=srv.openai_url))
        r = lw.run("go", lw.AgentOptions(model=model, cwd=".", max_retries=0, max_budget_usd=1.0,
                                         prices={model.name: lw.Price(3.0, 15.0, 3.75, 6.0, 0.3)}))
    assert r.subtype == "success" and r.result == "hello", r.errors
    u = r.usage
    assert min(u.input_tokens, u.output_tokens, u.cache_read_input_tokens) >= 0, u
    assert r.total_cost_usd >= 0, r.total_cost_usd
