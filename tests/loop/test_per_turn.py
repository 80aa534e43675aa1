"""Per-turn work cut in issue 29 must give what it gave before: the forecast's last assistant
message found from the end, ToolContext.for_call against dataclasses.replace, and lw.run's
result never formatted (asyncio.run's end used to repr it: the whole history, every run)."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import loopwright as lw
from loopwright.context import AutoCompactor
from loopwright.tools.base import ToolContext
from loopwright.usage import CallUsage
from tests.helpers import text, use


@given(st.lists(st.sampled_from(["user", "assistant"]), max_size=12), st.booleans())
def test_the_forecast_is_the_one_a_scan_of_the_whole_history_gives(roles: list[str], called: bool) -> None:
    h: list[Any] = [{"role": r, "content": [{"type": "text", "text": r * (i + 1)}]} for i, r in enumerate(roles)]
    calls = [CallUsage(1000, 50, 0, 0, 0.0)] if called else []
    last_a = max((i for i, m in enumerate(h) if m["role"] == "assistant"), default=None)
    if not calls or last_a is None:
        expected = 100 // 4 + lw_estimate(h)
    else:
        expected = 1000 + 50 + lw_estimate(h[last_a + 1:])
    assert AutoCompactor.forecast(calls, h, 100) == expected


def lw_estimate(h: list[Any]) -> int:
    from loopwright.tokens import estimate_tokens

    return estimate_tokens(h)


def test_for_call_is_replace_with_the_call_s_id_and_siblings() -> None:
    ctx = ToolContext(Path("/x"), session_id="s", env={"A": "1"}, add_dirs=[Path("/y")], siblings=3)
    mine, theirs = ctx.for_call("toolu_1", 2), replace(ctx, tool_use_id="toolu_1", siblings=2)
    assert type(mine) is ToolContext and mine is not ctx
    assert all(getattr(mine, f.name) == getattr(theirs, f.name) for f in fields(ToolContext))
    assert mine.state is ctx.state and mine.env is ctx.env  # shared, as replace shares them
    assert (ctx.tool_use_id, ctx.siblings) == ("", 3)  # the run's own context is untouched


def test_lw_run_never_formats_its_result(monkeypatch: pytest.MonkeyPatch) -> None:
    formatted: list[int] = []

    def counting_repr(self: Any) -> str:
        formatted.append(1)
        return "ResultMessage(...)"

    monkeypatch.setattr(lw.ResultMessage, "__repr__", counting_repr)
    tool = lw.Tool("noop", "n", {"type": "object"}, lambda x: "ok")
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "noop")], [text("done")]]), tools=[tool]))
    assert r.subtype == "success" and r.num_turns == 1
    assert formatted == []
