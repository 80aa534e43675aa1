"""The interactive mode's view of a tool result (what `/expand` and Ctrl-O redraw) keeps the
output's own string, the one the run's history holds, not a list of its lines: a long session
held every output once more for its whole life. What it shows is the same."""

from __future__ import annotations

import asyncio
import os
import tracemalloc
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.cli.toolview import Log, ReplRenderer


def output(n: int) -> str:
    return "".join(f"{i:5d}  def handler_{i}(request): return {i}\n" for i in range(n))


def shown(tmp: Path, tool: str, text: str) -> tuple[ReplRenderer, list[Any]]:
    """A real run whose one tool call returns `text`, its messages shown by the interactive
    renderer; the renderer and the run's final history."""
    replies = iter([{"content": [{"type": "tool_use", "id": "toolu_01", "name": tool, "input": {"file_path": "/x"}}]},
                    {"content": [{"type": "text", "text": "done"}]}])
    t = lw.Tool(tool, "a tool", {"type": "object", "properties": {"file_path": {"type": "string"}}},
                lambda i: text, read_only=True)
    options = lw.AgentOptions(model=lw.ScriptedModel(lambda h: next(replies)), tools=[t], cwd=tmp)
    with open(os.devnull, "w") as out:
        renderer = ReplRenderer(out, Log())

        async def go() -> list[Any]:
            history: list[Any] = []
            async for m in lw.query("go", options):
                renderer.show(m)
                if isinstance(m, lw.ResultMessage):
                    history = m.messages
            return history

        return renderer, asyncio.run(go())


def test_a_results_view_holds_the_historys_string_not_its_lines(tmp_path: Path) -> None:
    text = output(2000)
    for tool in ("Read", "Bash", "Grep"):
        renderer, history = shown(tmp_path, tool, text)
        view = renderer.views[0]
        kept = history[2]["content"][0]["content"]
        assert kept == text and view.output is kept and view.body == []  # the same object: no copy
        expanded = view.render()
        view.expanded = True
        full = view.render()
        assert full.count("\n") == 2000 + 2 and "    0  def handler_0(" in full and "1999  def handler_1999" in full
        view.expanded = False
        assert view.render() == expanded and "… +" in expanded


def test_a_thousand_viewed_results_hold_a_fraction_of_their_size(tmp_path: Path) -> None:
    """What the renderer's views keep, per output byte: their header and a reference (was ~1.6
    bytes: a string object per line)."""
    texts = [output(100) + f"# {k}\n" for k in range(300)]  # ~12 KB each, kept alive by this list (the history)
    replies = iter([*({"content": [{"type": "tool_use", "id": f"toolu_{k:04d}", "name": "Bash",
                                    "input": {"command": f"cat {k}"}}]} for k in range(300)),
                    {"content": [{"type": "text", "text": "done"}]}])
    it = iter(texts)
    t = lw.Tool("Bash", "a shell", {"type": "object", "properties": {"command": {"type": "string"}}},
                lambda i: next(it), read_only=True)
    options = lw.AgentOptions(model=lw.ScriptedModel(lambda h: next(replies)), tools=[t], cwd=tmp_path, max_turns=400)
    messages: list[Any] = []

    async def go() -> None:
        async for m in lw.query("go", options):
            messages.append(m)

    asyncio.run(go())
    with open(os.devnull, "w") as out:
        tracemalloc.start()
        try:
            renderer = ReplRenderer(out, Log())
            before = tracemalloc.get_traced_memory()[0]
            for m in messages:
                renderer.show(m)
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert len(renderer.views) == 300 and all("… +98 lines" in v.render() for v in renderer.views)  # 101 lines
    size = sum(map(len, texts))
    assert held < 0.25 * size, f"the views hold {held} bytes for {size} bytes of output"
