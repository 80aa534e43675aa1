"""A tool's structured output (ToolOutput.details, Claude Code's tool_use_result) beside what the
model reads: on the result the loop yields, never in the history or the request; the file tools'
patches (jsdiff's structuredPatch, as Claude Code gives it) and their bounds. The shapes against
Claude Code itself: tests/sdkproto/test_sdk_tool_use_result.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.blocks import ToolResultBlock
from loopwright.messages import UserMessage
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_edit_tool, make_read_tool, make_write_tool
from loopwright.tools.diffs import MAX_ORIGINAL_CHARS, NO_NEWLINE, structured_patch
from tests.helpers import text, use

READ, WRITE, EDIT = make_read_tool(), make_write_tool(), make_edit_tool()


def details(tool: lw.Tool, ctx: ToolContext, **x: Any) -> Any:
    out = asyncio.run(tool.call(x, ctx))
    assert not out.is_error, out.content
    return out.details


def test_a_handlers_details_reach_the_yielded_result_but_never_the_model() -> None:
    @lw.tool
    def count(word: str) -> lw.ToolOutput:
        """Count letters."""
        return lw.ToolOutput(f"{len(word)} letters", details={"word": word, "letters": len(word), "SECRET": 1})

    seen: list[Any] = []

    def model(h: list[dict[str, Any]]) -> Any:
        seen.append(json.dumps(h))
        return [use("c1", "count", word="abc"), use("c2", "count", word="hello")] if len(h) == 1 else [text("ok")]

    async def go() -> list[Any]:
        opts = lw.AgentOptions(model=lw.ScriptedModel(model), tools=[count])
        return [m async for m in lw.query("go", opts)]

    msgs = asyncio.run(go())
    (turn,) = [m for m in msgs if isinstance(m, UserMessage)]
    assert [(r.tool_use_id, r.content, r.details) for r in turn.tool_results] == [
        ("c1", "3 letters", {"word": "abc", "letters": 3, "SECRET": 1}),
        ("c2", "5 letters", {"word": "hello", "letters": 5, "SECRET": 1})]
    assert "SECRET" not in seen[-1] and "5 letters" in seen[-1]  # the model got the content only
    assert "SECRET" not in json.dumps(msgs[-1].messages)  # nor does the history keep them
    assert "SECRET" not in repr(turn.tool_results[0])


def test_details_do_not_make_results_unequal() -> None:
    assert ToolResultBlock("t", "x", details={"a": 1}) == ToolResultBlock("t", "x")
    assert "details" not in ToolResultBlock("t", "x", details={"a": 1}).to_wire()


def test_content_refused_as_malformed_drops_the_details() -> None:
    out = lw.ToolOutput([{"type": "tool_use", "id": "x", "name": "n", "input": {}}], details={"a": 1})
    from loopwright.tools.output import to_output

    bad = to_output(out)
    assert bad.is_error and bad.details is None


def test_structured_patch_hunks_as_jsdiff() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 2\n", "line two\n").replace("line 19\n", "")
    assert structured_patch(old, new) == [
        {"oldStart": 1, "oldLines": 5, "newStart": 1, "newLines": 5,
         "lines": [" line 1", "-line 2", "+line two", " line 3", " line 4", " line 5"]},
        {"oldStart": 16, "oldLines": 5, "newStart": 16, "newLines": 4,
         "lines": [" line 16", " line 17", " line 18", "-line 19", " line 20"]}]
    assert structured_patch("a\nb", "a\nb\n") == [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2,
                                                   "lines": [" a", "-b", NO_NEWLINE, "+b"]}]
    assert structured_patch("same\n", "same\n") == []


def test_write_and_edit_details_are_bounded(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    big = tmp_path / "big.txt"
    big.write_text("START\n" + "x\n" * (MAX_ORIGINAL_CHARS // 2 + 10))
    details(READ, ctx, file_path=str(big), limit=1)
    d = details(EDIT, ctx, file_path=str(big), old_string="START", new_string="BEGIN")
    assert (d["originalFile"], d["structuredPatch"], d["oldString"]) == (None, [], "START")
    d = details(WRITE, ctx, file_path=str(big), content="small\n")
    assert (d["type"], d["originalFile"], d["structuredPatch"]) == ("update", None, [])
    small = tmp_path / "s.txt"
    d = details(WRITE, ctx, file_path=str(small), content="a\n")
    assert d == {"type": "create", "filePath": str(small), "content": "a\n", "structuredPatch": [],
                 "originalFile": None, "userModified": False}


def test_read_details_of_a_window_of_a_long_file(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    f = tmp_path / "long.txt"
    f.write_text("".join(f"{i}\n" for i in range(1, 5001)))
    d = details(READ, ctx, file_path=str(f), offset=4999, limit=10)
    assert d["file"] == {"filePath": str(f), "content": "4999\n5000\n", "numLines": 3, "startLine": 4999,
                         "totalLines": 5001}
    d = details(READ, ctx, file_path=str(f))  # the default window: 2000 lines, not the whole file
    assert (d["file"]["numLines"], d["file"]["totalLines"]) == (2000, 5001)
    assert len(d["file"]["content"]) < 20_000 and d["file"]["content"].endswith("2000")
