"""Thm 3.4 against a model that answers in odd shapes and tools that fail, cancel themselves or hang
under an interrupt (issue 41's attack on the step loop): a tool_use id twice in one response or
again from an earlier turn, stop_reason tool_use without a tool_use block, a response cut off at
max_tokens in a tool call, pause_turn (also without end), refusal, no content at all, empty and
whitespace-only text, a call of a tool that does not exist. Every request is one the providers
accept (Inv, and the Messages API's rules beyond it: testing/api_rules.py, on the request as the
Anthropic, Chat Completions and Responses encoders write it); the history the run ends with is the
transcript on disk, which holds the same history; and the session resumes, its first request
starting with that history and valid too.

How the odd shapes are kept (as Claude Code 2.1.332 on the same turns, where it keeps a valid
conversation: tests/loop/test_odd_answers_vs_claude_code.py): a blank text block is left out; an
answer with nothing else is not kept (the API refuses an empty message but last) and the model is
asked once more; a tool_use id the history already has gets a fresh one (loop/model_call.sendable);
the same id twice in one answer is refused, nothing run (the seed's Def 3.1 assumes distinct ids
within one message)."""

from __future__ import annotations

import asyncio
import copy
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.invariant import holds_final
from loopwright.loop import NO_OUTPUT_REMINDER
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.base import ModelRequest
from loopwright.models.openai_compat import to_openai_messages
from loopwright.models.openai_responses import to_responses_input
from loopwright.sessions import get_session_messages
from loopwright.testing.api_rules import chat_problem, messages_problem, responses_problem

STOPS = [None, "end_turn", "tool_use", "max_tokens", "pause_turn", "refusal", "stop_sequence"]
TEXT_ST = st.one_of(st.text(max_size=6), st.sampled_from(["", " ", "\n\n", " \t"]))
block_st = st.one_of(
    st.tuples(st.just("text"), TEXT_ST),
    # which id: a new one, the previous one of this response again, one of an earlier response
    st.tuples(st.just("use"), st.sampled_from(["new", "again", "earlier"]),
              st.sampled_from(["ok", "raise", "cancel", "hang", "missing"])),
)
response_st = st.tuples(st.lists(block_st, min_size=0, max_size=4), st.sampled_from(STOPS))
ANTHROPIC = AnthropicModel("claude-sonnet-4-5", api_key="x")


def check_request(h: list[dict[str, Any]]) -> None:
    """The request for h is one each provider takes, as its encoder writes it (api_rules.py)."""
    body = ANTHROPIC.build_params(ModelRequest(None, [], h, 1024))
    assert (messages_problem(body["messages"]), chat_problem(to_openai_messages(None, h)),
            responses_problem(to_responses_input(h))) == (None, None, None), h


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
        check_request(h)  # Thm 3.4, and the providers' rules: every request
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


def test_an_id_reused_from_an_earlier_turn_is_sent_as_it_is_loaded(tmp_path: Path) -> None:
    """The second turn's call reuses the first's id: it runs, under a fresh id that its result
    answers, so the next request has no repeated id; the transcript holds the same."""
    seen: list[list[dict[str, Any]]] = []
    responses: list[tuple[list[tuple[Any, ...]], str | None]] = [([("use", "new", "ok")], None),
                                                                  ([("use", "earlier", "ok")], None)]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(_script(responses, seen)), tools=_tools(asyncio.Event()),
                                     cwd=tmp_path, persist_session=True, sessions_dir=tmp_path / "s"))
    assert r.subtype == "success" and r.num_turns == 2 and len(seen) == 3
    uses = [b["id"] for m in r.messages for b in m["content"] if b["type"] == "tool_use"]
    answered = [(b["tool_use_id"], b["content"]) for m in r.messages for b in m["content"] if b["type"] == "tool_result"]
    assert uses == ["t0", "t0_2"] and answered == [("t0", "ok"), ("t0_2", "ok")]
    assert get_session_messages(r.session_id, tmp_path / "s") == r.messages


def test_an_empty_answer_is_not_kept_and_the_model_is_asked_once_more(tmp_path: Path) -> None:
    """No content at all: not kept (the API refuses an empty message mid-history); the model is asked
    once more (Claude Code's reminder); the answer after it is the result. A second empty answer in a
    row ends the run with its text as the result (blank), and a next prompt after it is valid; the transcript holds
    the same history each time."""
    seen: list[list[dict[str, Any]]] = []

    def model(answers: list[Any]) -> lw.ScriptedModel:
        def answer(h: list[dict[str, Any]]) -> Any:
            check_request(h)
            seen.append(copy.deepcopy(h))
            return answers.pop(0)
        return lw.ScriptedModel(answer)

    reminder = {"role": "user", "content": [{"type": "text", "text": NO_OUTPUT_REMINDER}]}
    go = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    s = tmp_path / "s"
    r = lw.run("go", lw.AgentOptions(model=model([{"content": []}, [{"type": "text", "text": "hi"}]]), cwd=tmp_path,
                                     persist_session=True, sessions_dir=s))
    assert (r.subtype, r.result, r.model_calls, r.num_turns) == ("success", "hi", 2, 0)
    assert seen[1] == [go, reminder] and r.messages == [go, reminder, {"role": "assistant", "content": [
        {"type": "text", "text": "hi"}]}]
    assert get_session_messages(r.session_id, s) == r.messages
    seen.clear()
    r = lw.run("go", lw.AgentOptions(model=model([{"content": [], "stop_reason": "max_tokens"},
                                                  {"content": [{"type": "text", "text": " \n"}]}]),
                                     cwd=tmp_path, persist_session=True, sessions_dir=s))
    # (the blank answer is not kept; the result is its text, as Claude Code's is)
    assert (r.subtype, r.result, r.model_calls, r.messages) == ("success", " \n", 2, [go, reminder])
    assert get_session_messages(r.session_id, s) == r.messages
    resumed = lw.run("and now?", lw.AgentOptions(model=model([[{"type": "text", "text": "here"}]]), cwd=tmp_path,
                                                 persist_session=True, sessions_dir=s, resume=r.session_id))
    assert resumed.result == "here" and seen[-1][:2] == [go, reminder] and len(seen) == 3


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(responses=st.lists(response_st, min_size=1, max_size=6))
def test_every_request_after_odd_answers_is_one_the_providers_take_and_resume_equals_run(
        responses: list[tuple[list[tuple[Any, ...]], str | None]]) -> None:
    """Odd answers (no content, empty and whitespace-only text, an id twice in one answer or again
    from an earlier turn, a tool that does not exist), with tools that answer or fail: every request
    of the run, of a client's next query in the same conversation, and of a resume, is one each
    provider takes; the transcript loads as the history each run ended with."""
    responses = [(blocks, stop) for blocks, stop in responses
                 if all(b[0] == "text" or b[2] != "hang" for b in blocks)]  # (no interrupt here)
    seen: list[list[dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as d:
        sessions = Path(d) / "s"

        def options(**kw: Any) -> lw.AgentOptions:
            return lw.AgentOptions(model=lw.ScriptedModel(_script(responses, seen)), tools=_tools(asyncio.Event()),
                                   cwd=d, persist_session=True, sessions_dir=sessions, max_turns=5, **kw)

        async def conversation() -> list[lw.ResultMessage]:
            out = []
            async with lw.LoopwrightClient(options()) as client:
                for prompt in ("go", "and then?"):
                    await client.query(prompt)
                    out.append([m async for m in client.receive_response()][-1])
            return out

        first, second = asyncio.run(conversation())
        for r in (first, second):
            assert holds_final(r.messages), r.messages
        assert second.messages[:len(first.messages)] == first.messages
        assert get_session_messages(second.session_id, sessions) == second.messages
        n = len(seen)
        resumed = lw.run("and now?", options(resume=second.session_id))
        assert resumed.subtype in ("success", "error_max_turns", "error_during_execution"), resumed.errors
        assert len(seen) > n and seen[n][:len(second.messages)] == second.messages
        assert get_session_messages(resumed.session_id, sessions) == resumed.messages


def test_a_model_that_reuses_one_id_every_turn(tmp_path: Path) -> None:
    """A server that numbers its calls anew in each answer (call_0 every turn): each call runs under
    an id of its own, answered by its result, and the transcript loads as the run ended."""
    turns: list[Any] = [[{"type": "tool_use", "id": "call_0", "name": "ok", "input": {}}]] * 40 + [[
        {"type": "text", "text": "done"}]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=_tools(asyncio.Event()), cwd=tmp_path,
                                     persist_session=True, sessions_dir=tmp_path / "s"))
    uses = [b["id"] for m in r.messages for b in m["content"] if b["type"] == "tool_use"]
    answered = [b["tool_use_id"] for m in r.messages for b in m["content"] if b["type"] == "tool_result"]
    assert r.subtype == "success" and r.num_turns == 40 and uses == answered and len(set(uses)) == 40
    assert uses[:3] == ["call_0", "call_0_2", "call_0_3"] and check_request(r.messages) is None
    assert get_session_messages(r.session_id, tmp_path / "s") == r.messages
