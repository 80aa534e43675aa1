"""Thm 3.4 against a model that answers in odd shapes and tools that fail, cancel themselves or hang
under an interrupt (issue 41's attack on the step loop): a tool_use id twice in one response,
stop_reason tool_use without a tool_use block, a response cut off at max_tokens in a tool call,
pause_turn (also without end), refusal, empty text. Inv holds on every request, on the history
the run ends with and on the transcript on disk, which holds the same history; and the session
resumes, its first request satisfying Inv too. Two shapes are known gaps, each an xfail below:
no content at all, and a tool_use id reused from an earlier turn."""

from __future__ import annotations

import asyncio
import copy
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.invariant import check, holds_final
from loopwright.sessions import get_session_messages

STOPS = [None, "end_turn", "tool_use", "max_tokens", "pause_turn", "refusal", "stop_sequence"]
block_st = st.one_of(
    st.tuples(st.just("text"), st.text(max_size=6)),
    # which id: a new one, the previous one of this response again (one of an earlier response:
    # test_an_id_reused_from_an_earlier_turn_is_sent_as_it_is_loaded)
    st.tuples(st.just("use"), st.sampled_from(["new", "again"]),
              st.sampled_from(["ok", "raise", "cancel", "hang"])),
)
# (no response without content: test_an_empty_answer_is_kept_as_it_is_loaded)
response_st = st.tuples(st.lists(block_st, min_size=1, max_size=4), st.sampled_from(STOPS))


def _tools(started: asyncio.Event) -> list[lw.Tool]:
    """Tools that answer, raise, cancel themselves and hang; each says it started (the interrupt's cue)."""
    async def ok(x: dict[str, Any]) -> str:
        started.set()
        return "ok"

    async def fail(x: dict[str, Any]) -> str:
        started.set()
        raise RuntimeError("tool failed")

    async def cancel(x: dict[str, Any]) -> str:
        started.set()
        raise asyncio.CancelledError  # (a tool whose own await was cancelled)

    async def hang(x: dict[str, Any]) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    schema = {"type": "object", "properties": {}}
    return [lw.Tool(n, n, schema, f, read_only=n == "ok") for n, f in
            (("ok", ok), ("raise", fail), ("cancel", cancel), ("hang", hang))]


def _script(responses: list[tuple[list[tuple[Any, ...]], str | None]], seen: list[list[dict[str, Any]]]) -> Any:
    ids: list[str] = []

    def model(h: list[dict[str, Any]]) -> dict[str, Any]:
        check(h)  # Thm 3.4: every request
        seen.append(copy.deepcopy(h))
        k = len(seen) - 1
        if k >= len(responses):
            return {"content": [{"type": "text", "text": "done"}]}
        blocks, stop = responses[k]
        content: list[dict[str, Any]] = []
        for b in blocks:
            if b[0] == "text":
                content.append({"type": "text", "text": b[1]})
                continue
            mine = [c["id"] for c in content if c["type"] == "tool_use"]
            earlier = [i for i in ids if i not in mine]
            uid = mine[-1] if b[1] == "again" and mine else earlier[0] if b[1] == "earlier" and earlier \
                else f"t{len(ids)}"
            ids.append(uid)
            content.append({"type": "tool_use", "id": uid, "name": b[2], "input": {}})
        return {"content": content, **({"stop_reason": stop} if stop else {})}

    return model


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(responses=st.lists(response_st, min_size=1, max_size=6), interrupt=st.booleans())  # (at a hanging tool)
def test_odd_responses_and_tools_keep_inv_in_every_request_and_on_disk(
        responses: list[tuple[list[tuple[Any, ...]], str | None]], interrupt: bool) -> None:
    seen: list[list[dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as d:
        sessions = Path(d) / "s"

        async def run() -> lw.ResultMessage:
            started = asyncio.Event()
            control = lw.RunControl()
            options = lw.AgentOptions(model=lw.ScriptedModel(_script(responses, seen)), tools=_tools(started),
                                      cwd=d, persist_session=True, sessions_dir=sessions, max_turns=6,
                                      max_pause_continuations=2)

            async def interrupter() -> None:  # (at the first tool call, while it runs or soon after)
                await started.wait()
                await asyncio.sleep(0.01 * (len(responses) % 3))
                if interrupt:
                    control.interrupt()

            watcher = asyncio.ensure_future(interrupter())
            try:
                msgs = [m async for m in lw.query("go", options, control=control)]
            finally:
                watcher.cancel()
            assert isinstance(msgs[-1], lw.ResultMessage)
            return msgs[-1]

        hangs = any(b[0] == "use" and b[2] == "hang" for blocks, _ in responses for b in blocks)
        assume(interrupt or not hangs)  # (nothing ends a hanging tool but an interrupt)
        r = asyncio.run(run())
        assert holds_final(r.messages), r.messages
        on_disk = get_session_messages(r.session_id, sessions)
        assert holds_final(on_disk) and on_disk == r.messages, (on_disk, r.messages)
        n = len(seen)
        resumed = lw.run("and now?", lw.AgentOptions(
            model=lw.ScriptedModel(_script([], seen)), cwd=d, persist_session=True, sessions_dir=sessions,
            resume=r.session_id))
        assert resumed.subtype == "success", resumed.errors
        assert len(seen) == n + 1 and seen[-1][:len(r.messages)] == r.messages


@pytest.mark.xfail(strict=True, reason="known gap (issue 41 attack): a tool_use id the model reuses from an earlier "
                   "turn is kept and sent (the Messages API refuses repeated tool_use ids), while a resume drops the "
                   "repeat (sessions/repair.py); refusing it as a repeat within one response is refused would "
                   "change the many scripted tests that use one id in every turn")
def test_an_id_reused_from_an_earlier_turn_is_sent_as_it_is_loaded(tmp_path: Path) -> None:
    seen: list[list[dict[str, Any]]] = []
    responses: list[tuple[list[tuple[Any, ...]], str | None]] = [([("use", "new", "ok")], None),
                                                                  ([("use", "earlier", "ok")], None)]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(_script(responses, seen)), tools=_tools(asyncio.Event()),
                                     cwd=tmp_path, persist_session=True, sessions_dir=tmp_path / "s"))
    assert get_session_messages(r.session_id, tmp_path / "s") == r.messages


@pytest.mark.xfail(strict=True, reason="known gap (issue 41 attack): an answer with no content is kept in h (seed Def "
                   "3.1's h·a; Prop 5.2's test counts it), so a max_tokens reminder or a client's next query sends an "
                   "empty assistant message mid-history (the Messages API refuses it), while a resume drops it "
                   "(sessions/repair.py)")
def test_an_empty_answer_is_kept_as_it_is_loaded(tmp_path: Path) -> None:
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([{"content": []}]), cwd=tmp_path, persist_session=True,
                                     sessions_dir=tmp_path / "s"))
    assert get_session_messages(r.session_id, tmp_path / "s") == r.messages
