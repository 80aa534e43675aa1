"""The model catalog (models/catalog.py): one table, one id normalisation, one cost formula,
used by every place that prices a call or sizes a context."""

from __future__ import annotations

import pytest

import loopwright as lw
from loopwright.context import default_context_window
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.catalog import (
    ALIASES,
    CATALOG,
    PRICES,
    UNKNOWN_MAX_OUTPUT,
    context_window,
    cost_of,
    max_output,
    normalize,
    price_for,
    resolve_alias,
)
from loopwright.models.openai_compat import OpenAICompatModel
from loopwright.usage import Price, Usage


@pytest.mark.parametrize("spelling", [
    "claude-opus-4-6", "claude-opus-4.6", "Claude-Opus-4.6", "anthropic:claude-opus-4-6", "anthropic/claude-opus-4.6",
    "us.anthropic.claude-opus-4-6-v1:0", "claude-opus-4-6@20260101", "claude-opus-4-6-20260101",
])
def test_every_spelling_of_an_id_finds_the_same_row(spelling: str) -> None:
    assert normalize(spelling).startswith("claude-opus-4-6")
    assert price_for(spelling) == PRICES["claude-opus-4-6"]
    assert context_window(spelling) == 1_000_000 == default_context_window(spelling)
    assert max_output(spelling) == 16_384


def test_prices_and_windows_agree_on_normalisation() -> None:
    """Before: the price table replaced every '.' and the window table only Claude's, so one id
    could be priced and not sized. Now both go through normalize()."""
    for model in ("gpt-4.1-mini", "openai:gpt-4.1", "claude-3.5-haiku-latest", "anthropic/claude-haiku-4.5"):
        key = normalize(model)
        assert context_window(model) == context_window(key) and price_for(model) == price_for(key)
    assert context_window("gpt-4.1-mini") == 1_047_576 and context_window("openai:gpt-5") == 400_000
    assert price_for("claude-3.5-haiku-latest") == PRICES["claude-3-5-haiku"]


def test_longest_prefix_per_field() -> None:
    assert price_for("claude-opus-4-1-20250805") == Price.from_input(15, 75)
    assert price_for("claude-opus-4-5") == Price.from_input(5, 25)
    assert context_window("claude-opus-4-5") == 200_000  # the "claude" row's default
    assert max_output("claude-3-5-sonnet-20241022") == 8_192 and max_output("claude-3-haiku-20240307") == 4_096
    assert max_output("gpt-4o") == 16_384 and max_output("smollm2") is None
    assert price_for("gpt-4o") is None and context_window("scripted") is None
    assert AnthropicModel("claude-3-haiku-20240307", api_key="k").max_tokens == 4_096
    assert OpenAICompatModel("gpt-4o", api_key="k").max_tokens == 16_384  # sent on every call (issue 27)
    assert OpenAICompatModel("smollm2", base_url="http://127.0.0.1:1").max_tokens == UNKNOWN_MAX_OUTPUT


def test_cost_of_prefers_the_callers_prices() -> None:
    u = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_of(u, "claude-sonnet-4-5") == pytest.approx(3 + 15)
    own = {"claude-sonnet-4": Price.from_input(1, 1)}
    assert cost_of(u, "claude-sonnet-4.5", own) == pytest.approx(2)
    assert cost_of(u, "my-local-model") is None
    assert cost_of(u, "my-local-model", {"my-local": Price.from_input(0.5, 0.5)}) == pytest.approx(1)


def test_aliases() -> None:
    assert resolve_alias("Sonnet") == ALIASES["sonnet"] and resolve_alias("claude-x") == "claude-x"
    assert all(price_for(m) is not None for m in ALIASES.values())
    from loopwright.agents import MODEL_ALIASES

    assert MODEL_ALIASES is ALIASES


def test_every_price_row_is_in_the_catalog() -> None:
    assert price_for("claude-haiku-4-5") == Price.from_input(1, 5)
    assert set(PRICES) <= set(CATALOG)


def test_a_run_is_charged_through_the_catalog() -> None:
    """The loop charges each call with cost_of: a scripted model that reports a Claude id and
    usage but no cost of its own is priced from the table."""
    class Priced(lw.ScriptedModel):
        async def stream(self, request: lw.ModelRequest):  # type: ignore[no-untyped-def,override]
            async for ev in super().stream(request):
                if isinstance(ev, lw.ModelResponse):
                    ev.cost_usd, ev.model = None, "claude-haiku-4.5"
                    ev.usage = Usage(input_tokens=100_000, output_tokens=10_000)
                yield ev

    r = lw.run("hi", lw.AgentOptions(model=Priced([[{"type": "text", "text": "ok"}]])))
    assert r.total_cost_usd == pytest.approx(0.1 + 0.05)


def test_provider_classes_have_docstrings() -> None:
    for cls in (AnthropicModel, OpenAICompatModel):
        assert cls.__doc__ and cls.__doc__.startswith(f"`{cls.__name__}(")


@pytest.mark.parametrize("alias", ["sonnet", "opus", "Haiku"])
def test_an_alias_names_its_model_in_python_as_on_the_command_line(alias: str) -> None:
    """`AgentOptions(model="sonnet")` (the Agent SDK's `ClaudeAgentOptions(model="sonnet")`, ported
    by renaming) was a ValueError ("names no provider: write 'openai:sonnet'"), while `--model
    sonnet` ran claude-sonnet-5-5: the request names the model the alias stands for."""
    import loopwright as lw
    from loopwright.testing import ScriptedServer

    with ScriptedServer([[{"type": "text", "text": "ok"}]]) as srv:
        r = lw.run("hi", lw.AgentOptions(model=alias, base_url=srv.url, api_key="test"))
        assert r.subtype == "success", r.errors
        assert [q.body["model"] for q in srv.loop_requests] == [ALIASES[alias.lower()]]
    with pytest.raises(ValueError, match="names no provider"):  # a name that is no alias still says what to write
        lw.AgentOptions(model="sonet")


@pytest.mark.parametrize("alias,var", [("sonnet", "ANTHROPIC_DEFAULT_SONNET_MODEL"),
                                       ("Opus", "ANTHROPIC_DEFAULT_OPUS_MODEL"),
                                       ("haiku", "ANTHROPIC_DEFAULT_HAIKU_MODEL")])
def test_claude_codes_alias_variables_name_the_aliases_model(alias: str, var: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's ANTHROPIC_DEFAULT_{SONNET,OPUS,HAIKU}_MODEL choose the model an alias names
    (a gateway's or Bedrock's id, a pinned version): set, `--model sonnet` (and an agent file's
    `model: sonnet`) still ran claude-sonnet-5-5, the variable passed over without a word."""
    import loopwright as lw
    from loopwright.testing import ScriptedServer

    monkeypatch.setenv(var, "claude-sonnet-4-5")
    assert resolve_alias(alias) == "claude-sonnet-4-5" and resolve_alias("fable") == ALIASES["fable"]
    with ScriptedServer([[{"type": "text", "text": "ok"}]]) as srv:
        r = lw.run("hi", lw.AgentOptions(model=alias, base_url=srv.url, api_key="test"))
        assert r.subtype == "success", r.errors
        assert [q.body["model"] for q in srv.loop_requests] == ["claude-sonnet-4-5"]
    monkeypatch.setenv(var, " ")  # (blank: the alias's own model)
    assert resolve_alias(alias) == ALIASES[alias.lower()]


def test_a_subagents_alias_is_resolved_as_the_run_resolves_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import loopwright as lw
    from loopwright.testing import ScriptedServer
    from tests.helpers import use

    monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5")
    agents = {"quick": lw.AgentDefinition(description="quick", prompt="be quick", model="haiku")}
    with ScriptedServer([[use("a1", "Agent", subagent_type="quick", description="q", prompt="go")],
                         [{"type": "text", "text": "sub done"}], [{"type": "text", "text": "ok"}]]) as srv:
        r = lw.run("hi", lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="test", agents=agents,
                                         permission_mode="bypassPermissions"))
        assert r.subtype == "success", r.errors
        assert [q.body["model"] for q in srv.requests] == ["claude-sonnet-4-5", "claude-haiku-4-5",
                                                            "claude-sonnet-4-5"]
