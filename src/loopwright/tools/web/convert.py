"""Room: web tools (on tools.base). Owns turning a fetched body into text; may import nothing of
loopwright.

HTML (and XHTML) become Markdown with html-to-markdown (a maintained converter, compiled, with
no dependencies: ~20 ms to import, imported at the first HTML page); JSON is pretty-printed;
other text is kept as it is; a PDF becomes the text of its pages with pypdf. Anything else is
refused with a message that says what it was.
"""

from __future__ import annotations

import json
import re

_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.I)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([\w.:-]+)", re.I)
_TEXT_TYPES = ("application/javascript", "application/xml", "application/x-yaml", "application/yaml",
               "application/toml", "application/x-sh", "application/sql", "application/graphql")


class NotText(Exception):
    """The body is not something the model can read as text."""


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _decode(body: bytes, content_type: str, html: bool = False) -> str:
    m = _CHARSET.search(content_type)
    charset = m.group(1) if m else None
    if charset is None and html:
        mm = _META_CHARSET.search(body[:4096])
        charset = mm.group(1).decode("ascii", "replace") if mm else None
    if body.startswith(b"\xef\xbb\xbf"):
        charset = "utf-8-sig"
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _sniff(body: bytes) -> str:
    head = body[:1024].lstrip().lower()
    if body.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head or b"<head" in head:
        return "text/html"
    return ""


def html_to_markdown(html: str) -> str:
    from html_to_markdown import convert

    result = convert(html)
    return str(getattr(result, "content", result)).strip()


def pdf_text(body: bytes) -> str:
    """The text of each page, headed by its number (opened and read as Read does)."""
    from ..media import PdfUnreadable, open_pdf, page_text

    try:
        reader = open_pdf(body)
    except PdfUnreadable as e:
        raise NotText(f"the PDF could not be read: {e}") from None
    return "\n\n".join(f"--- page {n} ---\n{page_text(reader, n)}" for n in range(1, len(reader.pages) + 1))


def kind_of(body: bytes, content_type: str) -> str:
    """The body's media type: as declared, else sniffed (HTML, PDF) when the server did not say."""
    kind = media_type(content_type)
    if kind in ("", "application/octet-stream", "binary/octet-stream"):
        kind = _sniff(body) or kind
    return kind


SLOW_KINDS = ("text/html", "application/xhtml+xml", "application/pdf")  # converters a page can make slow


def to_text(body: bytes, content_type: str) -> tuple[str, str]:
    """(text, what it was: "markdown" | "json" | "text" | "pdf"); NotText for anything else."""
    kind = kind_of(body, content_type)
    if kind in ("text/html", "application/xhtml+xml"):
        return html_to_markdown(_decode(body, content_type, html=True)), "markdown"
    if kind == "application/pdf":
        return pdf_text(body), "pdf"
    if kind == "application/json" or kind.endswith("+json"):
        text = _decode(body, content_type)
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False), "json"
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes: as text
            return text, "text"
    if kind.startswith("text/") or kind.endswith("+xml") or kind in _TEXT_TYPES:
        return _decode(body, content_type), "text"
    if not kind and b"\x00" not in body[:4096]:
        return _decode(body, content_type), "text"
    raise NotText(f"the content is {kind or 'binary data'} ({len(body)} bytes), which WebFetch cannot read as "
                  "text (it reads HTML, text, JSON and PDF)")
