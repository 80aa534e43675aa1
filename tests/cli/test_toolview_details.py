"""The interactive mode shows an Edit's diff from its result's structured patch (the details the
tool made: tools.diffs), not from the file read again later."""

from __future__ import annotations

import asyncio
from pathlib import Path

from loopwright.cli.toolview import make_view
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_edit_tool, make_read_tool

PLAIN = str.maketrans("", "", "\x1b")


def test_an_edits_view_is_its_patch_even_after_the_file_changed(tmp_path: Path) -> None:
    f = tmp_path / "app.py"
    f.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    ctx = ToolContext(tmp_path)
    asyncio.run(make_read_tool().call({"file_path": str(f)}, ctx))
    x = {"file_path": str(f), "old_string": "line 5\n", "new_string": "five\nand a half\n"}
    out = asyncio.run(make_edit_tool().call(x, ctx))
    f.write_text("rewritten since\n")  # a later call changed it: the view shows what this Edit did
    from loopwright.blocks import ToolResultBlock

    view = make_view(1, "Edit", x, ToolResultBlock("e1", out.content, out.is_error, details=out.details), tmp_path)
    assert "Updated app.py with 2 additions and 1 removal" in view.header
    body = [ln.translate(PLAIN).replace("[31m", "").replace("[32m", "").replace("[0m", "") for ln in view.body]
    assert body == ["    2   line 2", "    3   line 3", "    4   line 4", "    5 - line 5", "    5 + five",
                    "    6 + and a half", "    7   line 6", "    8   line 7", "    9   line 8"]
