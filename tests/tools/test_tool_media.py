"""Read for images (Pillow), PDFs (pypdf) and notebooks (nbformat), and NotebookEdit: on files
made with the real libraries (Pillow, fpdf2, nbformat)."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import v4
from PIL import Image

import loopwright as lw
from loopwright.blocks import ImageBlock, TextBlock
from loopwright.sessions.rewind import rewind_points
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_notebook_edit_tool, make_read_tool
from loopwright.tools.media import MAX_IMAGE_BYTES, MAX_IMAGE_SIDE
from tests.helpers import call_tool, text, use

READ, NBEDIT = make_read_tool(), make_notebook_edit_tool()


def _decoded(block: ImageBlock) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(block.source["data"])))


# --- images --------------------------------------------------------------------------------------

def test_a_large_screenshot_is_scaled_down_to_fit(tmp_path: Path) -> None:
    """A 2600x1625 noisy PNG (~13 MB: over both limits) comes back within MAX_IMAGE_SIDE and
    MAX_IMAGE_BYTES, aspect kept, with a note that says what was done."""
    f = tmp_path / "shot.png"
    Image.frombytes("RGB", (2600, 1625), os.urandom(2600 * 1625 * 3)).save(f, "PNG", compress_level=1)
    assert f.stat().st_size > MAX_IMAGE_BYTES
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert not err, out
    img_block, note = out
    assert isinstance(img_block, ImageBlock) and isinstance(note, TextBlock)
    assert len(base64.b64decode(img_block.source["data"])) <= MAX_IMAGE_BYTES
    img = _decoded(img_block)
    assert max(img.size) <= MAX_IMAGE_SIDE and abs(img.size[0] / img.size[1] - 1.6) < 0.01
    assert img.format == {"image/png": "PNG", "image/jpeg": "JPEG"}[img_block.source["media_type"]]
    assert "2600x1625" in note.text and f"{img.size[0]}x{img.size[1]}" in note.text


def test_a_wide_image_under_the_byte_limit_is_still_scaled(tmp_path: Path) -> None:
    f = tmp_path / "wide.jpg"
    Image.new("RGB", (9000, 300), (0, 128, 255)).save(f, "JPEG")
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert not err, out
    assert _decoded(out[0]).size == (MAX_IMAGE_SIDE, 67)


def test_an_animated_gif_gives_its_first_frame_when_scaled(tmp_path: Path) -> None:
    f = tmp_path / "anim.gif"
    frames = [Image.new("P", (2400, 2400), i) for i in (1, 2)]
    frames[0].save(f, save_all=True, append_images=frames[1:])
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert not err, out
    assert _decoded(out[0]).size == (MAX_IMAGE_SIDE, MAX_IMAGE_SIDE)


def test_a_file_named_png_that_is_not_an_image_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "fake.png"
    f.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert err and "not an image Read can decode" in out


def test_a_cut_png_is_an_error_not_an_image_block(tmp_path: Path) -> None:
    """A PNG cut short (a download broken off, a repository's corrupt file): its head reads as an
    image, its data does not; sent, the API would answer 'Could not process image' to every later
    request of the session."""
    buf = io.BytesIO()
    Image.frombytes("RGB", (64, 64), os.urandom(64 * 64 * 3)).save(buf, "PNG")
    f = tmp_path / "cut.png"
    f.write_bytes(buf.getvalue()[:len(buf.getvalue()) // 2])
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert err and "not an image Read can decode" in out, out


# --- PDFs ----------------------------------------------------------------------------------------

def _pdf(path: Path, pages: list[str]) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for body in pages:
        pdf.add_page()
        pdf.multi_cell(0, 10, body)
    pdf.output(str(path))
    return path


def test_pdf_text_page_by_page(tmp_path: Path) -> None:
    f = _pdf(tmp_path / "doc.pdf", ["Alpha page one", "Bravo page two", "Charlie page three"])
    ctx = ToolContext(tmp_path)
    out, err = call_tool(READ, ctx, file_path=str(f))
    assert not err, out
    assert out.startswith("PDF doc.pdf: 3 pages")
    for n, word in enumerate(("Alpha", "Bravo", "Charlie"), 1):
        assert f'<page number="{n}">\n{word}' in out
    assert str(f) in ctx.state.read.stamps
    out, err = call_tool(READ, ctx, file_path=str(f), pages="2-3")
    assert not err and "Alpha" not in out and "Bravo" in out and "Charlie" in out
    out, err = call_tool(READ, ctx, file_path=str(f), pages="3,1")
    assert not err and out.index("Charlie") < out.index("Alpha")


def test_a_long_pdf_needs_pages_and_at_most_twenty(tmp_path: Path) -> None:
    f = _pdf(tmp_path / "long.pdf", [f"page {i}" for i in range(1, 26)])
    ctx = ToolContext(tmp_path)
    out, err = call_tool(READ, ctx, file_path=str(f))
    assert err and "25 pages" in out and "pages" in out
    out, err = call_tool(READ, ctx, file_path=str(f), pages="1-21")
    assert err and "at most 20" in out
    out, err = call_tool(READ, ctx, file_path=str(f), pages="21-30")  # clipped to the last page
    assert not err and '<page number="25">\npage 25' in out and "page 20" not in out
    for bad in ("0", "5-2", "x", "30"):
        out, err = call_tool(READ, ctx, file_path=str(f), pages=bad)
        assert err, bad


def test_pages_on_a_text_file_and_a_broken_pdf_are_errors(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi\n")
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(tmp_path / "a.txt"), pages="1")
    assert err and "PDF files only" in out
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4\nnot really\n")
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(tmp_path / "bad.pdf"))
    assert err and "bad.pdf" in out


def test_read_and_webfetch_open_pdfs_in_one_place(tmp_path: Path) -> None:
    """A password-protected PDF and a broken one: Read's error and WebFetch's say the same why,
    from the one opener (tools.media.open_pdf); an empty page says it has no text in both."""
    from fpdf import FPDF

    from loopwright.tools.web.convert import NotText, pdf_text

    locked = FPDF()
    locked.set_encryption(owner_password="owner", user_password="secret")
    locked.add_page()
    locked.set_font("Helvetica", size=12)
    locked.cell(text="hidden")
    (tmp_path / "locked.pdf").write_bytes(bytes(locked.output()))
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(tmp_path / "locked.pdf"))
    assert err and "locked.pdf" in out and "encrypted PDF and needs a password" in out
    with pytest.raises(NotText, match="encrypted PDF and needs a password"):
        pdf_text((tmp_path / "locked.pdf").read_bytes())
    with pytest.raises(NotText, match="could not be read"):
        pdf_text(b"%PDF-1.4\nnot really\n")
    blank = FPDF()
    blank.add_page()
    blank.add_page()
    blank.set_font("Helvetica", size=12)
    blank.cell(text="page two")
    web = pdf_text(bytes(blank.output()))
    assert web.startswith("--- page 1 ---\n[no text on this page") and "--- page 2 ---\npage two" in web


# --- notebooks -----------------------------------------------------------------------------------

def _notebook(path: Path, minor: int = 5) -> Path:
    png = io.BytesIO()
    Image.new("RGB", (8, 8), (255, 0, 0)).save(png, "PNG")
    nb = v4.new_notebook(metadata={"language_info": {"name": "python"}})
    nb.cells = [v4.new_markdown_cell("# Analysis", id="intro"),
                v4.new_code_cell("x = 41\nx + 1", id="calc", execution_count=1, outputs=[
                    v4.new_output("execute_result", data={"text/plain": "42"}, execution_count=1)]),
                v4.new_code_cell("plot()", id="fig", outputs=[
                    v4.new_output("display_data", data={"image/png": base64.b64encode(png.getvalue()).decode(),
                                                        "text/plain": "<Figure>"})])]
    if minor < 5:
        nb.nbformat_minor = minor
        for c in nb.cells:
            del c["id"]
    nbformat.write(nb, str(path))
    return path


def test_read_a_notebook_with_outputs_and_an_image(tmp_path: Path) -> None:
    f = _notebook(tmp_path / "a.ipynb")
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert not err, out
    body, img = out
    assert '<cell id="calc" type="code" language="python">\nx = 41\nx + 1\n</cell>' in body.text
    assert '<outputs cell="calc">\n42\n</outputs>' in body.text
    assert "[image output of cell fig: shown below]" in body.text
    assert isinstance(img, ImageBlock) and _decoded(img).size == (8, 8)


def _edit(ctx: ToolContext, f: Path, **kw: Any) -> tuple[Any, bool]:
    return call_tool(NBEDIT, ctx, notebook_path=str(f), **kw)


def test_notebook_edit_replace_insert_delete_keeps_it_valid(tmp_path: Path) -> None:
    f = _notebook(tmp_path / "a.ipynb")
    ctx = ToolContext(tmp_path)
    out, err = _edit(ctx, f, cell_id="calc", new_source="y = 1")
    assert err and "has not been read" in out
    call_tool(READ, ctx, file_path=str(f))
    out, err = _edit(ctx, f, cell_id="calc", new_source="x = 1\nx * 2")
    assert not err, out
    nb = nbformat.read(str(f), as_version=4)
    nbformat.validate(nb)
    assert nb.cells[1].source == "x = 1\nx * 2" and nb.cells[1].outputs == [] and nb.cells[1].execution_count is None
    out, err = _edit(ctx, f, cell_id="intro", new_source="## Notes", edit_mode="insert", cell_type="markdown")
    assert not err, out
    out, err = _edit(ctx, f, new_source="import os", edit_mode="insert", cell_type="code")  # at the top
    assert not err, out
    out, err = _edit(ctx, f, cell_id="fig", new_source="", edit_mode="delete")
    assert not err, out
    out, err = _edit(ctx, f, cell_id="intro", new_source="print('now code')", cell_type="code")
    assert not err, out
    nb = nbformat.read(str(f), as_version=4)
    nbformat.validate(nb)
    assert [(c.cell_type, c.source) for c in nb.cells] == [
        ("code", "import os"), ("code", "print('now code')"), ("markdown", "## Notes"), ("code", "x = 1\nx * 2")]
    assert len({c.id for c in nb.cells}) == 4


def test_notebook_edit_errors_write_nothing(tmp_path: Path) -> None:
    f = _notebook(tmp_path / "a.ipynb")
    ctx = ToolContext(tmp_path)
    call_tool(READ, ctx, file_path=str(f))
    before = f.read_bytes()
    for kw, why in [({"cell_id": "nope", "new_source": "x"}, "not found"),
                    ({"new_source": "x", "edit_mode": "insert"}, "cell_type is required"),
                    ({"new_source": "x", "edit_mode": "delete"}, "cell_id is required")]:
        out, err = _edit(ctx, f, **kw)
        assert err and why in out, out
    assert f.read_bytes() == before
    (tmp_path / "a.py").write_text("x = 1\n")
    out, err = call_tool(NBEDIT, ctx, notebook_path=str(tmp_path / "a.py"), new_source="y")
    assert err and "not a Jupyter notebook" in out


def test_an_old_notebook_without_ids_is_edited_by_position(tmp_path: Path) -> None:
    """nbformat 4.4 has no cell ids: Read names cells cell-N, NotebookEdit takes those names,
    and a cell it inserts gets no id (4.4's schema forbids one): the notebook stays valid."""
    f = _notebook(tmp_path / "old.ipynb", minor=4)
    ctx = ToolContext(tmp_path)
    out, err = call_tool(READ, ctx, file_path=str(f))
    assert '<cell id="cell-1" type="code"' in out[0].text
    out, err = _edit(ctx, f, cell_id="cell-1", new_source="z = 3", edit_mode="insert", cell_type="code")
    assert not err, out
    nb = nbformat.read(str(f), as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat_minor == 4 and [c.source for c in nb.cells][2] == "z = 3" and "id" not in nb.cells[2]


def test_notebook_edits_are_checkpointed_and_rewound(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    f = _notebook(work / "a.ipynb")
    original = f.read_bytes()
    turns = [[use("r1", "Read", file_path=str(f))],
             [use("n1", "NotebookEdit", notebook_path=str(f), cell_id="calc", new_source="changed = True")],
             [text("edited")]]
    r = lw.run("edit the notebook", lw.AgentOptions(
        model=lw.ScriptedModel(turns), tools=lw.default_tools(), cwd=work, sessions_dir=tmp_path / "s",
        persist_session=True, permission_mode="acceptEdits"))
    assert r.subtype == "success", r.messages
    assert "changed = True" in f.read_text()
    point = rewind_points(r.session_id, tmp_path / "s")[0]
    assert point.files == [str(f)]
    report = lw.rewind_files(r.session_id, point.uuid, tmp_path / "s")
    assert report.restored == [str(f)] and f.read_bytes() == original


@pytest.mark.parametrize("mode", ["default", "plan"])
def test_notebook_edit_is_gated_as_an_edit(tmp_path: Path, mode: str) -> None:
    f = _notebook(tmp_path / "a.ipynb")
    before = f.read_bytes()
    turns = [[use("r1", "Read", file_path=str(f))],
             [use("n1", "NotebookEdit", notebook_path=str(f), cell_id="calc", new_source="x")], [text("ok")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=lw.default_tools(), cwd=tmp_path,
                                     permission_mode=mode))  # type: ignore[arg-type]
    assert [d["tool_name"] for d in r.permission_denials] == ["NotebookEdit"]
    assert f.read_bytes() == before


def test_a_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    f = tmp_path / "bomb.png"
    Image.new("1", (12000, 12000)).save(f, "PNG")  # 144 megapixels in a few KB
    assert f.stat().st_size < 100_000
    out, err = call_tool(READ, ToolContext(tmp_path), file_path=str(f))
    assert err and "12000x12000" in out
