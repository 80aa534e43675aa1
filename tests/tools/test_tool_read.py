"""Read on real temp files, and the built-in tools through lw.run with a ScriptedModel."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.blocks import ImageBlock
from loopwright.invariant import holds_final
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import NAMES, TASK_NAMES, default_tools, make_read_tool
from loopwright.tools.paths import stamp
from loopwright.tools.read import DEFAULT_LIMIT, MAX_LINE_CHARS
from tests.helpers import call_tool, use

READ = make_read_tool()


def test_schema_and_flags() -> None:
    s = READ.input_schema
    assert READ.name == "Read" and READ.read_only
    assert s["required"] == ["file_path"] and s["additionalProperties"] is False
    assert set(s["properties"]) == {"file_path", "offset", "limit", "pages"}
    assert all(p["description"] for p in s["properties"].values())


def test_cat_n_format_and_read_record(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("alpha\n\tbeta\ngamma")
    ctx = ToolContext(tmp_path)
    out, err = call_tool(READ, ctx, file_path=str(f))
    assert not err
    assert out == "     1\talpha\n     2\t\tbeta\n     3\tgamma"
    assert ctx.state.read.stamps[str(f)] == stamp(f)


def test_relative_path_resolves_against_cwd(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.py").write_text("x = 1\n")
    out, err = call_tool(READ, ToolContext(tmp_path), file_path="d/x.py")
    assert not err and out == "     1\tx = 1"


def test_offset_limit_and_notice(tmp_path: Path) -> None:
    f = tmp_path / "ten.txt"
    f.write_text("".join(f"l{i}\n" for i in range(1, 11)))
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f), offset=3, limit=2)
    assert not err
    lines = out.splitlines()
    assert lines[:2] == ["     3\tl3", "     4\tl4"]
    assert "Showing lines 3-4 of 10" in out and "offset=5" in out
    out, _ = call_tool(READ, ToolContext(tmp_path), file_path=str(f), offset=9)
    assert out.splitlines()[:2] == ["     9\tl9", "    10\tl10"]
    assert "offset=" not in out  # read to the end: nothing more to page
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f), offset=50)
    assert not err and "shorter than the provided offset (50)" in out and "10 lines" in out


def test_default_limit_and_long_lines(tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_text("x" * (MAX_LINE_CHARS + 500) + "\n" + "".join(f"{i}\n" for i in range(2, DEFAULT_LIMIT + 501)))
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert not err
    body = out.split("\n\n(")[0].splitlines()
    assert len(body) == DEFAULT_LIMIT
    assert body[0] == "     1\t" + "x" * MAX_LINE_CHARS + " [... line truncated]"
    assert f"Showing lines 1-{DEFAULT_LIMIT} of {DEFAULT_LIMIT + 500}" in out
    assert f"offset={DEFAULT_LIMIT + 1}" in out and "1 line(s) longer than 2000" in out


def test_errors(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    out, err = call_tool(READ, ctx, file_path=str(tmp_path))
    assert err and "directory" in out
    (tmp_path / "config.yaml").write_text("a: 1\n")
    out, err = call_tool(READ, ctx, file_path=str(tmp_path / "config.yml"))
    assert err and "does not exist" in out and "config.yaml" in out
    (tmp_path / "prog.bin").write_bytes(b"\x7fELF\x00\x00\x01\x02" * 10)
    out, err = call_tool(READ, ctx, file_path=str(tmp_path / "prog.bin"))
    assert err and "binary" in out
    out, err = call_tool(READ, ctx, file_path="/dev/zero")
    assert err and "not a regular file" in out
    out, err = call_tool(READ, ctx, file_path=str(tmp_path / "config.yaml"), offset=-1)
    assert err and "offset" in out
    out, err = call_tool(READ, ctx, file_path=str(tmp_path / "config.yaml"), extra=1)
    assert err
    assert str(tmp_path / "prog.bin") not in ctx.state.read.stamps


def test_empty_file_notice(tmp_path: Path) -> None:
    f = tmp_path / "empty.txt"
    f.write_text("")
    ctx = ToolContext(tmp_path)
    out, err = call_tool(READ, ctx, file_path=str(f))
    assert not err and "empty" in out
    assert str(f) in ctx.state.read.stamps


def test_latin1_fallback_and_crlf(tmp_path: Path) -> None:
    f = tmp_path / "l1.txt"
    f.write_bytes("café\r\nna\xefve\r\n".encode("latin-1"))
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert not err
    assert out.startswith("     1\tcafé\n     2\tnaïve")
    assert "\r" not in out and "latin-1" in out


def test_image_block(tmp_path: Path) -> None:
    from PIL import Image

    f = tmp_path / "pic.PNG"
    Image.new("RGB", (64, 32), (200, 10, 10)).save(f, "PNG")
    data = f.read_bytes()
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert not err
    assert isinstance(out, list) and len(out) == 1 and isinstance(out[0], ImageBlock)
    src = out[0].source
    assert src["type"] == "base64" and src["media_type"] == "image/png"
    assert base64.b64decode(src["data"]) == data  # small enough: sent byte for byte


# --- through the loop --------------------------------------------------------------------

def test_default_tools_are_fresh_and_complete() -> None:
    a, b = default_tools(), default_tools()
    assert [t.name for t in a] == [*NAMES, *TASK_NAMES]  # Claude Code 2.1.332's default set (the CLI's)
    assert all(x is not y for x, y in zip(a, b, strict=True))
    ro = {t.name for t in a if t.read_only}
    assert ro == {"Read", "Glob", "Grep", "BashOutput", "TodoWrite", "WebFetch", "WebSearch", "AskUserQuestion",
                  "ExitPlanMode", "TaskGet", "TaskList"}
    for t in a:
        assert t.input_schema["type"] == "object" and t.description


def test_several_tools_in_one_turn_through_run(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    (tmp_path / "b.py").write_text("print('b')\n")
    turns = [
        [use("r1", "Read", {"file_path": "a.py"}), use("r2", "Read", {"file_path": str(tmp_path / "b.py")}),
         use("g1", "Grep", {"pattern": "return", "output_mode": "content"}),
         use("gl", "Glob", {"pattern": "*.py"})],
        [use("e1", "Edit", {"file_path": "a.py", "old_string": "return 1", "new_string": "return 2"}),
         use("b1", "Bash", {"command": "python3 -c 'import a; print(a.f())'"}),
         use("t1", "TodoWrite", {"todos": [{"content": "Fix f", "status": "completed", "activeForm": "Fixing f"}]})],
        [{"type": "text", "text": "done"}],
    ]
    opts = lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=tmp_path, max_turns=5)
    r = lw.run("fix f", opts)
    assert r.subtype == "success" and holds_final(r.messages)
    results = r.messages[2]["content"]
    assert [b["tool_use_id"] for b in results] == ["r1", "r2", "g1", "gl"]
    assert not any(b.get("is_error") for b in results)
    assert results[0]["content"] == "     1\tdef f():\n     2\t    return 1"
    assert results[1]["content"] == "     1\tprint('b')"
    assert results[2]["content"] == "a.py:2:    return 1"
    assert sorted(results[3]["content"].splitlines()) == ["a.py", "b.py"]
    second = r.messages[4]["content"]
    assert [b["tool_use_id"] for b in second] == ["e1", "b1", "t1"]
    assert not any(b.get("is_error") for b in second), second
    assert second[1]["content"] == "2"
    assert (tmp_path / "a.py").read_text() == "def f():\n    return 2\n"


def test_edit_without_read_is_an_error_result_in_the_loop(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    turns = [[use("e1", "Edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"})],
             [{"type": "text", "text": "ok"}]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=tmp_path))
    block = r.messages[2]["content"][0]
    assert block["is_error"] and "Read it first" in block["content"]
    assert (tmp_path / "a.txt").read_text() == "x\n"


def test_notebook_cells_and_outputs(tmp_path: Path) -> None:
    import nbformat
    from nbformat import v4

    nb = v4.new_notebook(metadata={"language_info": {"name": "python"}})
    nb.cells = [v4.new_markdown_cell("# Title\ntext", id="intro"),
                v4.new_code_cell("print(1)\n1/0", id="c1", outputs=[
                    v4.new_output("stream", name="stdout", text="1\n"),
                    v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=[]),
                    v4.new_output("display_data", data={"text/plain": "<Figure>"})])]
    f = tmp_path / "n.ipynb"
    nbformat.write(nb, str(f))
    ctx = ToolContext(tmp_path)
    out, err = call_tool(READ, ctx, file_path=str(f))
    assert not err
    body = out[0].text
    assert '<cell id="intro" type="markdown">\n# Title\ntext\n</cell>' in body
    assert '<cell id="c1" type="code" language="python">\nprint(1)\n1/0\n</cell>' in body
    assert "ZeroDivisionError: division by zero" in body and "<Figure>" in body
    assert str(f) in ctx.state.read.stamps
    (tmp_path / "bad.ipynb").write_text("{nope")
    out, err = call_tool(READ, ctx, file_path=str(tmp_path / "bad.ipynb"))
    assert err and "not a valid Jupyter notebook" in out


def test_every_schema_field_is_described() -> None:
    import jsonschema

    def walk(schema: dict[str, Any], where: str) -> None:
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{where}.{name} has no description"
            walk(prop, f"{where}.{name}")
            if isinstance(prop.get("items"), dict):
                walk(prop["items"], f"{where}.{name}[]")

    for t in default_tools():
        jsonschema.Draft202012Validator.check_schema(t.input_schema)
        assert t.input_schema.get("additionalProperties") is False, t.name
        assert set(t.input_schema.get("required", [])) <= set(t.input_schema["properties"])
        walk(t.input_schema, t.name)
