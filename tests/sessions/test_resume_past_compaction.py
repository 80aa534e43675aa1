"""Resuming a session past a compaction reads only the lines from its last compact_boundary on
(sessions/repair.load_transcript), and yields the same conversation as reading every line: also
when a line after the boundary reaches back before it (a rewind to an older prompt, a line
written twice), or when the boundary's text is inside another line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.sessions import cwd_slug, load_transcript, read_lines
from loopwright.sessions.rewind import rewind_conversation


def scripted(seen: list[list[Any]]) -> lw.ScriptedModel:
    """A model that calls Read once per prompt, then answers (a summary request: a summary);
    `seen` gets every history it is sent."""
    state = {"k": 0}

    def model(h: list[Any]) -> dict[str, Any]:
        seen.append([json.loads(json.dumps(m)) for m in h])
        last = h[-1]["content"]
        usage = {"input_tokens": 100, "output_tokens": 5}
        if isinstance(last, list) and last and last[0].get("type") == "tool_result":
            return {"content": [{"type": "text", "text": "done"}], "usage": usage}
        state["k"] += 1
        k = state["k"]
        return {"content": [{"type": "text", "text": f"step {k}"},
                            {"type": "tool_use", "id": f"toolu_{k:08d}", "name": "Read",
                             # (the boundary's own text in a line that is no boundary: the search looks further back)
                             "input": {"file_path": f"/f{k}", "note": {"subtype": "compact_boundary"}}}],
                "usage": usage}

    return lw.ScriptedModel(model)


def options(tmp: Path, seen: list[list[Any]], **kw: Any) -> lw.AgentOptions:
    read = lw.Tool("Read", "read", {"type": "object", "properties": {"file_path": {"type": "string"}}},
                   lambda i: f"contents of {i['file_path']}\n" * 50, read_only=True)
    return lw.AgentOptions(model=scripted(seen), tools=[read], cwd=tmp, sessions_dir=tmp / "s",
                           persist_session=True, **kw)


async def converse(client: lw.LoopwrightClient, prompts: list[str]) -> None:
    for p in prompts:
        await client.query(p)
        async for m in client.receive_response():
            assert not isinstance(m, lw.ResultMessage) or m.subtype == "success", m


def session(tmp: Path, before: int = 4, after: int = 3) -> tuple[Path, list[Any], list[str]]:
    """A persisted session: `before` prompts, a compaction, `after` prompts. Its transcript, the
    client's history at the end, and the prompts' uuids (oldest first)."""
    async def go() -> tuple[list[Any], str]:
        async with lw.LoopwrightClient(options(tmp, [])) as c:
            await converse(c, [f"before {i}" for i in range(before)])
            await c.compact(keep_last_turns=1)
            await converse(c, [f"after {i}" for i in range(after)])
            assert c.history is not None and c.session_id is not None
            return list(c.history), c.session_id

    history, sid = asyncio.run(go())
    path = tmp / "s" / cwd_slug(tmp) / f"{sid}.jsonl"
    prompts = [ln["uuid"] for ln in read_lines(path) if ln.get("isPrompt")]
    return path, history, prompts


def append(path: Path, *lines: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        for ln in lines:
            f.write(json.dumps(ln, separators=(",", ":")) + "\n")


def test_a_compacted_session_is_read_from_its_last_compaction_and_resumes_the_same_conversation(tmp_path: Path) -> None:
    path, history, _ = session(tmp_path)
    whole = load_transcript(path, whole=True)
    fast = load_transcript(path)
    assert fast.history == whole.history == history  # the conversation the client had
    assert fast.last_uuid == whole.last_uuid
    # only the lines from the compaction on were parsed
    assert fast.lines[0]["subtype"] == "compact_boundary" and len(fast.lines) < len(whole.lines)
    assert not any(ln.get("message", {}).get("content") == [{"type": "text", "text": "before 0"}] for ln in fast.lines)
    # and a resumed run sends the model that history, its prompt after it
    seen: list[list[Any]] = []
    r = lw.run("go on", options(tmp_path, seen, resume=path.stem, max_turns=3))
    assert r.subtype == "success"
    assert seen[0][:-1] == json.loads(json.dumps(history))
    assert seen[0][-1]["content"] == [{"type": "text", "text": "go on"}]


def test_a_rewind_after_the_compaction_to_a_prompt_before_it_reads_every_line(tmp_path: Path) -> None:
    path, history, prompts = session(tmp_path)
    rewind_conversation(path.stem, prompts[1], sessions_dir=tmp_path / "s", cwd=tmp_path)
    whole = load_transcript(path, whole=True)
    fast = load_transcript(path)
    assert fast.history == whole.history
    assert fast.history[-1]["content"] == [{"type": "text", "text": "done"}] and len(fast.history) == 4  # prompt 0's turn
    assert fast.history != history and len(fast.lines) == len(whole.lines)


def test_a_rewind_within_the_compacted_part_is_read_from_the_compaction(tmp_path: Path) -> None:
    path, _, prompts = session(tmp_path)
    rewind_conversation(path.stem, prompts[-1], sessions_dir=tmp_path / "s", cwd=tmp_path)
    whole = load_transcript(path, whole=True)
    fast = load_transcript(path)
    assert fast.history == whole.history and fast.lines[0]["subtype"] == "compact_boundary"
    assert "after 2" not in json.dumps(fast.history) and "after 1" in json.dumps(fast.history)


def test_a_line_written_again_after_the_compaction_is_replayed_once_as_before(tmp_path: Path) -> None:
    path, history, _ = session(tmp_path)
    lines = read_lines(path)
    old_prompt = next(ln for ln in lines if ln.get("isPrompt"))  # before the compaction
    append(path, old_prompt)
    whole = load_transcript(path, whole=True)
    fast = load_transcript(path)
    assert fast.history == whole.history == history  # skipped: its uuid was seen before
    assert any("repeated" in n for n in fast.repaired)


def test_a_boundary_without_its_messages_reads_every_line(tmp_path: Path) -> None:
    path, _, _ = session(tmp_path, before=2, after=1)
    last = read_lines(path)[-1]
    append(path, {**last, "uuid": "11111111-2222-4333-8444-555555555555", "type": "system",
                  "subtype": "compact_boundary", "data": {"trigger": "manual"}})
    whole = load_transcript(path, whole=True)
    fast = load_transcript(path)
    assert fast.history == whole.history and len(fast.lines) == len(whole.lines)
