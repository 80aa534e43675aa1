"""LoopwrightClient.record_local_command: a `!` command's texts are in the session's transcript as
soon as it ends (exit before the next prompt loses nothing; resume sends them), and the next
prompt joins them in one user message, live and on resume alike (no duplicate)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.invariant import holds_final
from loopwright.sessions import cwd_slug, get_session_messages, load_transcript
from tests.helpers import Recording, check_resumable, text

NOTES = ["<bash-input>echo hi</bash-input>", "<bash-stdout>hi</bash-stdout><bash-stderr></bash-stderr>"]
MORE = ["<bash-input>ls nope</bash-input>", "<bash-stdout></bash-stdout><bash-stderr>ls: nope: missing</bash-stderr>"]


def opts(tmp: Path, model: Recording, **kw: Any) -> lw.AgentOptions:
    return lw.AgentOptions(model=lw.ScriptedModel(model), tools=[], cwd=tmp, sessions_dir=tmp / "sessions",
                           persist_session=kw.pop("persist_session", True), **kw)


def texts(m: dict[str, Any]) -> list[str]:
    return [b["text"] for b in m["content"] if b.get("type") == "text"]


async def ask(client: lw.LoopwrightClient, prompt: str) -> None:
    await client.query(prompt)
    async for _ in client.receive_response():
        pass


def test_recorded_at_once_and_a_resume_sends_it(tmp_path: Path) -> None:
    """`!` as the first thing, then exit: the transcript has it; a resume's first request has
    the two texts and the prompt in one user message; the file loads to that same history."""
    first = Recording([])

    async def before_exit() -> str | None:
        async with lw.LoopwrightClient(opts(tmp_path, first)) as c:
            await c.record_local_command("echo hi", "hi")
            await c.record_local_command("ls nope", stderr="ls: nope: missing")  # a second `!` before any prompt
            return c.session_id

    sid = asyncio.run(before_exit())
    assert sid is not None and first.seen == []  # no model call
    path = tmp_path / "sessions" / cwd_slug(tmp_path) / f"{sid}.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [(ln["type"], texts(ln["message"])) for ln in lines] == [("user", NOTES), ("user", MORE)]
    assert oct(path.stat().st_mode & 0o777) == "0o600"

    model = Recording([[text("it printed hi")]])

    async def resumed() -> list[dict[str, Any]]:
        async with lw.LoopwrightClient(opts(tmp_path, model, resume=sid)) as c:
            await ask(c, "what did it print")
            assert c.session_id == sid
            assert c.history is not None
            return c.history

    history = asyncio.run(resumed())
    assert len(model.seen) == 1
    assert [m["role"] for m in model.seen[0]] == ["user"]
    assert texts(model.seen[0][0]) == [*NOTES, *MORE, "what did it print"]
    loaded = load_transcript(path)
    assert loaded.repaired == [] and holds_final(loaded.history)
    assert loaded.history == history == get_session_messages(sid, tmp_path / "sessions")


def test_between_prompts_no_duplicate_live_or_on_resume(tmp_path: Path) -> None:
    """prompt, `!`, prompt in one session: the second request's last user message carries the
    texts once, ahead of the prompt; the transcript replays to the live history; continuing
    it (-c) sends the same conversation."""
    model = Recording([[text("one")], [text("two")]])

    async def session() -> tuple[str | None, list[dict[str, Any]]]:
        async with lw.LoopwrightClient(opts(tmp_path, model)) as c:
            await ask(c, "hello")
            await c.record_local_command("echo hi", "hi")
            await ask(c, "and now")
            assert c.history is not None
            return c.session_id, c.history

    sid, history = asyncio.run(session())
    second = model.seen[1]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert texts(second[-1]) == [*NOTES, "and now"]
    assert sum(t.count("<bash-input>") for m in second for t in texts(m)) == 1
    assert sid is not None
    loaded = get_session_messages(sid, tmp_path / "sessions")
    assert loaded == history
    check_resumable(loaded)

    later = Recording([[text("three")]])

    async def continued() -> None:
        async with lw.LoopwrightClient(opts(tmp_path, later, continue_conversation=True)) as c:
            await ask(c, "more")

    asyncio.run(continued())
    assert later.seen[0][:-1] == history
    assert texts(later.seen[0][-1]) == ["more"]


def test_after_a_prompt_then_exit_the_resume_sends_it(tmp_path: Path) -> None:
    """prompt, `!`, exit; resume and a prompt: the texts reach the model with that prompt."""
    model = Recording([[text("one")], [text("two")]])

    async def first() -> str | None:
        async with lw.LoopwrightClient(opts(tmp_path, model)) as c:
            await ask(c, "hello")
            await c.record_local_command("echo hi", "hi")
            return c.session_id

    sid = asyncio.run(first())

    async def again() -> None:
        async with lw.LoopwrightClient(opts(tmp_path, model, resume=sid)) as c:
            await ask(c, "what did it print")

    asyncio.run(again())
    assert texts(model.seen[1][-1]) == [*NOTES, "what did it print"]
    assert [m["role"] for m in model.seen[1]] == ["user", "assistant", "user"]


def test_without_persistence_it_still_goes_with_the_next_prompt(tmp_path: Path) -> None:
    model = Recording([[text("one")]])

    async def go() -> None:
        async with lw.LoopwrightClient(opts(tmp_path, model, persist_session=False)) as c:
            await c.record_local_command("echo hi", "hi")
            await ask(c, "p")

    asyncio.run(go())
    assert texts(model.seen[0][-1]) == [*NOTES, "p"]
    assert not (tmp_path / "sessions").exists()


def test_a_custom_command_after_a_bang_expands_in_the_prompts_place(tmp_path: Path) -> None:
    """`!echo hi` then `/greet world`: the command's text takes the prompt's place, after the
    records (it replaced the first record and left `/greet world` unexpanded before)."""
    from loopwright.commands import expand, find_commands

    (tmp_path / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / ".claude" / "commands" / "greet.md").write_text("---\ndescription: greets\n---\nHello $ARGUMENTS.\n")
    ex = expand("/greet world", find_commands(tmp_path, ["project"], trusted=True))
    assert ex is not None
    model = Recording([[text("hello")]])

    async def go() -> None:
        async with lw.LoopwrightClient(opts(tmp_path, model)) as c:
            await c.record_local_command("echo hi", "hi")
            c.for_next_query(command=ex)
            await ask(c, "/greet world")

    asyncio.run(go())
    sent = texts(model.seen[0][-1])
    assert sent[:2] == NOTES and "/greet world" not in sent
    assert any("Hello world." in t for t in sent[2:])
