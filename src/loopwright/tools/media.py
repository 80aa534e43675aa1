"""Room: built-in tools (on tools.base). Owns what Read makes of files that are not text: images
(Pillow), PDFs (pypdf) and Jupyter notebooks (nbformat); may import data types and tools.base.

Each library is imported when a file of its kind is read, never at startup (`import PIL.Image`
~35 ms, `pypdf` ~100 ms, `nbformat` ~80 ms on these machines).

- An image becomes an image block. One that is too large for the providers (Anthropic's limits,
  the strictest: 5 MB of base64 per image, 8000 px a side, 2000 px when a request holds many
  images) is scaled down to fit MAX_IMAGE_SIDE and MAX_IMAGE_BYTES, and the model is told so.
- A PDF becomes its text, page by page; `pages` ("3", "1-5", "2,4-6") picks pages, at most
  MAX_PDF_PAGES per call, and a PDF longer than PDF_PAGES_WITHOUT_RANGE pages needs it.
- A notebook becomes its cells with their outputs (nbformat reads every nbformat version and
  upgrades it to v4); cells without an id (nbformat < 4.5) are named `cell-N` by position, as
  NotebookEdit names them.
"""

from __future__ import annotations

import base64
import io
import re
import warnings
from pathlib import Path
from typing import Any

from ..blocks import Block, ImageBlock, TextBlock
from .base import ToolError

MAX_IMAGE_BYTES = 3_750_000  # base64 grows by 4/3: stays under the API's 5 MB image limit
MAX_IMAGE_SIDE = 2000  # the API's limit per side when a request holds many images
MAX_SOURCE_IMAGE_BYTES = 100 * 1024 * 1024  # bigger files are not even decoded
MAX_PIXELS = 100_000_000  # nor bigger images (a 10000x10000 px decompression bomb in a few KB)
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
               ".gif": "image/gif", ".webp": "image/webp"}
_PIL_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}

MAX_PDF_PAGES = 20
PDF_PAGES_WITHOUT_RANGE = 10
# What one Read sends at most (~25k tokens, Claude Code's Read bound), text files (tools.read) included
MAX_OUTPUT_CHARS = 100_000
MAX_CELL_OUTPUT_CHARS = 10_000


# --- images ----------------------------------------------------------------------------------

def image_blocks(path: Path, data: bytes) -> list[Block]:
    """The image as a block the providers take, scaled down when it is too large for them."""
    return sized_image_blocks(path, data)[0]


def sized_image_blocks(path: Path, data: bytes) -> tuple[list[Block], tuple[int, int, int, int]]:
    """image_blocks, and the image's width and height, then those of the image sent."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # Pillow warns of a bomb on open; MAX_PIXELS refuses it below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
        fmt, (w, h) = img.format or "", img.size
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as e:
        raise ToolError(f"{path} is not an image Read can decode ({e}).") from None
    mime = _PIL_FORMATS.get(fmt)
    if mime is not None and len(data) <= MAX_IMAGE_BYTES and max(w, h) <= MAX_IMAGE_SIDE:
        try:  # (decoded once: a cut or corrupt one would have the API answer every later request with
            img.load()  # "Could not process image", as long as it is in the history)
        except (OSError, ValueError, SyntaxError) as e:
            raise ToolError(f"{path} is not an image Read can decode ({e}).") from None
        return [_block(mime, data)], (w, h, w, h)  # as it is, byte for byte
    if w * h > MAX_PIXELS:
        raise ToolError(f"{path} is {w}x{h} px, more than Read decodes ({MAX_PIXELS // 1_000_000} megapixels).")
    try:
        img.seek(0)  # an animated GIF or WebP: its first frame
        if fmt == "JPEG":
            img.draft("RGB", (MAX_IMAGE_SIDE, MAX_IMAGE_SIDE))  # decode at a fraction of the size: faster, less memory
        img.load()
        img.thumbnail((MAX_IMAGE_SIDE, MAX_IMAGE_SIDE), Image.Resampling.LANCZOS)
        out, mime = _encode(img)
    except (OSError, ValueError, Image.DecompressionBombError) as e:
        raise ToolError(f"{path}: the image could not be scaled down to the size models take ({e}).") from None
    note = (f"[{path.name}: {w}x{h} px, {len(data)} bytes, was scaled down to {img.size[0]}x{img.size[1]} px "
            f"({mime}, {len(out)} bytes) to fit the model's image limits]")
    return [_block(mime, out), TextBlock(note)], (w, h, img.size[0], img.size[1])


def sendable_image(data: str, mime: str) -> list[Block]:
    """An image given as base64 of type `mime` (an MCP server's, a hook's) as blocks the Messages API
    takes, decoded as Read decodes a file: data that is not base64 or no image (a PNG's head alone,
    a cut or corrupt one) is a text naming it, one of another type is sent as the type it is, one
    over the size limits is scaled down (said). Sent as they came, the API would answer every later
    request of the session with 'Could not process image' (the image stays in the history)."""
    import binascii

    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError, TypeError):
        return [TextBlock(f"[image ({mime}) not shown: its data is not base64]")]
    try:
        blocks = image_blocks(Path("image"), raw)
    except ToolError as e:
        why = re.sub(r" <_io\.BytesIO object at \w+>", "", str(e).removeprefix("image is not an image Read can decode "))
        return [TextBlock(f"[image ({mime}) not shown: not an image the model can take {why}]")]
    if len(blocks) == 1 and isinstance(blocks[0], ImageBlock) and blocks[0].source["media_type"] == mime:
        return [ImageBlock({"type": "base64", "media_type": mime, "data": data})]  # as it was given
    return blocks


def sendable_blocks(blocks: list[Block]) -> list[Block]:
    """A tool's result blocks (a Python tool's: MCP content shape, image blocks, bytes) with each
    base64 image made sendable_image, the other blocks as they are."""
    out: list[Block] = []
    for b in blocks:
        src = b.source if isinstance(b, ImageBlock) else None
        if src is None or src.get("type") != "base64":
            out.append(b)
            continue
        made = sendable_image(str(src.get("data")), str(src.get("media_type")))
        out.extend([b] if len(made) == 1 and isinstance(made[0], ImageBlock) and made[0].source == src else made)
    return out


def sendable_prompt(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A prompt's content blocks (an SDK's or stream-json user line's, an editor's, a library
    caller's) with each base64 image made sendable_image: kept as given when it decodes as its
    type within the limits, else a notice in text, the type it is, or scaled down (said)."""
    out: list[dict[str, Any]] = []
    for b in content:
        src = b.get("source")
        if b.get("type") != "image" or not isinstance(src, dict) or src.get("type") != "base64":
            out.append(b)
            continue
        blocks = sendable_image(str(src.get("data")), str(src.get("media_type")))
        if len(blocks) == 1 and isinstance(blocks[0], ImageBlock) and blocks[0].source == src:
            out.append(b)  # (as given, its cache_control with it)
        else:
            out.extend(x.to_wire() for x in blocks)
    return out


def _encode(img: Any) -> tuple[bytes, str]:
    """PNG when it fits (lossless, keeps transparency), else JPEG at falling quality and size."""
    if img.mode not in ("RGB", "RGBA", "L", "LA"):
        img = img.convert("RGBA" if "transparency" in img.info or img.mode in ("P", "PA") else "RGB")
    buf = io.BytesIO()
    img.save(buf, "PNG", optimize=True)
    if buf.tell() <= MAX_IMAGE_BYTES:
        return buf.getvalue(), "image/png"
    rgb = img.convert("RGB")
    for quality in (85, 70, 50):
        buf = io.BytesIO()
        rgb.save(buf, "JPEG", quality=quality)
        if buf.tell() <= MAX_IMAGE_BYTES:
            return buf.getvalue(), "image/jpeg"
    while True:  # still too big (noise compresses badly): halve it until it fits
        rgb = rgb.resize((max(1, rgb.width // 2), max(1, rgb.height // 2)))
        buf = io.BytesIO()
        rgb.save(buf, "JPEG", quality=50)
        if buf.tell() <= MAX_IMAGE_BYTES:
            return buf.getvalue(), "image/jpeg"


def _block(mime: str, data: bytes) -> ImageBlock:
    return ImageBlock({"type": "base64", "media_type": mime, "data": base64.b64encode(data).decode("ascii")})


# --- PDFs ------------------------------------------------------------------------------------

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_pages(spec: str, count: int) -> list[int]:
    """"3", "1-5", "2,4-6" as 1-based page numbers, in order, each once. Raises ToolError."""
    pages: list[int] = []
    for part in spec.split(","):
        m = _RANGE.match(part)
        if m is None:
            raise ToolError(f'pages {spec!r} is not a page range: use "3", "1-5" or "2,4-6".')
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        if lo < 1 or hi < lo:
            raise ToolError(f"pages {spec!r}: pages are numbered from 1, and a range runs low-high.")
        if lo > count:
            raise ToolError(f"pages {spec!r}: the PDF has {count} page{'s' if count != 1 else ''}.")
        pages += [p for p in range(lo, min(hi, count) + 1) if p not in pages]
        if len(pages) > MAX_PDF_PAGES:
            raise ToolError(f"pages {spec!r} names more than {MAX_PDF_PAGES} pages: read at most "
                            f"{MAX_PDF_PAGES} per call.")
    return pages


class PdfUnreadable(Exception):
    """The bytes are not a PDF pypdf can open (broken, or encrypted with a password)."""


def open_pdf(data: bytes) -> Any:
    """A pypdf reader over the bytes (an encrypted PDF with an empty password opened).
    Raises PdfUnreadable saying why not. Read and WebFetch both open PDFs here."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfUnreadable("it is an encrypted PDF and needs a password")
        len(reader.pages)  # a broken page tree fails here, not later
    except PdfUnreadable:
        raise
    except (PdfReadError, OSError, ValueError, KeyError, TypeError) as e:
        raise PdfUnreadable(f"it is not a PDF that can be opened ({type(e).__name__}: {e})") from None
    except Exception as e:  # pypdf raises more kinds (a missing crypto library, a broken xref...)
        raise PdfUnreadable(f"pypdf could not open it ({type(e).__name__}: {e})") from None
    return reader


def page_text(reader: Any, n: int) -> str:
    """Page n's (1-based) text; a page that fails or has none says so (the others are kept)."""
    try:
        text = reader.pages[n - 1].extract_text() or ""
    except Exception as e:  # one broken page does not lose the others
        text = f"[the text of this page could not be extracted: {type(e).__name__}: {e}]"
    return str(text).strip() or "[no text on this page: it may be a scanned image]"


def pdf_text(path: Path, data: bytes, pages: str | None) -> str:
    """The PDF's text, page by page (`<page number="N">`)."""
    try:
        reader = open_pdf(data)
    except PdfUnreadable as e:
        raise ToolError(f"{path}: {e}; Read cannot open it.") from None
    count = len(reader.pages)
    if pages is None:
        if count > PDF_PAGES_WITHOUT_RANGE:
            raise ToolError(f"{path} has {count} pages, too many to read at once: give `pages` (for example "
                            f'"1-{min(count, MAX_PDF_PAGES)}"), at most {MAX_PDF_PAGES} pages per call.')
        numbers = list(range(1, count + 1))
    else:
        numbers = parse_pages(pages, count)
    parts: list[str] = []
    total = 0
    for n in numbers:
        text = page_text(reader, n)
        total += len(text)
        if total > MAX_OUTPUT_CHARS:
            parts.append(f"[... stopped before page {n}: the output is too long; read fewer pages at a time]")
            break
        parts.append(f'<page number="{n}">\n{text}\n</page>')
    head = f"PDF {path.name}: {count} page{'s' if count != 1 else ''}; "
    head += f"pages {numbers[0]}-{numbers[-1]} shown." if pages is None else f"pages {pages} shown."
    return head + "\n" + "\n".join(parts)


# --- notebooks ---------------------------------------------------------------------------------

def load_notebook(path: Path, raw: bytes) -> tuple[Any, Exception | None]:
    """The notebook as an nbformat v4 NotebookNode, and what nbformat's schema finds wrong with
    it (None: valid). Raises ToolError when it is not a notebook at all."""
    import nbformat

    problem: dict[str, Exception] = {}
    try:
        nb = nbformat.reads(raw.decode("utf-8-sig"), as_version=4,  # type: ignore[no-untyped-call]
                            capture_validation_error=problem)
        if not isinstance(nb.get("cells"), list):
            raise ValueError("it has no list of cells")
        return nb, problem.get("ValidationError")
    except Exception as e:  # NotJSONError, a validation error, a bad nbformat version, ...
        raise ToolError(f"{path} is not a valid Jupyter notebook: {type(e).__name__}: {e}") from None


def cell_id(cell: Any, index: int) -> str:
    return str(cell.get("id") or f"cell-{index}")


def _text(v: Any) -> str:
    return "".join(v) if isinstance(v, list) else str(v or "")


def _output_image(path: Path, cid: str, b64: str, images: list[Block]) -> str:
    """An image output as blocks (scaled down like a read image when too large); its placeholder."""
    try:
        images += image_blocks(path, base64.b64decode(b64))
    except (ToolError, ValueError) as e:
        return f"[an image output that could not be shown: {e}]"
    return f"[image output of cell {cid}: shown below]"


def render_notebook(path: Path, raw: bytes) -> list[Block]:
    """A notebook as its cells (source, then outputs), like Claude Code's Read; image outputs
    become image blocks after the text."""
    nb, _problem = load_notebook(path, raw)  # a notebook off nbformat's schema is still read
    lang = (nb.get("metadata", {}).get("language_info") or {}).get("name", "python")
    parts: list[str] = []
    images: list[Block] = []
    for i, cell in enumerate(nb.cells):
        cid = cell_id(cell, i)
        kind = cell.get("cell_type", "code")
        head = f'<cell id="{cid}" type="{kind}"' + (f' language="{lang}"' if kind == "code" else "") + ">"
        parts.append(f"{head}\n{_text(cell.get('source'))}\n</cell>")
        outs: list[str] = []
        for o in cell.get("outputs") or []:
            kind_o = o.get("output_type")
            if kind_o == "stream":
                outs.append(_text(o.get("text")))
            elif kind_o == "error":
                outs.append(f"{o.get('ename')}: {o.get('evalue')}")
            else:
                data = o.get("data") or {}
                if "text/plain" in data:
                    outs.append(_text(data["text/plain"]))
                for mime in ("image/png", "image/jpeg"):
                    if mime in data and len(images) < 20:
                        outs.append(_output_image(path, cid, _text(data[mime]), images))
        if outs:
            text = "\n".join(outs)
            if len(text) > MAX_CELL_OUTPUT_CHARS:
                text = text[:MAX_CELL_OUTPUT_CHARS] + "\n[... output truncated]"
            parts.append(f'<outputs cell="{cid}">\n{text}\n</outputs>')
    body = "\n".join(parts) if parts else "(the notebook has no cells)"
    if len(body) > MAX_OUTPUT_CHARS:
        body = body[:MAX_OUTPUT_CHARS] + "\n[... notebook truncated: use Bash with jq to read the rest]"
    return [TextBlock(body), *images]
