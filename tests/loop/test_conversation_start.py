"""A conversation's next run (LoopwrightClient: one run per prompt) continues the History of the
run before it (History.continuing) instead of starting over on the whole conversation: Inv is
checked on what was appended after what that run verified (never less), and the first call's
input is forecast from the conversation's last call. What a History keeps of its first n
messages (History.note) goes when a rewrite changes one of them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
import loopwright.invariant as inv
from loopwright.autocompact import AutoCompactor
from loopwright.history import History
from loopwright.invariant import InvariantChecker, InvariantViolation
from loopwright.tokens import estimate_tokens
from loopwright.usage import CallUsage, Usage


def turns(n: int) -> list[dict[str, Any]]:
    h: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    for k in range(n):
        h.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k:04d}", "name": "Read",
                                                    "input": {}}]})
        h.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k:04d}",
                                               "content": f"out {k}"}]})
    return h


def prompt(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


# --- History: facts of a prefix -------------------------------------------------------------------

def test_a_rewrite_drops_the_facts_of_the_messages_it_changes() -> None:
    h = History(turns(3))  # 7 messages
    h.note("all", 7, "a")
    h.note("head", 3, "b")
    h.append(prompt("more"))
    assert h.fact("all") == (7, "a")  # appending changes none of them
    h.replace_last(prompt("more, with context"))  # message 7
    assert h.fact("all") == (7, "a") and h.fact("head") == (3, "b")
    h.drop_last()
    h.drop_last()  # message 6: the last of "all"
    assert h.fact("all") is None and h.fact("head") == (3, "b")
    h.replace_all(turns(3))
    assert h.fact("head") is None
    with pytest.raises(ValueError):
        h.note("past the end", 8, "c")


def test_a_continuing_history_keeps_the_facts_of_the_messages_it_keeps() -> None:
    h = History(turns(3))
    h.note("all", 7, "a")
    h.note("head", 3, "b")
    nxt = History.continuing(h, 5, [prompt("joined")])
    assert list(nxt[:5]) == list(h[:5]) and all(a is b for a, b in zip(nxt, h[:5], strict=False))
    assert nxt[5] == prompt("joined") and len(nxt) == 6
    assert nxt.fact("head") == (3, "b") and nxt.fact("all") is None
    assert h.fact("head") is None  # moved: a conversation keeps them once, not once per run
    h.note("head", 3, "c")
    nxt.replace_all([prompt("x")])
    assert h.fact("head") == (3, "c") and nxt.fact("head") is None  # two histories: each its own facts


# --- Inv: proved once, checked on what is appended -------------------------------------------------

def test_the_next_run_checks_inv_only_on_what_was_appended(monkeypatch: pytest.MonkeyPatch) -> None:
    h = History([*turns(50), {"role": "assistant", "content": [{"type": "text", "text": "done"}]}])
    first = InvariantChecker()
    with pytest.raises(InvariantViolation):
        first.check(h)  # (ends with an assistant message: the run checked it before its last call)
    first = InvariantChecker()
    first.check(History(h[:-1]))
    h2 = History(h[:-1])
    first.check(h2)
    first.note(h2)
    h2.append(h[-1])
    nxt = History.continuing(h2, len(h2), [prompt("next")])
    walked: list[int] = []
    real = inv._assistant_uses
    monkeypatch.setattr(inv, "_assistant_uses", lambda i, c, p: walked.append(i) or real(i, c, p))
    checker = InvariantChecker()
    checker.check(nxt)
    assert walked == [101]  # the closing answer only, not the 50 turns before it
    assert checker.tool_ids == {f"toolu_{k:04d}" for k in range(50)}  # (the ids it knows: the whole history's)


@pytest.mark.parametrize("bad", [
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0000", "content": "again"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_x", "name": "Read", "input": {}}]},
    {"role": "system", "content": "x"},
])
def test_what_is_appended_to_a_proved_history_is_still_checked(bad: dict[str, Any]) -> None:
    h = History(turns(5))
    c = InvariantChecker()
    c.check(h)
    c.note(h)
    with pytest.raises(InvariantViolation):
        InvariantChecker().check(History.continuing(h, len(h), [{"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_0100", "name": "Read", "input": {}}]}, prompt("no result for it")]))
    with pytest.raises(InvariantViolation):
        InvariantChecker().check(History.continuing(h, len(h), [bad]))


def test_a_client_conversation_continues_each_runs_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = {"k": 0}

    def model(h: list[Any]) -> dict[str, Any]:
        last = h[-1]["content"]
        if isinstance(last, list) and last and last[0].get("type") == "tool_result":
            return {"content": [{"type": "text", "text": "done"}]}
        state["k"] += 1
        return {"content": [{"type": "tool_use", "id": f"toolu_{state['k']:04d}", "name": "Read",
                             "input": {"file_path": "/x"}}]}

    read = lw.Tool("Read", "read", {"type": "object", "properties": {"file_path": {"type": "string"}}},
                   lambda i: "text", read_only=True)
    walked: list[int] = []
    real = inv._assistant_uses
    monkeypatch.setattr(inv, "_assistant_uses", lambda i, c, p: walked.append(i) or real(i, c, p))

    async def go() -> list[Any]:
        async with lw.LoopwrightClient(lw.AgentOptions(model=lw.ScriptedModel(model), tools=[read], cwd=tmp_path)) as c:
            for p in range(4):
                await c.query(f"prompt {p}")
                async for m in c.receive_response():
                    assert not isinstance(m, lw.ResultMessage) or m.subtype == "success"
            return c.results

    results = asyncio.run(go())
    assert [len(r.messages) for r in results] == [4, 8, 12, 16]
    assert all(isinstance(r.messages, History) for r in results)
    # what was proved is held once (by the last run's history: the next continues from it)
    assert [r.messages.fact("inv") is not None for r in results] == [False, False, False, True]  # type: ignore[attr-defined]
    # every assistant message was walked once in the whole conversation (a run's closing answer,
    # which no call of its run was sent, by the next run), not once per run after it
    assert walked == list(range(1, 15, 2))


# --- the first call's forecast ------------------------------------------------------------------

def test_the_first_forecast_of_a_run_is_the_conversations_last_call() -> None:
    h = History([*turns(2), {"role": "assistant", "content": [{"type": "text", "text": "done"}]}])
    c = AutoCompactor(1_000_000, 0.8, True, "model-a")
    calls = [CallUsage.of(Usage(input_tokens=50_000, output_tokens=700), 0.0, "model-a")]
    c.measured(calls, h, 1234)
    nxt = History.continuing(h, len(h), [prompt("next")])
    estimate = AutoCompactor.forecast([], list(nxt), 1234)  # (a plain list: an estimate of all)
    assert AutoCompactor.forecast([], nxt, 1234, "model-a") == 50_700 + estimate_tokens([prompt("next")])
    assert AutoCompactor.forecast([], nxt, 1234, "model-b") == estimate  # another model counts its own way
    assert AutoCompactor.forecast([], nxt, 99, "model-a") == AutoCompactor.forecast([], list(nxt), 99)  # other tools
    nxt.replace_all(list(nxt))  # compacted (or rewritten): nothing of it was counted
    assert AutoCompactor.forecast([], nxt, 1234, "model-a") == estimate


def test_a_conversation_near_its_window_is_compacted_before_the_next_runs_first_call(tmp_path: Path) -> None:
    """The last call counted 900k tokens of a 1M window (an estimate of the history says far
    less: images, a tokenizer that counts more): the next prompt compacts before it is sent."""
    sent: list[int] = []

    def model(h: list[Any]) -> dict[str, Any]:
        sent.append(len(h))
        return {"content": [{"type": "text", "text": "a summary" if "summar" in str(h[-1]) else "ok"}],
                "usage": {"input_tokens": 900_000, "output_tokens": 10}}

    options = lw.AgentOptions(model=lw.ScriptedModel(model), cwd=tmp_path, context_window=1_000_000)

    async def go() -> list[list[Any]]:
        seen: list[list[Any]] = []
        async with lw.LoopwrightClient(options) as c:
            for p in ("one", "two", "three"):
                await c.query(p)
                seen.append([m async for m in c.receive_response()])
        return seen

    runs = asyncio.run(go())
    boundaries = [[m for m in run if isinstance(m, lw.SystemMessage) and m.subtype == "compact_boundary"]
                  for run in runs]
    assert boundaries[0] == [] and boundaries[1] and boundaries[1][0].data["trigger"] == "auto"
    assert boundaries[1][0].data["forecast_tokens"] > 900_000
