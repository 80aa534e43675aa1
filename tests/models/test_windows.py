"""Issue 27, items 1-2: a context window nobody told us. W learned from each server's own
error text and remembered per base URL and model; h compacted to fit (in chunks when h is
larger than W) and the same step retried, bounded, Inv kept; a clear error when even the
minimum cannot fit; W asked of the server before the first call (llama.cpp /props, vLLM
/v1/models, Ollama /api/show, LM Studio) and --context-window still overriding."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

import loopwright as lw
from loopwright.assemble import query
from loopwright.invariant import holds_final
from loopwright.loop import MAX_OVERFLOW_RETRIES
from loopwright.messages import ResultMessage, SystemMessage
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.base import ModelError, ModelRequest, ModelResponse
from loopwright.models.openai_compat import OpenAICompatModel
from loopwright.models.window import (
    Overflow,
    forget_all,
    from_lmstudio,
    from_ollama_show,
    known,
    parse_overflow,
)
from loopwright.testing import ScriptedServer
from loopwright.usage import Usage
from tests.helpers import text, use

TEXTS = {  # each server's own words (llama.cpp: tools/server/server-context.cpp of the vendored source)
    "anthropic": ("prompt is too long: 208310 tokens > 200000 maximum", Overflow(200000, 208310)),
    "openai": ("This model's maximum context length is 128000 tokens. However, your messages resulted in 130511 "
               "tokens. Please reduce the length of the messages.", Overflow(128000, 130511)),
    "responses": ("Your input exceeds the context window of this model. Please adjust your input and try again.",
                  Overflow(None, None)),
    "vllm": ("This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (1900 in the "
             "messages, 200 in the completion). Please reduce the length of the messages or completion.",
             Overflow(2048, 1900)),
    "vllm-new": ("'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is "
                 "2048 tokens and your request has 100 input tokens (4096 > 2048 - 100).", Overflow(2048, 100)),
    "vllm-decoder": ("The decoder prompt (length 3000) is longer than the maximum model length of 2048. Make sure "
                     "that `max_model_len` is no smaller than the number of text tokens.", Overflow(2048, 3000)),
    "llamacpp": ("request (2100 tokens) exceeds the available context size (2048 tokens), try increasing it",
                 Overflow(2048, 2100)),
    "lmstudio": ("Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded "
                 "with context length of only 4096 tokens, which is not enough.", Overflow(4096, None)),
}


@pytest.fixture(autouse=True)
def _fresh_windows() -> Any:
    forget_all()
    yield
    forget_all()


@pytest.mark.parametrize("server", sorted(TEXTS))
def test_each_servers_overflow_text_gives_w_and_n(server: str) -> None:
    message, want = TEXTS[server]
    assert parse_overflow(f"API error 400: invalid_request_error: {message}") == want


def test_other_errors_are_no_overflow() -> None:
    for message in ("Overloaded", "max_tokens: Field required", "rate limit: 30000 tokens per minute",
                    "messages: `tool_use` ids were found without `tool_result` blocks"):
        assert parse_overflow(message) is None


def big(n: int) -> str:
    return "".join(f"line {i:05d} of the file\n" for i in range(n))


def reader(size: int) -> lw.Tool:
    @lw.tool
    def read(path: str) -> str:
        """Read a file."""
        return big(size)

    return read


def grow_script(turns: int) -> list[Any]:
    return [*[[text(f"step {i}"), use(f"r{i}", "read", {"path": f"f{i}"})] for i in range(turns)], [text("all read")]]


def oa(srv: ScriptedServer, name: str = "local-model") -> OpenAICompatModel:
    return OpenAICompatModel(name, base_url=srv.openai_url, retry_base_delay=0.01)


def an(srv: ScriptedServer) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="k", retry_base_delay=0.01)


def run_all(prompt: str, options: lw.AgentOptions) -> list[Any]:
    import asyncio

    async def go() -> list[Any]:
        return [m async for m in query(prompt, options)]

    return asyncio.run(go())


@pytest.mark.parametrize("api,style", [("messages", "openai"), ("chat", "openai"), ("chat", "vllm"),
                                       ("chat", "llamacpp")])
def test_overflow_is_learned_compacted_and_the_same_step_retried(api: str, style: str) -> None:
    W = 3_000
    with ScriptedServer(grow_script(5), window=W, window_style=style) as srv:
        model = an(srv) if api == "messages" else oa(srv)
        if api == "chat":
            model.discovers_window = False  # told by nobody: only the error can say
        msgs = run_all("read them all", lw.AgentOptions(model=model, tools=[reader(200)], max_tokens=300))
        refused = [r for r in srv.requests if r.status == 400]
        loop_bodies = [r.body for r in srv.loop_requests if r.status == 200]
    r = msgs[-1]
    assert isinstance(r, ResultMessage) and r.subtype == "success", r.errors
    learned = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "context_window"]
    assert learned and learned[0].data["context_window"] == W and learned[0].data["source"] == "error"
    boundaries = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert boundaries and all(b.data["trigger"] in ("overflow", "auto") for b in boundaries)
    assert refused, "the server refused at least one request as over W"
    assert r.num_turns == 5 and r.result == "all read"  # every step was done, none skipped
    assert holds_final(r.messages) and known(model) == W  # Inv kept; W remembered for (base URL, model)
    assert all(b is not None for b in loop_bodies)


def test_compaction_summarises_in_chunks_when_h_is_larger_than_w() -> None:
    W = 2_000
    with ScriptedServer(grow_script(3), window=W) as srv:
        # a window the run believes is large: h grows far past W before the first refusal
        msgs = run_all("read", lw.AgentOptions(model=an(srv), tools=[reader(140)], max_tokens=200))
        side = [r for r in srv.requests if r.kind == "messages" and not r.loop_call and r.status == 200]
    r = msgs[-1]
    assert r.subtype == "success", r.errors
    [b, *_] = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert b.data["calls"] > 1 and len(side) >= b.data["calls"]  # one summarizing call per chunk, each fit W
    assert "summary_so_far" in side[1].body["messages"][0]["content"][0]["text"]


def test_the_minimum_that_cannot_fit_says_what_to_shrink() -> None:
    with ScriptedServer([[text("never")]], window=500) as srv:
        msgs = run_all("hi", lw.AgentOptions(model=an(srv), system_prompt=big(200)))
    r = msgs[-1]
    assert r.subtype == "error_during_execution" and holds_final(r.messages + [{"role": "assistant", "content": []}])
    error = r.errors[0]
    assert "context window of 500 tokens" in error and "system prompt takes about" in error
    assert "Shrink" in error and "llama-server -c" in error


class AlwaysOver:
    """A model whose every call with tools is over its window (the compaction calls fit)."""

    name = "claude-sonnet-4-6"

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        self.calls += 1
        if not request.tools:
            yield ModelResponse([lw.TextBlock("summary")], "end_turn", Usage(10, 5), self.name)
            return
        if self.calls == 1:
            yield ModelResponse([lw.ToolUseBlock("t1", "read", {"path": "x"})], "tool_use", Usage(10, 5), self.name)
            return
        raise ModelError("Anthropic API error 400 invalid_request_error: prompt is too long: 9000 tokens > 8000 "
                         "maximum", status=400)
        yield  # pragma: no cover


def test_retries_of_the_same_step_are_bounded() -> None:
    model = AlwaysOver()
    msgs = run_all("x", lw.AgentOptions(model=model, tools=[reader(5)]))
    r = msgs[-1]
    boundaries = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    # compacted down to the minimum (nothing left to summarize), then the clear error: never a loop
    assert r.subtype == "error_during_execution" and "context window of 8000 tokens" in r.errors[0]
    assert 1 <= len(boundaries) <= MAX_OVERFLOW_RETRIES and model.calls <= 2 * MAX_OVERFLOW_RETRIES + 2
    assert holds_final(r.messages + [{"role": "assistant", "content": []}])


# --- 2. discovery ------------------------------------------------------------------------------

@pytest.mark.parametrize("style,path", [("llamacpp", "/props"), ("vllm", "/v1/models")])
def test_the_window_is_asked_before_the_first_call_and_cached(style: str, path: str) -> None:
    with ScriptedServer(grow_script(4), window=2_500, window_style=style) as srv:
        opts = lw.AgentOptions(model=oa(srv), tools=[reader(150)], max_tokens=200)
        msgs = run_all("read", opts)
        probes = [r.path for r in srv.requests if r.method in ("GET",) or r.kind == "other"]
        refused = [r for r in srv.requests if r.status == 400]
        run_all("again", lw.AgentOptions(model=oa(srv), tools=[reader(150)], max_tokens=200))
        probes_after = [r.path for r in srv.requests if r.method == "GET" or r.kind == "other"]
    told = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "context_window"]
    assert told and told[0].data == {"context_window": 2_500, "source": "server"}
    assert path in probes and probes_after == probes  # the second run asked nobody: cached per base URL + model
    assert msgs[-1].subtype == "success" and not refused  # compacted before the window was ever exceeded
    assert any(isinstance(m, SystemMessage) and m.subtype == "compact_boundary" for m in msgs)


def test_vllm_max_tokens_is_lowered_to_what_the_window_leaves() -> None:
    with ScriptedServer([[text("ok")]], window=3_000, window_style="vllm") as srv:
        r = lw.run("hi", lw.AgentOptions(model=oa(srv)))  # the default 4096 alone is over W
        [call] = [q for q in srv.loop_requests]
    assert r.subtype == "success" and call.body["max_tokens"] < 3_000


def test_context_window_option_still_overrides() -> None:
    with ScriptedServer([[text("ok")]], window=2_500, window_style="llamacpp") as srv:
        msgs = run_all("hi", lw.AgentOptions(model=oa(srv), context_window=100_000))
        assert [r for r in srv.requests if r.method == "GET"] == []
    assert not any(isinstance(m, SystemMessage) and m.subtype == "context_window" for m in msgs)


def test_a_server_that_tells_nothing_is_left_alone() -> None:
    with ScriptedServer([[text("ok")]]) as srv:
        msgs = run_all("hi", lw.AgentOptions(model=oa(srv)))
    assert msgs[-1].subtype == "success"
    assert not any(isinstance(m, SystemMessage) and m.subtype == "context_window" for m in msgs)


def test_ollama_and_lmstudio_answers() -> None:
    # Ollama's /api/show: num_ctx in "parameters" when the Modelfile sets it, else Ollama's default
    assert from_ollama_show({"parameters": "temperature 0.7\nnum_ctx 8192", "model_info": {
        "llama.context_length": 131072}}) == 8192
    assert from_ollama_show({"parameters": "", "model_info": {"qwen2.context_length": 32768}}) == 4096
    assert from_ollama_show({"model_info": {"qwen2.context_length": 2048}}) == 2048
    assert from_ollama_show({"error": "model not found"}) is None
    # LM Studio's /api/v0/models/<id>: the loaded context, else the model's maximum
    assert from_lmstudio({"id": "m", "max_context_length": 32768, "loaded_context_length": 4096}) == 4096
    assert from_lmstudio({"id": "m", "max_context_length": 32768}) == 32768 and from_lmstudio([]) is None
